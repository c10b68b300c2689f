package evm

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	"github.com/stakeflow/stakeflow/workflows"
)

// The nonce sequencer of an address: one durable workflow per (network, address), the only
// source of that address's nonces for every stakeflow operation. It is chain-neutral: Celestia's
// account sequences go through it too, read by its own activity (SequencerState.Reader).
//
// An operation leases the address: it is granted the next nonce, uses as many consecutive nonces
// as its transactions need (a replacement reuses its step's nonce), and releases the lease with
// the first nonce it did not use. One lease at a time: two operations from one address get
// consecutive nonces, and a nonce is never skipped nor given twice. Before each grant the
// sequencer reads the address's nonces from the chain: a transaction from the address that
// stakeflow did not send (pending in the pool, or having consumed a nonce) is reported to the
// operation asking, as a non-retryable error, never passed over in silence.
//
// The chain has the last word on a lease given back:
//   - A release is not trusted alone. The sequencer reads the chain and hands out nothing until
//     the nonce consumed at final depth reaches the release's Next and nothing of the address is
//     pending or short of final depth (a build of the holder's still open). A chain count above
//     Next (the holder's transaction landed past what it said) is taken, and recorded in
//     SequencerState.Events; a count below it is never passed over (no nonce is handed out above
//     a gap): the sequencer re-reads, and the waiting operations are told why past CheckEvery. An
//     operator's way out is SignalResync (take the chain's count).
//   - A holder that closed without releasing (terminated, timed out, failed, continued as new)
//     is found by a durable timer (every CheckEvery) that describes its run (EVMLeaseHolder): the
//     waiting operations are told at once (a stall and a notification on each), and the lease is
//     freed at the chain's count once the chain has the last word on everything pending.
//   - Waiting operations rest in StepWaitingNonce, told whom they wait on; past MaxStallWait, or
//     when the sequencer tells them the lease does not come, they show as stalled.
//   - The run continues as new after grantsPerRun grants when idle, and whatever it holds past
//     stepsPerRun loop turns or historyLimit events, carrying its holder, queue, settling lease
//     and events.
//
// The workflow type keeps its first name, EVMNonceSequencerWorkflow, although Celestia uses it
// too: running sequencers are found by that name.
const (
	// SequencerWorkflowType is the sequencer's workflow type (defined with the activity that
	// starts it).
	SequencerWorkflowType = actevm.SequencerWorkflowType
	// SignalAcquire asks for the lease (SequencerRequest); SignalRelease gives it back (Release).
	SignalAcquire = actevm.SignalAcquire
	SignalRelease = "release"
	// SignalGrant carries a Grant to the operation that asked.
	SignalGrant = "nonce-grant"
	// ErrNonceConflict: the address's nonces on chain are not what stakeflow handed out: a
	// transaction stakeflow did not send is pending or landed. Non-retryable.
	ErrNonceConflict = actevm.ErrNonceConflict
	// StepWaitingNonce: the operation waits for its address's lease, held by another operation.
	StepWaitingNonce = "waiting-nonce"
)

// SequencerID is the workflow ID of the sequencer of address on network.
func SequencerID(network, address string) string { return actevm.SequencerID(network, address) }

// SequencerState is the sequencer's input, carried over each continue-as-new.
type SequencerState = actevm.SequencerState

// Grant is the sequencer's answer to an acquire: the first nonce the operation may use, or why
// it may use none.
type Grant struct {
	Nonce uint64 `json:"nonce"`
	Error string `json:"error,omitempty"`
}

// Release gives a lease back: Next is the first nonce the operation did not use.
type Release struct {
	WorkflowID string `json:"workflowId"`
	Next       uint64 `json:"next"`
}

// grantsPerRun bounds a sequencer run's history before it continues as new.
const grantsPerRun = 200

// NonceSequencerWorkflow hands out the nonces of one address (see SequencerID).
func NonceSequencerWorkflow(ctx workflow.Context, st SequencerState) error {
	s := &sequencer{st: st, logger: workflow.GetLogger(ctx)}
	return s.run(ctx)
}

