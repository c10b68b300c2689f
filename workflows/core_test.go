package workflows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/suite"
	"github.com/uber-go/tally/v4"
	sdkpb "go.temporal.io/api/sdk/v1"
	sdktally "go.temporal.io/sdk/contrib/tally"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/approval"
)

// The core's tests drive Operation and Transact through the workflow test suite with a fake chain:
// a Tx whose activities are the fake's methods, so that the core is tested without any real chain.

const (
	fakeChainName = "fakechain"
	fakeUnit      = "micro"
	fakeWait      = "waiting-unbond"
)

// coreInput is what the test workflow is asked to do.
type coreInput struct {
	Amount      string
	Validator   string
	Account     string
	RequestedBy string
	Options     Options
	// Steps is how many transaction steps run after the policy; Wait rests between them.
	Steps int
	Wait  time.Duration
	// Rewaits re-enters the wait that many more times, as a chain does after re-reading the chain;
	// LearnedWhileWaiting is an account the chain learns from its first re-read.
	Rewaits             int
	LearnedWhileWaiting string
	// NoFresh: the chain needs no proof that a transaction is new.
	NoFresh bool
	// SetAccount is recorded after the first step, as a chain learns its account.
	SetAccount string
	// Replaceable: the steps are on a chain with nonces (a Replaceable Tx); Canceller: one that
	// takes its nonce back on a cancel.
	Replaceable bool
	Canceller   bool
	// ReadAfter reads the chain after the steps, stalling while the read fails in a way that may
	// heal, as a chain's wait does.
	ReadAfter bool
	// StartMemo is the signed start the starter puts in the memo (the test environment does not
	// pass a start's memo: the test workflow upserts it before the operation reads it).
	StartMemo *approval.Signed
}

// coreResult is what the test workflow returns.
type coreResult struct {
	Records []TxRecord
	Fee     string
	TxIDs   []string
}

// fakeSigned and fakeConfirmed are the fake chain's activity results.
type fakeSigned struct {
	TxID   string
	Expiry string
	MaxFee string
}

type fakeConfirmed struct {
	Outcome string
	Block   uint64
	Fee     string
	Error   string
	TxID    string
	// NonceFree: with cannot-land on a chain with nonces, every build sent expired unseen and the
	// nonce is still unused (Confirmed.NonceFree).
	NonceFree bool
}

// fakeChain builds, signs, sends and confirms transactions; each scripted answer is taken in order,
// and the last one repeats.
type fakeChain struct {
	mu sync.Mutex
	// policy is CheckPolicy's answer.
	policy activities.PolicyDecision
	// buildErrs fail the builds in order (nil: the build succeeds).
	buildErrs []error
	freshErr  error
	// broadcastErr fails every broadcast.
	broadcastErr error
	// confirms are Confirm's answers, in order; confirmErrs fail confirmations first.
	confirms    []fakeConfirmed
	confirmErrs []error
	// checkErr fails the Tx's check between build and sign.
	checkErr error

	// following are Confirm's answers once a Replaceable step stopped replacing, in order.
	following []fakeConfirmed
	// broadcastErrs, freshErrs, checkErrs and signErrs fail the n-th call (from 0) of each, where
	// set; checkWait makes the n-th check wait an hour first (on the workflow's context when
	// checkWaitCancels, else on a disconnected one).
	broadcastErrs, freshErrs, checkErrs, signErrs map[int]error
	checkWait                                     map[int]bool
	checkWaitCancels                              bool
	checks                                        int

	builds, signs, fresh, validators int
	broadcasts                       []string
	confirmed, followed              int
}

func (f *fakeChain) Policy(_ context.Context, _ string) (activities.PolicyDecision, error) {
	return f.policy, nil
}

func (f *fakeChain) Validator(_ context.Context, v string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.validators++
	return "active " + v, nil
}

func (f *fakeChain) Read(_ context.Context, account string) (string, error) { return account, nil }

func (f *fakeChain) Build(_ context.Context, build int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.builds++
	if n := f.builds - 1; n < len(f.buildErrs) && f.buildErrs[n] != nil {
		return "", f.buildErrs[n]
	}
	return fmt.Sprintf("unsigned-%d-%d", f.builds, build), nil
}

func (f *fakeChain) Sign(_ context.Context, unsigned string) (fakeSigned, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signs++
	if err := f.signErrs[f.signs-1]; err != nil {
		return fakeSigned{}, err
	}
	return fakeSigned{TxID: fmt.Sprintf("tx-%d", f.signs), Expiry: fmt.Sprintf("expiry-%d", f.signs), MaxFee: "900"}, nil
}

func (f *fakeChain) Fresh(_ context.Context, _ string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fresh++
	if err := f.freshErrs[f.fresh-1]; err != nil {
		return false, err
	}
	return f.freshErr == nil, f.freshErr
}

func (f *fakeChain) Broadcast(_ context.Context, txID string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.broadcasts = append(f.broadcasts, txID)
	if err := f.broadcastErrs[len(f.broadcasts)-1]; err != nil {
		return "", err
	}
	return txID, f.broadcastErr
}

func (f *fakeChain) Confirm(_ context.Context, txID string) (fakeConfirmed, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.confirmed++
	if strings.HasPrefix(txID, "follow:") {
		f.followed++
		c := f.following[0]
		if len(f.following) > 1 {
			f.following = f.following[1:]
		}
		return c, nil
	}
	if len(f.confirmErrs) > 0 {
		err := f.confirmErrs[0]
		f.confirmErrs = f.confirmErrs[1:]
		return fakeConfirmed{}, err
	}
	c := fakeConfirmed{Outcome: activities.OutcomeFinalized, Block: 77, Fee: "500"}
	if len(f.confirms) > 0 {
		c = f.confirms[0]
		if len(f.confirms) > 1 {
			f.confirms = f.confirms[1:]
		}
	}
	return c, nil
}

// fakeTx is the fake chain's side of one transaction step.
type fakeTx struct {
	f       *fakeChain
	noFresh bool
	built   string
	signed  fakeSigned
	fresh   bool
	sent    string
	conf    fakeConfirmed
}

func (t *fakeTx) Kind() string { return "bond" }
func (t *fakeTx) Build(build int) Call {
	return Call{Activity: t.f.Build, Input: build, Result: &t.built}
}
func (t *fakeTx) Check(ctx workflow.Context, _ *Operation) error {
	f := t.f
	n := f.checks
	f.checks++
	if f.checkWait[n] {
		wctx := ctx
		if !f.checkWaitCancels {
			wctx, _ = workflow.NewDisconnectedContext(ctx)
		}
		if err := workflow.Sleep(wctx, time.Hour); err != nil {
			return err
		}
	}
	if err := f.checkErrs[n]; err != nil {
		return err
	}
	return f.checkErr
}
func (t *fakeTx) Sign() Call { return Call{Activity: t.f.Sign, Input: t.built, Result: &t.signed} }
func (t *fakeTx) Signed() Signed {
	return Signed{TxID: t.signed.TxID, Expiry: t.signed.Expiry, MaxFee: t.signed.MaxFee}
}
func (t *fakeTx) Fresh() Call {
	if t.noFresh {
		return Call{}
	}
	return Call{Activity: t.f.Fresh, Input: t.signed.TxID, Result: &t.fresh}
}
func (t *fakeTx) Broadcast() Call {
	return Call{Activity: t.f.Broadcast, Input: t.signed.TxID, Result: &t.sent}
}
func (t *fakeTx) Confirm() Call {
	return Call{Activity: t.f.Confirm, Input: t.signed.TxID, Result: &t.conf}
}

// replaceableTx is a step on a chain with nonces: its builds replace one another, and once it stops
// replacing, Confirm follows what was sent.
type replaceableTx struct {
	fakeTx
	stopped bool
}

func (t *replaceableTx) StopReplacing() { t.stopped = true }
func (t *replaceableTx) Confirm() Call {
	in := t.signed.TxID
	if t.stopped {
		in = "follow:" + in
	}
	return Call{Activity: t.f.Confirm, Input: in, Result: &t.conf}
}

// cancellerTx is a replaceableTx that takes its nonce back on a cancel: its cancel transaction
// is built with build number 100+n.
type cancellerTx struct {
	replaceableTx
	cancelling bool
}

func (t *cancellerTx) Cancel() bool {
	t.cancelling = true
	return true
}
func (t *cancellerTx) Build(build int) Call {
	if t.cancelling {
		build += 100
	}
	return Call{Activity: t.f.Build, Input: build, Result: &t.built}
}

func (t *fakeTx) Confirmed() Confirmed {
	return Confirmed{Outcome: t.conf.Outcome, Block: t.conf.Block, Fee: t.conf.Fee, Error: t.conf.Error, TxID: t.conf.TxID}
}

