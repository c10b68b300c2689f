package lease

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/workflows"
)

// Register registers the lease's workflow on r under WorkflowType, reading the addresses' nonces
// through read (the chain's reader activity), and, when r registers activities too (a worker, not
// a replayer), the LeaseHolder activity the workflow asks of its holders, described through the
// worker's own Temporal client. Each chain family registers it once, on its own task queue, with
// its own reader.
func Register(r worker.WorkflowRegistry, read Reader) {
	r.RegisterWorkflowWithOptions(Workflow(read), workflow.RegisterOptions{Name: WorkflowType})
	if a, ok := r.(worker.ActivityRegistry); ok {
		a.RegisterActivity(&Activities{})
	}
}

// Workflow is the lease of one address (see ID), reading its nonces through read.
func Workflow(read Reader) func(workflow.Context, State) error {
	return func(ctx workflow.Context, st State) error {
		s := &sequencer{st: st, reader: read, logger: workflow.GetLogger(ctx)}
		return s.run(ctx)
	}
}

// grantsPerRun bounds a lease run's history before it continues as new.
const grantsPerRun = 200

// grant reads the address's nonces from the chain and answers the operation first in the queue
// with the next nonce, or with the conflict it found.
func (s *sequencer) grant(ctx workflow.Context) Grant {
	st := &s.st
	n, err := s.read(ctx)
	if err != nil {
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

// stepsPerRun bounds a run's loop turns (each a few events: a holder check, a signal, a grant)
// and historyLimit its history, whatever the lease: a lease held for days is checked every few
// minutes, and the run continues as new carrying its holder, queue and settling lease.
var (
	stepsPerRun  = 1000
	historyLimit = 8000
)

// holders calls the LeaseHolder activity.
var holders *Activities

// sequencer is a run of the lease's workflow.
type sequencer struct {
	st     State
	reader Reader
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
	return DefaultCheckEvery
}

func (s *sequencer) run(ctx workflow.Context) error {
	st := &s.st
	if err := workflow.SetQueryHandler(ctx, QueryState, func() (State, error) { return *st, nil }); err != nil {
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
			return workflow.NewContinueAsNewError(ctx, WorkflowType, *st)
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
			req             *Request
			rel             *Release
			fired, resynced bool
			stopped         bool
		)
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(acquire, func(c workflow.ReceiveChannel, _ bool) {
			req = new(Request)
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
	g := s.grant(ctx)
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
			s.notice(ctx, q, Notice{Holder: req.WorkflowID})
		}
	}
}

// enqueue queues an operation asking for the lease, and tells it what it waits on.
func (s *sequencer) enqueue(ctx workflow.Context, req Request) {
	st := &s.st
	if st.Holder != nil && st.Holder.WorkflowID == req.WorkflowID {
		// The holder asks again (it restarted its wait): it already holds the lease.
		st.Queue = append([]Request{req}, st.Queue...)
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
		s.notice(ctx, req, Notice{Holder: st.Holder.WorkflowID})
	case st.Settling != nil:
		n := Notice{Holder: st.Settling.WorkflowID, Reason: st.Settling.Told, Stalled: st.Settling.Told != ""}
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
		s.record(ctx, EventHolderClosed, sg, next, fmt.Sprintf(
			"%s closed (%s) holding the nonce lease from nonce %d without giving it back; the chain has consumed nonces up to %d at final depth: the lease was freed there",
			sg.WorkflowID, sg.Closed, sg.From, next))
	case next > sg.Claim:
		s.record(ctx, EventChainAhead, sg, next, fmt.Sprintf(
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
	s.record(ctx, EventResync, sg, n.Finalized, fmt.Sprintf(
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
	var hs HolderState
	if err := workflow.ExecuteActivity(actx, holders.LeaseHolder, HolderInput{WorkflowID: h.WorkflowID, RunID: h.RunID}).Get(ctx, &hs); err != nil {
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

// read reads the address's nonces through the chain's reader.
func (s *sequencer) read(ctx workflow.Context) (Nonces, error) {
	actx := workflow.WithActivityOptions(ctx, workflows.ReadOptions())
	var n Nonces
	err := workflow.ExecuteActivity(actx, s.reader, ReadInput{Network: s.st.Network, Address: s.st.Address}).Get(ctx, &n)
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
		s.notice(ctx, q, Notice{Holder: holder, Reason: reason, Stalled: true})
	}
}

func (s *sequencer) notice(ctx workflow.Context, to Request, n Notice) {
	if err := workflow.SignalExternalWorkflow(ctx, to.WorkflowID, to.RunID, SignalNotice, n).Get(ctx, nil); err != nil {
		s.logger.Warn("Lease notice not delivered", "operationId", to.WorkflowID, "error", err)
	}
}

// record keeps an event of the sequencer's (the last MaxEvents) and logs it.
func (s *sequencer) record(ctx workflow.Context, kind string, sg *Settling, next uint64, detail string) {
	s.logger.Warn("Nonce lease reconciled with the chain", "kind", kind, "holder", sg.WorkflowID, "claimed", sg.Claim, "next", next, "detail", detail)
	s.st.Events = append(s.st.Events, Event{At: workflow.Now(ctx), Kind: kind, Holder: sg.WorkflowID, Claimed: sg.Claim, Next: next, Detail: detail})
	if n := len(s.st.Events); n > MaxEvents {
		s.st.Events = append([]Event(nil), s.st.Events[n-MaxEvents:]...)
	}
}