// grant reads the address's nonces from the chain and answers req with the next nonce, or with
// the conflict it found.
func grant(ctx workflow.Context, st *SequencerState, req actevm.SequencerRequest) Grant {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	var read any = ea.EVMReadNonces
	if st.Reader != "" {
		read = st.Reader
	}
	var n actevm.Nonces
	if err := workflow.ExecuteActivity(actx, read,
		actevm.NoncesInput{Network: st.Network, Address: st.Address}).Get(ctx, &n); err != nil {
		return Grant{Error: fmt.Sprintf("reading the nonces of %s: %v", st.Address, err)}
	}
	switch {
	case n.Pending > n.Latest:
		return Grant{Error: fmt.Sprintf("%s has %d transaction(s) pending that stakeflow did not send (nonces %d to %d): "+
			"let them land or replace them, then start again", st.Address, n.Pending-n.Latest, n.Latest, n.Pending-1)}
	case !st.Known:
		st.Next, st.Known = n.Latest, true
	case n.Latest > st.Next:
		from := st.Next
		st.Next = n.Latest
		return Grant{Error: fmt.Sprintf("nonces %d to %d of %s were used by transactions stakeflow did not send: "+
			"check who else signs for this address; the next operation starts at nonce %d", from, n.Latest-1, st.Address, n.Latest)}
	case n.Latest < st.Next:
		return Grant{Error: fmt.Sprintf("the chain counts %d transactions from %s but stakeflow handed out nonces up to %d: "+
			"a transaction it counted as landed is not on chain", n.Latest, st.Address, st.Next-1)}
	}
	return Grant{Nonce: st.Next}
}

// Lease is an operation's hold on its address's nonces.
type Lease struct {
	seqID      string
	workflowID string
	start      uint64
	// Next is the next nonce the operation may use.
	Next uint64
}

// AcquireLease asks the sequencer of address for its lease and waits for it, resting in
// StepWaitingNonce. A conflict on chain fails the operation with ErrNonceConflict.
func AcquireLease(ctx workflow.Context, o *workflows.Operation, network, address string) (*Lease, error) {
	return AcquireLeaseVia(ctx, o, network, address, ea.EVMRequestLease)
}

// AcquireLeaseVia is AcquireLease with the activity that signals (and starts) the sequencer
// named: another chain's, whose sequencer reads that chain's sequences (SequencerState.Reader).
func AcquireLeaseVia(ctx workflow.Context, o *workflows.Operation, network, address string, request any) (*Lease, error) {
	info := workflow.GetInfo(ctx)
	req := actevm.SequencerRequest{Network: network, Address: address,
		WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: time.Minute, NonRetryableErrorTypes: activities.NonRetryable},
	})
	if err := o.Get(ctx, workflow.ExecuteActivity(actx, request, req), nil); err != nil {
		return nil, err
	}
	o.SetStep(ctx, StepWaitingNonce)
	o.Flush(ctx)
	g, granted := waitForGrant(ctx, o, SequencerID(network, address))
	l := &Lease{seqID: SequencerID(network, address), workflowID: req.WorkflowID, start: g.Nonce, Next: g.Nonce}
	if !granted {
		// Leave the queue (or give back a lease granted meanwhile) with no nonce used.
		l.Next = 0
		_ = l.Release(ctx)
		return nil, temporal.NewCanceledError("cancelled while waiting for the address's nonce; nothing was sent")
	}
	if g.Error != "" {
		return nil, temporal.NewNonRetryableApplicationError(g.Error, ErrNonceConflict, nil)
	}
	return l, nil
}

