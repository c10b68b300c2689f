package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlexInt(t *testing.T) {
	tests := []struct {
		in      string
		want    FlexInt
		wantErr bool
	}{
		{`5000000000`, 5000000000, false},
		{`"5000000000"`, 5000000000, false},
		{`" 42 "`, 42, false},
		{`0`, 0, false},
		{`"-3"`, -3, false},
		{`1.5`, 0, true},
		{`1e9`, 0, true},
		{`"1.5"`, 0, true},
		{`"abc"`, 0, true},
		{`""`, 0, true},
		{`true`, 0, true},
		{`{}`, 0, true},
		{`"99999999999999999999"`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var v struct {
				Amount *FlexInt `json:"amount"`
			}
			err := json.Unmarshal([]byte(`{"amount":`+tt.in+`}`), &v)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, v.Amount)
			assert.Equal(t, tt.want, *v.Amount)
		})
	}
	var v struct {
		Amount *FlexInt `json:"amount"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"amount":null}`), &v))
	assert.Nil(t, v.Amount)
	b, err := json.Marshal(UnsignedExtraData{Amount: ptr(FlexInt(7))})
	require.NoError(t, err)
	assert.JSONEq(t, `{"amount":7}`, string(b))
}

// TestWithdrawExtraDataAmountForms: the withdraw extraData.amount decodes
// from a number and from a string.
func TestWithdrawExtraDataAmountForms(t *testing.T) {
	for _, in := range []string{`"2000000000"`, `2000000000`} {
		var tx UnsignedTransaction
		require.NoError(t, json.Unmarshal([]byte(`{"amount":2000000000,"extraData":{"amount":`+in+`}}`), &tx))
		require.NotNil(t, tx.ExtraData.Amount)
		assert.Equal(t, FlexInt(2000000000), *tx.ExtraData.Amount)
		assert.Equal(t, int64(2000000000), *tx.Amount)
	}
}

func TestParseStatuses(t *testing.T) {
	accounts := []string{"A1", "B2"}
	tests := []struct {
		name       string
		raw        string
		want       *ParsedStatuses
		accounts   []string
		wantMap    map[string]string
		wantMapped bool
		wantErr    bool
	}{
		{"plain string, one account", `"active"`, &ParsedStatuses{Form: StatusesString, Text: "active"},
			[]string{"A1"}, map[string]string{"A1": "active"}, true, false},
		{"comma-separated string", `"active, delinquent"`, &ParsedStatuses{Form: StatusesString, Text: "active, delinquent"},
			accounts, map[string]string{"A1": "active", "B2": "delinquent"}, true, false},
		{"string with wrong count", `"active"`, &ParsedStatuses{Form: StatusesString, Text: "active"},
			accounts, nil, false, false},
		{"list of strings", `["active","delinquent"]`, &ParsedStatuses{Form: StatusesList, List: []string{"active", "delinquent"}},
			accounts, map[string]string{"A1": "active", "B2": "delinquent"}, true, false},
		{"list of objects", `[{"status":"active"}, 3]`, &ParsedStatuses{Form: StatusesList, List: []string{`{"status":"active"}`, "3"}},
			accounts, map[string]string{"A1": `{"status":"active"}`, "B2": "3"}, true, false},
		{"map", `{"A1":"active","B2":"delinquent","C3":"x"}`, &ParsedStatuses{Form: StatusesMap, Map: map[string]string{"A1": "active", "B2": "delinquent", "C3": "x"}},
			accounts, map[string]string{"A1": "active", "B2": "delinquent"}, true, false},
		{"map missing an account", `{"A1":"active"}`, &ParsedStatuses{Form: StatusesMap, Map: map[string]string{"A1": "active"}},
			accounts, nil, false, false},
		{"null", `null`, nil, nil, nil, false, true},
		{"number", `42`, nil, nil, nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ValidatorStatusResult
			require.NoError(t, json.Unmarshal([]byte(`{"statuses":`+tt.raw+`}`), &r))
			p, err := r.ParseStatuses()
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
			m, ok := p.ForAccounts(tt.accounts)
			assert.Equal(t, tt.wantMapped, ok)
			assert.Equal(t, tt.wantMap, m)
		})
	}
	_, err := ValidatorStatusResult{}.ParseStatuses()
	assert.Error(t, err, "absent statuses")
}

// TestSSVNullableFields: the four nullable fields are nil when absent and
// `null` when null.
func TestSSVNullableFields(t *testing.T) {
	var r SetupRequest
	require.NoError(t, json.Unmarshal([]byte(`{"id":"x","ecdhPublicKey":null,"approveTx":{"to":"0x1"}}`), &r))
	assert.Equal(t, json.RawMessage(`null`), r.ECDHPublicKey)
	assert.Equal(t, json.RawMessage(`{"to":"0x1"}`), r.ApproveTx)
	assert.Nil(t, r.FeeRecipientTx)
	assert.Nil(t, r.ValidatorRegistrationTxs)
}

func TestTONNowTime(t *testing.T) {
	s := TONTransactionStatus{Now: 1763770000}
	assert.Equal(t, "2025-11-22T00:06:40Z", s.NowTime().Format("2006-01-02T15:04:05Z07:00"))
}

// TestExactDecimals decodes reward amounts and APYs that a float64 cannot hold: the client keeps
// the service's text digit for digit.
func TestExactDecimals(t *testing.T) {
	const (
		amount = "0.123456789012345678901" // 21 significant digits: 1 wei more than 18 decimals hold
		net    = "0.111111110111111111011"
		fee    = "0.012345678901234567890"
		apy    = "3.1000000000000000001"
	)
	for _, s := range []string{amount, net, fee, apy} {
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		require.NotEqual(t, s, strconv.FormatFloat(f, 'f', -1, 64), "%s must not survive a float64", s)
	}
	ctx := context.Background()

	aprBody := `{"error":null,"result":{"limit":50,"offset":0,"startAt":"2026-10-01T00:00:00Z","finishAt":"2026-11-01T00:00:00Z",` +
		`"list":[{"stakingPeriod":"7","rewards":[{"type":"consensus","amount":` + amount + `,"netAmount":` + net +
		`,"fee":` + fee + `,"currency":"ETH","recipient":"0x1111111111111111111111111111111111111111"}]}]}}`
	srv, _ := fixedServer(t, http.StatusOK, nil, aprBody)
	page, err := newTestClient(t, srv.URL).DelegatorAPR(ctx, "ethereum", DelegatorAPRQuery{Address: ethAddr})
	require.NoError(t, err)
	rw := page.List[0].Rewards[0]
	assert.Equal(t, json.Number(amount), rw.Amount)
	assert.Equal(t, json.Number(net), rw.NetAmount)
	assert.Equal(t, json.Number(fee), rw.Fee)

	apyBody := `{"error":null,"result":{"limit":50,"offset":0,"startAt":"2026-10-01T00:00:00Z","finishAt":"2026-11-01T00:00:00Z",` +
		`"list":[{"stakingPeriodNumber":7,"networkApy":` + apy + `,"consensusLayerApy":"` + apy + `"}]}}`
	srv2, _ := fixedServer(t, http.StatusOK, nil, apyBody)
	ap, err := newTestClient(t, srv2.URL).NetworkAPY(ctx, "ethereum", NetworkAPYQuery{})
	require.NoError(t, err)
	assert.Equal(t, json.Number(apy), ap.List[0].NetworkAPY)
	assert.Equal(t, json.Number(apy), ap.List[0].ConsensusLayerAPY, "a number sent as a string is kept too")
	assert.Equal(t, json.Number(""), ap.List[0].ExecutionLayerAPY, "an absent APY is empty")
}