// workflow is a chain's workflow reduced to the core: policy and approval, an optional validator
// pre-flight, then in.Steps transaction steps, resting in fakeWait between them.
func (f *fakeChain) workflow(ctx workflow.Context, in coreInput) (coreResult, error) {
	if in.StartMemo != nil {
		if err := workflow.UpsertMemo(ctx, map[string]any{MemoStart: *in.StartMemo}); err != nil {
			return coreResult{}, err
		}
	}
	o, err := NewOperation(ctx, Setup{
		Chain: fakeChainName, Network: "devnet", Operation: "bond", Staker: "alice",
		Amount: in.Amount, Unit: fakeUnit, Validator: in.Validator, Account: in.Account,
		RequestedBy: in.RequestedBy, Options: in.Options, Waits: []string{fakeWait},
		Labels: Labels{Validator: "validator", Account: "bond account", Block: "height"},
	})
	if err != nil {
		return coreResult{}, err
	}
	var res coreResult
	run := func() error {
		if err := o.CheckPolicy(ctx, f.Policy, in.Amount); err != nil {
			return err
		}
		if in.Validator != "" {
			var r string
			if err := o.CheckValidator(ctx, f.Validator, in.Validator, &r); err != nil {
				return err
			}
		}
		for i := 0; i < in.Steps; i++ {
			for w := 0; i > 0 && in.Wait > 0 && w <= in.Rewaits; w++ {
				if w == 1 {
					o.SetAccount(in.LearnedWhileWaiting)
				}
				if err := o.Wait(ctx, fakeWait, in.Wait); err != nil {
					return err
				}
			}
			var tx Tx = &fakeTx{f: f, noFresh: in.NoFresh}
			if in.Replaceable {
				tx = &replaceableTx{fakeTx: fakeTx{f: f, noFresh: in.NoFresh}}
			}
			if in.Canceller {
				tx = &cancellerTx{replaceableTx: replaceableTx{fakeTx: fakeTx{f: f, noFresh: in.NoFresh}}}
			}
			rec, err := o.Transact(ctx, tx)
			if err != nil {
				return err
			}
			res.Records = append(res.Records, rec)
			if i == 0 {
				o.SetAccount(in.SetAccount)
			}
		}
		if in.ReadAfter {
			actx := workflow.WithActivityOptions(ctx, ReadOptions())
			stalls := func(err error) bool { return o.HalfDone() && MayHeal(err) }
			_, err := UntilUnstalled(ctx, o, stalls, func() (string, error) {
				var r string
				return r, o.Get(ctx, workflow.ExecuteActivity(actx, f.Read, "acct-1"), &r)
			})
			return err
		}
		return nil
	}
	if err := run(); err != nil {
		return coreResult{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	res.Fee, res.TxIDs = o.TotalFee().String(), o.TxIDs()
	return res, nil
}

type CoreSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env     *testsuite.TestWorkflowEnvironment
	f       *fakeChain
	metrics tally.TestScope
	// sa is the latest value of every search attribute upserted; steps the StakeflowStep values
	// sent, in order; upserts counts the upserts.
	sa      map[string]any
	steps   []string
	upserts int
}

func TestCore(t *testing.T) { suite.Run(t, new(CoreSuite)) }

func (s *CoreSuite) SetupTest() {
	s.metrics = tally.NewTestScope("", nil)
	s.SetMetricsHandler(sdktally.NewMetricsHandler(s.metrics))
	s.env = s.NewTestWorkflowEnvironment()
	s.f = &fakeChain{}
	s.env.RegisterWorkflowWithOptions(s.f.workflow, workflow.RegisterOptions{Name: "CoreWorkflow"})
	s.env.RegisterActivity(s.f)
	s.sa = map[string]any{}
	s.steps = nil
	s.upserts = 0
	s.env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		s.upserts++
		attrs := args.Get(0).(temporal.SearchAttributes)
		for k, v := range attrs.GetUntypedValues() {
			s.sa[k.GetName()] = v
		}
		if v, ok := attrs.GetKeyword(SAStep); ok {
			s.steps = append(s.steps, v)
		}
	}).Return(nil).Maybe()
}

func (s *CoreSuite) run(in coreInput) {
	s.env.ExecuteWorkflow("CoreWorkflow", in)
	s.Require().True(s.env.IsWorkflowCompleted())
}

func (s *CoreSuite) result() coreResult {
	s.Require().NoError(s.env.GetWorkflowError())
	var r coreResult
	s.Require().NoError(s.env.GetWorkflowResult(&r))
	return r
}

func (s *CoreSuite) failure() *temporal.ApplicationError {
	err := s.env.GetWorkflowError()
	s.Require().Error(err)
	var appErr *temporal.ApplicationError
	s.Require().True(errors.As(err, &appErr), "want an application error, got %v", err)
	return appErr
}

func (s *CoreSuite) status() Status {
	v, err := s.env.QueryWorkflow(QueryStatus)
	s.Require().NoError(err)
	var st Status
	s.Require().NoError(v.Get(&st))
	return st
}

// details is the workflow's current details as the Web UI shows them.
func (s *CoreSuite) details() string {
	v, err := s.env.QueryWorkflow("__temporal_workflow_metadata")
	s.Require().NoError(err)
	var md sdkpb.WorkflowMetadata
	s.Require().NoError(v.Get(&md))
	return md.GetCurrentDetails()
}

// counter is the value of the stakeflow counter name with the given extra tags (besides the
// operation's own chain, network and operation labels, which it checks).
func (s *CoreSuite) counter(name string, tags map[string]string) int64 {
	var total int64
	for _, c := range s.metrics.Snapshot().Counters() {
		if c.Name() != name {
			continue
		}
		t := c.Tags()
		if t[activities.LabelChain] != fakeChainName || t[activities.LabelNetwork] != "devnet" || t[activities.LabelOperation] != "bond" {
			continue
		}
		match := true
		for k, v := range tags {
			if t[k] != v {
				match = false
			}
		}
		if match {
			total += c.Value()
		}
	}
	return total
}

// approve sends an approve (or reject) update at d; refused records a refusal's message.
func (s *CoreSuite) decide(update, approver, reason string, d time.Duration, refused *[]string) {
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(update, fmt.Sprintf("%s-%s-%s", approver, update, d), &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) {
				if refused != nil {
					*refused = append(*refused, err.Error())
				}
			},
			OnComplete: func(any, error) {},
		}, ApprovalInput{Approver: approver, Reason: reason})
	}, d)
}

func (s *CoreSuite) TestOneStepLandsOnceAndIsRecorded() {
	start := s.env.Now()
	s.run(coreInput{Amount: "1500", Steps: 1})
	r := s.result()

	s.Require().Len(r.Records, 1)
	rec := r.Records[0]
	s.Equal(TxRecord{Kind: "bond", TxID: "tx-1", Block: 77, Builds: 1, Fee: "500", FinalizedAt: rec.FinalizedAt}, rec)
	s.Equal("500", r.Fee)
	s.Equal([]string{"tx-1"}, r.TxIDs)
	s.Equal([]string{"tx-1"}, s.f.broadcasts, "the signed transaction is sent once")
	s.Equal(1, s.f.fresh, "the chain proves the transaction new before it is sent")

	st := s.status()
	s.Equal(StepDone, st.Step)
	s.Equal(fakeChainName, st.Chain)
	s.Equal("1500", st.Amount)
	s.Equal(fakeUnit, st.Unit)
	s.False(st.StartedAt.Before(start))
	s.Require().Len(st.Attempts, 1)
	at := st.Attempts[0]
	s.Equal(activities.OutcomeFinalized, at.Outcome)
	s.Equal("tx-1", at.TxID)
	s.Equal("expiry-1", at.Expiry)
	s.Equal("900", at.MaxFee)
	s.Equal(uint64(77), at.Block)
	s.Equal("500", at.Fee)
	s.Equal(1, at.Build)
	s.False(at.SignedAt.IsZero())
	s.False(at.BroadcastAt.IsZero())
	s.False(at.ConfirmedAt.IsZero())
	s.False(st.CancelRequested)
	s.Nil(st.Stall)
	s.Empty(st.Error)

	s.Equal(int64(1), s.counter(MetricOperationsStarted, nil))
	s.Equal(int64(1), s.counter(MetricOperationsCompleted, nil))
	s.Equal(int64(1), s.counter(MetricConfirmations, map[string]string{activities.LabelOutcome: activities.OutcomeFinalized}))
	s.Equal(int64(0), s.counter(MetricRebuilds, nil))
	s.Equal(int64(0), s.counter(MetricOperationsFailed, nil))

	// Started without attributes: what it is and whose is upserted at once, the amount with it.
	s.Equal(fakeChainName, s.sa[SAChain.GetName()])
	s.Equal("devnet", s.sa[SANetwork.GetName()])
	s.Equal("bond", s.sa[SAOperation.GetName()])
	s.Equal("alice", s.sa[SAStaker.GetName()])
	s.Equal(int64(1500), s.sa[SAAmount.GetName()])
	s.Equal([]string{"tx-1"}, s.sa[SASignatures.GetName()])
	s.Equal([]string{StepValidating, StepConfirming, StepDone}, s.steps)
}

