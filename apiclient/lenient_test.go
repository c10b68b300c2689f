package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseDateTime: the ISO 8601 forms services emit are read as the same
// instant; anything else is refused with the value quoted.
func TestParseDateTime(t *testing.T) {
	base := time.Date(2026, 11, 22, 0, 11, 12, 0, time.UTC)
	accepted := []struct {
		in   string
		want time.Time
	}{
		{"2026-11-22T00:11:12Z", base},
		{"2026-11-22T00:11:12.5Z", base.Add(500 * time.Millisecond)},
		{"2026-11-22T00:11:12.123Z", base.Add(123 * time.Millisecond)},
		{"2026-11-22T00:11:12.123456789Z", base.Add(123456789)},
		{"2026-11-22T02:11:12+02:00", base},
		{"2026-11-21T19:41:12-04:30", base},
		{"2026-11-22T02:11:12+0200", base},
		{"2026-11-22T02:11:12.250+0200", base.Add(250 * time.Millisecond)},
		{"2026-11-22 00:11:12Z", base},
		{"2026-11-22 02:11:12+02:00", base},
		{"2026-11-22 00:11:12.000001", base.Add(time.Microsecond)},
		{"2026-11-22T00:11:12", base},
		{"2026-11-22T00:11:12.75", base.Add(750 * time.Millisecond)},
		{"2026-11-22 00:11:12", base},
		{"2026-11-22t00:11:12z", base},
		{"2026-11-22T00:11:12+00:00", base},
		{"2026-11-22T00:11:12-0000", base},
	}
	for _, tt := range accepted {
		t.Run("accepted "+tt.in, func(t *testing.T) {
			got, err := ParseDateTime(tt.in)
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(got), "got %s, want %s", got, tt.want)
		})
	}
	refused := []string{
		"",
		"2026-11-22",
		"2026-11-22T00:11",
		"2026-11-22T00:11Z",
		"20261122T001112Z",
		"2026-11-22T0:11:12Z",
		"2026-11-22T00:11:12.Z",
		"2026-11-22T00:11:12+02",
		"2026-11-22T00:11:12 +02:00",
		"2026-11-22T00:11:12UTC",
		"2026-11-22T00:11:12Z ",
		" 2026-11-22T00:11:12Z",
		"2026-13-22T00:11:12Z",
		"2026-02-30T00:11:12Z",
		"2026-11-22T24:11:12Z",
		"2026-11-22T00:60:12Z",
		"2026-11-22T00:11:12+24:00",
		"2026-11-22T00:11:12+23:60",
		"2026/11/22 00:11:12",
		"22/11/2026 00:11:12",
		"Sun, 22 Nov 2026 00:11:12 GMT",
		"1795306272",
		"2026-11-22T00:11:12\u00a0Z",
		"２026-11-22T00:11:12Z",
	}
	for _, in := range refused {
		t.Run("refused "+in, func(t *testing.T) {
			_, err := ParseDateTime(in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), strconv.Quote(in), "quotes the value")
		})
	}
}

