//go:build integration

package sandbox

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rlp"
	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
)

// endpointProbe is one request per endpoint, valid enough to pass
// authentication.
type endpointProbe struct {
	name, method, path string
	body               any
}

func probes() []endpointProbe {
	staker := solana.NewWallet().PublicKey().String()
	return []endpointProbe{
		{EndpointDelegatorAPR, http.MethodGet, "/api/v1/ethereum/data/delegator/apr?address=0x00000000219ab540356cbb839cbe05303d7705fa", nil},
		{EndpointNetworkAPY, http.MethodGet, "/api/v1/solana/data/network/apy", nil},
		{EndpointCelestiaSend, http.MethodPost, "/api/v1/celestia/celestia-mocha-testnet/transaction/send", map[string]any{"signedTransaction": "0a0b0c"}},
		{EndpointPolygonSend, http.MethodPost, "/api/v1/polygon/transaction/send", map[string]any{"signedTransaction": "0x02f8", "stakerAddress": "0x00000000219ab540356cbb839cbe05303d7705fa"}},
		{EndpointEigenLayerProofs, http.MethodPost, "/api/v1/eth/staking/eigenlayer/tx/verify-checkpoint-proofs", map[string]any{"eigenPodOwnerAddress": "0x00000000219ab540356cbb839cbe05303d7705fa", "activateTx": "0xabc"}},
		{EndpointHyperliquidWithdraw, http.MethodPost, "/api/v1/hyperliquid/testnet/staking/withdraw", map[string]any{"amount": 1.5, "delegatorAddress": "0x00000000219ab540356cbb839cbe05303d7705fa"}},
		{EndpointValidatorStatus, http.MethodGet, "/api/v1/solana/testnet/validator/status?voteAccounts=" + staker, nil},
		{EndpointSSVRequests, http.MethodGet, "/api/v1/eth/staking/ssv/request", nil},
		{EndpointTONStatus, http.MethodGet, "/api/v1/ton/mainnet/transactions/status/" + strings.Repeat("ab", 32), nil},
		{EndpointStake, http.MethodPost, "/api/v1/unified/staking/stake", map[string]any{"chain": "solana", "network": "testnet", "stakerAddress": staker, "amount": "1"}},
		{EndpointUnstake, http.MethodPost, "/api/v1/unified/staking/unstake", map[string]any{"chain": "solana", "network": "testnet", "stakerAddress": staker, "extra": map[string]any{"amount": "1", "stakeAccount": staker}}},
		{EndpointWithdraw, http.MethodPost, "/api/v1/unified/staking/withdraw", map[string]any{"chain": "solana", "network": "testnet", "stakerAddress": staker, "extra": map[string]any{"amount": "1"}}},
		{EndpointBroadcast, http.MethodPost, "/api/v1/unified/transaction/broadcast", map[string]any{"chain": "solana", "network": "testnet", "stakerAddress": staker, "signedTransaction": "AA=="}},
	}
}

// TestAuthentication checks NoTokenException and WrongTokenException on
// every endpoint at both address forms.
func TestAuthentication(t *testing.T) {
	expired := expiredToken(t)
	foreign, err := MintToken([]byte("another-secret"), "someone", time.Hour)
	require.NoError(t, err)
	cases := []struct {
		name   string
		header string
		want   string
		code   float64
	}{
		{"no header", "", nameNoToken, codeNoToken},
		{"empty bearer", "Bearer ", nameNoToken, codeNoToken},
		{"basic scheme", "Basic dXNlcjpwYXNz", nameNoToken, codeNoToken},
		{"garbage", "Bearer not-a-jwt", nameWrongToken, codeWrongToken},
		{"other secret", "Bearer " + foreign, nameWrongToken, codeWrongToken},
		{"expired", "Bearer " + expired, nameWrongToken, codeWrongToken},
	}
	for _, p := range probes() {
		for _, prefix := range []string{"", "/api"} {
			for _, c := range cases {
				t.Run(p.name+prefix+"/"+c.name, func(t *testing.T) {
					req, err := http.NewRequestWithContext(testCtx(t), p.method, shared.URL()+prefix+p.path, nil)
					require.NoError(t, err)
					if c.header != "" {
						req.Header.Set("Authorization", c.header)
					}
					resp, err := http.DefaultClient.Do(req)
					require.NoError(t, err)
					defer resp.Body.Close()
					var body map[string]any
					require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
					e := requireErrorEnvelope(t, rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: body}, http.StatusUnauthorized, c.want, c.code, typeAuthentication)
					assert.NotContains(t, e["message"], "eyJ", "the token never appears in errors")
				})
			}
		}
	}
	t.Run("apiclient sees WrongTokenException", func(t *testing.T) {
		cl, err := apiclient.New(shared.URL(), apiclient.WithToken(foreign))
		require.NoError(t, err)
		_, err = cl.SSVRequests(testCtx(t), apiclient.SSVRequestsQuery{})
		assert.True(t, apiclient.IsWrongToken(err), "%v", err)
		var apiErr *apiclient.APIError
		require.True(t, errors.As(err, &apiErr))
		assert.NotEmpty(t, apiErr.RequestID)
	})
}

