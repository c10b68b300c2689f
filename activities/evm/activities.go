package evm

import (
	"context"
	"errors"

	"github.com/stakeflow/stakeflow/activities"
)

// Activities are the EVM activities (Polygon staking on Ethereum L1). Each method is one activity;
// their names carry the EVM prefix so that they never collide with another chain's on one worker.
type Activities struct{}

var errUnbuilt = errors.New("EVM activities are not wired yet")

// EVMCheckPolicy applies the worker's policy (allow-listed validator shares, approval thresholds in
// wei) to an operation before anything is built. Local activity.
func (a *Activities) EVMCheckPolicy(ctx context.Context, in PolicyInput) (activities.PolicyDecision, error) {
	return activities.PolicyDecision{}, errUnbuilt
}

// EVMReadDelegation reads a staker's position with one validator at one block.
func (a *Activities) EVMReadDelegation(ctx context.Context, in DelegationInput) (Delegation, error) {
	return Delegation{}, errUnbuilt
}

// EVMReadUnbond reads an unbond, found from the unstake's receipt or by its nonce.
func (a *Activities) EVMReadUnbond(ctx context.Context, in UnbondInput) (Unbond, error) {
	return Unbond{}, errUnbuilt
}

// EVMReadNonces reads an address's nonces (latest, pending, finalized).
func (a *Activities) EVMReadNonces(ctx context.Context, in NoncesInput) (Nonces, error) {
	return Nonces{}, errUnbuilt
}

// EVMRequestLease signals the nonce sequencer of (network, address), starting it when it is not
// running (SignalWithStart).
func (a *Activities) EVMRequestLease(ctx context.Context, in SequencerRequest) error {
	return errUnbuilt
}

// EVMBuild builds the unsigned type-2 transaction of one step locally.
func (a *Activities) EVMBuild(ctx context.Context, in BuildInput) (BuildResult, error) {
	return BuildResult{}, errUnbuilt
}

// EVMSign verifies the unsigned transaction against the intent, exactly, and signs it. Local
// activity.
func (a *Activities) EVMSign(ctx context.Context, in SignInput) (SignResult, error) {
	return SignResult{}, errUnbuilt
}

// EVMCheckFresh proves the nonce is the address's next and used by no one else.
func (a *Activities) EVMCheckFresh(ctx context.Context, in FreshInput) (FreshResult, error) {
	return FreshResult{}, errUnbuilt
}

// EVMBroadcast sends the signed bytes through the service (endpoint 4).
func (a *Activities) EVMBroadcast(ctx context.Context, in BroadcastInput) (BroadcastResult, error) {
	return BroadcastResult{}, errUnbuilt
}

// EVMConfirm follows the step's builds until one is final or the newest is to be replaced.
func (a *Activities) EVMConfirm(ctx context.Context, in ConfirmInput) (ConfirmResult, error) {
	return ConfirmResult{}, errUnbuilt
}