// TestDateTimeJSON: DateTime decodes every accepted form, leaves null alone,
// refuses non-strings, and encodes as RFC 3339.
func TestDateTimeJSON(t *testing.T) {
	var v struct {
		At DateTime `json:"at"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"at":"2026-11-22 00:11:12.5"}`), &v))
	assert.Equal(t, time.Date(2026, 11, 22, 0, 11, 12, 500_000_000, time.UTC), v.At.Time)
	require.NoError(t, json.Unmarshal([]byte(`{"at":null}`), &v))
	assert.False(t, v.At.IsZero(), "null leaves the value")
	err := json.Unmarshal([]byte(`{"at":1795306272}`), &v)
	assert.ErrorContains(t, err, "1795306272")
	b, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"at":"2026-11-22T00:11:12.5Z"}`, string(b))
}

// unsignedResult wraps an unsigned transaction's fields in a success
// envelope.
func unsignedResult(amount, createdAt, extraAmount string) string {
	return `{"error":null,"result":{"amount":` + amount + `,"stakerAddress":"` + staker +
		`","unsignedTransactionData":"AQID","createdAt":` + createdAt +
		`,"extraData":{"network":"testnet","feePayer":"` + staker + `","amount":` + extraAmount + `}}}`
}

func withdrawCall(t *testing.T, body string) (*UnsignedTransaction, error) {
	t.Helper()
	srv, _ := fixedServer(t, 200, map[string]string{"Content-Type": "application/json"}, body)
	c := newTestClient(t, srv.URL)
	return c.Withdraw(context.Background(), WithdrawRequest{Chain: ChainSolana, Network: "testnet", StakerAddress: staker, Extra: WithdrawExtra{Amount: "2000000000"}})
}

// TestUnsignedTransactionLenient: amount and extraData.amount come as a
// number or a string holding an integer, createdAt in any accepted form; a
// refused value fails the call with the field and the value named.
func TestUnsignedTransactionLenient(t *testing.T) {
	created := time.Date(2026, 11, 22, 0, 13, 0, 0, time.UTC)
	ok := []struct {
		name, amount, createdAt, extraAmount string
	}{
		{"numbers, RFC 3339", `2000000000`, `"2026-11-22T00:13:00Z"`, `2000000000`},
		{"strings, no zone", `"2000000000"`, `"2026-11-22T00:13:00"`, `"2000000000"`},
		{"string with spaces, space separator, +hhmm", `" 2000000000 "`, `"2026-11-22 01:13:00+0100"`, `"2000000000"`},
		{"fraction, offset with colon", `"2000000000"`, `"2026-11-21T20:13:00.000-04:00"`, `2000000000`},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			tx, err := withdrawCall(t, unsignedResult(tt.amount, tt.createdAt, tt.extraAmount))
			require.NoError(t, err)
			require.NotNil(t, tx.Amount)
			assert.Equal(t, int64(2000000000), *tx.Amount)
			require.NotNil(t, tx.ExtraData.Amount)
			assert.Equal(t, FlexInt(2000000000), *tx.ExtraData.Amount)
			assert.True(t, created.Equal(tx.CreatedAt.Time), "createdAt %s", tx.CreatedAt)
			assert.Equal(t, staker, tx.StakerAddress, "the other fields still decode")
			assert.Equal(t, "AQID", tx.UnsignedTransactionData)
			assert.Equal(t, staker, tx.ExtraData.FeePayer)
		})
	}

	tx, err := withdrawCall(t, unsignedResult(`null`, `"2026-11-22T00:13:00Z"`, `null`))
	require.NoError(t, err)
	assert.Nil(t, tx.Amount, "null amount stays absent")
	assert.Nil(t, tx.ExtraData.Amount)

	bad := []struct {
		name, amount, createdAt, extraAmount, field, value string
	}{
		{"amount with fraction", `1.5`, `"2026-11-22T00:13:00Z"`, `1`, "amount", "1.5"},
		{"amount as exponent", `"2e9"`, `"2026-11-22T00:13:00Z"`, `1`, "amount", "2e9"},
		{"amount as words", `"two"`, `"2026-11-22T00:13:00Z"`, `1`, "amount", "two"},
		{"amount as bool", `true`, `"2026-11-22T00:13:00Z"`, `1`, "amount", "true"},
		{"extraData.amount too large", `1`, `"2026-11-22T00:13:00Z"`, `"99999999999999999999"`, "extraData.amount", "99999999999999999999"},
		{"createdAt date only", `1`, `"2026-11-22"`, `1`, "createdAt", "2026-11-22"},
		{"createdAt slashes", `1`, `"2026/11/22 00:13:00"`, `1`, "createdAt", "2026/11/22 00:13:00"},
		{"createdAt unix number", `1`, `1795306380`, `1`, "createdAt", "1795306380"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := withdrawCall(t, unsignedResult(tt.amount, tt.createdAt, tt.extraAmount))
			var u *UnexpectedResponseError
			require.ErrorAs(t, err, &u, "an undecodable result is an unexpected response")
			assert.Contains(t, u.Err.Error(), tt.field+":", "names the field")
			assert.Contains(t, u.Err.Error(), tt.value, "quotes the value")
			assert.False(t, IsRetryable(err))
		})
	}
}

