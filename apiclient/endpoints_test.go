package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the request golden files under testdata/golden")

const testToken = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzdGFrZWZsb3ctdGVzdCJ9.c2VjcmV0LXNpZ25hdHVyZQ"

// recordedRequest is the golden form of a request: what reached the server.
type recordedRequest struct {
	Method string              `json:"method"`
	Path   string              `json:"path"`
	Query  map[string][]string `json:"query"`
	Body   any                 `json:"body"`
}

func mustTime(t *testing.T, s string) DateTime {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return DateTime{v}
}

func ptr[T any](v T) *T { return &v }

// endpointCase is one endpoint call with its expected wire request and
// decoded response.
type endpointCase struct {
	name     string // golden and response fixture base name
	method   string
	path     string // escaped path after the base URL
	call     func(ctx context.Context, c *Client) (any, error)
	expected func(t *testing.T) any
}

const (
	staker   = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"
	vote     = "CertusDeBmqN8ZawdkxK5kFGMwBXdudvWHYwtNgNhvLu"
	ethAddr  = "0x8f2b1d6c1f0e4f1a9b9a1e1d2c3b4a5968776655"
	hexTx    = "0a8f010a8c010a1c2f636f736d6f732e7374616b696e67"
	base64Tx = "Co8BCowBChwvY29zbW9zLnN0YWtpbmc="
)

