//go:build integration

package sandbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
)

var testSecret = []byte("sandbox-test-secret-not-for-production")

// lamportsPerSignature is the runtime's fee per signature.
const lamportsPerSignature = 5000

// shared is the sandbox most tests use; tests that change its faults or
// hostile mode restore them.
var shared *Sandbox

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	sb, err := Start(ctx, Config{TokenSecret: testSecret, Runtime: fastRuntime()})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start shared sandbox:", err)
		os.Exit(1)
	}
	shared = sb
	code := m.Run()
	if err := sb.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close shared sandbox:", err)
	}
	os.Exit(code)
}

// fastRuntime is a quick Solana runtime: 50ms slots, 32-slot epochs.
func fastRuntime() solanart.Options {
	return solanart.Options{SlotDuration: 50 * time.Millisecond, SlotsPerEpoch: 32, FinalizationDepth: 4, VoteAccounts: 2, DelinquentVoteAccounts: 1}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mintToken(t *testing.T, subject string) string {
	t.Helper()
	tok, err := MintToken(testSecret, subject, time.Hour)
	require.NoError(t, err)
	return tok
}

// client returns an apiclient for base authenticated as subject.
func client(t *testing.T, base, subject string) *apiclient.Client {
	t.Helper()
	c, err := apiclient.New(base, apiclient.WithToken(mintToken(t, subject)))
	require.NoError(t, err)
	return c
}

// rawResponse is a decoded raw HTTP answer.
type rawResponse struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// do sends a raw request; token "" sends no Authorization header.
func do(t *testing.T, method, url, token string, body any) rawResponse {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		j, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(testCtx(t), method, url, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := rawResponse{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out.Body), "body: %s", raw)
	}
	return out
}

// requireErrorEnvelope checks the error envelope of r and returns its error object.
func requireErrorEnvelope(t *testing.T, r rawResponse, status int, name string, code float64, typ string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Raw)
	require.Contains(t, r.Body, "result")
	require.Nil(t, r.Body["result"])
	id := r.Header.Get("x-request-id")
	require.NotEmpty(t, id)
	require.Equal(t, id, r.Body["requestId"])
	ts, ok := r.Body["timestamp"].(string)
	require.True(t, ok)
	_, err := time.Parse(time.RFC3339Nano, ts)
	require.NoError(t, err)
	e, ok := r.Body["error"].(map[string]any)
	require.True(t, ok, "error object: %s", r.Raw)
	require.Equal(t, name, e["name"])
	require.Equal(t, code, e["code"])
	require.Equal(t, typ, e["type"])
	return e
}

// fundedStaker returns a new keypair holding lamports.
func fundedStaker(t *testing.T, sb *Sandbox, lamports uint64) solana.PrivateKey {
	t.Helper()
	w := solana.NewWallet()
	require.NoError(t, sb.Runtime().Airdrop(testCtx(t), w.PublicKey(), lamports))
	return w.PrivateKey
}

// signTx decodes a base64 unsigned transaction and signs it with key.
func signTx(t *testing.T, unsigned string, key solana.PrivateKey) (*solana.Transaction, string) {
	t.Helper()
	tx, err := solana.TransactionFromBase64(unsigned)
	require.NoError(t, err)
	_, err = tx.PartialSign(func(pk solana.PublicKey) *solana.PrivateKey {
		if pk.Equals(key.PublicKey()) {
			return &key
		}
		return nil
	})
	require.NoError(t, err)
	raw, err := tx.MarshalBinary()
	require.NoError(t, err)
	return tx, base64.StdEncoding.EncodeToString(raw)
}

// waitFinalized waits until sig is finalized.
// waitFinalized waits until sig is finalized without error and returns the slot it landed in.
func waitFinalized(t *testing.T, sb *Sandbox, sig solana.Signature) uint64 {
	t.Helper()
	cl := sb.Runtime().RPC()
	var slot uint64
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st, err := cl.GetSignatureStatuses(context.Background(), true, sig)
		require.NoError(c, err)
		require.Len(c, st.Value, 1)
		require.NotNil(c, st.Value[0])
		require.Nil(c, st.Value[0].Err)
		require.Equal(c, rpc.ConfirmationStatusFinalized, st.Value[0].ConfirmationStatus)
		slot = st.Value[0].Slot
	}, time.Minute, 50*time.Millisecond)
	return slot
}

func balance(t *testing.T, sb *Sandbox, pk solana.PublicKey) uint64 {
	t.Helper()
	b, err := sb.Runtime().RPC().GetBalance(testCtx(t), pk, rpc.CommitmentProcessed)
	require.NoError(t, err)
	return b.Value
}

// ledger fetches GET /sandbox/ledger.
func ledger(t *testing.T, sb *Sandbox) Ledger {
	t.Helper()
	r := do(t, http.MethodGet, sb.URL()+"/sandbox/ledger", "", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	var env struct {
		Result Ledger `json:"result"`
	}
	require.NoError(t, json.Unmarshal(r.Raw, &env))
	return env.Result
}
