package apiclient

import "testing"

// BenchmarkDecodeEnvelope measures decoding the response envelopes the workflows' hot path
// reads: an unsigned transaction (build), a broadcast result, and an error envelope.
func BenchmarkDecodeEnvelope(b *testing.B) {
	cases := []struct {
		name   string
		status int
		body   string
		out    func() any
	}{
		{"unsigned-tx", 200, `{"error":null,"result":{"amount":2000000000,"stakerAddress":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",` +
			`"unsignedTransactionData":"` + benchTx + `","createdAt":"2026-01-02T03:04:05Z","extraData":{"network":"testnet",` +
			`"feePayer":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin","fromPublicKey":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",` +
			`"stakeAuthority":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin","withdrawAuthority":"9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",` +
			`"voteAccount":"CertusDeBmqN8ZawdkxK5kFGMwBXdudvWHYwtNgNhvLu"}}}`, func() any { return new(UnsignedTransaction) }},
		{"broadcast", 200, `{"error":null,"result":{"extraData":{"transactionId":"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW",` +
			`"slot":1234,"signerAccounts":["9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"],"createdAt":"2026-01-02T03:04:05Z"}}}`,
			func() any { return new(BroadcastResult) }},
		{"error", 400, errorBody(NameValidation, 100101, "client", "bad", `[{"property":"amount","constraints":{"min":"too small"}}]`),
			func() any { return new(UnsignedTransaction) }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			m := responseMeta{method: "POST", path: "/api/v1/unified/staking/stake", status: tc.status, requestID: "r"}
			body := []byte(tc.body)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				err := decodeEnvelope(m, body, tc.out())
				if (err != nil) != (tc.status >= 400) {
					b.Fatalf("status %d: error %v", tc.status, err)
				}
			}
		})
	}
}

// benchTx is a base64 string of the length of a stake transaction (about 400 bytes on the wire).
const benchTx = "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" +
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" +
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" +
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" +
	"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