func endpointCases() []endpointCase {
	return []endpointCase{
		{
			name: "delegator_apr", method: http.MethodGet, path: "/api/v1/ethereum/data/delegator/apr",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.DelegatorAPR(ctx, "ethereum", DelegatorAPRQuery{
					Address:      ethAddr,
					StartAt:      time.Date(2026, 10, 22, 2, 0, 0, 0, time.FixedZone("x", 2*3600)),
					FinishAt:     time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
					StartNumber:  ptr(int64(0)),
					FinishNumber: ptr(int64(412400)),
					Limit:        50,
					Offset:       100,
				})
			},
			expected: func(t *testing.T) any {
				return &DelegatorRewardsPage{
					Limit: 50, Offset: 100,
					StartAt:  mustTime(t, "2026-10-22T00:00:00Z"),
					FinishAt: mustTime(t, "2026-11-22T00:00:00Z"),
					List: []DelegatorRewardRecord{{
						StakingPeriod:      "412345",
						StakingPeriodStart: mustTime(t, "2026-11-01T00:00:00Z"),
						StakingPeriodEnd:   mustTime(t, "2026-11-01T06:24:00Z"),
						Rewards: []Reward{
							{Validator: ethAddr, Type: RewardTypeConsensus, Amount: "0.0123", NetAmount: "0.0111", Fee: "0.0012", Currency: CurrencyETH, Recipient: "0x1111111111111111111111111111111111111111"},
							{Type: RewardTypeExecution, Amount: "0.5", NetAmount: "0.45", Fee: "0.05", Currency: CurrencyETH, Recipient: "0x2222222222222222222222222222222222222222"},
						},
						Validator:    ethAddr,
						NotFinalized: true,
					}},
				}
			},
		},
		{
			name: "network_apy", method: http.MethodGet, path: "/api/v1/solana/data/network/apy",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.NetworkAPY(ctx, "solana", NetworkAPYQuery{
					StartAt:     time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC),
					StartNumber: ptr(int64(700)),
					Limit:       20,
					Offset:      40,
				})
			},
			expected: func(t *testing.T) any {
				return &NetworkAPYPage{
					Limit: 20, Offset: 40,
					StartAt:  mustTime(t, "2026-10-01T00:00:00Z"),
					FinishAt: mustTime(t, "2026-11-01T00:00:00Z"),
					List: []NetworkAPYRecord{{
						StakingPeriodNumber: 412345,
						StakingPeriodStart:  mustTime(t, "2026-10-31T18:00:00Z"),
						StakingPeriodEnd:    mustTime(t, "2026-11-01T00:24:00.5Z"),
						NetworkAPY:          "3.21",
						UpdatedAt:           mustTime(t, "2026-11-01T01:00:00+02:00"),
						ConsensusLayerAPY:   "2.8",
						ExecutionLayerAPY:   "0.41",
					}},
				}
			},
		},
		{
			name: "celestia_send", method: http.MethodPost, path: "/api/v1/celestia/celestia-mocha-testnet/transaction/send",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CelestiaSend(ctx, "celestia-mocha-testnet", CelestiaSendRequest{SignedTransaction: base64Tx})
			},
			expected: func(t *testing.T) any {
				return &CelestiaBroadcastResult{
					Status: CelestiaStatusSuccess, BlockID: 3456789, Fee: 0.002,
					Gas:             CelestiaGas{Used: 81234, Wanted: 100000},
					TransactionHash: "A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F9",
				}
			},
		},
		{
			name: "polygon_send", method: http.MethodPost, path: "/api/v1/polygon/transaction/send",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.PolygonSend(ctx, PolygonSendRequest{SignedTransaction: "0x02f8b2", StakerAddress: ethAddr})
			},
			expected: func(t *testing.T) any {
				return json.RawMessage(`{"transactionHash": "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060", "status": "submitted"}`)
			},
		},
		{
			name: "eigenlayer_verify_checkpoint_proofs", method: http.MethodPost, path: "/api/v1/eth/staking/eigenlayer/tx/verify-checkpoint-proofs",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.EigenLayerVerifyCheckpointProofs(ctx, VerifyCheckpointProofsRequest{EigenPodOwnerAddress: ethAddr, ActivateTx: "0xdeadbeef"})
			},
			expected: func(t *testing.T) any {
				return &SerializedEVMTransaction{
					SerializeTx: "0x02f8b20180843b9aca00850ba43b740083030d4094", To: "0x3333333333333333333333333333333333333333",
					GasLimit: "200000", Data: "0xf074ba62", Value: "0", ChainID: "1", Type: "2",
					MaxFeePerGas: "50000000000", MaxPriorityFeePerGas: "1000000000",
				}
			},
		},
		{
			name: "hyperliquid_withdraw", method: http.MethodPost, path: "/api/v1/hyperliquid/testnet/staking/withdraw",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.HyperliquidWithdraw(ctx, "testnet", HyperliquidWithdrawRequest{Amount: "12.5", DelegatorAddress: ethAddr})
			},
			expected: func(t *testing.T) any {
				return &HyperliquidWithdrawal{
					Amount:              "12.5",
					UnsignedTransaction: `{"action":{"type":"cWithdraw","wei":1250000000}}`,
					CreatedAt:           mustTime(t, "2026-11-22T00:10:00.123Z"),
				}
			},
		},
		{
			name: "solana_validator_status", method: http.MethodGet, path: "/api/v1/solana/mainnet-beta/validator/status",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.SolanaValidatorStatus(ctx, "mainnet-beta", []string{vote, "Vote111111111111111111111111111111111111111"})
			},
			expected: func(t *testing.T) any {
				return &ValidatorStatusResult{Statuses: json.RawMessage(`"active,delinquent"`)}
			},
		},
		{
			name: "ssv_requests", method: http.MethodGet, path: "/api/v1/eth/staking/ssv/request",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.SSVRequests(ctx, SSVRequestsQuery{Limit: 10, Offset: 20})
			},
			expected: func(t *testing.T) any {
				return &SetupRequestPage{
					Limit: 10, Offset: 20, TotalCount: 21,
					List: []SetupRequest{{
						ID: "3f1c9a52-8a0e-4d7b-9c61-0b2d5e7f8a90", Status: "processing", ValidatorsCount: 2,
						AmountPerValidator: "32000000000", WithdrawalCredentialsType: "0x02",
						WithdrawalAddress:   "0x4444444444444444444444444444444444444444",
						FeeRecipientAddress: "0x5555555555555555555555555555555555555555",
						SSVOwnerAddress:     "0x6666666666666666666666666666666666666666",
						Type:                "without-encrypt-key", OperationPeriodInDays: 365, LiquidationPeriodInDays: 30,
						EncryptedShares:          []EncryptedShare{{PublicKey: "0xa1b2", Nonce: "7", SharesData: "0xc3d4", ECDHEncryptedPrivateKey: "0xe5f6"}},
						Clusters:                 []Cluster{{Operators: []int64{1, 2, 3, 4}}},
						ECDHPublicKey:            json.RawMessage(`null`),
						ValidatorRegistrationTxs: json.RawMessage(`[{"to": "0x7777"}]`),
						FeeRecipientTx:           json.RawMessage(`"0xabcdef"`),
						ApproveTx:                json.RawMessage(`null`),
					}},
				}
			},
		},
		{
			name: "ton_transaction_status", method: http.MethodGet, path: "/api/v1/ton/mainnet/transactions/status/a%2Fb+c==",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.TONTransactionStatus(ctx, "mainnet", "a/b+c==")
			},
			expected: func(t *testing.T) any {
				return &TONTransactionStatus{
					Address: "EQCkR1cGmnsE45N4K0otPl5EnxnRakmGqeJUNua5fkWhales", Lt: "47123456000003",
					PrevTransactionHash: "q2l0cnVzdGVkLXByZXYtaGFzaA==", PrevTransactionLt: "47123455000001",
					Now: 1763770000, OutMessagesCount: 1, OldStatus: "active", EndStatus: "active", TransactionHash: "a/b+c==",
				}
			},
		},
		{
			name: "stake", method: http.MethodPost, path: "/api/v1/unified/staking/stake",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Stake(ctx, StakeRequest{Chain: "solana", Network: "mainnet-beta", StakerAddress: staker, Amount: "2000000000"})
			},
			expected: func(t *testing.T) any {
				return &UnsignedTransaction{
					Amount: ptr(int64(2000000000)), StakerAddress: staker,
					UnsignedTransactionData: "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
					CreatedAt:               mustTime(t, "2026-11-22T00:11:12Z"),
					ExtraData: UnsignedExtraData{
						Network: "mainnet-beta", FeePayer: staker, FromPublicKey: staker,
						StakeAuthority: staker, WithdrawAuthority: staker, VoteAccount: vote,
					},
				}
			},
		},
		{
			name: "unstake", method: http.MethodPost, path: "/api/v1/unified/staking/unstake",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Unstake(ctx, UnstakeRequest{Chain: "solana", Network: "mainnet-beta", StakerAddress: staker,
					Extra: UnstakeExtra{Amount: "2000000000", StakeAccount: "Hz9nydgN1k15wnwffKX7CSmZp4VFTnTwLXAEdomFGNXy"}})
			},
			expected: func(t *testing.T) any {
				return &UnsignedTransaction{
					StakerAddress:           staker,
					UnsignedTransactionData: "AgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
					CreatedAt:               mustTime(t, "2026-11-22T00:12:00Z"),
					ExtraData:               UnsignedExtraData{Network: "mainnet-beta", FeePayer: staker, StakeAuthority: staker},
				}
			},
		},
		{
			name: "withdraw", method: http.MethodPost, path: "/api/v1/unified/staking/withdraw",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Withdraw(ctx, WithdrawRequest{Chain: "solana", Network: "testnet", StakerAddress: staker,
					Extra: WithdrawExtra{Amount: "2000000000"}})
			},
			expected: func(t *testing.T) any {
				return &UnsignedTransaction{
					Amount: ptr(int64(2000000000)), StakerAddress: staker,
					UnsignedTransactionData: "AwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
					CreatedAt:               mustTime(t, "2026-11-22T00:13:00Z"),
					ExtraData: UnsignedExtraData{
						Network: "testnet", FeePayer: staker, WithdrawAuthority: staker,
						Recipient: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", Amount: ptr(FlexInt(2000000000)),
					},
				}
			},
		},
		{
			name: "broadcast", method: http.MethodPost, path: "/api/v1/unified/transaction/broadcast",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Broadcast(ctx, BroadcastRequest{Chain: "solana", Network: "mainnet-beta", StakerAddress: staker, SignedTransaction: "AQID"})
			},
			expected: func(t *testing.T) any {
				return &BroadcastResult{ExtraData: BroadcastExtraData{
					TransactionID:  "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW",
					Slot:           312345678,
					SignerAccounts: []string{staker, "Stake11111111111111111111111111111111111111"},
					CreatedAt:      mustTime(t, "2026-11-22T00:14:00Z"),
				}}
			},
		},
	}
}

