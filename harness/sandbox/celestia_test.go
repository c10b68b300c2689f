//go:build integration

package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/harness/sandbox/celestiachain"
	"github.com/stakeflow/stakeflow/signer/cosmos"
)

// celestiaServer is an offline server whose endpoint 3 broadcasts into Celestia ledgers.
func celestiaServer(t *testing.T) (*server, *httptest.Server) {
	t.Helper()
	s := &server{log: zap.NewNop(), secret: newTokenSecret(testSecret), limiter: newRateLimiter(nil, nowFunc),
		faults: newFaultInjector(FaultConfig{}), now: nowFunc, broadcasts: map[string]int{}}
	celestiaBackends.Store(s, newCelestiaLedgers(CelestiaOptions{}))
	t.Cleanup(func() { celestiaBackends.Delete(s) })
	ts := httptest.NewServer(s.routes())
	t.Cleanup(ts.Close)
	return s, ts
}

// celestiaKey writes a fresh key to a keystore file and loads it as the worker does.
func celestiaKey(t *testing.T) (*cosmos.Signer, string) {
	t.Helper()
	k, err := crypto.GenerateKey()
	require.NoError(t, err)
	js, err := keystore.EncryptKey(&keystore.Key{Id: uuid.New(), Address: crypto.PubkeyToAddress(k.PublicKey), PrivateKey: k},
		"pw", keystore.LightScryptN, keystore.LightScryptP)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k.json"), js, 0o600))
	pass := filepath.Join(t.TempDir(), "p")
	require.NoError(t, os.WriteFile(pass, []byte("pw"), 0o600))
	kr, err := cosmos.LoadKeyring(dir, pass)
	require.NoError(t, err)
	return cosmos.NewSigner(kr, cosmos.Policy{Validators: CelestiaValidators, MaxFee: 10_000, MaxGas: 500_000}), kr.Addresses()[0]
}

func signDelegate(t *testing.T, l *celestiachain.Ledger, s *cosmos.Signer, del, amount string) *cosmos.Signed {
	t.Helper()
	a, ok := l.Account(del)
	require.True(t, ok)
	return signDelegateAmount(t, s, del, cosmos.Account{AccountNumber: a.Number, Sequence: a.Sequence}, amount)
}

func signDelegateAt(t *testing.T, s *cosmos.Signer, del string, acct cosmos.Account) *cosmos.Signed {
	return signDelegateAmount(t, s, del, acct, "1")
}

func signDelegateAmount(t *testing.T, s *cosmos.Signer, del string, acct cosmos.Account, amount string) *cosmos.Signed {
	t.Helper()
	in := cosmos.Intent{Operation: cosmos.OpDelegate, Network: cosmos.NetworkMocha, Delegator: del, Validator: CelestiaValidators[0], Amount: amount, TimeoutHeight: 1_000_000}
	pub, err := s.PubKey(del)
	require.NoError(t, err)
	u, err := cosmos.Build(in, pub, acct, cosmos.FeeParams{GasLimit: 200_000, Fee: 800}, "")
	require.NoError(t, err)
	signed, err := s.Sign(context.Background(), u, in, acct)
	require.NoError(t, err)
	return signed
}