// expiredToken is a token whose exp lies in the past.
func expiredToken(t *testing.T) string {
	t.Helper()
	tok, err := MintToken(testSecret, "someone", time.Nanosecond)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		r := do(t, http.MethodGet, shared.URL()+"/api/v1/eth/staking/ssv/request", tok, nil)
		return r.Status == http.StatusUnauthorized
	}, 5*time.Second, 50*time.Millisecond)
	return tok
}

// TestEveryEndpointAnswersAtBothForms checks that each route exists at
// /api/v1 and /api/api/v1 and that every answer carries x-request-id.
func TestEveryEndpointAnswersAtBothForms(t *testing.T) {
	tok := mintToken(t, "forms")
	// Endpoint 9 answers the transactions it records: the probe's hash is one (already recorded
	// when another test ran first).
	_, _ = shared.AddTONTransaction(TONTransaction{Network: "mainnet", Hash: strings.Repeat("ab", 32)})
	for _, p := range probes() {
		for _, prefix := range []string{"", "/api"} {
			t.Run(p.name+prefix, func(t *testing.T) {
				r := do(t, p.method, shared.URL()+prefix+p.path, tok, p.body)
				assert.NotEqual(t, http.StatusNotFound, r.Status, "%s", r.Raw)
				assert.NotEmpty(t, r.Header.Get("x-request-id"))
				assert.Contains(t, r.Body, "result")
				assert.Contains(t, r.Body, "error")
			})
		}
	}
	r := do(t, http.MethodGet, shared.URL()+"/api/v1/nowhere", tok, nil)
	requireErrorEnvelope(t, r, http.StatusNotFound, nameNotFound, codeNotFound, typeClient)
	r = do(t, http.MethodGet, shared.URL()+"/api/api/v1/unified/staking/stake", tok, nil)
	requireErrorEnvelope(t, r, http.StatusMethodNotAllowed, nameMethodNotAllowed, codeMethodNotAllowed, typeClient)
	assert.Equal(t, http.MethodPost, r.Header.Get("Allow"))
}

