package solchain

import (
	"encoding/binary"
	"net/http"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKnownGenesisHash(t *testing.T) {
	for _, tc := range []struct {
		network, want string
		ok            bool
	}{
		{"mainnet-beta", "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d", true},
		{"testnet", "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY", true},
		{"devnet", "", false}, // not a network stakeflow operates (the service serves no devnet)
		{"localnet", "", false},
	} {
		got, ok := KnownGenesisHash(tc.network)
		assert.Equal(t, tc.ok, ok, tc.network)
		assert.Equal(t, tc.want, got, tc.network)
	}
}

func TestGenesisHash(t *testing.T) {
	srv := rpcServer(t, rpcCall{method: "getGenesisHash", result: `"4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"`})
	got, err := New(srv.URL).GenesisHash(ctx)
	require.NoError(t, err)
	assert.Equal(t, "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY", got)
}

func voteEntry(vote solana.PublicKey, commission uint8, lastVote uint64) string {
	return `{"votePubkey":"` + vote.String() + `","nodePubkey":"` + key(7).String() + `","activatedStake":42000000000,"epochVoteAccount":true,"commission":` +
		jsonNum(uint64(commission)) + `,"lastVote":` + jsonNum(lastVote) + `,"rootSlot":100,"epochCredits":[[5,100,50]]}`
}

func TestVoteAccount(t *testing.T) {
	params := `[{"commitment":"confirmed","votePubkey":"` + voter.String() + `","keepUnstakedDelinquents":true}]`
	cases := []struct {
		name   string
		result string
		want   VoteAccountStatus
	}{
		{"current", `{"current":[` + voteEntry(voter, 7, 140) + `],"delinquent":[]}`,
			VoteAccountStatus{VoteAccount: voter.String(), Found: true, Commission: 7, ActivatedStake: 42_000_000_000, LastVote: 140, Node: key(7).String()}},
		{"delinquent", `{"current":[],"delinquent":[` + voteEntry(voter, 5, 12) + `]}`,
			VoteAccountStatus{VoteAccount: voter.String(), Found: true, Delinquent: true, Commission: 5, ActivatedStake: 42_000_000_000, LastVote: 12, Node: key(7).String()}},
		{"listed twice counts as delinquent", `{"current":[` + voteEntry(voter, 5, 140) + `],"delinquent":[` + voteEntry(voter, 5, 12) + `]}`,
			VoteAccountStatus{VoteAccount: voter.String(), Found: true, Delinquent: true, Commission: 5, ActivatedStake: 42_000_000_000, LastVote: 12, Node: key(7).String()}},
		// A node that ignores the filter answers with every vote account: only ours counts.
		{"unknown", `{"current":[` + voteEntry(key(8), 0, 140) + `],"delinquent":[]}`,
			VoteAccountStatus{VoteAccount: voter.String()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := rpcServer(t, rpcCall{method: "getVoteAccounts", params: params, result: tc.result})
			got, err := New(srv.URL).VoteAccount(ctx, voter.String())
			require.NoError(t, err)
			assert.Equal(t, &tc.want, got)
			assert.Equal(t, tc.want.Found && !tc.want.Delinquent, got.Current())
		})
	}
	t.Run("bad address", func(t *testing.T) {
		_, err := NewWithRPC(nil).VoteAccount(ctx, "nope")
		require.ErrorIs(t, err, ErrInvalidArgument)
	})
}

func TestTransactionFee(t *testing.T) {
	params := `["` + testSig + `",{"commitment":"finalized","encoding":"base64","maxSupportedTransactionVersion":0}]`
	t.Run("found", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getTransaction", params: params,
			result: `{"slot":430,"blockTime":1700000000,"version":"legacy","transaction":["AQID","base64"],"meta":{"err":null,"status":{"Ok":null},"fee":15000,"preBalances":[],"postBalances":[],"innerInstructions":[],"logMessages":[],"rewards":[],"computeUnitsConsumed":450}}`})
		fee, err := New(srv.URL).TransactionFee(ctx, testSig)
		require.NoError(t, err)
		assert.Equal(t, uint64(15000), fee)
	})
	t.Run("not found", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getTransaction", params: params, result: `null`})
		_, err := New(srv.URL).TransactionFee(ctx, testSig)
		require.ErrorIs(t, err, ErrTransactionNotFound)
	})
	t.Run("bad signature", func(t *testing.T) {
		_, err := NewWithRPC(nil).TransactionFee(ctx, "nope")
		require.ErrorIs(t, err, ErrInvalidArgument)
	})
}

func TestInstructionPrograms(t *testing.T) {
	params := `["` + testSig + `",{"commitment":"finalized","encoding":"base64","maxSupportedTransactionVersion":0}]`
	payer := key(1)
	tx, err := solana.NewTransaction([]solana.Instruction{
		solana.NewInstruction(solana.ComputeBudget, solana.AccountMetaSlice{}, []byte{3, 0, 0, 0, 0, 0, 0, 0, 0}),
		solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{solana.Meta(key(2)).WRITE()}, []byte{5, 0, 0, 0}),
	}, solana.Hash{7}, solana.TransactionPayer(payer))
	require.NoError(t, err)
	tx.Signatures = make([]solana.Signature, 1)
	t.Run("found", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getTransaction", params: params,
			result: `{"slot":430,"version":"legacy","transaction":["` + tx.MustToBase64() + `","base64"],"meta":{"err":{"InstructionError":[1,{"Custom":2}]},"fee":5000}}`})
		got, err := New(srv.URL).InstructionPrograms(ctx, testSig)
		require.NoError(t, err)
		assert.Equal(t, []string{"ComputeBudget111111111111111111111111111111", "Stake11111111111111111111111111111111111111"}, got)
	})
	t.Run("not found", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getTransaction", params: params, result: `null`})
		_, err := New(srv.URL).InstructionPrograms(ctx, testSig)
		require.ErrorIs(t, err, ErrTransactionNotFound)
	})
	t.Run("bytes that do not decode", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getTransaction", params: params,
			result: `{"slot":430,"version":"legacy","transaction":["AQID","base64"],"meta":{"err":null,"fee":5000}}`})
		_, err := New(srv.URL).InstructionPrograms(ctx, testSig)
		require.Error(t, err)
	})
}

