package hyperliquid

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWei(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "0.0": 0, "2.5": 250000000, "0.00000001": 1, "184467440737.09551615": 18446744073709551615} {
		got, err := Wei(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "-1", "0.000000001", "1e3", "0x10", "1/2", "184467440737.09551616"} {
		_, err := Wei(in)
		assert.Error(t, err, in)
	}
}

// TestAccount reads the four info requests a delegator's account takes, as the API answers them,
// and asserts each request body.
func TestAccount(t *testing.T) {
	user := "0x1111111111111111111111111111111111111111"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/info", r.URL.Path)
		var req map[string]string
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		require.Equal(t, user, req["user"])
		answers := map[string]string{
			"delegatorSummary":       `{"delegated":"0.0","undelegated":"7.5","totalPendingWithdrawal":"2.5","nPendingWithdrawals":1}`,
			"pendingWithdrawals":     `[{"nonce":42,"amount":"2.5","hash":"0xab","time":1764000000000,"completesAt":1764604800000}]`,
			"delegatorHistory":       `[{"time":1,"hash":"0xcd","nonce":41,"delta":{"withdrawal":{"amount":"1.0","phase":"finalized"}}},{"time":2,"hash":"0xab","nonce":42,"delta":{"withdrawal":{"amount":"2.5","phase":"initiated"}}}]`,
			"spotClearinghouseState": `{"balances":[{"coin":"USDC","token":0,"total":"9.0"},{"coin":"HYPE","token":150,"total":"1.0","hold":"0.0"}]}`,
		}
		a, ok := answers[req["type"]]
		require.True(t, ok, req["type"])
		_, _ = w.Write([]byte(a))
	}))
	defer srv.Close()
	acc, err := New(srv.URL).Account(context.Background(), user)
	require.NoError(t, err)
	assert.Equal(t, Account{Staking: 750000000, Spot: 100000000, Finalized: []uint64{41},
		Pending: []Pending{{Nonce: 42, Wei: 250000000, CompletesAt: time.UnixMilli(1764604800000).UTC()}}}, acc)
}

func TestExchangeStatuses(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/exchange", r.URL.Path)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"status":"err","response":"Invalid nonce"}`))
	}))
	defer srv.Close()
	res, err := New(srv.URL).Exchange(context.Background(), map[string]int{"nonce": 1})
	require.NoError(t, err)
	assert.False(t, res.OK())
	assert.Equal(t, "Invalid nonce", res.Reason())
	status = http.StatusBadGateway
	_, err = New(srv.URL).Exchange(context.Background(), nil)
	var un *UnavailableError
	assert.True(t, errors.As(err, &un))
	status = http.StatusUnprocessableEntity
	_, err = New(srv.URL).Exchange(context.Background(), nil)
	assert.ErrorIs(t, err, ErrRefused)
}
