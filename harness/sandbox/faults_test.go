//go:build integration

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
)

// setFaults posts cfg to the control API and restores no faults after t.
func setFaults(t *testing.T, cfg any) {
	t.Helper()
	r := do(t, http.MethodPost, shared.URL()+"/sandbox/faults", "", cfg)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	t.Cleanup(func() { require.NoError(t, shared.SetFaults(FaultConfig{})) })
}

// TestFaultCounts shows that counts fail exactly the next N requests of the
// named endpoint, in the order 429, 500, drop, and leave others alone.
func TestFaultCounts(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "faults")
	setFaults(t, map[string]any{"endpoints": map[string]any{
		EndpointSSVRequests: map[string]any{"next429": 2, "next500": 1, "nextDrop": 1, "retryAfterSeconds": 7},
	}})
	for i := 0; i < 2; i++ {
		_, err := cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
		require.True(t, apiclient.IsThrottled(err), "request %d: %v", i, err)
		var apiErr *apiclient.APIError
		require.True(t, errors.As(err, &apiErr))
		assert.Equal(t, nameThrottler, apiErr.Message)
		require.NotNil(t, apiErr.RateLimit)
		assert.Equal(t, 7*time.Second, apiErr.RateLimit.RetryAfter)
		assert.True(t, apiErr.RateLimit.HasReset)
		assert.NotEmpty(t, apiErr.RateLimit.Policy)
	}
	_, err := cl.NetworkAPY(ctx, "solana", apiclient.NetworkAPYQuery{})
	require.NoError(t, err, "other endpoints are not affected")
	_, err = cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
	var apiErr *apiclient.APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
	assert.Equal(t, typeServer, apiErr.Type)
	_, err = cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
	var tErr *apiclient.TransportError
	require.True(t, errors.As(err, &tErr), "a dropped connection is a transport error: %v", err)
	_, err = cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
	require.NoError(t, err, "the counts are used up")
	left := shared.Faults().Endpoints[EndpointSSVRequests]
	assert.Zero(t, left.Next429+left.Next500+left.NextDrop, "Faults shows the counts consumed")
}

// TestFaultRatesAreSeeded shows that the same seed draws the same faults.
func TestFaultRatesAreSeeded(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "rates")
	// A transaction endpoint 9 finds, so that only the injected faults fail a read.
	_, _ = shared.AddTONTransaction(TONTransaction{Network: "testnet", Hash: strings.Repeat("00", 32)})
	run := func() []bool {
		require.NoError(t, shared.SetFaults(FaultConfig{Seed: 42, Endpoints: map[string]EndpointFaults{EndpointAll: {Rate500: 0.5}}}))
		var out []bool
		for i := 0; i < 24; i++ {
			_, err := cl.TONTransactionStatus(ctx, "testnet", "0000000000000000000000000000000000000000000000000000000000000000")
			out = append(out, err != nil)
		}
		return out
	}
	t.Cleanup(func() { require.NoError(t, shared.SetFaults(FaultConfig{})) })
	first, second := run(), run()
	assert.Equal(t, first, second)
	assert.Contains(t, first, true)
	assert.Contains(t, first, false)
}

// TestFaultLatency shows the added latency.
func TestFaultLatency(t *testing.T) {
	cl := client(t, shared.URL(), "latency")
	setFaults(t, map[string]any{"endpoints": map[string]any{EndpointNetworkAPY: map[string]any{"latency": "300ms"}}})
	start := time.Now()
	_, err := cl.NetworkAPY(testCtx(t), "sui", apiclient.NetworkAPYQuery{})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
}

// TestBroadcastLostResponse shows a broadcast that lands while its answer is
// lost (500, then a dropped connection), and that a retry of the same bytes
// reports AlreadyProcessed.
func TestBroadcastLostResponse(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(map[bool]string{false: "500", true: "drop"}[drop], func(t *testing.T) {
			ctx := testCtx(t)
			cl := client(t, shared.URL(), "lost")
			key := fundedStaker(t, shared, 5*solLamports)
			st := stakeTx(t, cl, key, "2000000000")
			tx, signed := signTx(t, st.UnsignedTransactionData, key)
			setFaults(t, FaultConfig{BroadcastLostResponse: LostResponse{Next: 1, Drop: drop}})
			_, err := cl.Broadcast(ctx, broadcastReq(key, signed))
			require.Error(t, err)
			if drop {
				var tErr *apiclient.TransportError
				require.True(t, errors.As(err, &tErr), "%v", err)
			} else {
				var apiErr *apiclient.APIError
				require.True(t, errors.As(err, &apiErr), "%v", err)
				assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
			}
			waitFinalized(t, shared, tx.Signatures[0])
			_, err = cl.Broadcast(ctx, broadcastReq(key, signed))
			requireRejected(t, err, "AlreadyProcessed")
		})
	}
}

