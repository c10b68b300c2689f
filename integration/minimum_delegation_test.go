//go:build integration

package integration

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gagliardetto/solana-go/rpc"
	"github.com/stretchr/testify/require"
)

// TestStakeUnderMinimumDelegationRefusedBeforeSigning asks for a stake account that would delegate
// one lamport less than the minimum delegation the runtime's stake program answers
// (getStakeMinimumDelegation, read here from the runtime itself) above its rent-exempt reserve:
// the pre-flight refuses it before an approval is asked or anything is built or signed, naming
// the amount, the reserve and the chain's minimum; the staker's balance is untouched.
func TestStakeUnderMinimumDelegationRefusedBeforeSigning(t *testing.T) {
	staker := st.Stakers[24] // nothing is sent from it here, nor in TestTooLargeStakeRefusedBeforeSigning
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var minimum struct {
		Value uint64 `json:"value"`
	}
	require.NoError(t, st.Sandbox.Runtime().RPC().RPCCallForInto(ctx, &minimum, "getStakeMinimumDelegation", nil))
	require.Greater(t, minimum.Value, uint64(1), "the runtime's stake program has a minimum above one lamport to test under")
	rent, err := st.Sandbox.Runtime().RPC().GetMinimumBalanceForRentExemption(ctx, 200, rpc.CommitmentConfirmed)
	require.NoError(t, err)
	balance, err := chain.Balance(ctx, staker.String())
	require.NoError(t, err)
	require.Greater(t, balance, 2*(rent+minimum.Value), "the balance would pay for the stake: only the minimum refuses it")

	id := operationID(t, "stake")
	asked := rent + minimum.Value - 1
	out, err := starterRun(t, "stake", "--network", "testnet", "--staker", staker.String(),
		"--lamports", strconv.FormatUint(asked, 10), "--id", id, "--requested-by", "alice", "--wait")
	require.Error(t, err, out)
	want := fmt.Sprintf("stake of %s would delegate %s above the stake account's rent-exempt reserve of %s, under the chain's minimum delegation of %s (getStakeMinimumDelegation on testnet): stake at least %s; nothing was signed",
		sols(asked), sols(minimum.Value-1), sols(rent), sols(minimum.Value), sols(rent+minimum.Value))
	refusedBeforeAnything(ctx, t, id, staker, balance, out+err.Error(), want)
}