// recordServer answers every request with the fixture and hands the request,
// with its path relative to prefix, to the test over a channel.
func recordServer(t *testing.T, prefix string, fixture []byte) (*httptest.Server, <-chan *http.Request, <-chan []byte) {
	t.Helper()
	reqs := make(chan *http.Request, 16)
	bodies := make(chan []byte, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		reqs <- r
		bodies <- b
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-Request-Id", "req-"+strings.TrimPrefix(r.URL.EscapedPath(), prefix))
		_, _ = w.Write(fixture)
	}))
	t.Cleanup(srv.Close)
	return srv, reqs, bodies
}

func goldenRecord(t *testing.T, r *http.Request, prefix string, body []byte) []byte {
	t.Helper()
	rec := recordedRequest{
		Method: r.Method,
		Path:   strings.TrimPrefix(r.URL.EscapedPath(), prefix),
		Query:  r.URL.Query(),
	}
	if len(body) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&rec.Body), "request body is JSON")
	}
	out, err := json.MarshalIndent(rec, "", "  ")
	require.NoError(t, err)
	return append(out, '\n')
}

// TestEndpoints checks, for each endpoint and both address forms, the method,
// path, query, headers and body reaching the server (against a golden file)
// and the response decoded field by field.
func TestEndpoints(t *testing.T) {
	for _, form := range []struct{ name, prefix string }{{"bare", ""}, {"repeated_api", "/api"}} {
		for _, tc := range endpointCases() {
			t.Run(form.name+"/"+tc.name, func(t *testing.T) {
				fixture, err := os.ReadFile(filepath.Join("testdata", "responses", tc.name+".json"))
				require.NoError(t, err)
				srv, reqs, bodies := recordServer(t, form.prefix, fixture)
				c, err := New(srv.URL+form.prefix, WithToken(testToken), WithUserAgent("stakeflow-test/1"))
				require.NoError(t, err)

				var info ResponseInfo
				got, err := tc.call(WithResponseInfo(context.Background(), &info), c)
				require.NoError(t, err)

				r, body := <-reqs, <-bodies
				assert.Equal(t, tc.method, r.Method)
				assert.Equal(t, form.prefix+tc.path, r.URL.EscapedPath(), "full path on the server")
				assert.Equal(t, "Bearer "+testToken, r.Header.Get("Authorization"))
				assert.Equal(t, "stakeflow-test/1", r.Header.Get("User-Agent"))
				assert.Equal(t, "application/json", r.Header.Get("Accept"))
				if tc.method == http.MethodPost {
					assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
				} else {
					assert.Empty(t, body, "GET carries no body")
				}

				rec := goldenRecord(t, r, form.prefix, body)
				golden := filepath.Join("testdata", "golden", tc.name+".request.json")
				if *update && form.prefix == "" {
					require.NoError(t, os.WriteFile(golden, rec, 0o644))
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err, "golden file (run go test -update to create)")
				assert.Equal(t, string(want), string(rec), "request differs from %s", golden)

				exp := tc.expected(t)
				assertNoZeroFields(t, exp, tc.name)
				assert.Equal(t, exp, got)
				assertSameKeys(t, fixture, got)

				assert.Equal(t, http.StatusOK, info.StatusCode)
				assert.Equal(t, "req-"+tc.path, info.RequestID)
			})
		}
	}
}

