package apiclient

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecodeEnvelope feeds arbitrary statuses and bodies to the envelope
// decoder: it must never panic, and every failure must be one of the
// package's typed errors.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add(200, []byte(`{"error":null,"result":{"status":"success","blockId":1,"fee":0.1,"gas":{"used":1,"wanted":2},"transactionHash":"AB"}}`))
	f.Add(400, []byte(errorBody(NameValidation, 100101, "client", "bad", `[{"property":"limit","constraints":{"max":"too big"}}]`)))
	f.Add(429, []byte(errorBody(NameThrottler, "<integer>", "client", NameThrottler, "null")))
	f.Add(502, []byte("<html>Bad Gateway</html>"))
	f.Add(200, []byte(""))
	f.Add(200, []byte(`{"error":null,"result":{"sta`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		m := responseMeta{method: "GET", path: "/api/v1/x", status: status, requestID: "r"}
		outs := []any{new(CelestiaBroadcastResult), new(UnsignedTransaction), new(SetupRequestPage),
			new(json.RawMessage), new(ValidatorStatusResult), new(DelegatorRewardsPage), nil}
		for _, out := range outs {
			err := decodeEnvelope(m, body, out)
			if err == nil {
				if status < 200 || status > 299 {
					t.Fatalf("status %d decoded without error", status)
				}
				continue
			}
			var a *APIError
			var u *UnexpectedResponseError
			if !errors.As(err, &a) && !errors.As(err, &u) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			_ = err.Error()
			if a != nil {
				_, _ = a.RetryAfter()
				_ = a.Retryable()
			}
			if u != nil && len(u.Excerpt) > 3*maxExcerptSize {
				t.Fatalf("excerpt too long: %d", len(u.Excerpt))
			}
		}
		if v, ok := outs[4].(*ValidatorStatusResult); ok {
			if p, err := v.ParseStatuses(); err == nil {
				_, _ = p.ForAccounts([]string{"a", "b"})
			}
		}
	})
}
