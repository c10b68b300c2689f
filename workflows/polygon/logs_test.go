package polygon

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/lease"
)

// warnings is a logger that keeps the warnings and infos, each with its key-values.
type warnings struct {
	mu    sync.Mutex
	msgs  []string
	infos []string
}

func (w *warnings) Debug(string, ...any) {}
func (w *warnings) Error(string, ...any) {}
func (w *warnings) Info(msg string, keyvals ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.infos = append(w.infos, fmt.Sprintln(append([]any{msg}, keyvals...)...))
}
func (w *warnings) Warn(msg string, keyvals ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, fmt.Sprintln(append([]any{msg}, keyvals...)...))
}

func (w *warnings) all(infos ...bool) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(infos) > 0 && infos[0] {
		return append([]string(nil), w.infos...)
	}
	return append([]string(nil), w.msgs...)
}

// loggedEnv is a Polygon environment whose logger is kept, the sequencer granting the nonces
// 1, 2, ...; the lease release fails with releaseErr (nil: it succeeds).
func loggedEnv(releaseErr error) (*testsuite.TestWorkflowEnvironment, *warnings) {
	w := &warnings{}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(w)
	e := s.NewTestWorkflowEnvironment()
	c := &chain{}
	Register(e)
	e.RegisterActivity(ea)
	e.OnActivity(ea.EVMCheckPolicy, mock.Anything, mock.Anything).Return(activities.PolicyDecision{}, nil)
	e.OnActivity(ea.EVMRequestLease, mock.Anything, mock.Anything).Return(nil)
	e.OnActivity(ea.EVMBuild, mock.Anything, mock.Anything).Return(c.build)
	e.OnActivity(ea.EVMSign, mock.Anything, mock.Anything).Return(c.sign)
	e.OnActivity(ea.EVMCheckFresh, mock.Anything, mock.Anything).Return(actevm.FreshResult{}, nil)
	e.OnActivity(ea.EVMBroadcast, mock.Anything, mock.Anything).Return(c.broadcast)
	e.OnActivity(ea.EVMConfirm, mock.Anything, mock.Anything).Return(c.confirmed)
	e.OnSignalExternalWorkflow(mock.Anything, lease.ID(lease.EVM, network, common.HexToAddress(staker).Hex()), "", lease.SignalRelease, mock.Anything).
		Return(releaseErr)
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(lease.SignalGrant, lease.Grant{Nonce: 1})
		e.SignalWorkflow(lease.SignalGrant, lease.Grant{Nonce: 2})
	}, 0)
	return e, w
}

// restakeReleasing runs a restake whose lease release fails with releaseErr (nil: it succeeds).
func restakeReleasing(t *testing.T, releaseErr error) (*testsuite.TestWorkflowEnvironment, *warnings) {
	e, w := loggedEnv(releaseErr)
	e.OnActivity(ea.EVMReadDelegation, mock.Anything, mock.Anything).Return(actevm.Delegation{LiquidRewards: polWei(1)}, nil)
	e.ExecuteWorkflow(RestakeWorkflowType, RewardsInput{Network: network, Staker: staker, ValidatorShare: share})
	return e, w
}

// The wait for the withdrawal delay says in the log at which epoch the unbond can be claimed: its
// withdraw epoch plus the delay.
func TestWithdrawalWaitLogsTheClaimableEpoch(t *testing.T) {
	e, w := loggedEnv(nil)
	e.OnActivity(ea.EVMReadDelegation, mock.Anything, mock.Anything).Return(actevm.Delegation{Staked: polWei(40), ExpectedShares: polWei(40)}, nil)
	reads := &unbondReads{us: []actevm.Unbond{
		{Nonce: 3, WithdrawEpoch: 100, WithdrawalDelay: 80, Epoch: 150, EpochDuration: time.Minute},
		{Nonce: 3, WithdrawEpoch: 100, WithdrawalDelay: 80, Epoch: 180},
	}}
	e.OnActivity(ea.EVMReadUnbond, mock.Anything, mock.Anything).Return(reads.read(e.Now))
	in := delegateInput()
	in.Amount = polWei(40)
	e.ExecuteWorkflow(UnstakeWorkflowType, in)
	assert.NoError(t, e.GetWorkflowError())
	var found []string
	for _, m := range w.all(true) {
		if strings.HasPrefix(m, "Waiting for the withdrawal delay") {
			found = append(found, m)
		}
	}
	if assert.Len(t, found, 1) {
		assert.Contains(t, found[0], " claimableAt 180 ")
		assert.Contains(t, found[0], " wait 30m0s")
	}
}

// A lease that could not be given back does not undo what landed, and is reported.
func TestLeaseNotReleasedIsReportedAndTheOperationStands(t *testing.T) {
	e, w := restakeReleasing(t, errors.New("sequencer unreachable"))
	assert.NoError(t, e.GetWorkflowError())
	var found bool
	for _, m := range w.all() {
		if strings.Contains(m, "Nonce lease not released") && strings.Contains(m, "sequencer unreachable") {
			found = true
		}
	}
	assert.True(t, found, "warnings: %q", w.all())
}

func TestLeaseReleasedIsNotReported(t *testing.T) {
	e, w := restakeReleasing(t, nil)
	assert.NoError(t, e.GetWorkflowError())
	for _, m := range w.all() {
		assert.NotContains(t, m, "Nonce lease not released")
	}
}