func (s *CoreSuite) TestStartedWithItsAttributesUpsertsOnlyWhereItRests() {
	s.Require().NoError(s.env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(
		SAChain.ValueSet(fakeChainName), SANetwork.ValueSet("devnet"), SAOperation.ValueSet("bond"),
		SAStaker.ValueSet("alice"), SAAmount.ValueSet(1500), SAStakeAccount.ValueSet("acct-1"),
		SAStep.ValueSet(StepValidating))))
	s.run(coreInput{Amount: "1500", Account: "acct-1", Steps: 1})
	s.result()
	s.Equal([]string{StepConfirming, StepDone}, s.steps)
	s.Equal(2, s.upserts, "one upsert where it rests (confirming), one at its end")
	_, resent := s.sa[SAChain.GetName()]
	s.False(resent, "attributes set at start are not sent again")
	_, resent = s.sa[SAAmount.GetName()]
	s.False(resent)
	_, resent = s.sa[SAStakeAccount.GetName()]
	s.False(resent)
}

func (s *CoreSuite) TestStartedWithADifferentAmountOrAccountCorrectsThem() {
	s.Require().NoError(s.env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(
		SAChain.ValueSet(fakeChainName), SANetwork.ValueSet("devnet"), SAOperation.ValueSet("bond"),
		SAStaker.ValueSet("alice"), SAAmount.ValueSet(1), SAStakeAccount.ValueSet("other"))))
	s.run(coreInput{Amount: "1500", Account: "acct-1", Steps: 1})
	s.result()
	s.Equal(int64(1500), s.sa[SAAmount.GetName()])
	s.Equal("acct-1", s.sa[SAStakeAccount.GetName()])
	_, resent := s.sa[SAChain.GetName()]
	s.False(resent)
}

func (s *CoreSuite) TestAccountLearnedLaterIsRecordedOnce() {
	s.run(coreInput{Amount: "0", Steps: 2, SetAccount: "acct-9"})
	s.result()
	s.Equal("acct-9", s.status().Account)
	s.Equal("acct-9", s.sa[SAStakeAccount.GetName()])
	_, amount := s.sa[SAAmount.GetName()]
	s.False(amount, "an amount of zero is no amount")
}

func (s *CoreSuite) TestNoFreshnessProofWhenTheChainNeedsNone() {
	s.run(coreInput{Steps: 1, NoFresh: true})
	s.result()
	s.Equal(0, s.f.fresh)
	s.Equal([]string{"tx-1"}, s.f.broadcasts)
}

func (s *CoreSuite) TestTwoStepsAndTheirFeesAddUp() {
	s.f.confirms = []fakeConfirmed{
		{Outcome: activities.OutcomeFinalized, Block: 10, Fee: "700"},
		{Outcome: activities.OutcomeFinalized, Block: 11, Fee: "not-a-number"},
		{Outcome: activities.OutcomeFinalized, Block: 12, Fee: "25"},
	}
	s.run(coreInput{Steps: 3})
	r := s.result()
	s.Equal("725", r.Fee, "700 + 25; a fee that is no number adds nothing")
	s.Equal([]string{"tx-1", "tx-2", "tx-3"}, r.TxIDs)
	s.Equal(int64(3), s.counter(MetricConfirmations, map[string]string{activities.LabelOutcome: activities.OutcomeFinalized}))
}

func (s *CoreSuite) TestExpiredTransactionIsRebuiltUpToMaxBuilds() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeCannotLand}}
	s.run(coreInput{Steps: 1, Options: Options{MaxBuilds: 2}})
	e := s.failure()
	s.Equal(ErrTooManyBuilds, e.Type())
	s.True(e.NonRetryable())
	s.Contains(e.Error(), "2 transactions built")
	s.Equal(2, s.f.builds, "MaxBuilds bounds the builds")
	s.Equal([]string{"tx-1", "tx-2"}, s.f.broadcasts)
	s.Equal(int64(1), s.counter(MetricRebuilds, nil))
	s.Equal(int64(2), s.counter(MetricConfirmations, map[string]string{activities.LabelOutcome: activities.OutcomeCannotLand}))
	s.Equal(int64(1), s.counter(MetricOperationsFailed, map[string]string{activities.LabelFailureType: ErrTooManyBuilds}))
	st := s.status()
	s.Equal(StepFailed, st.Step)
	s.NotEmpty(st.Error)
	s.Require().Len(st.Attempts, 2)
	s.Equal(2, st.Attempts[1].Build)
	s.Equal(activities.OutcomeCannotLand, st.Attempts[0].Outcome)
}

func (s *CoreSuite) TestExpiredThenFinalizedLandsTheSecondBuild() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeCannotLand}, {Outcome: activities.OutcomeFinalized, Block: 9, Fee: "1"}}
	s.run(coreInput{Steps: 1, Options: Options{MaxBuilds: 2}})
	r := s.result()
	s.Equal(2, r.Records[0].Builds)
	s.Equal("tx-2", r.Records[0].TxID)
	s.Equal([]string{"tx-1", "tx-2"}, r.TxIDs)
}

func (s *CoreSuite) TestAnEarlierBuildThatLandsIsTheRecordedTransaction() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeCannotLand}, {Outcome: activities.OutcomeFinalized, Block: 9, Fee: "1", TxID: "tx-1"}}
	s.run(coreInput{Steps: 1})
	r := s.result()
	s.Equal("tx-1", r.Records[0].TxID, "the chain says which build landed")
}

func (s *CoreSuite) TestFailedOnChainIsNotRetried() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeFailed, Block: 5, Fee: "321", Error: "custom program error 0x1"}}
	s.run(coreInput{Steps: 1})
	e := s.failure()
	s.Equal(ErrTransactionFailed, e.Type())
	s.True(e.NonRetryable())
	s.Contains(e.Error(), "tx-1")
	s.Contains(e.Error(), "321 "+fakeUnit)
	s.Contains(e.Error(), "custom program error 0x1")
	s.Equal(1, s.f.builds)
	st := s.status()
	s.Equal("custom program error 0x1", st.Attempts[0].Error)
	s.Equal(activities.OutcomeFailed, st.Attempts[0].Outcome)
}

func (s *CoreSuite) TestUnknownOutcomeFails() {
	s.f.confirms = []fakeConfirmed{{Outcome: "pending"}}
	s.run(coreInput{Steps: 1})
	err := s.env.GetWorkflowError()
	s.Require().Error(err)
	s.Contains(err.Error(), `unknown confirmation outcome "pending"`)
	s.Equal(1, s.f.builds)
}

func (s *CoreSuite) TestBroadcastRefusedAtFirstSendFailsWithoutConfirm() {
	s.f.broadcastErr = temporal.NewNonRetryableApplicationError("bad tx", activities.ErrTransactionRejected, nil)
	s.run(coreInput{Steps: 1})
	s.Equal(activities.ErrTransactionRejected, s.failure().Type())
	s.Equal(0, s.f.confirmed)
	st := s.status()
	s.Equal(activities.OutcomeFailed, st.Attempts[0].Outcome)
	s.Contains(st.Attempts[0].Error, "bad tx")
}

func (s *CoreSuite) TestBroadcastOtherwiseFailingLetsTheChainDecide() {
	s.f.broadcastErr = temporal.NewNonRetryableApplicationError("lost answer", activities.ErrBroadcastUncertain, nil)
	s.run(coreInput{Steps: 1})
	r := s.result()
	s.Equal("tx-1", r.Records[0].TxID)
	s.Equal(1, s.f.confirmed)
	st := s.status()
	s.Equal("lost answer", st.Attempts[0].BroadcastError, "why the chain had to decide stays on the attempt")
	s.Equal(activities.OutcomeFinalized, st.Attempts[0].Outcome)
}

func (s *CoreSuite) TestFreshnessRefusalSendsNothing() {
	s.f.freshErr = temporal.NewNonRetryableApplicationError("already on chain", activities.ErrStaleTransaction, nil)
	s.run(coreInput{Steps: 1})
	s.Equal(activities.ErrStaleTransaction, s.failure().Type())
	s.Empty(s.f.broadcasts)
	st := s.status()
	s.Equal("not-sent", st.Attempts[0].Outcome)
	s.Contains(st.Attempts[0].Error, "already on chain")
}

