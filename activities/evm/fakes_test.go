package evm

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/internal/testutil/evmfake"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// The chain every test here reads is evmfake.Chain, the EVM fake the tests share.
var _ Chain = (*evmfake.Chain)(nil)

// fakeService records endpoint-4 sends and answers with answer.
type fakeService struct {
	mu     sync.Mutex
	sent   []string
	answer func(signed string) ([]byte, error)
}

func (s *fakeService) sends() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

var (
	polToken     = common.HexToAddress("0x00000000000000000000000000000000000000a1")
	stakeManager = common.HexToAddress("0x00000000000000000000000000000000000000b2")
	shareA       = common.HexToAddress("0x00000000000000000000000000000000000000c3")
	shareOff     = common.HexToAddress("0x00000000000000000000000000000000000000d4")
	gwei         = big.NewInt(1_000_000_000)
)

func gweis(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), gwei) }

var (
	keyringOnce sync.Once
	sharedKR    *signerevm.Keyring
	sharedKey   *ecdsa.PrivateKey
	keyringErr  error
)

// testKeyring is a keyring signer/evm loads from a go-ethereum keystore v3 file written for a new
// key, with the key; made once (scrypt is slow under the race detector) and shared.
func testKeyring(t *testing.T) (*signerevm.Keyring, *ecdsa.PrivateKey) {
	t.Helper()
	keyringOnce.Do(func() {
		dir, err := os.MkdirTemp("", "evm-activities-keys")
		if err != nil {
			keyringErr = err
			return
		}
		defer os.RemoveAll(dir) // the keyring holds the decrypted key once loaded
		if sharedKey, keyringErr = crypto.GenerateKey(); keyringErr == nil {
			sharedKR, keyringErr = makeKeyring(dir, sharedKey)
		}
	})
	require.NoError(t, keyringErr)
	return sharedKR, sharedKey
}

// makeKeyring writes key into a go-ethereum keystore v3 file under dir and loads it with
// signer/evm.
func makeKeyring(dir string, key *ecdsa.PrivateKey) (*signerevm.Keyring, error) {
	ks := keystore.NewKeyStore(filepath.Join(dir, "keys"), keystore.LightScryptN, keystore.LightScryptP)
	if _, err := ks.ImportECDSA(key, "test-pass"); err != nil {
		return nil, err
	}
	pass := filepath.Join(dir, "pass")
	if err := os.WriteFile(pass, []byte("test-pass\n"), 0o600); err != nil {
		return nil, err
	}
	return signerevm.LoadKeyring(filepath.Join(dir, "keys"), pass)
}

type harness struct {
	a      *Activities
	chain  *evmfake.Chain
	svc    *fakeService
	key    *ecdsa.PrivateKey
	staker common.Address
	env    *testsuite.TestActivityEnvironment
}

func newHarness(t *testing.T, p signerevm.Policy) *harness {
	t.Helper()
	kr, key := testKeyring(t)
	if p.ChainID == 0 {
		p.ChainID = 1337
	}
	p.POLToken, p.StakeManager = polToken, stakeManager
	if p.ValidatorShares == nil {
		p.ValidatorShares = []signerevm.ValidatorShare{{ValidatorID: 1, Address: shareA}}
	}
	s, err := signerevm.New(kr, p)
	require.NoError(t, err)
	h := &harness{chain: &evmfake.Chain{}, svc: &fakeService{}, key: key, staker: crypto.PubkeyToAddress(key.PublicKey)}
	h.a = &Activities{Networks: map[string]Network{"dev": {Chain: h.chain, Signer: s}}, Keys: kr, Service: h.svc}
	var suite testsuite.WorkflowTestSuite
	h.env = suite.NewTestActivityEnvironment()
	h.env.RegisterActivity(h.a)
	return h
}

// appErr returns err's application error type and whether it is non-retryable.
func appErr(t *testing.T, err error) (string, bool) {
	t.Helper()
	require.Error(t, err)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "not an application error: %v", err)
	return ae.Type(), ae.NonRetryable()
}

func (s *fakeService) PolygonSend(_ context.Context, req apiclient.PolygonSendRequest) (json.RawMessage, error) {
	s.mu.Lock()
	s.sent = append(s.sent, req.SignedTransaction)
	s.mu.Unlock()
	if s.answer == nil {
		return json.RawMessage(`{}`), nil
	}
	b, err := s.answer(req.SignedTransaction)
	return b, err
}
