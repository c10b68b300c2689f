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

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/apiclient"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// fakeChain is a scripted Chain. Each field answers one read; nil answers zero values.
type fakeChain struct {
	mu       sync.Mutex
	head     uint64
	nonces   func() *evmchain.Nonces
	fees     *evmchain.Fees
	estimate uint64
	estErr   error
	// txs maps hashes to lookups (absent when missing); receipts to final receipts; a missing
	// receipt is not final (no receipt).
	txs      map[common.Hash]func() *evmchain.TxLookup
	receipts map[common.Hash]func() (*evmchain.Receipt, error)
	consumed func(hash common.Hash) *evmchain.NonceStatus
	calls    map[string][]any // method -> result
	callErr  map[string]error
	estMsgs  []ethereum.CallMsg
	// nonceReads counts Nonces calls.
	nonceReads int
	// balance is every address's ether; nil holds plenty.
	balance *big.Int
	// rawSent are the bytes SendRawTransaction was given, 0x hex; sendErr its answer.
	rawSent []string
	sendErr error
}

func (f *fakeChain) Balance(context.Context, common.Address) (*big.Int, error) {
	if f.balance == nil {
		return new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil), nil
	}
	return f.balance, nil
}

func (f *fakeChain) LatestHeader(context.Context) (*types.Header, error) {
	return &types.Header{Number: new(big.Int).SetUint64(f.head)}, nil
}

// pollLimit bounds the nonce reads of one test: a Confirm that never answers fails the test
// instead of hanging it.
const pollLimit = 5000

func (f *fakeChain) Nonces(context.Context, common.Address) (*evmchain.Nonces, error) {
	f.mu.Lock()
	f.nonceReads++
	over := f.nonceReads > pollLimit
	f.mu.Unlock()
	if over {
		return nil, errors.New("fake: more nonce reads than any test needs: the activity does not conclude")
	}
	if f.nonces == nil {
		return &evmchain.Nonces{}, nil
	}
	return f.nonces(), nil
}

func (f *fakeChain) Fees(context.Context) (*evmchain.Fees, error) { return f.fees, nil }

func (f *fakeChain) EstimateGas(_ context.Context, msg ethereum.CallMsg) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.estMsgs = append(f.estMsgs, msg)
	return f.estimate, f.estErr
}

func (f *fakeChain) Transaction(_ context.Context, h common.Hash) (*evmchain.TxLookup, error) {
	if l, ok := f.txs[h]; ok {
		return l(), nil
	}
	return &evmchain.TxLookup{State: evmchain.TxAbsent}, nil
}

func (f *fakeChain) ReceiptFinal(_ context.Context, h common.Hash) (*evmchain.Receipt, error) {
	if r, ok := f.receipts[h]; ok {
		return r()
	}
	return nil, &evmchain.NotFinalError{Hash: h, Reason: evmchain.NotFinalNoReceipt}
}

func (f *fakeChain) NonceConsumedBy(_ context.Context, _ common.Address, _ uint64, h common.Hash) (*evmchain.NonceStatus, error) {
	if f.consumed == nil {
		return &evmchain.NonceStatus{}, nil
	}
	return f.consumed(h), nil
}

func (f *fakeChain) Call(_ context.Context, _ *big.Int, to common.Address, _ *abi.ABI, method string, _ ...any) ([]any, error) {
	if err := f.callErr[method]; err != nil {
		return nil, err
	}
	v, ok := f.calls[to.Hex()+"."+method]
	if !ok {
		v, ok = f.calls[method]
	}
	if !ok {
		return nil, errors.New("fake: no answer for " + method)
	}
	return v, nil
}

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
	chain  *fakeChain
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
	h := &harness{chain: &fakeChain{}, svc: &fakeService{}, key: key, staker: crypto.PubkeyToAddress(key.PublicKey)}
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

// SendRawTransaction records the bytes sent and answers sendErr (nil: accepted).
func (f *fakeChain) SendRawTransaction(_ context.Context, raw []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rawSent = append(f.rawSent, hexutil.Encode(raw))
	return f.sendErr
}

func (f *fakeChain) rawSends() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.rawSent...)
}