// zeroAllowed lists fields that an endpoint's fixture legitimately leaves at
// their zero value (the field does not belong to that operation).
var zeroAllowed = map[string][]string{
	"delegator_apr": {"List.Rewards.Validator"},
	"stake":         {"ExtraData.Recipient", "ExtraData.Amount"},
	"unstake":       {"Amount", "ExtraData.FromPublicKey", "ExtraData.WithdrawAuthority", "ExtraData.VoteAccount", "ExtraData.Recipient", "ExtraData.Amount"},
	"withdraw":      {"ExtraData.FromPublicKey", "ExtraData.StakeAuthority", "ExtraData.VoteAccount"},
}

// assertNoZeroFields fails when an expected value leaves a field at its zero
// value, so that every JSON name is exercised by a non-zero fixture value.
func assertNoZeroFields(t *testing.T, v any, name string) {
	t.Helper()
	allowed := map[string]bool{}
	for _, f := range zeroAllowed[name] {
		allowed[f] = true
	}
	var walk func(rv reflect.Value, path string, anyElem bool)
	walk = func(rv reflect.Value, path string, anyElem bool) {
		switch rv.Kind() {
		case reflect.Pointer:
			if rv.IsNil() {
				if !allowed[path] {
					t.Errorf("%s: expected value leaves %s nil", name, path)
				}
				return
			}
			walk(rv.Elem(), path, anyElem)
		case reflect.Struct:
			if rv.Type() == reflect.TypeOf(time.Time{}) {
				if rv.Interface().(time.Time).IsZero() && !allowed[path] {
					t.Errorf("%s: expected value leaves %s zero", name, path)
				}
				return
			}
			for i := range rv.NumField() {
				f := rv.Type().Field(i)
				p := f.Name
				if path != "" {
					p = path + "." + f.Name
				}
				walk(rv.Field(i), p, anyElem)
			}
		case reflect.Slice:
			if rv.Len() == 0 && !allowed[path] {
				t.Errorf("%s: expected value leaves %s empty", name, path)
			}
			if rv.Type().Elem().Kind() == reflect.Uint8 {
				return
			}
			// A field is covered when some element sets it.
			if rv.Len() > 0 && rv.Type().Elem().Kind() == reflect.Struct && rv.Type().Elem() != reflect.TypeOf(time.Time{}) {
				et := rv.Type().Elem()
				for i := range et.NumField() {
					p := path + "." + et.Field(i).Name
					set := false
					for j := range rv.Len() {
						if !rv.Index(j).Field(i).IsZero() {
							set = true
						}
					}
					if !set && !allowed[p] {
						t.Errorf("%s: no element of %s sets %s", name, path, et.Field(i).Name)
					}
					for j := range rv.Len() {
						if !rv.Index(j).Field(i).IsZero() {
							walk(rv.Index(j).Field(i), p, true)
						}
					}
				}
			}
		default:
			if rv.IsZero() && !allowed[path] && !anyElem {
				t.Errorf("%s: expected value leaves %s zero", name, path)
			}
		}
	}
	walk(reflect.ValueOf(v), "", false)
}

// assertSameKeys checks that got, encoded again, has exactly the object keys
// of the fixture's result. encoding/json matches names case-insensitively
// when decoding, so this is what pins each JSON name's exact spelling.
func assertSameKeys(t *testing.T, fixture []byte, got any) {
	t.Helper()
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal(fixture, &env))
	encoded, err := json.Marshal(got)
	require.NoError(t, err)
	want, have := map[string]bool{}, map[string]bool{}
	var a, b any
	require.NoError(t, json.Unmarshal(env.Result, &a))
	require.NoError(t, json.Unmarshal(encoded, &b))
	keyPaths(a, "", want)
	keyPaths(b, "", have)
	assert.Equal(t, want, have, "JSON names of the decoded result")
}

func keyPaths(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := prefix + "." + k
			out[p] = true
			keyPaths(e, p, out)
		}
	case []any:
		for _, e := range x {
			keyPaths(e, prefix+"[]", out)
		}
	}
}