func (s *CoreSuite) TestCheckRefusalSignsNothing() {
	s.f.checkErr = temporal.NewNonRetryableApplicationError("wrong validator", activities.ErrVerificationFailed, nil)
	s.run(coreInput{Steps: 1})
	s.Equal(activities.ErrVerificationFailed, s.failure().Type())
	s.Equal(0, s.f.signs)
	s.Empty(s.status().Attempts)
}

func (s *CoreSuite) TestFailureBeforeAnythingLandedFailsAtOnce() {
	s.f.buildErrs = []error{temporal.NewNonRetryableApplicationError("rpc 403", activities.ErrChainRejected, nil)}
	s.run(coreInput{Steps: 1})
	s.Equal(activities.ErrChainRejected, s.failure().Type())
	st := s.status()
	s.Nil(st.Stall)
	s.Equal(StepFailed, st.Step)
	s.Contains(st.Error, "rpc 403")
	s.Equal(int64(0), s.counter(MetricStalls, nil))
	s.Equal(int64(1), s.counter(MetricOperationsFailed, map[string]string{activities.LabelFailureType: activities.ErrChainRejected}))
}

// A build failing in a way that may heal, once a transaction landed, stalls the operation: tries
// 30s apart, doubling, at most MaxStallWait, then it goes on.
func (s *CoreSuite) TestHalfDoneOperationStallsWithBackoffThenGoesOn() {
	refused := temporal.NewNonRetryableApplicationError("rpc 403", activities.ErrChainRejected, nil)
	s.f.buildErrs = []error{nil, refused, refused, refused, refused}
	var seen []Stall
	var details []string
	var beforeStall time.Time
	// Look at the stall during each wait.
	for _, at := range []time.Duration{10 * time.Second, 40 * time.Second, 100 * time.Second, 200 * time.Second} {
		s.env.RegisterDelayedCallback(func() {
			if st := s.status().Stall; st != nil {
				seen = append(seen, *st)
				details = append(details, s.details())
			}
		}, at)
	}
	s.env.RegisterDelayedCallback(func() { beforeStall = s.env.Now() }, time.Millisecond)
	s.run(coreInput{Steps: 2, Options: Options{MaxStallWait: 100 * time.Second}})
	r := s.result()
	s.Len(r.Records, 2)
	s.Equal(6, s.f.builds)

	// Stalls start at 0s: tries 1 (wait 30s), 2 (60s), 3 (min(120s, 100s)), 4 (100s).
	s.Require().Len(seen, 4)
	for i, st := range seen {
		s.Equal(StepBuilding, st.Step, "the stall names the step it stalled")
		s.Equal(i+1, st.Tries)
		s.Contains(st.LastError, "rpc 403")
		s.Equal(seen[0].Since, st.Since, "the stall keeps when it began")
	}
	s.WithinDuration(beforeStall, seen[0].Since, time.Second)
	s.Equal(30*time.Second, seen[0].NextTryAt.Sub(seen[0].Since))
	s.Equal(90*time.Second, seen[1].NextTryAt.Sub(seen[0].Since), "second wait 60s")
	s.Equal(190*time.Second, seen[2].NextTryAt.Sub(seen[0].Since), "third wait capped at 100s")
	s.Equal(290*time.Second, seen[3].NextTryAt.Sub(seen[0].Since), "fourth wait capped at 100s")
	s.Contains(details[1], "stalled in building since")
	s.Contains(details[1], "(2 tries): ")
	s.Contains(details[1], "next try: "+seen[1].NextTryAt.UTC().Format(time.RFC3339))

	st := s.status()
	s.Nil(st.Stall, "the stall record goes once the step gets past it")
	s.Equal(StepDone, st.Step)
	s.Equal(int64(1), s.counter(MetricStalls, nil), "one stall counted once")
	s.Contains(s.steps, StepStalled)
}

func (s *CoreSuite) TestStallWaitDoublingIsCappedAtItsLongestShift() {
	// With MaxStallWait far above, the 12th try waits 30s << 10 (the shift stops at 10).
	refused := temporal.NewNonRetryableApplicationError("rpc 403", activities.ErrChainRejected, nil)
	s.f.buildErrs = []error{nil}
	for range 12 {
		s.f.buildErrs = append(s.f.buildErrs, refused)
	}
	s.run(coreInput{Steps: 2, Options: Options{MaxStallWait: 1000 * time.Hour}})
	s.result()
	// 30s * (1+2+4+...+512) + 30s*1024*2 for tries 11 and 12.
	want := 30 * time.Second * time.Duration(1023+1024+1024)
	s.Equal(want, s.env.Now().Sub(s.status().StartedAt))
}

// A confirmation the RPC refuses for good stalls: the transaction may land whatever the RPC says.
func (s *CoreSuite) TestConfirmRefusedStallsThenConfirms() {
	s.f.confirmErrs = []error{temporal.NewNonRetryableApplicationError("rpc 403", activities.ErrChainRejected, nil)}
	var stall *Stall
	s.env.RegisterDelayedCallback(func() { stall = s.status().Stall }, 10*time.Second)
	s.run(coreInput{Steps: 1})
	r := s.result()
	s.Equal("tx-1", r.Records[0].TxID)
	s.Require().NotNil(stall)
	s.Equal(StepConfirming, stall.Step)
	s.Equal(1, s.f.builds, "nothing is rebuilt while the confirmation stalls")
	s.Equal([]string{"tx-1"}, s.f.broadcasts)
	s.Equal(int64(1), s.counter(MetricStalls, nil))
}

func (s *CoreSuite) TestApprovalBySomeoneElseLetsItGoOn() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true, ApprovalThreshold: 1000}
	var statusWhileWaiting Status
	var detailsWhileWaiting string
	s.env.RegisterDelayedCallback(func() {
		statusWhileWaiting = s.status()
		detailsWhileWaiting = s.details()
	}, time.Minute)
	s.decide(UpdateApprove, "bob", "looks right", time.Hour, nil)
	s.run(coreInput{Amount: "1500", RequestedBy: "alice", Steps: 1})
	s.result()

	s.Equal(StepAwaitingApproval, statusWhileWaiting.Step)
	s.True(statusWhileWaiting.Approval.Required)
	s.Equal(1, statusWhileWaiting.Approval.ApprovalsRequired)
	s.Equal("1000", statusWhileWaiting.Approval.Threshold)
	s.Empty(statusWhileWaiting.Approval.DualThreshold)
	s.Contains(detailsWhileWaiting, "**awaiting-approval**: bond 1500 micro")
	s.Contains(detailsWhileWaiting, "approvals: 0 of 1")

	ap := s.status().Approval
	s.Equal(DecisionApproved, ap.Decision)
	s.Equal("bob", ap.Approver)
	s.Equal("looks right", ap.Reason)
	s.Require().Len(ap.Decisions, 1)
	s.Equal(StepAwaitingApproval, s.steps[1], "the wait for approval is searchable")
}

func (s *CoreSuite) TestTwoApprovalsNeedTwoPeople() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: 2, ApprovalThreshold: 10, DualApprovalThreshold: 1000}
	var refused []string
	var afterFirst Status
	s.decide(UpdateApprove, "bob", "", time.Hour, &refused)
	s.decide(UpdateApprove, " BOB ", "", 2*time.Hour, &refused)
	s.env.RegisterDelayedCallback(func() { afterFirst = s.status() }, 3*time.Hour)
	s.decide(UpdateApprove, "carol", "", 4*time.Hour, &refused)
	start := s.env.Now()
	s.run(coreInput{Amount: "1500", RequestedBy: "alice", Steps: 1})
	s.result()

	s.Require().Len(refused, 1, "the same approver twice counts once")
	s.Contains(refused[0], "already approved")
	s.Empty(afterFirst.Approval.Decision, "one approval of two decides nothing")
	s.Equal("1000", afterFirst.Approval.DualThreshold)
	ap := s.status().Approval
	s.Equal(DecisionApproved, ap.Decision)
	s.Len(ap.Decisions, 2)
	s.GreaterOrEqual(s.env.Now().Sub(start), 4*time.Hour, "built only after the second approval")
}

func (s *CoreSuite) TestApprovalsRefusedThatCannotCount() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true}
	// Building takes hours, so that the last approval comes while the operation still runs.
	s.env.OnActivity(s.f.Build, mock.Anything, mock.Anything).After(2*time.Hour).Return("unsigned", nil)
	var refused []string
	s.decide(UpdateApprove, "  ", "", time.Hour, &refused)
	s.decide(UpdateApprove, " Alice", "", 2*time.Hour, &refused)
	s.decide(UpdateReject, "ALICE", "", 3*time.Hour, &refused)
	s.decide(UpdateApprove, "bob", "", 4*time.Hour, &refused)
	s.decide(UpdateApprove, "carol", "", 5*time.Hour, &refused)
	s.run(coreInput{RequestedBy: "alice", Steps: 1})
	s.result()
	s.Require().Len(refused, 4)
	s.Equal("approver is required", refused[0])
	s.Contains(refused[1], "cannot also approve or reject it")
	s.Contains(refused[2], "cannot also approve or reject it")
	s.Equal("operation was already approved", refused[3])
	s.Len(s.status().Approval.Decisions, 1)
}