// TestBroadcastDropped: a dropped broadcast is answered as sent, with the signature, and never
// reaches the chain; the next broadcast is submitted as usual.
func TestBroadcastDropped(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "dropped")
	key := fundedStaker(t, shared, 5*solLamports)
	st := stakeTx(t, cl, key, "2000000000")
	tx, signed := signTx(t, st.UnsignedTransactionData, key)
	setFaults(t, FaultConfig{BroadcastDropped: LostResponse{Next: 1}})
	res, err := cl.Broadcast(ctx, broadcastReq(key, signed))
	require.NoError(t, err)
	assert.Equal(t, tx.Signatures[0].String(), res.ExtraData.TransactionID)
	// The answer came after the runtime would have seen a submitted transaction: it has none.
	got, err := shared.Runtime().RPC().GetSignatureStatuses(ctx, true, tx.Signatures[0])
	require.NoError(t, err)
	require.Len(t, got.Value, 1)
	assert.Nil(t, got.Value[0], "a dropped transaction never reaches the chain")
	_, err = cl.Broadcast(ctx, broadcastReq(key, signed))
	require.NoError(t, err, "only the next broadcast is dropped")
	waitFinalized(t, shared, tx.Signatures[0])
}

// TestFaultConfigValidation refuses unknown endpoints and bad rates.
func TestFaultConfigValidation(t *testing.T) {
	for name, cfg := range map[string]FaultConfig{
		"unknown endpoint":      {Endpoints: map[string]EndpointFaults{"nope": {Next500: 1}}},
		"rate above one":        {Endpoints: map[string]EndpointFaults{EndpointStake: {Rate429: 1.5}}},
		"negative count":        {Endpoints: map[string]EndpointFaults{EndpointStake: {NextDrop: -1}}},
		"lost rate":             {BroadcastLostResponse: LostResponse{Rate: -0.1}},
		"lose-then-refuse rate": {BroadcastLoseThenRefuse: LostResponse{Rate: 2}},
		"lose-then-refuse next": {BroadcastLoseThenRefuse: LostResponse{Next: -1}},
		"dropped rate":          {BroadcastDropped: LostResponse{Rate: 1.5}},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Error(t, cfg.Validate())
			r := do(t, http.MethodPost, shared.URL()+"/sandbox/faults", "", cfg)
			requireErrorEnvelope(t, r, http.StatusBadRequest, nameValidation, codeValidation, typeClient)
		})
	}
}