// TestDataEndpointsThroughClient calls every non-Solana endpoint through the
// API client at both address forms.
func TestDataEndpointsThroughClient(t *testing.T) {
	for _, suffix := range []string{"", "/api"} {
		t.Run("base"+suffix, func(t *testing.T) {
			ctx := testCtx(t)
			cl := client(t, shared.URL()+suffix, "data-user")
			apy, err := cl.NetworkAPY(ctx, "ethereum", apiclient.NetworkAPYQuery{})
			require.NoError(t, err)
			assert.Equal(t, defaultLimit, apy.Limit)
			assert.WithinDuration(t, apy.FinishAt.AddDate(0, -1, 0), apy.StartAt.Time, time.Second, "default period is one month")
			require.NotEmpty(t, apy.List)
			for _, rec := range apy.List {
				assert.Equal(t, 0, rat(t, rec.NetworkAPY).Cmp(new(big.Rat).Add(rat(t, rec.ConsensusLayerAPY), rat(t, rec.ExecutionLayerAPY))),
					"network APY %s = consensus %s + execution %s", rec.NetworkAPY, rec.ConsensusLayerAPY, rec.ExecutionLayerAPY)
			}

			apr, err := cl.DelegatorAPR(ctx, "ethereum", apiclient.DelegatorAPRQuery{Address: "0x00000000219ab540356cbb839cbe05303d7705fa", Limit: 5})
			require.NoError(t, err)
			require.Len(t, apr.List, 5)
			for _, rec := range apr.List {
				require.Len(t, rec.Rewards, 2)
				for _, rw := range rec.Rewards {
					assert.Equal(t, apiclient.CurrencyETH, rw.Currency)
					assert.Equal(t, 0, rat(t, rw.Amount).Cmp(new(big.Rat).Add(rat(t, rw.NetAmount), rat(t, rw.Fee))),
						"amount %s = net %s + fee %s", rw.Amount, rw.NetAmount, rw.Fee)
					assert.Equal(t, "0x00000000219ab540356cbb839cbe05303d7705fa", rw.Recipient)
				}
			}

			cel, err := cl.CelestiaSend(ctx, "celestia-mocha-testnet", apiclient.CelestiaSendRequest{SignedTransaction: "CgIIAQ=="})
			require.NoError(t, err)
			assert.Equal(t, apiclient.CelestiaStatusSuccess, cel.Status)
			assert.Len(t, cel.TransactionHash, 64)
			assert.Greater(t, cel.Gas.Wanted, cel.Gas.Used)

			pol, err := cl.PolygonSend(ctx, apiclient.PolygonSendRequest{SignedTransaction: "0x02f86b", StakerAddress: "0x00000000219ab540356cbb839cbe05303d7705fa"})
			require.NoError(t, err)
			assert.Contains(t, string(pol), `"transactionHash":"0x`)

			evm, err := cl.EigenLayerVerifyCheckpointProofs(ctx, apiclient.VerifyCheckpointProofsRequest{EigenPodOwnerAddress: "0x00000000219ab540356cbb839cbe05303d7705fa", ActivateTx: "0x1234"})
			require.NoError(t, err)
			assert.Equal(t, "2", evm.Type)
			require.True(t, strings.HasPrefix(evm.SerializeTx, "0x02"))
			raw, err := hex.DecodeString(evm.SerializeTx[4:])
			require.NoError(t, err)
			var fields []rlp.RawValue
			require.NoError(t, rlp.DecodeBytes(raw, &fields), "serializeTx is a typed EIP-1559 RLP list")
			assert.Len(t, fields, 9)
			assert.Equal(t, "0x"+hex.EncodeToString(verifyCheckpointProofsSelector), evm.Data[:10])

			hl, err := cl.HyperliquidWithdraw(ctx, "testnet", apiclient.HyperliquidWithdrawRequest{Amount: "1.5", DelegatorAddress: "0x00000000219ab540356cbb839cbe05303d7705fa"})
			require.NoError(t, err)
			assert.Equal(t, "1.5", hl.Amount)
			assert.Contains(t, hl.UnsignedTransaction, `"type":"cWithdraw"`)
			assert.Contains(t, hl.UnsignedTransaction, `"wei":150000000`)

			b := byte(0xcd)
			if suffix != "" {
				b = 0xce
			}
			hash := hex.EncodeToString(bytes.Repeat([]byte{b}, 32))
			_, err = cl.TONTransactionStatus(ctx, "mainnet", hash)
			var notFound *apiclient.APIError
			require.ErrorAs(t, err, &notFound, "a hash never recorded is not found")
			assert.Equal(t, http.StatusNotFound, notFound.StatusCode)
			rec, err := shared.AddTONTransaction(TONTransaction{Network: "mainnet", Hash: hash, LT: "47000000000001", OutMessagesCount: 2})
			require.NoError(t, err)
			ton, err := cl.TONTransactionStatus(ctx, "mainnet", hash)
			require.NoError(t, err)
			assert.Equal(t, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)), ton.TransactionHash)
			assert.Equal(t, "47000000000001", ton.Lt)
			assert.Equal(t, "46999999000001", ton.PrevTransactionLt)
			assert.Equal(t, rec.Address, ton.Address)
			assert.Equal(t, 2, ton.OutMessagesCount)
			assert.Equal(t, "active", ton.OldStatus)
			_, err = cl.TONTransactionStatus(ctx, "testnet", hash)
			require.ErrorAs(t, err, &notFound, "recorded on mainnet only")

			slashy := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b | 0x30}, 32))
			require.Contains(t, slashy, "/")
			_, err = shared.AddTONTransaction(TONTransaction{Network: "testnet", Hash: hex.EncodeToString(bytes.Repeat([]byte{b | 0x30}, 32))})
			require.NoError(t, err)
			ton3, err := cl.TONTransactionStatus(ctx, "testnet", slashy)
			require.NoError(t, err, "a base64 hash holding '/' is one path segment, found as the hex it was recorded as")
			assert.Equal(t, slashy, ton3.TransactionHash)

			ssv, err := cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
			require.NoError(t, err)
			assert.Equal(t, ssvRequestsPerSubject, ssv.TotalCount)
			require.Len(t, ssv.List, ssvRequestsPerSubject)
			assert.Equal(t, "processing", ssv.List[0].Status)

			votes := []string{shared.Runtime().VoteAccounts()[0].String(), shared.Runtime().DelinquentVoteAccounts()[0].String(), solana.NewWallet().PublicKey().String()}
			vs, err := cl.SolanaValidatorStatus(ctx, "mainnet-beta", votes)
			require.NoError(t, err)
			var text string
			require.NoError(t, json.Unmarshal(vs.Statuses, &text), "statuses is a JSON string")
			var m map[string]string
			require.NoError(t, json.Unmarshal([]byte(text), &m), "holding a JSON object")
			assert.Equal(t, map[string]string{votes[0]: "active", votes[1]: "delinquent", votes[2]: "unknown"}, m)
		})
	}
}