func (s *CoreSuite) TestApprovalAfterTheGateIsRefused() {
	// No approval asked: a decision sent while the transaction is confirming cannot count.
	s.f.confirmErrs = []error{temporal.NewNonRetryableApplicationError("rpc 403", activities.ErrChainRejected, nil)}
	var refused []string
	s.decide(UpdateApprove, "bob", "", 10*time.Second, &refused)
	s.run(coreInput{Steps: 1})
	s.result()
	s.Require().Len(refused, 1)
	s.Contains(refused[0], "is not awaiting approval (step: stalled)")
}

func (s *CoreSuite) TestRejectionStopsBeforeAnythingIsBuilt() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true}
	s.decide(UpdateReject, "bob", "too large", time.Hour, nil)
	s.run(coreInput{Steps: 1})
	e := s.failure()
	s.Equal(ErrRejected, e.Type())
	s.Equal("rejected by bob: too large; nothing was built or signed", e.Message())
	s.Equal(0, s.f.builds)
	s.Equal(int64(1), s.counter(MetricOperationsFailed, map[string]string{activities.LabelFailureType: ErrRejected}))
}

func (s *CoreSuite) TestRejectionWithoutReason() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true}
	s.decide(UpdateReject, "bob", "", time.Hour, nil)
	s.run(coreInput{Steps: 1})
	s.Equal("rejected by bob; nothing was built or signed", s.failure().Message())
}

func (s *CoreSuite) TestApprovalTimesOutAfterApprovalTimeout() {
	s.f.policy = activities.PolicyDecision{ApprovalsRequired: 2}
	s.decide(UpdateApprove, "bob", "", time.Hour, nil)
	start := s.env.Now()
	s.run(coreInput{Steps: 1, Options: Options{ApprovalTimeout: 5 * time.Hour}})
	e := s.failure()
	s.Equal(ErrApprovalTimeout, e.Type())
	s.Equal("1 of 2 approvals within 5h0m0s; nothing was built or signed", e.Message())
	s.Equal(5*time.Hour, s.env.Now().Sub(start).Round(time.Minute))
	ap := s.status().Approval
	s.Equal(DecisionTimedOut, ap.Decision)
	s.False(ap.At.IsZero())
	s.Equal(0, s.f.builds)
}

// Approvals sent while the policy is being checked are refused with a "try again": until the
// policy answers the workflow cannot tell whether they must be signed, so a free-text name sent
// early can never stand in for a signature. Sent again once it answered, they count.
func (s *CoreSuite) TestApprovalsBeforeThePolicyAnsweredAreRefusedToTryAgain() {
	s.env.OnActivity(s.f.Policy, mock.Anything, mock.Anything).After(time.Hour).
		Return(activities.PolicyDecision{ApprovalsRequired: 2}, nil)
	var early, later []string
	s.decide(UpdateApprove, "bob", "", time.Minute, &early)
	s.decide(UpdateApprove, "carol", "", 2*time.Minute, &early)
	var before Status
	s.env.RegisterDelayedCallback(func() { before = s.status() }, 30*time.Minute)
	s.decide(UpdateApprove, "bob", "", 2*time.Hour, &later)
	s.decide(UpdateApprove, "carol", "", 3*time.Hour, &later)
	start := s.env.Now()
	s.run(coreInput{Steps: 1})
	s.result()
	s.Require().Len(early, 2, "both early approvals refused")
	for _, msg := range early {
		s.Contains(msg, "the operation's policy is not known yet")
		s.Contains(msg, "try again")
	}
	s.Empty(before.Approval.Decisions, "nothing recorded before the policy is known")
	s.Empty(before.Approval.Mode)
	s.Empty(later)
	ap := s.status().Approval
	s.Equal(DecisionApproved, ap.Decision)
	s.Equal(ModeNamed, ap.Mode)
	s.Len(ap.Decisions, 2)
	s.GreaterOrEqual(s.env.Now().Sub(start), 3*time.Hour, "built only after the second approval sent after the policy")
}

// A rejection sent while the policy is being checked stops the operation, in either mode: it can
// only stop it, as a cancel can. Signed, its signature must verify, and its key is recorded.
func (s *CoreSuite) TestARejectionBeforeThePolicyAnsweredStops() {
	for _, signed := range []bool{false, true} {
		s.SetupTest()
		s.env.OnActivity(s.f.Policy, mock.Anything, mock.Anything).After(time.Hour).
			Return(activities.PolicyDecision{Approvers: configured}, nil)
		out := map[string]string{}
		if signed {
			s.send(UpdateReject, "forged", time.Minute, func() ApprovalInput {
				return signedInput(bobKey, s.statementFor(approval.Reject), func(in *ApprovalInput) { in.Statement += "x" })
			}, out)
			s.send(UpdateReject, "dave", 2*time.Minute, func() ApprovalInput { return signedInput(daveKey, s.statementFor(approval.Reject), nil) }, out)
		} else {
			s.send(UpdateReject, "dave", 2*time.Minute, func() ApprovalInput { return ApprovalInput{Approver: "dave", Reason: "hold"} }, out)
		}
		s.run(coreInput{Steps: 1})
		s.Equal(ErrRejected, s.failure().Type(), "signed %v", signed)
		s.Equal("accepted", out["dave"])
		s.Equal(0, s.f.builds)
		ap := s.status().Approval
		s.Require().Len(ap.Decisions, 1)
		if signed {
			s.Contains(out["forged"], "the signature does not verify")
			s.Equal(sshFingerprint(daveKey), ap.Decisions[0].Fingerprint)
		}
	}
}

func (s *CoreSuite) TestCancelWhileAwaitingApprovalBuildsNothing() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true}
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Hour)
	s.run(coreInput{Steps: 1})
	err := s.env.GetWorkflowError()
	s.True(temporal.IsCanceledError(err), "got %v", err)
	st := s.status()
	s.Equal(StepCancelled, st.Step)
	s.Empty(st.Error, "a cancel is no error")
	s.Equal(0, s.f.builds)
	s.Equal(int64(1), s.counter(MetricOperationsFailed, map[string]string{activities.LabelFailureType: FailureCancelled}))
	s.Equal(StepCancelled, s.steps[len(s.steps)-1])
}

func (s *CoreSuite) TestCancelDuringBuildSendsNothing() {
	s.env.OnActivity(s.f.Build, mock.Anything, mock.Anything).After(time.Hour).Return("unsigned", nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1})
	s.True(temporal.IsCanceledError(s.env.GetWorkflowError()))
	s.Empty(s.f.broadcasts)
}

func (s *CoreSuite) TestCancelBeforeBroadcastSendsNothing() {
	s.env.OnActivity(s.f.Fresh, mock.Anything, mock.Anything).After(time.Hour).Return(true, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1})
	err := s.env.GetWorkflowError()
	s.True(temporal.IsCanceledError(err), "got %v", err)
	s.Empty(s.f.broadcasts)
	st := s.status()
	s.Require().Len(st.Attempts, 1)
	s.Equal("not-sent", st.Attempts[0].Outcome)
}

func (s *CoreSuite) TestCancelAfterBroadcastFollowsTheTransactionToItsEnd() {
	s.env.OnActivity(s.f.Confirm, mock.Anything, mock.Anything).After(time.Hour).
		Return(fakeConfirmed{Outcome: activities.OutcomeFinalized, Block: 3, Fee: "1"}, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1})
	s.result()
	st := s.status()
	s.True(st.CancelRequested)
	s.Len(st.Transactions, 1)
}

func (s *CoreSuite) TestCancelThenExpiredBuildsNoMore() {
	s.env.OnActivity(s.f.Confirm, mock.Anything, mock.Anything).After(time.Hour).
		Return(fakeConfirmed{Outcome: activities.OutcomeCannotLand}, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1})
	err := s.env.GetWorkflowError()
	s.True(temporal.IsCanceledError(err), "got %v", err)
	s.Equal(1, s.f.builds, "proven unable to land with a cancel pending: nothing is built again")
	s.Equal(activities.OutcomeCannotLand, s.status().Attempts[0].Outcome)
}