// waitForGrant waits for the sequencer's grant, resting in StepWaitingNonce. The operation shows
// itself stalled (status, search attribute, metric, notification) when the sequencer tells it the
// lease does not come (its holder closed without releasing, a release the chain contradicts), and
// when its wait lasts longer than MaxStallWait, naming the operation that holds the lease. It
// reports false when the operation was cancelled first.
func waitForGrant(ctx workflow.Context, o *workflows.Operation, seqID string) (Grant, bool) {
	var (
		g                  Grant
		granted, cancelled bool
		holder             string
		bound              workflow.Future
	)
	every := o.Options().MaxStallWait
	since := workflow.Now(ctx)
	tctx, stopTimer := workflow.WithCancel(ctx)
	defer stopTimer()
	grants := workflow.GetSignalChannel(ctx, SignalGrant)
	notices := workflow.GetSignalChannel(ctx, SignalLeaseNotice)
	told := "" // the sequencer's reason, when it told one
	for !granted && !cancelled {
		if bound == nil {
			bound = workflow.NewTimer(tctx, every)
		}
		var notice *LeaseNotice
		overdue := false
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(grants, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, &g)
			granted = true
		})
		sel.AddReceive(notices, func(c workflow.ReceiveChannel, _ bool) {
			notice = new(LeaseNotice)
			c.Receive(ctx, notice)
		})
		if bound != nil {
			sel.AddFuture(bound, func(f workflow.Future) {
				bound = nil
				overdue = f.Get(ctx, nil) == nil
			})
		}
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { cancelled = true })
		sel.Select(ctx)
		switch {
		case granted || cancelled:
		case notice != nil:
			if notice.Holder != "" {
				holder = notice.Holder
			}
			if notice.Stalled {
				told = notice.Reason
				o.StallWaiting(ctx, StepWaitingNonce, told, every)
			} else {
				// A new holder: what the sequencer said before no longer holds.
				told = ""
			}
		case overdue && told != "":
			o.StallWaiting(ctx, StepWaitingNonce, told, every)
		case overdue:
			what := "the operation holding it (not told yet: see the sequencer " + seqID + ")"
			if holder != "" {
				what = "operation " + holder
			}
			o.StallWaiting(ctx, StepWaitingNonce, fmt.Sprintf("waiting since %s for the nonce lease of its address, held by %s",
				since.UTC().Format(time.RFC3339), what), every)
		}
	}
	o.Unstall(ctx, StepWaitingNonce)
	return g, granted
}

// Release gives the lease back with the next unused nonce. It runs on a disconnected context: a
// cancelled operation still frees its address.
func (l *Lease) Release(ctx workflow.Context) error {
	if l == nil {
		return nil
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	return workflow.SignalExternalWorkflow(dctx, l.seqID, "", SignalRelease,
		Release{WorkflowID: l.workflowID, Next: l.Next}).Get(dctx, nil)
}

// Names and bounds of the sequencer's liveness and reconciliation with the chain.
const (
	// SignalLeaseNotice tells a waiting operation what it waits on (a LeaseNotice).
	SignalLeaseNotice = "nonce-lease-notice"
	// SignalResync is an operator's way out of a lease that does not settle (a holder's release
	// the chain never agrees with): the sequencer takes the chain's count at final depth.
	SignalResync = "resync"
	// QuerySequencer answers the sequencer's state (SequencerState).
	QuerySequencer = "sequencer-state"
)

// Settling and SequencerEvent: see activities/evm.
type (
	Settling       = actevm.Settling
	SequencerEvent = actevm.SequencerEvent
)

// LeaseNotice tells a waiting operation which operation holds its address's lease and, when
// Stalled, why the lease does not come (its holder closed without releasing, the chain does not
// agree with a release).
type LeaseNotice struct {
	Holder  string `json:"holder"`
	Reason  string `json:"reason,omitempty"`
	Stalled bool   `json:"stalled,omitempty"`
}

// stepsPerRun bounds a run's loop turns (each a few events: a holder check, a signal, a grant)
// and historyLimit its history, whatever the lease: a lease held for days is checked every few
// minutes, and the run continues as new carrying its holder, queue and settling lease.
var (
	stepsPerRun  = 1000
	historyLimit = 8000
)

// sequencer is a run of NonceSequencerWorkflow.
type sequencer struct {
	st     SequencerState
	logger log.Logger
	grants int
	steps  int
	// timer is the pending check of the holder or of a settling lease (nil: none pending).
	timer workflow.Future
}

func (s *sequencer) checkEvery() time.Duration {
	if s.st.CheckEvery > 0 {
		return s.st.CheckEvery
	}
	return actevm.DefaultCheckEvery
}

func (s *sequencer) run(ctx workflow.Context) error {
	st := &s.st
	if err := workflow.SetQueryHandler(ctx, QuerySequencer, func() (SequencerState, error) { return *st, nil }); err != nil {
		return err
	}
	acquire := workflow.GetSignalChannel(ctx, SignalAcquire)
	release := workflow.GetSignalChannel(ctx, SignalRelease)
	resync := workflow.GetSignalChannel(ctx, SignalResync)
	if st.Settling != nil {
		// Carried over a continue-as-new: the chain is read again at once.
		s.settle(ctx)
	}
	for {
		if st.Holder == nil && st.Settling == nil && len(st.Queue) > 0 {
			s.grantNext(ctx)
			continue
		}
		idle := st.Holder == nil && st.Settling == nil && len(st.Queue) == 0
		long := s.steps >= stepsPerRun || workflow.GetInfo(ctx).GetCurrentHistoryLength() >= historyLimit
		if ((s.grants >= grantsPerRun && idle) || long) && acquire.Len() == 0 && release.Len() == 0 && resync.Len() == 0 {
			return workflow.NewContinueAsNewError(ctx, SequencerWorkflowType, *st)
		}
		s.steps++
		if (st.Holder != nil || st.Settling != nil) && s.timer == nil {
			wait := s.checkEvery()
			if sg := st.Settling; sg != nil {
				wait = min(15*time.Second<<min(sg.Reads, 10), wait)
			}
			s.timer = workflow.NewTimer(ctx, wait)
		}
		var (
			req             *actevm.SequencerRequest
			rel             *Release
			fired, resynced bool
			stopped         bool
		)
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(acquire, func(c workflow.ReceiveChannel, _ bool) {
			req = new(actevm.SequencerRequest)
			c.Receive(ctx, req)
		})
		sel.AddReceive(release, func(c workflow.ReceiveChannel, _ bool) {
			rel = new(Release)
			c.Receive(ctx, rel)
		})
		sel.AddReceive(resync, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			resynced = true
		})
		if s.timer != nil {
			sel.AddFuture(s.timer, func(f workflow.Future) {
				s.timer = nil
				fired = f.Get(ctx, nil) == nil
			})
		}
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) { stopped = true })
		sel.Select(ctx)
		switch {
		case stopped:
			// Cancelled by an operator: operations waiting see their acquire fail to deliver.
			return temporal.NewCanceledError("nonce sequencer stopped")
		case req != nil:
			s.enqueue(ctx, *req)
		case rel != nil:
			s.release(ctx, *rel)
		case resynced:
			s.resync(ctx)
		case fired && st.Settling != nil:
			s.settle(ctx)
		case fired && st.Holder != nil:
			s.checkHolder(ctx)
		}
	}
}