// TestPagingIsConsistent checks that pages of endpoints 1, 2 and 8 stitch
// into the same list as one big page and that filters are honoured.
func TestPagingIsConsistent(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "pager")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	finish := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	all, err := cl.NetworkAPY(ctx, "polkadot", apiclient.NetworkAPYQuery{StartAt: start, FinishAt: finish, Limit: 1000})
	require.NoError(t, err)
	require.Len(t, all.List, 60, "one period per day, both ends included")
	var stitched []apiclient.NetworkAPYRecord
	for off := 0; off < 60; off += 7 {
		p, err := cl.NetworkAPY(ctx, "polkadot", apiclient.NetworkAPYQuery{StartAt: start, FinishAt: finish, Limit: 7, Offset: off})
		require.NoError(t, err)
		stitched = append(stitched, p.List...)
	}
	assert.Equal(t, all.List, stitched)
	lo, hi := all.List[10].StakingPeriodNumber, all.List[14].StakingPeriodNumber
	f, err := cl.NetworkAPY(ctx, "polkadot", apiclient.NetworkAPYQuery{StartAt: start, FinishAt: finish, StartNumber: &lo, FinishNumber: &hi})
	require.NoError(t, err)
	assert.Equal(t, all.List[10:15], f.List)

	addr := "0x00000000219ab540356cbb839cbe05303d7705fa"
	a1, err := cl.DelegatorAPR(ctx, "ethereum", apiclient.DelegatorAPRQuery{Address: addr, StartAt: start, FinishAt: finish, Limit: 3, Offset: 2})
	require.NoError(t, err)
	a2, err := cl.DelegatorAPR(ctx, "ethereum", apiclient.DelegatorAPRQuery{Address: addr, StartAt: start, FinishAt: finish, Limit: 5})
	require.NoError(t, err)
	assert.Equal(t, a2.List[2:5], a1.List)

	other := client(t, shared.URL(), "someone-else")
	mine, err := cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
	require.NoError(t, err)
	theirs, err := other.SSVRequests(ctx, apiclient.SSVRequestsQuery{})
	require.NoError(t, err)
	assert.NotEqual(t, mine.List[0].ID, theirs.List[0].ID, "set-up requests are scoped to the token subject")
	page, err := cl.SSVRequests(ctx, apiclient.SSVRequestsQuery{Limit: 1, Offset: 1})
	require.NoError(t, err)
	assert.Equal(t, mine.List[1:2], page.List)
	assert.Equal(t, ssvRequestsPerSubject, page.TotalCount)
}