// TestDateTimeFieldsLenient: every date-time field of the decoded results
// reads a zone-less, space-separated form, and names itself when refused.
func TestDateTimeFieldsLenient(t *testing.T) {
	const loose = `"2026-11-22 00:11:12"`
	want := time.Date(2026, 11, 22, 0, 11, 12, 0, time.UTC)
	tests := []struct {
		name   string
		body   func(ts string) string
		fields []string
		call   func(c *Client) ([]DateTime, error)
	}{
		{"delegator apr", func(ts string) string {
			return `{"limit":50,"offset":0,"startAt":` + ts + `,"finishAt":` + ts +
				`,"list":[{"stakingPeriod":"1","stakingPeriodStart":` + ts + `,"stakingPeriodEnd":` + ts + `,"rewards":[]}]}`
		}, []string{"startAt", "finishAt", "stakingPeriodStart", "stakingPeriodEnd"}, func(c *Client) ([]DateTime, error) {
			p, err := c.DelegatorAPR(context.Background(), "ethereum", DelegatorAPRQuery{Address: ethAddr})
			if err != nil {
				return nil, err
			}
			return []DateTime{p.StartAt, p.FinishAt, p.List[0].StakingPeriodStart, p.List[0].StakingPeriodEnd}, nil
		}},
		{"network apy", func(ts string) string {
			return `{"limit":50,"offset":0,"startAt":` + ts + `,"finishAt":` + ts +
				`,"list":[{"stakingPeriodNumber":1,"stakingPeriodStart":` + ts + `,"stakingPeriodEnd":` + ts + `,"updatedAt":` + ts + `}]}`
		}, []string{"startAt", "finishAt", "stakingPeriodStart", "stakingPeriodEnd", "updatedAt"}, func(c *Client) ([]DateTime, error) {
			p, err := c.NetworkAPY(context.Background(), "solana", NetworkAPYQuery{})
			if err != nil {
				return nil, err
			}
			r := p.List[0]
			return []DateTime{p.StartAt, p.FinishAt, r.StakingPeriodStart, r.StakingPeriodEnd, r.UpdatedAt}, nil
		}},
		{"hyperliquid withdraw", func(ts string) string {
			return `{"amount":"1","unsignedTransaction":"{}","createdAt":` + ts + `}`
		}, []string{"createdAt"}, func(c *Client) ([]DateTime, error) {
			w, err := c.HyperliquidWithdraw(context.Background(), "testnet", HyperliquidWithdrawRequest{Amount: "1", DelegatorAddress: ethAddr})
			if err != nil {
				return nil, err
			}
			return []DateTime{w.CreatedAt}, nil
		}},
		{"broadcast", func(ts string) string {
			return `{"extraData":{"transactionId":"x","slot":1,"signerAccounts":[],"createdAt":` + ts + `}}`
		}, []string{"createdAt"}, func(c *Client) ([]DateTime, error) {
			r, err := c.Broadcast(context.Background(), BroadcastRequest{Chain: ChainSolana, Network: "testnet", StakerAddress: staker, SignedTransaction: base64Tx})
			if err != nil {
				return nil, err
			}
			return []DateTime{r.ExtraData.CreatedAt}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := fixedServer(t, 200, nil, `{"error":null,"result":`+tt.body(loose)+`}`)
			got, err := tt.call(newTestClient(t, srv.URL))
			require.NoError(t, err)
			for i, g := range got {
				assert.True(t, want.Equal(g.Time), "%s: got %s", tt.fields[i], g)
			}
			// One refused field at a time is named in the error.
			for i, field := range tt.fields {
				body := replaceNth(tt.body(loose), loose, `"yesterday"`, i)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = w.Write([]byte(`{"error":null,"result":` + body + `}`))
				}))
				_, err := tt.call(newTestClient(t, srv.URL))
				srv.Close()
				require.Error(t, err, field)
				assert.Contains(t, err.Error(), field+`: "yesterday"`)
			}
		})
	}
}

// replaceNth replaces the i-th (from 0) occurrence of old in s.
func replaceNth(s, old, new string, i int) string {
	at := 0
	for range i {
		at += strings.Index(s[at:], old) + len(old)
	}
	j := at + strings.Index(s[at:], old)
	return s[:j] + new + s[j+len(old):]
}

// TestErrorTimestampLenient: the error envelope's timestamp is read in the
// same forms.
func TestErrorTimestampLenient(t *testing.T) {
	body := strings.Replace(errorBody(NameValidation, 100101, "client", "bad", ""), "2026-11-22T00:20:00.000Z", "2026-11-22 01:20:00+0100", 1)
	srv, _ := fixedServer(t, 400, nil, body)
	_, err := newTestClient(t, srv.URL).SSVRequests(context.Background(), SSVRequestsQuery{})
	var a *APIError
	require.ErrorAs(t, err, &a)
	assert.True(t, time.Date(2026, 11, 22, 0, 20, 0, 0, time.UTC).Equal(a.Timestamp), "timestamp %s", a.Timestamp)
}