// grantNext answers the first operation waiting, and tells the others who holds the lease now.
func (s *sequencer) grantNext(ctx workflow.Context) {
	st := &s.st
	req := st.Queue[0]
	st.Queue = st.Queue[1:]
	g := grant(ctx, st, req)
	if g.Error == "" {
		st.Holder = &req
	}
	s.grants++
	s.logger.Info("Nonce lease", "operationId", req.WorkflowID, "nonce", g.Nonce, "error", g.Error)
	if err := workflow.SignalExternalWorkflow(ctx, req.WorkflowID, req.RunID, SignalGrant, g).Get(ctx, nil); err != nil {
		// The operation is gone: its lease is free again.
		s.logger.Warn("Lease not delivered", "operationId", req.WorkflowID, "error", err)
		st.Holder = nil
		return
	}
	if st.Holder != nil {
		for _, q := range st.Queue {
			s.notice(ctx, q, LeaseNotice{Holder: req.WorkflowID})
		}
	}
}

// enqueue queues an operation asking for the lease, and tells it what it waits on.
func (s *sequencer) enqueue(ctx workflow.Context, req actevm.SequencerRequest) {
	st := &s.st
	if st.Holder != nil && st.Holder.WorkflowID == req.WorkflowID {
		// The holder asks again (it restarted its wait): it already holds the lease.
		st.Queue = append([]actevm.SequencerRequest{req}, st.Queue...)
		st.Holder = nil
		return
	}
	for _, q := range st.Queue {
		if q.WorkflowID == req.WorkflowID {
			return
		}
	}
	st.Queue = append(st.Queue, req)
	switch {
	case st.Holder != nil:
		s.notice(ctx, req, LeaseNotice{Holder: st.Holder.WorkflowID})
	case st.Settling != nil:
		n := LeaseNotice{Holder: st.Settling.WorkflowID, Reason: st.Settling.Told, Stalled: st.Settling.Told != ""}
		s.notice(ctx, req, n)
	}
}