// TestValidationErrors checks the error envelope of invalid requests, one
// property at a time, on the wire.
func TestValidationErrors(t *testing.T) {
	tok := mintToken(t, "validation")
	staker := solana.NewWallet().PublicKey().String()
	unified := func(extra map[string]any) map[string]any {
		b := map[string]any{"chain": "solana", "network": "testnet", "stakerAddress": staker}
		for k, v := range extra {
			if v == nil {
				delete(b, k)
				continue
			}
			b[k] = v
		}
		return b
	}
	evm := "0x00000000219ab540356cbb839cbe05303d7705fa"
	cases := []struct {
		name, method, path string
		body               any
		wantName           string
		wantCode           float64
		props              []string
	}{
		{"stake amount missing", "POST", "/unified/staking/stake", unified(nil), nameValidation, codeValidation, []string{"amount"}},
		{"stake amount not integer", "POST", "/unified/staking/stake", unified(map[string]any{"amount": "1.5"}), nameValidation, codeValidation, []string{"amount"}},
		{"stake amount a number", "POST", "/unified/staking/stake", unified(map[string]any{"amount": 5}), nameValidation, codeValidation, []string{"amount"}},
		{"stake amount below minimum", "POST", "/unified/staking/stake", unified(map[string]any{"amount": "1000"}), nameValidation, codeValidation, []string{"amount"}},
		{"stake several missing", "POST", "/unified/staking/stake", map[string]any{}, nameValidation, codeValidation, []string{"chain", "network", "stakerAddress", "amount"}},
		{"stake body not json", "POST", "/unified/staking/stake", "{", nameValidation, codeValidation, []string{"body"}},
		{"stake unknown chain", "POST", "/unified/staking/stake", unified(map[string]any{"chain": "dogecoin", "amount": "5000000000"}), nameNetworkNotInList, codeNetworkNotInList, nil},
		{"stake chain without unified", "POST", "/unified/staking/stake", unified(map[string]any{"chain": "ethereum", "amount": "5000000000"}), nameValidation, codeValidation, []string{"chain"}},
		{"stake bad network", "POST", "/unified/staking/stake", unified(map[string]any{"network": "devnet", "amount": "5000000000"}), nameValidation, codeValidation, []string{"network"}},
		{"stake bad staker", "POST", "/unified/staking/stake", unified(map[string]any{"stakerAddress": "not-base58!", "amount": "5000000000"}), nameInvalidDelegator, codeInvalidDelegator, nil},
		{"unstake extra missing", "POST", "/unified/staking/unstake", unified(nil), nameValidation, codeValidation, []string{"extra"}},
		{"unstake extra fields missing", "POST", "/unified/staking/unstake", unified(map[string]any{"extra": map[string]any{}}), nameValidation, codeValidation, []string{"extra.amount", "extra.stakeAccount"}},
		{"unstake bad stake account", "POST", "/unified/staking/unstake", unified(map[string]any{"extra": map[string]any{"amount": "5", "stakeAccount": "xyz"}}), nameValidation, codeValidation, []string{"extra.stakeAccount"}},
		{"unstake missing stake account", "POST", "/unified/staking/unstake", unified(map[string]any{"extra": map[string]any{"amount": "5", "stakeAccount": solana.NewWallet().PublicKey().String()}}), nameValidation, codeValidation, []string{"extra.stakeAccount"}},
		{"unstake not a stake account", "POST", "/unified/staking/unstake", unified(map[string]any{"extra": map[string]any{"amount": "5", "stakeAccount": solana.SysVarClockPubkey.String()}}), nameValidation, codeValidation, []string{"extra.stakeAccount"}},
		{"withdraw nothing inactive", "POST", "/unified/staking/withdraw", unified(map[string]any{"extra": map[string]any{"amount": "5"}}), nameValidation, codeValidation, []string{"extra.amount"}},
		{"withdraw zero", "POST", "/unified/staking/withdraw", unified(map[string]any{"extra": map[string]any{"amount": "0"}}), nameValidation, codeValidation, []string{"extra.amount"}},
		{"broadcast tx missing", "POST", "/unified/transaction/broadcast", unified(nil), nameValidation, codeValidation, []string{"signedTransaction"}},
		{"apr unknown network", "GET", "/bitcoin/data/delegator/apr?address=" + evm, nil, nameNetworkNotInList, codeNetworkNotInList, nil},
		{"apr network not offered", "GET", "/solana/data/delegator/apr?address=" + evm, nil, nameNetworkNotInList, codeNetworkNotInList, nil},
		{"apr address missing", "GET", "/ethereum/data/delegator/apr", nil, nameValidation, codeValidation, []string{"address"}},
		{"apr bad address", "GET", "/ethereum/data/delegator/apr?address=0x12", nil, nameInvalidDelegator, codeInvalidDelegator, nil},
		{"apr limit zero", "GET", "/ethereum/data/delegator/apr?limit=0&address=" + evm, nil, nameValidation, codeValidation, []string{"limit"}},
		{"apy limit too big", "GET", "/solana/data/network/apy?limit=1001", nil, nameValidation, codeValidation, []string{"limit"}},
		{"apy offset too big", "GET", "/solana/data/network/apy?offset=10000001", nil, nameValidation, codeValidation, []string{"offset"}},
		{"apy bad dates", "GET", "/solana/data/network/apy?startAt=yesterday&finishAt=2020-13-01", nil, nameValidation, codeValidation, []string{"finishAt", "startAt"}},
		{"apy start after finish", "GET", "/solana/data/network/apy?startAt=2026-02-01T00:00:00Z&finishAt=2026-01-01T00:00:00Z", nil, nameValidation, codeValidation, []string{"startAt"}},
		{"apy unknown network", "GET", "/cosmoshub/data/network/apy", nil, nameNetworkNotInList, codeNetworkNotInList, nil},
		{"ssv offset too big", "GET", "/eth/staking/ssv/request?offset=100001", nil, nameValidation, codeValidation, []string{"offset"}},
		{"ssv limit not int", "GET", "/eth/staking/ssv/request?limit=ten", nil, nameValidation, codeValidation, []string{"limit"}},
		{"status param missing", "GET", "/solana/testnet/validator/status", nil, nameValidation, codeValidation, []string{"voteAccounts"}},
		{"status bad key", "GET", "/solana/testnet/validator/status?voteAccounts=abc", nil, nameValidation, codeValidation, []string{"voteAccounts"}},
		{"status bad network", "GET", "/solana/devnet/validator/status?voteAccounts=" + staker, nil, nameValidation, codeValidation, []string{"network"}},
		{"ton bad hash", "GET", "/ton/mainnet/transactions/status/xyz", nil, nameValidation, codeValidation, []string{"transactionHash"}},
		{"ton bad network", "GET", "/ton/devnet/transactions/status/" + strings.Repeat("ab", 32), nil, nameValidation, codeValidation, []string{"network"}},
		{"hyperliquid amount negative", "POST", "/hyperliquid/mainnet/staking/withdraw", map[string]any{"amount": -1, "delegatorAddress": evm}, nameValidation, codeValidation, []string{"amount"}},
		{"hyperliquid amount string", "POST", "/hyperliquid/mainnet/staking/withdraw", map[string]any{"amount": "1", "delegatorAddress": evm}, nameValidation, codeValidation, []string{"amount"}},
		{"hyperliquid bad delegator", "POST", "/hyperliquid/mainnet/staking/withdraw", map[string]any{"amount": 1, "delegatorAddress": "bob"}, nameInvalidDelegator, codeInvalidDelegator, nil},
		{"polygon not hex", "POST", "/polygon/transaction/send", map[string]any{"signedTransaction": "02f8", "stakerAddress": evm}, nameValidation, codeValidation, []string{"signedTransaction"}},
		{"polygon staker missing", "POST", "/polygon/transaction/send", map[string]any{"signedTransaction": "0x02f8"}, nameValidation, codeValidation, []string{"stakerAddress"}},
		{"polygon bad staker", "POST", "/polygon/transaction/send", map[string]any{"signedTransaction": "0x02f8", "stakerAddress": "0x1"}, nameInvalidDelegator, codeInvalidDelegator, nil},
		{"celestia bad encoding", "POST", "/celestia/celestia-mainnet-beta/transaction/send", map[string]any{"signedTransaction": "%%%"}, nameValidation, codeValidation, []string{"signedTransaction"}},
		{"celestia bad network", "POST", "/celestia/cosmoshub/transaction/send", map[string]any{"signedTransaction": "0a"}, nameValidation, codeValidation, []string{"network"}},
		{"eigenlayer fields", "POST", "/eth/staking/eigenlayer/tx/verify-checkpoint-proofs", map[string]any{"eigenPodOwnerAddress": "0x1"}, nameValidation, codeValidation, []string{"eigenPodOwnerAddress", "activateTx"}},
	}
	for _, c := range cases {
		for _, prefix := range []string{"/api/v1", "/api/api/v1"} {
			t.Run(c.name+prefix, func(t *testing.T) {
				r := do(t, c.method, shared.URL()+prefix+c.path, tok, c.body)
				e := requireErrorEnvelope(t, r, http.StatusBadRequest, c.wantName, c.wantCode, typeClient)
				var props []string
				if errs, ok := e["errors"].([]any); ok {
					for _, fe := range errs {
						m := fe.(map[string]any)
						props = append(props, m["property"].(string))
						assert.NotEmpty(t, m["constraints"])
					}
				}
				assert.ElementsMatch(t, c.props, props, "%s", r.Raw)
				if c.wantName == nameNetworkNotInList {
					assert.Contains(t, e["message"], supportedNetworksList)
				}
			})
		}
	}
}