func (s *CoreSuite) TestWaitRestsVisiblyUntilItsEnd() {
	var during Status
	var details string
	s.env.RegisterDelayedCallback(func() {
		during = s.status()
		details = s.details()
	}, time.Hour)
	start := s.env.Now()
	s.run(coreInput{Amount: "1500", Validator: "val-1", Steps: 2, Wait: 3 * time.Hour})
	s.result()
	s.Equal(fakeWait, during.Step)
	s.Equal(3*time.Hour, during.WaitingUntil.Sub(start).Round(time.Minute))
	s.Contains(details, "**"+fakeWait+"**: bond 1500 micro")
	s.Contains(details, "validator: val-1")
	s.Contains(details, "bond: tx-1 (height 77, fee 500 micro)")
	s.Contains(details, "next check: "+during.WaitingUntil.UTC().Format(time.RFC3339))
	// Leaving the wait records the step it moves on to (building), as RecordedSteps says.
	s.Equal([]string{StepValidating, StepConfirming, fakeWait, StepBuilding, StepConfirming, StepDone}, s.steps)
	s.Equal(1, s.f.validators)
}

func (s *CoreSuite) TestDetailsNameThePendingTransaction() {
	s.env.OnActivity(s.f.Confirm, mock.Anything, mock.Anything).After(time.Hour).
		Return(fakeConfirmed{Outcome: activities.OutcomeFinalized, Block: 3, Fee: "1"}, nil)
	var details string
	s.env.RegisterDelayedCallback(func() { details = s.details() }, time.Minute)
	s.run(coreInput{Amount: "1500", Account: "acct-1", Steps: 1})
	s.result()
	s.Contains(details, "**confirming**: bond 1500 micro")
	s.Contains(details, "bond account: acct-1")
	s.Contains(details, "pending bond: tx-1 (build 1)")
	s.NotContains(details, "next check")
}

func (s *CoreSuite) TestDetailsOfAFailureNameTheError() {
	s.f.freshErr = temporal.NewNonRetryableApplicationError("already on chain", activities.ErrStaleTransaction, nil)
	s.run(coreInput{Amount: "0", Steps: 1})
	d := s.details()
	s.Contains(d, "**failed**: bond")
	s.NotContains(d, "bond 0")
	s.Contains(d, "failed: already on chain")
}

// A wait re-entered (after the chain was read again) sends StakeflowStep once: visibility already
// shows it.
func (s *CoreSuite) TestReenteredWaitIsUpsertedOnce() {
	start := s.env.Now()
	s.run(coreInput{Steps: 2, Wait: time.Hour, Rewaits: 3})
	s.result()
	s.Equal(4*time.Hour, s.env.Now().Sub(start).Round(time.Minute))
	s.Equal([]string{StepValidating, StepConfirming, fakeWait, StepBuilding, StepConfirming, StepDone}, s.steps)
}

// What a chain learns between two waits is sent with the next one, though the step is unchanged.
func (s *CoreSuite) TestFindingBetweenWaitsIsSentWithTheNextWait() {
	var during string
	s.env.RegisterDelayedCallback(func() { during, _ = s.sa[SAStakeAccount.GetName()].(string) }, 90*time.Minute)
	s.run(coreInput{Steps: 2, Wait: time.Hour, Rewaits: 1, LearnedWhileWaiting: "acct-7"})
	s.result()
	s.Equal("acct-7", during, "sent when the second wait began, not at the next step")
	s.Equal([]string{StepValidating, StepConfirming, fakeWait, StepBuilding, StepConfirming, StepDone}, s.steps)
}

func (s *CoreSuite) TestNoApprovalAskedShowsNone() {
	s.run(coreInput{Amount: "1500", Steps: 1})
	s.result()
	ap := s.status().Approval
	s.False(ap.Required)
	s.Zero(ap.ApprovalsRequired)
	s.Empty(ap.Decision)
	s.NotContains(s.details(), "approvals:")
}

// On a chain with nonces, a replacement that cannot be built does not abandon the build sent
// before: it is followed until it lands.
func (s *CoreSuite) TestReplacementNotBuiltFollowsTheBuildSent() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeReplace}}
	s.f.buildErrs = []error{nil, temporal.NewNonRetryableApplicationError("fee bump over the cap", activities.ErrPolicy, nil)}
	s.f.following = []fakeConfirmed{{Outcome: activities.OutcomeFinalized, Block: 8, Fee: "70"}}
	s.run(coreInput{Steps: 1, Replaceable: true})
	r := s.result()
	s.Equal(1, s.f.followed)
	s.Equal(TxRecord{Kind: "bond", TxID: "tx-1", Block: 8, Builds: 1, Fee: "70", FinalizedAt: r.Records[0].FinalizedAt}, r.Records[0])
	s.Equal([]string{"tx-1"}, s.f.broadcasts)
}

func (s *CoreSuite) TestReplacementNotBuiltAndNothingLandsFailsWithWhy() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeReplace}}
	s.f.buildErrs = []error{nil, temporal.NewNonRetryableApplicationError("fee bump over the cap", activities.ErrPolicy, nil)}
	s.f.following = []fakeConfirmed{{Outcome: activities.OutcomeCannotLand}}
	s.run(coreInput{Steps: 1, Replaceable: true})
	e := s.failure()
	s.Equal(activities.ErrPolicy, e.Type())
	s.Equal(1, s.f.followed)
}

// A first build that fails sent nothing: there is nothing to follow.
func (s *CoreSuite) TestFirstBuildFailingOnAChainWithNoncesFollowsNothing() {
	s.f.buildErrs = []error{temporal.NewNonRetryableApplicationError("bad request", activities.ErrServiceRejected, nil)}
	s.run(coreInput{Steps: 1, Replaceable: true})
	s.Equal(activities.ErrServiceRejected, s.failure().Type())
	s.Equal(0, s.f.confirmed)
}

// Without nonces, a build that fails after an expired one ends the step: the expired one cannot land.
func (s *CoreSuite) TestRebuildFailingWithoutNoncesFollowsNothing() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeCannotLand}}
	s.f.buildErrs = []error{nil, temporal.NewNonRetryableApplicationError("bad request", activities.ErrServiceRejected, nil)}
	s.run(coreInput{Steps: 1})
	s.Equal(activities.ErrServiceRejected, s.failure().Type())
	s.Equal(1, s.f.confirmed)
	s.Equal(0, s.f.followed)
}

// A cancel while a build on a chain with nonces is to be replaced sends no replacement, and
// follows the build sent to its end.
func (s *CoreSuite) TestCancelOnAChainWithNoncesFollowsTheBuildSent() {
	s.env.OnActivity(s.f.Confirm, mock.Anything, "tx-1").After(time.Hour).
		Return(fakeConfirmed{Outcome: activities.OutcomeReplace}, nil)
	s.env.OnActivity(s.f.Confirm, mock.Anything, "follow:tx-1").
		Return(fakeConfirmed{Outcome: activities.OutcomeFinalized, Block: 4, Fee: "2"}, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1, Replaceable: true})
	r := s.result()
	s.Equal("tx-1", r.Records[0].TxID)
	s.Equal(1, s.f.builds)
	s.True(s.status().CancelRequested)
}

// Cancelled while its build is to be replaced: nothing more is built, and the step ends cancelled
// only once the chain proved that the build sent cannot land, the proof on the attempt.
func (s *CoreSuite) TestCancelOnAChainWithNoncesWhenNothingLandsIsCancelled() {
	s.env.OnActivity(s.f.Confirm, mock.Anything, "tx-1").After(time.Hour).
		Return(fakeConfirmed{Outcome: activities.OutcomeReplace}, nil)
	s.env.OnActivity(s.f.Confirm, mock.Anything, "follow:tx-1").
		Return(fakeConfirmed{Outcome: activities.OutcomeCannotLand, Error: "nonce 7 taken by 0xother"}, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1, Replaceable: true})
	err := s.env.GetWorkflowError()
	s.True(temporal.IsCanceledError(err), "got %v", err)
	s.Equal(1, s.f.builds)
	st := s.status()
	s.Equal(StepCancelled, st.Step)
	s.Equal(activities.OutcomeCannotLand, st.Attempts[0].Outcome)
	s.Equal("nonce 7 taken by 0xother", st.Attempts[0].Error)
}

// After a stall's wait the operation is back in the step it stalled in while it tries again; the
// stall record stays until that try succeeds.
func (s *CoreSuite) TestAfterAStallTheStepResumesForTheNextTry() {
	s.env.OnActivity(s.f.Read, mock.Anything, mock.Anything).
		Return("", temporal.NewNonRetryableApplicationError("rpc 403", activities.ErrChainRejected, nil)).Once()
	s.env.OnActivity(s.f.Read, mock.Anything, mock.Anything).After(time.Hour).Return("acct-1", nil).Once()
	var during Status
	s.env.RegisterDelayedCallback(func() { during = s.status() }, 10*time.Minute)
	s.run(coreInput{Steps: 1, ReadAfter: true})
	s.result()
	s.Equal(StepConfirming, during.Step, "the stalled step is resumed for the next try")
	s.Require().NotNil(during.Stall)
	s.Equal(1, during.Stall.Tries)
	s.Nil(s.status().Stall)
}