// release takes the lease back from its holder: no nonce is handed out again before the chain
// agrees (settle).
func (s *sequencer) release(ctx workflow.Context, rel Release) {
	st := &s.st
	if st.Holder == nil || st.Holder.WorkflowID != rel.WorkflowID {
		// An operation that gave up waiting (cancelled): it leaves the queue.
		for i, q := range st.Queue {
			if q.WorkflowID == rel.WorkflowID {
				st.Queue = append(st.Queue[:i:i], st.Queue[i+1:]...)
				return
			}
		}
		s.logger.Warn("Release from an operation not holding the lease", "operationId", rel.WorkflowID)
		return
	}
	// A release below the nonce granted (0: nothing used) claims nothing was used.
	st.Settling = &Settling{WorkflowID: rel.WorkflowID, RunID: st.Holder.RunID, From: st.Next,
		Claim: max(rel.Next, st.Next), Since: workflow.Now(ctx)}
	st.Holder = nil
	s.settle(ctx)
}

// settle reads the chain for the lease given back: the lease is free again once the nonce the
// chain has consumed at final depth reaches the holder's claim and nothing of the address is
// pending or short of final depth (a build of the holder's still open). The sequencer continues
// from the chain's count: a count above the claim means the holder's transactions landed past
// what it said, recorded as an event. A count below it is never passed over: the sequencer
// waits, re-reading, and tells the waiting operations past CheckEvery.
func (s *sequencer) settle(ctx workflow.Context) {
	st := &s.st
	sg := st.Settling
	n, err := s.read(ctx)
	var reason string
	switch {
	case err != nil:
		reason = fmt.Sprintf("reading the nonces of %s to settle the lease %s gave back: %v", st.Address, sg.WorkflowID, err)
	case n.Pending > n.Finalized:
		how := "gave back"
		if sg.Closed != "" {
			how = "closed (" + sg.Closed + ") holding"
		}
		reason = fmt.Sprintf("%s %s the nonce lease of %s; %d of the address's transactions are pending or not final yet "+
			"(nonces %d to %d): no nonce is handed out until the chain has the last word on them",
			sg.WorkflowID, how, st.Address, n.Pending-n.Finalized, n.Finalized, n.Pending-1)
	case n.Finalized < sg.Claim:
		reason = fmt.Sprintf("%s gave back the nonce lease of %s at nonce %d, but the chain has consumed nonces only up to %d at final depth: "+
			"no nonce is handed out above a gap; waiting for the chain (an operator may signal %q to take the chain's count)",
			sg.WorkflowID, st.Address, sg.Claim, n.Finalized, SignalResync)
	default:
		s.free(ctx, n.Finalized)
		return
	}
	sg.Reads++
	s.logger.Warn("Nonce lease not settled", "holder", sg.WorkflowID, "reads", sg.Reads, "reason", reason)
	if reason != sg.Told && (sg.Closed != "" || workflow.Now(ctx).Sub(sg.Since) >= s.checkEvery()) {
		s.tell(ctx, reason)
	}
}

// free ends a settling lease at next, the chain's count at final depth.
func (s *sequencer) free(ctx workflow.Context, next uint64) {
	st := &s.st
	sg := st.Settling
	switch {
	case sg.Closed != "":
		s.record(ctx, actevm.EventHolderClosed, sg, next, fmt.Sprintf(
			"%s closed (%s) holding the nonce lease from nonce %d without giving it back; the chain has consumed nonces up to %d at final depth: the lease was freed there",
			sg.WorkflowID, sg.Closed, sg.From, next))
	case next > sg.Claim:
		s.record(ctx, actevm.EventChainAhead, sg, next, fmt.Sprintf(
			"%s gave back the nonce lease at nonce %d, but the chain has consumed nonces up to %d at final depth: transactions landed past what it said; continuing from %d",
			sg.WorkflowID, sg.Claim, next, next))
	}
	st.Next, st.Known, st.Settling = next, true, nil
}