// TestControlAPI covers airdrop, warp and expire-blockhashes.
func TestControlAPI(t *testing.T) {
	to := solana.NewWallet().PublicKey()
	r := do(t, http.MethodPost, shared.URL()+"/sandbox/airdrop", "", map[string]any{"address": to.String(), "lamports": 1234567})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.EqualValues(t, 1234567, balance(t, shared, to))
	before, err := shared.Runtime().RPC().GetEpochInfo(context.Background(), "processed")
	require.NoError(t, err)
	r = do(t, http.MethodPost, shared.URL()+"/sandbox/warp", "", map[string]any{"epochs": 2})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	res := r.Body["result"].(map[string]any)
	assert.GreaterOrEqual(t, res["epoch"].(float64), float64(before.Epoch+2))
	r = do(t, http.MethodPost, shared.URL()+"/sandbox/expire-blockhashes", "", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	r = do(t, http.MethodPost, shared.URL()+"/sandbox/airdrop", "", map[string]any{"address": "x", "lamports": 1})
	requireErrorEnvelope(t, r, http.StatusBadRequest, nameValidation, codeValidation, typeClient)

	setFaults(t, map[string]any{"seed": 5, "endpoints": map[string]any{EndpointWithdraw: map[string]any{"next500": 3, "latency": "10ms"}}})
	r = do(t, http.MethodGet, shared.URL()+"/sandbox/faults", "", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.JSONEq(t, `{"seed":5,"endpoints":{"withdraw":{"latency":"10ms","next500":3}},"broadcastLostResponse":{}}`,
		string(mustJSON(t, r.Body["result"])))
	r = do(t, http.MethodGet, shared.URL()+"/sandbox/hostile", "", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.Equal(t, map[string]any{"mode": ""}, r.Body["result"])
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestFaultInjectorDecisions pins the order of counts, the rates, the "*"
// fallback and the lost-response decision.
func TestFaultInjectorDecisions(t *testing.T) {
	kinds := func(f *faultInjector, endpoint string, n int) []faultKind {
		var out []faultKind
		for i := 0; i < n; i++ {
			out = append(out, f.decide(endpoint).kind)
		}
		return out
	}
	cases := []struct {
		name     string
		cfg      FaultConfig
		endpoint string
		want     []faultKind
	}{
		{"counts in order", FaultConfig{Endpoints: map[string]EndpointFaults{EndpointStake: {Next429: 1, Next500: 2, NextDrop: 1}}},
			EndpointStake, []faultKind{fault429, fault500, fault500, faultDrop, faultNone}},
		{"other endpoint untouched", FaultConfig{Endpoints: map[string]EndpointFaults{EndpointStake: {Next500: 1}}},
			EndpointUnstake, []faultKind{faultNone, faultNone}},
		{"star applies to all", FaultConfig{Endpoints: map[string]EndpointFaults{EndpointAll: {Next429: 1}}},
			EndpointWithdraw, []faultKind{fault429, faultNone}},
		{"own entry beats star", FaultConfig{Endpoints: map[string]EndpointFaults{EndpointAll: {Next429: 1}, EndpointWithdraw: {}}},
			EndpointWithdraw, []faultKind{faultNone}},
		{"rate 429 always", FaultConfig{Endpoints: map[string]EndpointFaults{EndpointBroadcast: {Rate429: 1}}},
			EndpointBroadcast, []faultKind{fault429, fault429, fault429}},
		{"rate drop always", FaultConfig{Endpoints: map[string]EndpointFaults{EndpointBroadcast: {RateDrop: 1}}},
			EndpointBroadcast, []faultKind{faultDrop, faultDrop}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, kinds(newFaultInjector(c.cfg), c.endpoint, len(c.want)))
		})
	}
	t.Run("seeded rates repeat", func(t *testing.T) {
		cfg := FaultConfig{Seed: 9, Endpoints: map[string]EndpointFaults{EndpointAll: {Rate429: 0.3, Rate500: 0.3, RateDrop: 0.3}}}
		a := kinds(newFaultInjector(cfg), EndpointStake, 50)
		b := kinds(newFaultInjector(cfg), EndpointStake, 50)
		assert.Equal(t, a, b)
		for _, k := range []faultKind{faultNone, fault429, fault500, faultDrop} {
			assert.Contains(t, a, k)
		}
	})
	t.Run("lost response only for broadcast", func(t *testing.T) {
		f := newFaultInjector(FaultConfig{BroadcastLostResponse: LostResponse{Next: 1, Drop: true}})
		assert.False(t, f.decide(EndpointStake).lost)
		d := f.decide(EndpointBroadcast)
		assert.True(t, d.lost)
		assert.True(t, d.lostDrop)
		assert.False(t, f.decide(EndpointBroadcast).lost)
	})
	t.Run("latency and retry-after", func(t *testing.T) {
		var cfg FaultConfig
		require.NoError(t, json.Unmarshal([]byte(`{"endpoints":{"stake":{"latency":"250ms","next429":1}}}`), &cfg))
		d := newFaultInjector(cfg).decide(EndpointStake)
		assert.Equal(t, 250*time.Millisecond, d.latency)
		assert.Equal(t, 1, d.retryAfter, "Retry-After defaults to one second")
		require.NoError(t, json.Unmarshal([]byte(`{"endpoints":{"stake":{"latency":40}}}`), &cfg))
		assert.Equal(t, Duration(40*time.Millisecond), cfg.Endpoints[EndpointStake].Latency, "a number is milliseconds")
	})
}