func (s *CoreSuite) TestFailureReadsInOneLineCauseFirst() {
	s.f.broadcastErr = temporal.NewNonRetryableApplicationError("insufficient funds: staker X holds 1 SOL\nthe rest of the answer",
		activities.ErrTransactionRejected, errors.New("status 400: custom program error: 0x1"))
	s.run(coreInput{Steps: 1})
	f := s.failure()
	// The failure the Web UI shows is the reason alone; the cause chain stays below it.
	s.Equal("insufficient funds: staker X holds 1 SOL", f.Message())
	s.Equal(activities.ErrTransactionRejected, f.Type())
	var actErr *temporal.ActivityError
	s.Require().True(errors.As(f, &actErr), "the activity's failure stays as the cause")
	st := s.status()
	s.Equal("insufficient funds: staker X holds 1 SOL", st.Reason)
	s.Contains(st.Error, "custom program error: 0x1")
	s.Contains(s.details(), "failed: insufficient funds: staker X holds 1 SOL")
}

// Finding 1 of issue 26: after a replacement (build 2) was started, no exit of the step abandons
// build 1, which may still land. Each exit below follows build 1 (replacing stopped) and the step
// ends with build 1's fate: landed (completed, whichever exit led there) or proven unable to land.

// replacementExit sets the fake chain so that build 1 is to be replaced, and build 1, followed,
// lands (or, with cannotLand, is proven unable to land).
func (s *CoreSuite) replacementExit(cannotLand bool) {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeReplace}}
	s.f.following = []fakeConfirmed{{Outcome: activities.OutcomeFinalized, Block: 8, Fee: "70", TxID: "tx-1"}}
	if cannotLand {
		s.f.following = []fakeConfirmed{{Outcome: activities.OutcomeCannotLand, Error: "nonce 7 taken by 0xother at final depth"}}
	}
}

// build1Landed asserts that the step completed with build 1, followed after the exit.
func (s *CoreSuite) build1Landed() {
	r := s.result()
	s.Require().Len(r.Records, 1)
	s.Equal(TxRecord{Kind: "bond", TxID: "tx-1", Block: 8, Builds: 1, Fee: "70", FinalizedAt: r.Records[0].FinalizedAt}, r.Records[0])
	s.GreaterOrEqual(s.f.followed, 1, "build 1 is followed, replacing stopped")
	st := s.status()
	s.Equal(StepDone, st.Step)
	s.Equal(activities.OutcomeFinalized, st.Attempts[0].Outcome)
}

func (s *CoreSuite) TestRefusedReplacementAtItsFirstSendFollowsTheFirstBuild() {
	s.replacementExit(false)
	s.f.broadcastErrs = map[int]error{1: temporal.NewNonRetryableApplicationError("insufficient funds for the bumped fee", activities.ErrTransactionRejected, nil)}
	s.run(coreInput{Steps: 1, Replaceable: true})
	s.build1Landed()
	s.Equal([]string{"tx-1", "tx-2"}, s.f.broadcasts)
	st := s.status()
	s.Equal(activities.OutcomeFailed, st.Attempts[1].Outcome, "the refused replacement never reached the chain")
}

func (s *CoreSuite) TestRefusedReplacementAndNothingLandsFailsWithTheCauseAndTheProof() {
	s.replacementExit(true)
	s.f.broadcastErrs = map[int]error{1: temporal.NewNonRetryableApplicationError("insufficient funds for the bumped fee", activities.ErrTransactionRejected, nil)}
	s.run(coreInput{Steps: 1, Replaceable: true})
	e := s.failure()
	s.Equal(activities.ErrTransactionRejected, e.Type())
	s.Contains(e.Error(), "insufficient funds for the bumped fee")
	s.Contains(e.Error(), "nonce 7 taken by 0xother at final depth", "the chain's proof is in the message")
	s.Equal(1, s.f.followed)
	s.Equal(activities.OutcomeCannotLand, s.status().Attempts[0].Outcome)
}

func (s *CoreSuite) TestReplacementNotFreshFollowsTheFirstBuild() {
	s.replacementExit(false)
	s.f.freshErrs = map[int]error{1: temporal.NewNonRetryableApplicationError("rpc refused", activities.ErrChainRejected, nil)}
	s.run(coreInput{Steps: 1, Replaceable: true})
	s.build1Landed()
	s.Equal([]string{"tx-1"}, s.f.broadcasts, "the replacement is not sent")
	s.Equal("not-sent", s.status().Attempts[1].Outcome)
}

func (s *CoreSuite) TestReplacementFreshnessTimingOutFollowsTheFirstBuild() {
	s.replacementExit(false)
	s.env.OnActivity(s.f.Fresh, mock.Anything, mock.Anything).Return(true, nil).Once()
	s.env.OnActivity(s.f.Fresh, mock.Anything, mock.Anything).
		Return(false, temporal.NewApplicationError("rpc unreachable", activities.ErrChainUnavailable))
	start := s.env.Now()
	s.run(coreInput{Steps: 1, Replaceable: true})
	s.build1Landed()
	s.Equal([]string{"tx-1"}, s.f.broadcasts)
	s.Contains(s.status().Attempts[1].Error, "rpc unreachable")
	s.Greater(s.env.Now().Sub(start), time.Minute, "retried until FreshOptions gave up")
}

func (s *CoreSuite) TestReplacementCheckRefusedFollowsTheFirstBuild() {
	s.replacementExit(false)
	s.f.checkErrs = map[int]error{1: temporal.NewNonRetryableApplicationError("wrong validator", activities.ErrVerificationFailed, nil)}
	s.run(coreInput{Steps: 1, Replaceable: true})
	s.build1Landed()
	s.Equal(1, s.f.signs, "the replacement is not signed")
}

func (s *CoreSuite) TestReplacementSignRefusedFollowsTheFirstBuild() {
	s.replacementExit(false)
	s.f.signErrs = map[int]error{1: temporal.NewNonRetryableApplicationError("fee over the policy", activities.ErrVerificationFailed, nil)}
	s.run(coreInput{Steps: 1, Replaceable: true})
	s.build1Landed()
	s.Equal([]string{"tx-1"}, s.f.broadcasts)
}

func (s *CoreSuite) TestReplacementNotBuiltAndCannotLandAfterACancelIsCancelledWithTheProof() {
	s.replacementExit(true)
	s.f.checkWait = map[int]bool{1: true}
	s.f.checkWaitCancels = true
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1, Replaceable: true})
	err := s.env.GetWorkflowError()
	s.True(temporal.IsCanceledError(err), "got %v", err)
	s.Equal(1, s.f.followed)
	s.Equal([]string{"tx-1"}, s.f.broadcasts)
}

func (s *CoreSuite) TestCancelDuringTheReplacementsCheckFollowsTheFirstBuild() {
	s.replacementExit(false)
	s.f.checkWait = map[int]bool{1: true}
	s.f.checkWaitCancels = true
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1, Replaceable: true})
	s.build1Landed()
	s.True(s.status().CancelRequested, "completed if the original won")
	s.Equal(1, s.f.signs)
}

func (s *CoreSuite) TestCancelBeforeTheReplacementIsSignedFollowsTheFirstBuild() {
	s.replacementExit(false)
	s.f.checkWait = map[int]bool{1: true}
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1, Replaceable: true})
	s.build1Landed()
	s.True(s.status().CancelRequested)
	s.Equal([]string{"tx-1"}, s.f.broadcasts, "the replacement is not sent")
}

func (s *CoreSuite) TestCancelDuringTheReplacementsFreshnessCheckFollowsTheFirstBuild() {
	s.replacementExit(false)
	s.env.OnActivity(s.f.Fresh, mock.Anything, mock.Anything).Return(true, nil).Once()
	s.env.OnActivity(s.f.Fresh, mock.Anything, mock.Anything).After(time.Hour).Return(true, nil).Once()
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1, Replaceable: true})
	s.build1Landed()
	s.True(s.status().CancelRequested)
	s.Equal([]string{"tx-1"}, s.f.broadcasts)
	s.Equal("not-sent", s.status().Attempts[1].Outcome)
}

func (s *CoreSuite) TestCancelAtTheLastCheckBeforeTheReplacementsBroadcastFollowsTheFirstBuild() {
	s.replacementExit(false)
	s.f.checkWait = map[int]bool{1: true}
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1, Replaceable: true, NoFresh: true})
	s.build1Landed()
	s.True(s.status().CancelRequested)
	s.Equal([]string{"tx-1"}, s.f.broadcasts)
}