// resync is an operator's way out of a lease that does not settle: the chain's count at final
// depth is taken, whatever the holder claimed.
func (s *sequencer) resync(ctx workflow.Context) {
	st := &s.st
	sg := st.Settling
	if sg == nil {
		s.logger.Warn("Resync asked with no lease settling: nothing to do")
		return
	}
	n, err := s.read(ctx)
	if err != nil {
		s.logger.Warn("Resync: the chain could not be read", "error", err)
		return
	}
	s.record(ctx, actevm.EventResync, sg, n.Finalized, fmt.Sprintf(
		"an operator took the chain's count for the lease %s gave back at nonce %d: continuing from %d", sg.WorkflowID, sg.Claim, n.Finalized))
	st.Next, st.Known, st.Settling = n.Finalized, true, nil
}

// checkHolder asks whether the holder still runs; a holder that closed without releasing gives
// the lease back at the chain's count, and the waiting operations are told at once.
func (s *sequencer) checkHolder(ctx workflow.Context) {
	st := &s.st
	h := *st.Holder
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3,
			NonRetryableErrorTypes: activities.NonRetryable},
	})
	var hs actevm.HolderState
	if err := workflow.ExecuteActivity(actx, ea.EVMLeaseHolder, actevm.HolderInput{WorkflowID: h.WorkflowID, RunID: h.RunID}).Get(ctx, &hs); err != nil {
		s.logger.Warn("Lease holder not described; asked again at the next check", "holder", h.WorkflowID, "error", err)
		return
	}
	if hs.Running {
		return
	}
	st.Holder = nil
	st.Settling = &Settling{WorkflowID: h.WorkflowID, RunID: h.RunID, From: st.Next, Claim: st.Next, Closed: hs.Status, Since: workflow.Now(ctx)}
	s.logger.Warn("Lease holder closed without releasing", "holder", h.WorkflowID, "status", hs.Status)
	s.tell(ctx, fmt.Sprintf("%s closed (%s) holding the nonce lease of %s without giving it back: the lease is freed at the nonce the chain has consumed at final depth",
		h.WorkflowID, hs.Status, st.Address))
	s.settle(ctx)
}

// read reads the address's nonces through the sequencer's reader.
func (s *sequencer) read(ctx workflow.Context) (actevm.Nonces, error) {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	var read any = ea.EVMReadNonces
	if s.st.Reader != "" {
		read = s.st.Reader
	}
	var n actevm.Nonces
	err := workflow.ExecuteActivity(actx, read, actevm.NoncesInput{Network: s.st.Network, Address: s.st.Address}).Get(ctx, &n)
	return n, err
}

// tell tells every waiting operation that its wait is stalled, and why.
func (s *sequencer) tell(ctx workflow.Context, reason string) {
	holder := ""
	if sg := s.st.Settling; sg != nil {
		sg.Told, holder = reason, sg.WorkflowID
	} else if s.st.Holder != nil {
		holder = s.st.Holder.WorkflowID
	}
	for _, q := range s.st.Queue {
		s.notice(ctx, q, LeaseNotice{Holder: holder, Reason: reason, Stalled: true})
	}
}

func (s *sequencer) notice(ctx workflow.Context, to actevm.SequencerRequest, n LeaseNotice) {
	if err := workflow.SignalExternalWorkflow(ctx, to.WorkflowID, to.RunID, SignalLeaseNotice, n).Get(ctx, nil); err != nil {
		s.logger.Warn("Lease notice not delivered", "operationId", to.WorkflowID, "error", err)
	}
}

// record keeps an event of the sequencer's (the last MaxEvents) and logs it.
func (s *sequencer) record(ctx workflow.Context, kind string, sg *Settling, next uint64, detail string) {
	s.logger.Warn("Nonce lease reconciled with the chain", "kind", kind, "holder", sg.WorkflowID, "claimed", sg.Claim, "next", next, "detail", detail)
	s.st.Events = append(s.st.Events, SequencerEvent{At: workflow.Now(ctx), Kind: kind, Holder: sg.WorkflowID, Claimed: sg.Claim, Next: next, Detail: detail})
	if n := len(s.st.Events); n > actevm.MaxEvents {
		s.st.Events = append([]SequencerEvent(nil), s.st.Events[n-actevm.MaxEvents:]...)
	}
}