func TestCelestiaSendBroadcastsIntoTheLedger(t *testing.T) {
	srv, ts := celestiaServer(t)
	l := srv.celestiaLedger("celestia-mocha-testnet")
	s, del := celestiaKey(t)
	require.NoError(t, l.Fund(del, big.NewInt(5_000_000)))
	cl := client(t, ts.URL, "celestia")
	ctx := testCtx(t)

	// Base64, then the same bytes again (a lost answer's resend): one delegation.
	signed := signDelegate(t, l, s, del, "1000000")
	res, err := cl.CelestiaSend(ctx, "celestia-mocha-testnet", apiclient.CelestiaSendRequest{SignedTransaction: signed.TxBase64})
	require.NoError(t, err)
	assert.Equal(t, apiclient.CelestiaStatusSuccess, res.Status)
	assert.Equal(t, signed.Hash, res.TransactionHash)
	again, err := cl.CelestiaSend(ctx, "celestia-mocha-testnet", apiclient.CelestiaSendRequest{SignedTransaction: signed.TxBase64})
	require.NoError(t, err)
	assert.Equal(t, res.BlockID, again.BlockID)
	assert.Equal(t, []celestiachain.Delegation{{Delegator: del, Validator: CelestiaValidators[0], Amount: "1000000"}}, l.Snapshot().Delegations)

	// Hex is accepted too.
	signed = signDelegate(t, l, s, del, "2")
	raw, err := base64.StdEncoding.DecodeString(signed.TxBase64)
	require.NoError(t, err)
	_, err = cl.CelestiaSend(ctx, "celestia-mocha-testnet", apiclient.CelestiaSendRequest{SignedTransaction: hex.EncodeToString(raw)})
	require.NoError(t, err)
	assert.Equal(t, "1000002", l.Snapshot().Delegations[0].Amount)

	// Another network's ledger refuses a transaction signed for mocha-4 (account number and
	// sequence alike there): the chain id is part of what was signed.
	main := srv.celestiaLedger("celestia-mainnet-beta")
	require.NoError(t, main.Fund(del, big.NewInt(1_000_000)))
	fresh := signDelegateAt(t, s, del, cosmos.Account{AccountNumber: 1, Sequence: 0})
	_, err = cl.CelestiaSend(ctx, "celestia-mainnet-beta", apiclient.CelestiaSendRequest{SignedTransaction: fresh.TxBase64})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "signature verification failed")
	assert.Empty(t, main.Snapshot().Delegations)
}

func TestCelestiaSendFaults(t *testing.T) {
	srv, ts := celestiaServer(t)
	l := srv.celestiaLedger("celestia-mocha-testnet")
	s, del := celestiaKey(t)
	require.NoError(t, l.Fund(del, big.NewInt(5_000_000)))
	cl := client(t, ts.URL, "celestia")
	ctx := testCtx(t)
	send := func(signed *cosmos.Signed) (*apiclient.CelestiaBroadcastResult, error) {
		return cl.CelestiaSend(ctx, "celestia-mocha-testnet", apiclient.CelestiaSendRequest{SignedTransaction: signed.TxBase64})
	}

	srv.faults.set(FaultConfig{CelestiaSendDropped: LostResponse{Next: 1}})
	signed := signDelegate(t, l, s, del, "10")
	res, err := send(signed)
	require.NoError(t, err)
	assert.Equal(t, signed.Hash, res.TransactionHash, "answered success")
	_, landed := l.Tx(signed.Hash)
	assert.False(t, landed, "but never broadcast")

	srv.faults.set(FaultConfig{CelestiaSendWrongHash: LostResponse{Next: 1}})
	res, err = send(signed)
	require.NoError(t, err)
	assert.NotEqual(t, signed.Hash, res.TransactionHash)
	_, landed = l.Tx(signed.Hash)
	assert.True(t, landed)

	srv.faults.set(FaultConfig{CelestiaSendLostResponse: LostResponse{Next: 1}})
	signed = signDelegate(t, l, s, del, "20")
	_, err = send(signed)
	require.Error(t, err)
	_, landed = l.Tx(signed.Hash)
	assert.True(t, landed, "landed although the answer was lost")
	res, err = send(signed)
	require.NoError(t, err, "the resend of the same bytes is answered success")
	assert.Equal(t, signed.Hash, res.TransactionHash)
	assert.Equal(t, "30", l.Snapshot().Delegations[0].Amount)

	srv.faults.set(FaultConfig{CelestiaSendForwardThenRefuse: LostResponse{Next: 1}})
	signed = signDelegate(t, l, s, del, "40")
	_, err = send(signed)
	var apiErr *apiclient.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 400, apiErr.StatusCode)
	assert.Contains(t, apiErr.Message, "insufficient fee")
	_, landed = l.Tx(signed.Hash)
	assert.True(t, landed, "refused, but forwarded: it landed")
}