// TestValidationThroughClient shows the API client's view of server-side
// validation errors.
func TestValidationThroughClient(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "validation-client")
	_, err := cl.Stake(ctx, apiclient.StakeRequest{Chain: "solana", Network: "testnet", StakerAddress: "0xnot-solana", Amount: "5000000000"})
	assert.True(t, apiclient.IsInvalidDelegatorAddress(err), "%v", err)
	_, err = cl.Stake(ctx, apiclient.StakeRequest{Chain: "solana", Network: "testnet", StakerAddress: solana.NewWallet().PublicKey().String(), Amount: "1"})
	require.True(t, apiclient.IsValidation(err), "%v", err)
	var apiErr *apiclient.APIError
	require.True(t, errors.As(err, &apiErr))
	require.Len(t, apiErr.Errors, 1)
	assert.Equal(t, "amount", apiErr.Errors[0].Property)
	_, err = cl.DelegatorAPR(ctx, "ethereum", apiclient.DelegatorAPRQuery{Address: "nope"})
	assert.True(t, apiclient.IsInvalidDelegatorAddress(err), "%v", err)
	_, err = cl.Withdraw(ctx, apiclient.WithdrawRequest{Chain: "solana", Network: "testnet", StakerAddress: solana.NewWallet().PublicKey().String(), Extra: apiclient.WithdrawExtra{Amount: "7"}})
	require.True(t, apiclient.IsValidation(err), "%v", err)
	require.True(t, errors.As(err, &apiErr))
	assert.Equal(t, "extra.amount", apiErr.Errors[0].Property)
	assert.Contains(t, apiErr.Errors[0].Constraints["inactiveStakeAccount"], "no inactive stake account")
	// The unsupported-network error, sent around the client's own check.
	r := do(t, http.MethodGet, shared.URL()+"/api/v1/"+url.PathEscape("near")+"/data/network/apy", mintToken(t, "x"), nil)
	requireErrorEnvelope(t, r, http.StatusBadRequest, nameNetworkNotInList, codeNetworkNotInList, typeClient)
}

// rat reads a decimal the service sent as an exact rational.
func rat(t *testing.T, n json.Number) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(n.String())
	require.True(t, ok, "%q is not a decimal", n)
	return r
}