func TestAccountInfo(t *testing.T) {
	addr := key(9).String()
	t.Run("exists", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getAccountInfo", params: accountParams(addr), result: accountResult(solana.StakeProgramID, 2_282_880, make([]byte, StakeAccountSize))})
		got, err := New(srv.URL).AccountInfo(ctx, addr)
		require.NoError(t, err)
		assert.Equal(t, &AccountInfo{Address: addr, Owner: solana.StakeProgramID.String(), Lamports: 2_282_880, DataLen: StakeAccountSize}, got)
	})
	t.Run("missing", func(t *testing.T) {
		srv := rpcServer(t, rpcCall{method: "getAccountInfo", params: accountParams(addr), result: `{"context":{"slot":1},"value":null}`})
		_, err := New(srv.URL).AccountInfo(ctx, addr)
		require.ErrorIs(t, err, ErrAccountNotFound)
	})
}

// TestUnixTime reads the Clock sysvar's unix_timestamp: the fifth 8-byte field, after slot,
// epoch_start_timestamp, epoch and leader_schedule_epoch (solana-program's Clock layout).
func TestUnixTime(t *testing.T) {
	clock := solana.SysVarClockPubkey.String()
	sysvarOwner := solana.MustPublicKeyFromBase58("Sysvar1111111111111111111111111111111111111")
	data := make([]byte, 40)
	binary.LittleEndian.PutUint64(data[0:], 1234)           // slot
	binary.LittleEndian.PutUint64(data[8:], 1_700_000_000)  // epoch_start_timestamp
	binary.LittleEndian.PutUint64(data[16:], 7)             // epoch
	binary.LittleEndian.PutUint64(data[24:], 8)             // leader_schedule_epoch
	binary.LittleEndian.PutUint64(data[32:], 1_790_000_000) // unix_timestamp
	srv := rpcServer(t, rpcCall{method: "getAccountInfo", params: accountParams(clock), result: accountResult(sysvarOwner, 1_169_280, data)})
	got, err := New(srv.URL).UnixTime(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1_790_000_000), got)

	short := rpcServer(t, rpcCall{method: "getAccountInfo", params: accountParams(clock), result: accountResult(sysvarOwner, 1, data[:32])})
	_, err = New(short.URL).UnixTime(ctx)
	require.Error(t, err)
}

// TestProviderRefusalsArePermanent: a 401 or 403 is permanent even when the provider sends a
// JSON-RPC error object with it (which solana-go would otherwise report as a JSON-RPC error of
// the provider's own code, transient).
func TestProviderRefusalsArePermanent(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		srv := rawRPCServer(t, status, `{"jsonrpc":"2.0","error":{"code":-32052,"message":"API key is not allowed to access blockchain"},"id":1}`)
		_, err := New(srv.URL + "/secret-token").BlockHeight(ctx)
		require.Error(t, err)
		assert.False(t, IsTransient(err), "%d: %v", status, err)
		assert.Contains(t, err.Error(), http.StatusText(status))
		assert.NotContains(t, err.Error(), "secret-token")
	}
	srv := rawRPCServer(t, http.StatusRequestTimeout, `timeout`)
	_, err := New(srv.URL).BlockHeight(ctx)
	assert.True(t, IsTransient(err), "408 is transient: %v", err)
}

// TestMinimumDelegation reads getStakeMinimumDelegation in the shape the Solana RPC documents
// (solana.com/docs/rpc/http/getstakeminimumdelegation: an RpcResponse, {"context":{"slot":501},
// "value":1000000000}) with the read commitment.
func TestMinimumDelegation(t *testing.T) {
	srv := rpcServer(t,
		rpcCall{method: "getStakeMinimumDelegation", params: `[{"commitment":"confirmed"}]`, result: `{"context":{"slot":501},"value":1000000000}`},
		rpcCall{method: "getStakeMinimumDelegation", params: `[{"commitment":"confirmed"}]`, result: `{"context":{"slot":502},"value":1}`},
		rpcCall{method: "getStakeMinimumDelegation", params: `[{"commitment":"confirmed"}]`, result: `{"context":{"slot":503}}`},
		rpcCall{method: "getStakeMinimumDelegation", params: `[{"commitment":"confirmed"}]`, rpcErr: `{"code":-32601,"message":"Method not found"}`},
	)
	c := New(srv.URL)
	got, err := c.MinimumDelegation(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(1_000_000_000), got)
	got, err = c.MinimumDelegation(ctx)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), got)
	_, err = c.MinimumDelegation(ctx)
	require.ErrorContains(t, err, "empty result")
	_, err = c.MinimumDelegation(ctx)
	require.ErrorContains(t, err, "getStakeMinimumDelegation")
}