// Finding 2 of issue 26: on a chain with nonces, the build limit is no proof: the builds sent are
// followed to the chain's word.
func (s *CoreSuite) TestBuildLimitOnAChainWithNoncesFollowsWhatWasSent() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeReplace}}
	s.f.following = []fakeConfirmed{{Outcome: activities.OutcomeFinalized, Block: 8, Fee: "70", TxID: "tx-1"}}
	s.run(coreInput{Steps: 1, Replaceable: true, Options: Options{MaxBuilds: 2}})
	r := s.result()
	s.Equal("tx-1", r.Records[0].TxID, "the first build landed after the limit")
	s.Equal(2, r.Records[0].Builds)
	s.Equal([]string{"tx-1", "tx-2"}, s.f.broadcasts)
	s.Equal(1, s.f.followed)
}

func (s *CoreSuite) TestBuildLimitOnAChainWithNoncesFailsOnlyWithTheChainsProof() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeReplace}}
	s.f.following = []fakeConfirmed{{Outcome: activities.OutcomeCannotLand, Error: "nonce 7 taken by 0xother at final depth"}}
	s.run(coreInput{Steps: 1, Replaceable: true, Options: Options{MaxBuilds: 2}})
	e := s.failure()
	s.Equal(ErrTooManyBuilds, e.Type())
	s.Contains(e.Error(), "2 transactions built under one nonce")
	s.Contains(e.Error(), "nonce 7 taken by 0xother at final depth")
	st := s.status()
	s.Equal(activities.OutcomeCannotLand, st.Attempts[0].Outcome)
	s.Equal(activities.OutcomeCannotLand, st.Attempts[1].Outcome)
}

// On a chain with nonces, "cannot land" (the nonce taken by another transaction) ends the step:
// no build can replace it.
func (s *CoreSuite) TestNonceTakenByAnotherTransactionEndsTheStepWithoutRebuilding() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeCannotLand, Error: "nonce 7 taken by 0xother at final depth"}}
	s.run(coreInput{Steps: 1, Replaceable: true})
	e := s.failure()
	s.Equal(ErrCannotLand, e.Type())
	s.Contains(e.Error(), "0xother")
	s.Equal(1, s.f.builds)
	s.Equal(0, s.f.followed)
}

// Where the chain keeps a step waiting (nothing landed, nothing proven), the operation stays open
// and visibly stalled, naming the ways out, until the chain's word.
func (s *CoreSuite) TestFollowTheChainKeepsWaitingStallsVisiblyWithTheWaysOut() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeReplace}}
	s.f.following = []fakeConfirmed{{Outcome: activities.OutcomeReplace}, {Outcome: activities.OutcomeReplace},
		{Outcome: activities.OutcomeFinalized, Block: 8, Fee: "70", TxID: "tx-1"}}
	var during Status
	var saStep any
	var details string
	s.env.RegisterDelayedCallback(func() {
		during, details, saStep = s.status(), s.details(), s.sa[SAStep.GetName()]
	}, 45*time.Second)
	s.run(coreInput{Steps: 1, Replaceable: true, Options: Options{MaxBuilds: 2}})
	r := s.result()
	s.Equal("tx-1", r.Records[0].TxID)
	s.Equal(StepStalled, during.Step)
	s.Equal(StepStalled, saStep)
	s.Require().NotNil(during.Stall)
	s.Equal(StepConfirming, during.Stall.Step)
	s.Contains(during.Stall.LastError, "none is proven unable to land")
	s.Contains(during.Stall.WaysOut, "wait")
	s.Contains(during.Stall.WaysOut, "cancel")
	s.Contains(details, "ways out: ")
	s.Equal(int64(1), s.counter(MetricStalls, nil), "one stall, however long")
	s.Nil(s.status().Stall)
	s.Equal(3, s.f.followed)
}

// EVM's way: a cancel after a broadcast sends the chain's cancel transaction under the nonce and
// follows it with the builds; when the cancel takes the nonce, the step ends cancelled, its hash
// the chain's proof.
func (s *CoreSuite) TestCancelAfterBroadcastTakesTheNonceBackWithTheCancelTransaction() {
	s.env.OnActivity(s.f.Confirm, mock.Anything, "tx-1").After(time.Hour).
		Return(fakeConfirmed{Outcome: activities.OutcomeReplace}, nil)
	s.env.OnActivity(s.f.Confirm, mock.Anything, "follow:tx-2").
		Return(fakeConfirmed{Outcome: activities.OutcomeFinalized, Block: 9, Fee: "21", TxID: "tx-2"}, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1, Canceller: true})
	err := s.env.GetWorkflowError()
	s.True(temporal.IsCanceledError(err), "got %v", err)
	s.Equal([]string{"tx-1", "tx-2"}, s.f.broadcasts)
	s.Equal(2, s.f.builds)
	st := s.status()
	s.Equal(StepCancelled, st.Step)
	s.Require().Len(st.Attempts, 2)
	s.Equal(KindCancel, st.Attempts[1].Kind)
	s.Equal(activities.OutcomeFinalized, st.Attempts[1].Outcome)
	s.Equal([]TxRecord{{Kind: KindCancel, TxID: "tx-2", Block: 9, Builds: 1, Fee: "21", FinalizedAt: st.Transactions[0].FinalizedAt}}, st.Transactions,
		"the transaction that took the nonce is on record")
	s.True(st.CancelRequested)
}

func (s *CoreSuite) TestCancelAfterBroadcastCompletesWhenTheOriginalWins() {
	s.env.OnActivity(s.f.Confirm, mock.Anything, "tx-1").After(time.Hour).
		Return(fakeConfirmed{Outcome: activities.OutcomeReplace}, nil)
	s.env.OnActivity(s.f.Confirm, mock.Anything, "follow:tx-2").
		Return(fakeConfirmed{Outcome: activities.OutcomeFinalized, Block: 9, Fee: "50", TxID: "tx-1"}, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	s.run(coreInput{Steps: 1, Canceller: true})
	r := s.result()
	s.Equal("tx-1", r.Records[0].TxID)
	st := s.status()
	s.True(st.CancelRequested)
	s.Equal(StepDone, st.Step)
	s.Equal(KindCancel, st.Attempts[1].Kind)
}

// The operator's way out of a stalled follow: a cancel sends the cancel transaction at once and
// the step ends on the chain's word about it.
func (s *CoreSuite) TestCancelDuringAStalledFollowSendsTheCancel() {
	s.f.confirms = []fakeConfirmed{{Outcome: activities.OutcomeReplace}}
	s.f.following = []fakeConfirmed{{Outcome: activities.OutcomeReplace}, {Outcome: activities.OutcomeFinalized, Block: 9, Fee: "21", TxID: "tx-2"}}
	var during Status
	s.env.RegisterDelayedCallback(func() { during = s.status() }, 10*time.Second)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, 20*time.Second)
	s.run(coreInput{Steps: 1, Canceller: true, Options: Options{MaxBuilds: 1}})
	err := s.env.GetWorkflowError()
	s.True(temporal.IsCanceledError(err), "got %v", err)
	s.Equal(StepStalled, during.Step)
	s.Require().NotNil(during.Stall)
	s.Contains(during.Stall.WaysOut, "consumes the nonce")
	st := s.status()
	s.Equal(KindCancel, st.Attempts[1].Kind)
	s.Equal([]string{"tx-1", "tx-2"}, s.f.broadcasts)
	s.Require().Len(st.Transactions, 1)
	s.Equal("tx-2", st.Transactions[0].TxID)
	s.Less(s.env.Now().Sub(st.StartedAt), 30*time.Second, "the cancel is sent when asked, not after the stall's wait")
}

// A cancel after a broadcast shows in the status while the step follows what was sent, not only
// once the chain has given its word.
func (s *CoreSuite) TestCancelShowsInTheStatusWhileTheStepFollows() {
	s.env.OnActivity(s.f.Confirm, mock.Anything, "tx-1").After(time.Hour).
		Return(fakeConfirmed{Outcome: activities.OutcomeReplace}, nil)
	s.env.OnActivity(s.f.Confirm, mock.Anything, "follow:tx-2").After(time.Hour).
		Return(fakeConfirmed{Outcome: activities.OutcomeFinalized, Block: 9, Fee: "21", TxID: "tx-2"}, nil)
	s.env.RegisterDelayedCallback(s.env.CancelWorkflow, time.Minute)
	var during Status
	s.env.RegisterDelayedCallback(func() { during = s.status() }, 90*time.Minute)
	s.run(coreInput{Steps: 1, Canceller: true})
	s.True(temporal.IsCanceledError(s.env.GetWorkflowError()))
	s.NotEqual(StepCancelled, during.Step, "still following when looked at")
	s.True(during.CancelRequested, "the cancel shows while the step follows")
}
