package workflows

// TestTransactModelCheck model-checks the operation core (Operation.Transact), chain-neutral.
//
// What is explored: one transaction step, run by the real core in Temporal's test environment
// against a fake chain of one of three kinds (a third of the seeds each):
//   - a nonce chain (a Replaceable Tx): every build shares one nonce, so at most one can consume
//     it; Confirm answers "replace" when the newest build was not mined in time, "cannot land"
//     only when another transaction consumed the nonce. Half the runs' Tx can also take the nonce
//     back on a cancel with a harmless transaction (Cancel, the core's optional Canceller), and
//     in half, once replacing stopped, Confirm answers "replace" now and then to say "no final
//     word yet" (the others poll on until a build lands);
//   - a Solana-like chain (not Replaceable): each build has its own expiry; a build is dead once
//     Confirm answered "cannot land" for it, and until then it may land;
//   - a timeout chain (Celestia-like, a Replaceable that is no Canceller): every build shares one
//     nonce and carries an expiry (a timeout height, in ticks). A replacement, after Confirm
//     answered "replace", is the previous build's bytes again (the same ID, the same expiry); a
//     build after "cannot land" gets a new, later expiry. A build that reached the chain may land
//     at any tick up to its expiry; another transaction may take the nonce (rare). Confirm
//     answers "cannot land" with NonceFree once every build signed is past its expiry unseen (the
//     core then builds again under the same nonce), and without it when another transaction took
//     the nonce. The node refuses bytes past their expiry (a replacement sent too late): at their
//     first send as rejected (the core exits and follows what was sent) or as uncertain (the
//     core asks the chain), both seen in practice. In half the runs, once replacing stopped,
//     Confirm answers "replace" now and then to say "no final word yet".
//
// On all three, every sent build may land at any later moment (on the timeout chain, up to its
// expiry) or never, any activity attempt may fail (retryable or not, where the real activity
// can) or time out, a broadcast may reach the chain and lose its answer, the node may refuse a
// build at its first send, and a cancel may arrive between any two steps (or in the middle of
// one). Each run is decided by its seed alone: the
// fake chain draws every choice from a generator seeded by it, in the order the core asks, and the
// test prints the seed and the schedule (every choice, in order) of a run that breaks a rule.
//
// After every run the chain is compared with what the operation says:
//   - at most one build of the step landed;
//   - completed if and only if a build landed without error, and the result names that build;
//     failed on chain (TransactionFailed) if and only if the build that landed reverted;
//   - the nonce (nonce and timeout chains) is used at most once: by one build, the cancel
//     transaction or another transaction;
//   - failed or cancelled only when nothing the step signed can land anymore: on the nonce chain
//     the nonce is consumed by another transaction or the step's cancel transaction (and by no
//     build of the step), or no build was ever sent; on the Solana-like chain every build sent
//     was answered "cannot land"; on the timeout chain another transaction took the nonce or
//     every build sent is past its expiry;
//   - on the timeout chain, a step whose builds all expired unseen, the nonce free, never fails
//     CannotLand of its own: it builds again (at MaxBuilds it fails TooManyBuilds; an exit cause,
//     a refusal or a cancel, ends it with that cause);
//   - the cancel transaction took the nonce only if the operation ended cancelled;
//   - nothing sent is left able to land once the operation has ended.
//
// Run many more runs, or replay one:
//
//	go test ./workflows/ -run TestTransactModelCheck -model.runs 5000
//	go test ./workflows/ -run TestTransactModelCheck -model.seed 1234 -v
//
// (The nonce sequencer's own rules, next nonce and leases, are checked in workflows/evm.)

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/activities"
)

var modelDigits = regexp.MustCompile(`\d+`)

var (
	modelRuns = flag.Int("model.runs", 400, "TestTransactModelCheck: how many seeded runs to explore (seeds 1..N)")
	modelSeed = flag.Uint64("model.seed", 0, "TestTransactModelCheck: replay this one seed and print its schedule")
)

// modelKind is the kind of fake chain a run uses.
type modelKind int

const (
	nonceChain modelKind = iota
	solanaChain
	timeoutChain
	modelKinds = 3
)

func (k modelKind) String() string {
	switch k {
	case nonceChain:
		return "nonce chain"
	case timeoutChain:
		return "timeout chain"
	}
	return "solana-like chain"
}

// The odds of the schedule's choices. A fault is drawn at each activity attempt while the run
// has faults left (modelMaxFaults), so that every run ends.
const (
	pLand          = 0.12 // a build that reached the chain lands at a tick
	pReverted      = 0.10 // a build that lands, lands with an on-chain error
	pOther         = 0.02 // nonce chain: another transaction consumes the nonce at a tick
	pOtherTimeout  = 0.01 // timeout chain: the same, rarer
	pExpire        = 0.15 // solana-like: a build not landed expires at a tick
	pCancel        = 0.03 // a cancel arrives at a tick
	pFault         = 0.10 // an activity attempt fails
	modelMaxFaults = 6
	// modelPatience bounds the polls of one Confirm before it answers (replace, on the nonce
	// chain; expired, on the solana-like one) when nothing landed.
	modelPatience = 40
	// A timeout-chain build's expiry is modelExpiryMin to modelExpiryMin+modelExpirySpread-1
	// ticks after its build (a replacement takes 4 ticks to send: it may come too late).
	modelExpiryMin, modelExpirySpread = 3, 8
)

// modelBuild is one build of the step, as the chain sees it.
type modelBuild struct {
	n  int
	id string
	// signed: Sign returned it. sendTried: a broadcast of it was started. refused: the node
	// refused it at its first send, so it never reached the chain. reached: its bytes reached
	// the chain (it may land).
	signed, sendTried, refused, reached bool
	// expired (solana-like): it can no longer land; answered: Confirm answered cannot-land for it.
	expired, answered bool
	// expiry (timeout chain): the last tick it can land at (its timeout height); its replacements
	// are the same bytes, with the same expiry.
	expiry           int
	landed, reverted bool
	// cancel: the step's cancel transaction (a harmless transfer to itself under the nonce, sent
	// by a Canceller), not a build of the step.
	cancel bool
}

// model is the fake chain of one run and its schedule.
type model struct {
	mu     sync.Mutex
	seed   uint64
	kind   modelKind
	rng    *rand.Rand
	env    *testsuite.TestWorkflowEnvironment
	tick   int
	faults int
	// schedule is every choice made, in order.
	schedule []string
	builds   []*modelBuild
	// consumedBy (nonce and timeout chains) is the build that consumed the nonce, or "other";
	// nonceUses counts how many times it was consumed (the chain's own rule: once).
	consumedBy string
	nonceUses  int
	// nonceFree counts the timeout chain's cannot-land answers with NonceFree (every build
	// expired unseen).
	nonceFree int
	// cancelTick is the tick a cancel was requested at (0: none).
	cancelTick int
	// maxBuilds is the step's Options.MaxBuilds (1 to 3).
	maxBuilds int
	// canceller (nonce chain): the Tx can take its nonce back on a cancel (the core's Canceller,
	// where it has one). silentWhileFollowing (nonce and timeout chains): once replacing stopped,
	// Confirm may answer replace to say "no final word yet" (the core then stalls and confirms
	// again); else it polls on.
	canceller, silentWhileFollowing bool
	// firstTick is the tick each activity ID's first attempt started at.
	firstTick map[string]int
	closed    bool
}

type modelConfirmIn struct {
	IDs       []string
	Following bool
}

func newModel(seed uint64) *model {
	m := &model{seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed)), firstTick: map[string]int{}}
	m.kind = modelKind(seed % modelKinds)
	m.maxBuilds = 1 + m.rng.IntN(3)
	switch m.kind {
	case nonceChain:
		m.canceller, m.silentWhileFollowing = m.chance(0.5), m.chance(0.5)
	case timeoutChain:
		m.silentWhileFollowing = m.chance(0.5)
	}
	m.logf("%s, MaxBuilds %d, canceller %v, replace while following %v", m.kind, m.maxBuilds, m.canceller, m.silentWhileFollowing)
	return m
}

func (m *model) logf(format string, args ...any) {
	m.schedule = append(m.schedule, fmt.Sprintf("t%-3d ", m.tick)+fmt.Sprintf(format, args...))
}

func (m *model) chance(p float64) bool { return m.rng.Float64() < p }

func (m *model) build(id string) *modelBuild {
	for _, b := range m.builds {
		if b.id == id {
			return b
		}
	}
	return nil
}

// canLand reports whether b may still land, as the chain stands.
func (m *model) canLand(b *modelBuild) bool {
	if !b.reached || b.landed {
		return false
	}
	switch m.kind {
	case nonceChain:
		return m.consumedBy == ""
	case timeoutChain:
		return m.consumedBy == "" && m.tick <= b.expiry
	}
	return !b.expired
}

// pastExpiry (timeout chain) reports whether the chain is past b's expiry: it can never land.
func (m *model) pastExpiry(b *modelBuild) bool { return m.tick > b.expiry }

// takeNonce records the nonce consumed by who.
func (m *model) takeNonce(who string) {
	m.consumedBy = who
	m.nonceUses++
}

func (m *model) land(b *modelBuild, why string) {
	b.landed = true
	b.reverted = !b.cancel && m.chance(pReverted)
	if m.kind != solanaChain {
		m.takeNonce(b.id)
	}
	how := "landed"
	if b.reverted {
		how = "landed, reverted"
	}
	m.logf("chain: %s %s%s", b.id, how, why)
}

// advance moves the chain on by one tick: builds that reached it may land, another transaction
// may take the nonce, solana-like builds may expire (timeout-chain builds expire as the ticks
// pass their expiry); a cancel may arrive.
// advance moves the chain one tick. A cancel is drawn only where an activity asked
// (mayCancel): a cancel requested from the workflow's own code (Check) races, in the test
// environment, with the local activity that follows (Sign), and a seed would not replay one way.
// A cancel drawn during Build reaches the core at the same points as one during Check would.
func (m *model) advance(mayCancel bool) {
	m.tick++
	for _, b := range m.builds {
		if m.canLand(b) && m.chance(pLand) {
			m.land(b, "")
		}
	}
	if m.kind == nonceChain && m.consumedBy == "" && m.chance(pOther) ||
		m.kind == timeoutChain && m.consumedBy == "" && m.chance(pOtherTimeout) {
		m.takeNonce("other")
		m.logf("chain: another transaction consumed the nonce")
	}
	if m.kind == timeoutChain {
		for _, b := range m.builds {
			if b.signed && !b.landed && m.tick == b.expiry+1 {
				m.logf("chain: %s is past its expiry (t%d)", b.id, b.expiry)
			}
		}
	}
	if m.kind == solanaChain {
		for _, b := range m.builds {
			if b.signed && !b.landed && !b.expired && m.chance(pExpire) {
				b.expired = true
				m.logf("chain: %s expired", b.id)
			}
		}
	}
	if mayCancel && m.cancelTick == 0 && m.chance(pCancel) {
		m.cancelTick = m.tick
		m.logf("cancel requested")
		m.env.CancelWorkflow()
	}
}

// modelFault is a failure an activity attempt may return.
type modelFault struct {
	name string
	err  func() error
}

func retryable(typ, msg string) modelFault {
	return modelFault{typ, func() error { return temporal.NewApplicationError(msg, typ) }}
}

func nonRetryable(typ, msg string) modelFault {
	return modelFault{typ + " (non-retryable)", func() error { return temporal.NewNonRetryableApplicationError(msg, typ, nil) }}
}

func timedOut(tt enumspb.TimeoutType) modelFault {
	return modelFault{"timeout " + tt.String(), func() error {
		return temporal.NewTimeoutError(tt, errors.New("no answer in time"))
	}}
}

// fault draws whether this attempt fails, and how.
func (m *model) fault(faults ...modelFault) (modelFault, bool) {
	if m.faults >= modelMaxFaults || len(faults) == 0 || !m.chance(pFault) {
		return modelFault{}, false
	}
	m.faults++
	return faults[m.rng.IntN(len(faults))], true
}

// enter starts an activity attempt: it reports false for an attempt the core can no longer see
// (a retry of an activity whose context was cancelled, which the test environment still runs;
// Temporal does not) or one after the run ended; else the chain advances a tick.
func (m *model) enter(ctx context.Context, name string) (attempt int32, live bool) {
	info := activity.GetInfo(ctx)
	key := info.ActivityID
	if m.closed {
		return info.Attempt, false
	}
	first, seen := m.firstTick[key]
	if !seen {
		first = m.tick + 1
		m.firstTick[key] = first
	}
	if info.Attempt > 1 && m.cancelTick != 0 && first <= m.cancelTick && name != "Broadcast" && name != "Confirm" {
		return info.Attempt, false
	}
	m.advance(true)
	return info.Attempt, true
}

var errModelGone = errors.New("attempt the core no longer waits for")

// The fake chain's activities.

type modelBuildIn struct {
	Build  int
	Cancel bool
	// Replace (timeout chain) is the build a replacement replaces: the replacement is its bytes
	// again, with its expiry.
	Replace string
}

func (m *model) Build(ctx context.Context, in modelBuildIn) (string, error) {
	build := in.Build
	m.mu.Lock()
	defer m.mu.Unlock()
	attempt, live := m.enter(ctx, "Build")
	if !live {
		return "", errModelGone
	}
	if f, ok := m.fault(
		retryable(activities.ErrServiceUnavailable, "service unavailable"),
		nonRetryable(activities.ErrServiceRejected, "the service refused the request"),
		nonRetryable(activities.ErrPolicy, "the replacement's fee bump is over the cap"),
		timedOut(enumspb.TIMEOUT_TYPE_START_TO_CLOSE),
		timedOut(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE),
	); ok {
		m.logf("Build %d attempt %d: %s", build, attempt, f.name)
		return "", f.err()
	}
	if in.Replace != "" {
		// A replacement on the timeout chain: the same transaction (the same bytes, the same
		// expiry), sent again.
		b := m.build(in.Replace)
		m.logf("Build %d attempt %d: %s again (a replacement: the same bytes, expiry t%d)", build, attempt, b.id, b.expiry)
		return b.id, nil
	}
	b := &modelBuild{n: len(m.builds) + 1, cancel: in.Cancel}
	b.id = fmt.Sprintf("b%d", b.n)
	if b.cancel {
		b.id = fmt.Sprintf("cancel%d", b.n)
	}
	if m.kind == timeoutChain {
		// A new build (the first, or after every earlier one expired): a new, later expiry.
		b.expiry = m.tick + modelExpiryMin + m.rng.IntN(modelExpirySpread)
		for _, e := range m.builds {
			b.expiry = max(b.expiry, e.expiry+1)
		}
		m.builds = append(m.builds, b)
		m.logf("Build %d attempt %d: built %s (expiry t%d)", build, attempt, b.id, b.expiry)
		return b.id, nil
	}
	m.builds = append(m.builds, b)
	m.logf("Build %d attempt %d: built %s", build, attempt, b.id)
	return b.id, nil
}

// check is the Tx's check between build and signature (run in the workflow).
func (m *model) check() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance(false)
	if f, ok := m.fault(nonRetryable(activities.ErrValidatorNotHealthy, "the validator the service chose is not healthy")); ok {
		m.logf("Check: %s", f.name)
		return f.err()
	}
	m.logf("Check: ok")
	return nil
}

func (m *model) Sign(ctx context.Context, unsigned string) (fakeSigned, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	attempt, live := m.enter(ctx, "Sign")
	if !live {
		return fakeSigned{}, errModelGone
	}
	if f, ok := m.fault(
		retryable("SignerBusy", "the signer is busy"),
		nonRetryable(activities.ErrVerificationFailed, "the transaction does not do what was asked"),
		timedOut(enumspb.TIMEOUT_TYPE_START_TO_CLOSE),
	); ok {
		m.logf("Sign %s attempt %d: %s", unsigned, attempt, f.name)
		return fakeSigned{}, f.err()
	}
	b := m.build(unsigned)
	b.signed = true
	m.logf("Sign %s attempt %d: signed", unsigned, attempt)
	return fakeSigned{TxID: b.id, Expiry: "expiry-" + b.id, MaxFee: "900"}, nil
}

func (m *model) Fresh(ctx context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	attempt, live := m.enter(ctx, "Fresh")
	if !live {
		return false, errModelGone
	}
	if f, ok := m.fault(
		retryable(activities.ErrChainUnavailable, "rpc unavailable"),
		nonRetryable(activities.ErrChainRejected, "rpc 403"),
		timedOut(enumspb.TIMEOUT_TYPE_START_TO_CLOSE),
		timedOut(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE),
	); ok {
		m.logf("Fresh %s attempt %d: %s", id, attempt, f.name)
		return false, f.err()
	}
	if m.kind == nonceChain && m.consumedBy != "" {
		if m.consumedBy != "other" && m.chance(0.5) {
			// As EVM's CheckFresh: an earlier build of the step holds the nonce; the broadcast
			// that follows is refused (nonce too low).
			m.logf("Fresh %s attempt %d: the nonce is held by our %s", id, attempt, m.consumedBy)
			return true, nil
		}
		m.logf("Fresh %s attempt %d: the nonce is already used (by %s)", id, attempt, m.consumedBy)
		return false, temporal.NewNonRetryableApplicationError("the nonce is already used", "NonceConflict", nil)
	}
	m.logf("Fresh %s attempt %d: new", id, attempt)
	return true, nil
}

func (m *model) Broadcast(ctx context.Context, id string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	attempt, live := m.enter(ctx, "Broadcast")
	if !live {
		return "", errModelGone
	}
	b := m.build(id)
	b.sendTried = true
	refuse := func(why string) (string, error) {
		if attempt == 1 && !b.reached {
			b.refused = true
			m.logf("Broadcast %s attempt %d: refused at its first send (%s)", id, attempt, why)
			return "", temporal.NewNonRetryableApplicationError(why, activities.ErrTransactionRejected, nil)
		}
		m.logf("Broadcast %s attempt %d: refused after an earlier send (%s)", id, attempt, why)
		return "", temporal.NewNonRetryableApplicationError(why, activities.ErrBroadcastUncertain, nil)
	}
	switch {
	case m.kind != solanaChain && m.consumedBy != "":
		return refuse("nonce too low")
	case m.kind == timeoutChain && m.pastExpiry(b):
		// As Celestia's node: bytes past their timeout height are refused. The broadcast calls
		// that either a refusal for good (at their first send) or uncertain.
		if attempt == 1 && m.chance(0.5) {
			b.refused = b.refused || !b.reached
			m.logf("Broadcast %s attempt %d: refused past its expiry t%d, at its first send (rejected)", id, attempt, b.expiry)
			return "", temporal.NewNonRetryableApplicationError("timeout height passed", activities.ErrTransactionRejected, nil)
		}
		m.logf("Broadcast %s attempt %d: refused past its expiry t%d (uncertain)", id, attempt, b.expiry)
		return "", temporal.NewNonRetryableApplicationError("timeout height passed; the chain decides", activities.ErrBroadcastUncertain, nil)
	case m.kind == solanaChain && b.expired:
		m.logf("Broadcast %s attempt %d: blockhash expired", id, attempt)
		return "", temporal.NewNonRetryableApplicationError("blockhash expired", activities.ErrBlockhashExpired, nil)
	}
	faults := []modelFault{
		retryable(activities.ErrServiceUnavailable, "service unavailable"),
		{name: "answer lost (the bytes reached the chain)", err: nil},
		timedOut(enumspb.TIMEOUT_TYPE_START_TO_CLOSE),
		timedOut(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE),
	}
	if attempt == 1 {
		faults = append(faults, modelFault{name: "refused", err: nil})
	} else {
		faults = append(faults, modelFault{name: "uncertain", err: nil})
	}
	f, ok := m.fault(faults...)
	if !ok {
		b.reached = true
		m.logf("Broadcast %s attempt %d: sent", id, attempt)
		return id, nil
	}
	switch f.name {
	case "refused":
		return refuse("insufficient funds for the fee")
	case "uncertain":
		b.reached = b.reached || m.chance(0.5)
		m.logf("Broadcast %s attempt %d: re-send refused after a lost answer (reached: %v)", id, attempt, b.reached)
		return "", temporal.NewNonRetryableApplicationError("already known or refused", activities.ErrBroadcastUncertain, nil)
	case "answer lost (the bytes reached the chain)":
		b.reached = true
		m.logf("Broadcast %s attempt %d: %s", id, attempt, f.name)
		return "", temporal.NewApplicationError("connection reset", activities.ErrServiceUnavailable)
	}
	// A failure or a timeout whose bytes may or may not have reached the chain.
	b.reached = b.reached || m.chance(0.5)
	m.logf("Broadcast %s attempt %d: %s (reached: %v)", id, attempt, f.name, b.reached)
	return "", f.err()
}

func (m *model) Confirm(ctx context.Context, in modelConfirmIn) (fakeConfirmed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	attempt, live := m.enter(ctx, "Confirm")
	if !live {
		return fakeConfirmed{}, errModelGone
	}
	if f, ok := m.fault(
		retryable(activities.ErrChainUnavailable, "rpc unavailable"),
		nonRetryable(activities.ErrChainRejected, "rpc 403"),
		timedOut(enumspb.TIMEOUT_TYPE_START_TO_CLOSE),
		timedOut(enumspb.TIMEOUT_TYPE_HEARTBEAT),
	); ok {
		m.logf("Confirm %v attempt %d: %s", in.IDs, attempt, f.name)
		return fakeConfirmed{}, f.err()
	}
	landed := func(b *modelBuild) fakeConfirmed {
		c := fakeConfirmed{Outcome: activities.OutcomeFinalized, Block: uint64(100 + m.tick), Fee: "500", TxID: b.id}
		if b.reverted {
			c.Outcome, c.Error = activities.OutcomeFailed, "execution reverted"
		}
		m.logf("Confirm %v attempt %d (following: %v): %s %s", in.IDs, attempt, in.Following, b.id, c.Outcome)
		return c
	}
	patience := m.rng.IntN(3)
	for polls := 0; ; polls++ {
		if m.kind == timeoutChain {
			if c, done, err := m.confirmTimeout(in, attempt, polls, patience, landed); done {
				return c, err
			}
		} else if m.kind == nonceChain {
			switch by := m.consumedBy; {
			case by == "other":
				m.logf("Confirm %v attempt %d: cannot land (the nonce was consumed by another transaction)", in.IDs, attempt)
				return fakeConfirmed{Outcome: activities.OutcomeCannotLand}, nil
			case by != "":
				for _, id := range in.IDs {
					if id == by {
						return landed(m.build(by)), nil
					}
				}
				return fakeConfirmed{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
					"model: the nonce was consumed by %s, which Confirm was not asked about (%v)", by, in.IDs), "ModelError", nil)
			case !in.Following && polls >= patience:
				m.logf("Confirm %v attempt %d: replace (nothing mined in time)", in.IDs, attempt)
				return fakeConfirmed{Outcome: activities.OutcomeReplace}, nil
			case in.Following && m.silentWhileFollowing && polls >= patience+3 && m.chance(0.5):
				m.logf("Confirm %v attempt %d (following): replace (no final word yet)", in.IDs, attempt)
				return fakeConfirmed{Outcome: activities.OutcomeReplace}, nil
			case polls >= modelPatience:
				// Following for long: the newest build that reached the chain lands (a re-send
				// gets it mined), or, when none did, another transaction takes the nonce.
				var newest *modelBuild
				for _, id := range in.IDs {
					if b := m.build(id); b != nil && b.reached {
						newest = b
					}
				}
				if newest != nil {
					m.land(newest, " (after a long follow)")
				} else {
					m.takeNonce("other")
					m.logf("chain: another transaction consumed the nonce (after a long follow)")
				}
				continue
			}
		} else {
			if len(in.IDs) != 1 {
				return fakeConfirmed{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
					"model: Confirm on the solana-like chain follows one build, got %v", in.IDs), "ModelError", nil)
			}
			b := m.build(in.IDs[0])
			switch {
			case b.landed:
				return landed(b), nil
			case b.expired:
				b.answered = true
				m.logf("Confirm %v attempt %d: cannot land (expired, absent)", in.IDs, attempt)
				return fakeConfirmed{Outcome: activities.OutcomeCannotLand}, nil
			case polls >= modelPatience:
				b.expired = true
				m.logf("chain: %s expired (after a long follow)", b.id)
				continue
			}
		}
		m.advance(true)
	}
}

// confirmTimeout is one poll of Confirm on the timeout chain: done with its answer, or not yet.
func (m *model) confirmTimeout(in modelConfirmIn, attempt int32, polls, patience int, landed func(*modelBuild) fakeConfirmed) (fakeConfirmed, bool, error) {
	switch by := m.consumedBy; {
	case by == "other":
		m.logf("Confirm %v attempt %d: cannot land (the nonce was taken by another transaction)", in.IDs, attempt)
		return fakeConfirmed{Outcome: activities.OutcomeCannotLand, Error: "the nonce was taken by another transaction"}, true, nil
	case by != "":
		for _, id := range in.IDs {
			if id == by {
				return landed(m.build(by)), true, nil
			}
		}
		return fakeConfirmed{}, true, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"model: the nonce was consumed by %s, which Confirm was not asked about (%v)", by, in.IDs), "ModelError", nil)
	}
	expired := true
	for _, id := range in.IDs {
		expired = expired && m.pastExpiry(m.build(id))
	}
	switch {
	case expired:
		// Every build is past its expiry and none took the nonce: none can land, and the nonce is
		// free for a new build.
		m.nonceFree++
		for _, id := range in.IDs {
			m.build(id).answered = true
		}
		m.logf("Confirm %v attempt %d (following: %v): cannot land, the nonce free (every build past its expiry unseen)", in.IDs, attempt, in.Following)
		return fakeConfirmed{Outcome: activities.OutcomeCannotLand, NonceFree: true,
			Error: fmt.Sprintf("every build (%v) is past its expiry, none landed", in.IDs)}, true, nil
	case !in.Following && polls >= patience:
		m.logf("Confirm %v attempt %d: replace (unseen, before its expiry)", in.IDs, attempt)
		return fakeConfirmed{Outcome: activities.OutcomeReplace}, true, nil
	case in.Following && m.silentWhileFollowing && polls >= patience+3 && m.chance(0.5):
		m.logf("Confirm %v attempt %d (following): replace (no final word yet)", in.IDs, attempt)
		return fakeConfirmed{Outcome: activities.OutcomeReplace}, true, nil
	}
	return fakeConfirmed{}, false, nil
}

// modelTx is the solana-like chain's side of the step (not Replaceable).
type modelTx struct {
	m *model
	// ids are the builds signed, oldest first.
	ids       []string
	built     string
	signed    fakeSigned
	fresh     bool
	sent      string
	conf      fakeConfirmed
	following bool
	// cancelling: the core asked for the cancel transaction (modelCancellerTx).
	cancelling bool
}

func (t *modelTx) Kind() string { return "bond" }
func (t *modelTx) Build(build int) Call {
	t.built = ""
	return Call{Activity: t.m.Build, Input: modelBuildIn{Build: build, Cancel: t.cancelling}, Result: &t.built}
}

// Check draws its answer from the run's schedule: deterministic per seed,
// which workflowcheck cannot see.
//
//workflowcheck:ignore
func (t *modelTx) Check(workflow.Context, *Operation) error { return t.m.check() }
func (t *modelTx) Sign() Call {
	t.signed = fakeSigned{}
	return Call{Activity: t.m.Sign, Input: t.built, Result: &t.signed}
}
func (t *modelTx) Signed() Signed {
	if !slices.Contains(t.ids, t.signed.TxID) {
		// A timeout-chain replacement is the same transaction: followed once.
		t.ids = append(t.ids, t.signed.TxID)
	}
	return Signed{TxID: t.signed.TxID, Expiry: t.signed.Expiry, MaxFee: t.signed.MaxFee}
}
func (t *modelTx) Fresh() Call {
	return Call{Activity: t.m.Fresh, Input: t.signed.TxID, Result: &t.fresh}
}
func (t *modelTx) Broadcast() Call {
	return Call{Activity: t.m.Broadcast, Input: t.signed.TxID, Result: &t.sent}
}
func (t *modelTx) Confirm() Call {
	t.conf = fakeConfirmed{}
	in := modelConfirmIn{IDs: []string{t.signed.TxID}}
	if t.m.kind != solanaChain {
		in = modelConfirmIn{IDs: append([]string(nil), t.ids...), Following: t.following}
	}
	return Call{Activity: t.m.Confirm, Input: in, Result: &t.conf}
}
func (t *modelTx) Confirmed() Confirmed {
	return Confirmed{Outcome: t.conf.Outcome, Block: t.conf.Block, Fee: t.conf.Fee, Error: t.conf.Error, TxID: t.conf.TxID,
		NonceFree: t.conf.NonceFree}
}

// modelNonceTx is the nonce chain's side of the step: Confirm follows every build under the
// nonce, and answers replace only until the step stops replacing.
type modelNonceTx struct{ modelTx }

func (t *modelNonceTx) StopReplacing() { t.following = true }

var _ Replaceable = (*modelNonceTx)(nil)

// modelCancellerTx is a nonce-chain Tx that can take its nonce back on a cancel after a
// broadcast: Cancel turns Build, Sign and Broadcast to a harmless transaction under the same
// nonce (the core's Canceller).
type modelCancellerTx struct{ modelNonceTx }

var _ Canceller = (*modelCancellerTx)(nil)

func (t *modelCancellerTx) Cancel() bool {
	t.cancelling = true
	return true
}

// modelTimeoutTx is the timeout chain's side of the step (Celestia-like): a Replaceable that is
// no Canceller and needs no proof of freshness (the nonce is its own). A replacement (the last
// Confirm answered replace) is the previous build again; any other build is new.
type modelTimeoutTx struct{ modelNonceTx }

func (t *modelTimeoutTx) Build(build int) Call {
	c := t.modelNonceTx.Build(build)
	if build > 1 && t.conf.Outcome == activities.OutcomeReplace {
		in := c.Input.(modelBuildIn)
		in.Replace = t.ids[len(t.ids)-1]
		c.Input = in
	}
	return c
}

func (t *modelTimeoutTx) Fresh() Call { return Call{} }

var _ Replaceable = (*modelTimeoutTx)(nil)

// workflow runs one step through the core and ends the operation as a chain's workflow does.
func (m *model) workflow(ctx workflow.Context) (TxRecord, error) {
	o, err := NewOperation(ctx, Setup{
		Chain: "modelchain", Network: "devnet", Operation: "bond", Staker: "alice",
		Amount: "1000", Unit: fakeUnit, Options: Options{MaxBuilds: m.maxBuilds},
	})
	if err != nil {
		return TxRecord{}, err
	}
	var tx Tx = &modelTx{m: m}
	switch {
	case m.kind == nonceChain && m.canceller:
		tx = &modelCancellerTx{modelNonceTx{modelTx{m: m}}}
	case m.kind == nonceChain:
		tx = &modelNonceTx{modelTx{m: m}}
	case m.kind == timeoutChain:
		tx = &modelTimeoutTx{modelNonceTx{modelTx{m: m}}}
	}
	rec, err := o.Transact(ctx, tx)
	if err != nil {
		return TxRecord{}, o.Fail(ctx, err)
	}
	o.Done(ctx)
	return rec, nil
}

// modelRun is what one run did and which rules it broke.
type modelRun struct {
	m          *model
	outcome    string // completed, failed, cancelled, open
	rec        TxRecord
	err        error
	violations []string
}

func (r *modelRun) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d (%s): the operation ended %s", r.m.seed, r.m.kind, r.outcome)
	if r.err != nil {
		fmt.Fprintf(&b, " (%s)", modelErr(r.err))
	}
	if r.outcome == "completed" {
		fmt.Fprintf(&b, " with %s", r.rec.TxID)
	}
	b.WriteString("\nbroken:\n")
	for _, v := range r.violations {
		b.WriteString("  - " + v + "\n")
	}
	b.WriteString("schedule:\n")
	for _, s := range r.m.schedule {
		b.WriteString("  " + s + "\n")
	}
	fmt.Fprintf(&b, "replay: go test ./workflows/ -run TestTransactModelCheck -model.seed %d -v", r.m.seed)
	return b.String()
}

var modelSuite = func() *testsuite.WorkflowTestSuite {
	s := &testsuite.WorkflowTestSuite{}
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	return s
}()

// runModel runs the step once under the schedule of seed and checks the rules.
func runModel(seed uint64) *modelRun {
	m := newModel(seed)
	env := modelSuite.NewTestWorkflowEnvironment()
	m.env = env
	env.SetTestTimeout(time.Minute)
	env.RegisterWorkflowWithOptions(m.workflow, workflow.RegisterOptions{Name: "ModelWorkflow"})
	env.RegisterActivity(m)
	env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Maybe()
	env.ExecuteWorkflow("ModelWorkflow")

	r := &modelRun{m: m}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	switch {
	case !env.IsWorkflowCompleted():
		r.outcome = "open"
	case env.GetWorkflowError() == nil:
		r.outcome = "completed"
		if err := env.GetWorkflowResult(&r.rec); err != nil {
			r.violations = append(r.violations, "the result does not decode: "+err.Error())
		}
	default:
		r.err = env.GetWorkflowError()
		r.outcome = "failed"
		if temporal.IsCanceledError(r.err) {
			r.outcome = "cancelled"
		}
	}
	r.check()
	return r
}

// check compares the operation's end with the chain.
func (r *modelRun) check() {
	m := r.m
	broke := func(format string, args ...any) { r.violations = append(r.violations, fmt.Sprintf(format, args...)) }
	var landed []*modelBuild
	var cancelLanded *modelBuild
	for _, b := range m.builds {
		switch {
		case b.landed && b.cancel:
			cancelLanded = b
		case b.landed:
			landed = append(landed, b)
		}
	}
	if cancelLanded != nil && r.outcome != "cancelled" {
		broke("the cancel transaction %s took the nonce, but the operation ended %s", cancelLanded.id, r.outcome)
	}
	if m.nonceUses > 1 {
		broke("the nonce was used %d times", m.nonceUses)
	}
	if len(landed) > 1 {
		var ids []string
		for _, b := range landed {
			ids = append(ids, b.id)
		}
		broke("more than one build of the step landed: %v", ids)
	}
	var won *modelBuild
	if len(landed) > 0 {
		won = landed[0]
	}
	switch r.outcome {
	case "open":
		broke("the operation did not end")
	case "completed":
		switch {
		case won == nil:
			broke("completed with %s, but no build landed", r.rec.TxID)
		case won.reverted:
			broke("completed with %s, but %s landed reverted", r.rec.TxID, won.id)
		case r.rec.TxID != won.id:
			broke("completed naming %s, but %s is the build that landed", r.rec.TxID, won.id)
		}
	default:
		onChain := IsErrorType(r.err, ErrTransactionFailed)
		switch {
		case won != nil && !won.reverted:
			broke("%s, but build %s landed", r.outcome, won.id)
		case won != nil && !onChain:
			broke("%s (%s), but build %s landed reverted: the failure is not the chain's", r.outcome, modelErr(r.err), won.id)
		case won != nil && !strings.Contains(r.err.Error(), won.id):
			broke("failed on chain, but the error does not name %s, the build that landed: %s", won.id, modelErr(r.err))
		case won == nil && onChain:
			broke("failed on chain (%s), but no build landed", modelErr(r.err))
		}
		if won == nil {
			proven := m.consumedBy == "other" || cancelLanded != nil
			for _, b := range m.builds {
				if !b.sendTried || b.refused {
					continue
				}
				switch {
				case m.kind == nonceChain && !proven:
					broke("%s (%s) with %s sent and the nonce not consumed: %s can still land", r.outcome, modelErr(r.err), b.id, b.id)
				case m.kind == solanaChain && !b.answered:
					broke("%s (%s) with %s sent and never answered cannot-land", r.outcome, modelErr(r.err), b.id)
				case m.kind == timeoutChain && !proven && !m.pastExpiry(b):
					broke("%s (%s) with %s sent, before its expiry t%d and the nonce free: %s can still land", r.outcome, modelErr(r.err), b.id, b.expiry, b.id)
				}
			}
		}
		// Every build expired unseen with the nonce free is no end of a step: the core builds
		// again (TooManyBuilds at MaxBuilds). Only an exit cause (a refusal, a cancel, ...) ends
		// it then, with that cause.
		var appErr *temporal.ApplicationError
		if m.kind == timeoutChain && won == nil && m.consumedBy == "" && r.outcome == "failed" &&
			errors.As(r.err, &appErr) && appErr.Type() == ErrCannotLand && errors.Unwrap(appErr) == nil {
			broke("failed CannotLand of its own (%s) with the nonce free, every build expired unseen: it should have built again under the same nonce (or failed TooManyBuilds at MaxBuilds %d)",
				modelErr(r.err), m.maxBuilds)
		}
	}
	// Whatever the end, nothing sent may still be able to land.
	for _, b := range m.builds {
		if m.canLand(b) {
			broke("%s reached the chain and can still land after the operation ended %s", b.id, r.outcome)
		}
	}
}

// modelErr is an operation's error in one line: its type and its reason.
func modelErr(err error) string {
	var appErr *temporal.ApplicationError
	var canceled *temporal.CanceledError
	switch {
	case errors.As(err, &appErr):
		return appErr.Type() + ": " + Reason(err)
	case errors.As(err, &canceled):
		return "cancelled"
	}
	return Reason(err)
}

func TestTransactModelCheck(t *testing.T) {
	if *modelSeed != 0 {
		r := runModel(*modelSeed)
		if len(r.violations) > 0 {
			t.Fatal(r)
		}
		t.Logf("seed %d (%s): ended %s (%s); schedule:\n  %s", r.m.seed, r.m.kind, r.outcome, modelErr(r.err), strings.Join(r.m.schedule, "\n  "))
		return
	}
	var failed []uint64
	shown := 0
	stats, broken, paths := map[string]int{}, map[string]int{}, map[string]int{}
	for i := 1; i <= *modelRuns; i++ {
		r := runModel(uint64(i))
		stats[fmt.Sprintf("%s %s, %d builds", r.m.kind, r.outcome, len(r.m.builds))]++
		for _, b := range r.m.builds {
			switch {
			case b.cancel && b.landed:
				paths["cancel transaction landed"]++
			case b.cancel:
				paths["cancel transaction built"]++
			case b.landed && b.n < len(r.m.builds):
				paths["an earlier build landed after a later one was built"]++
			case b.landed && r.m.kind == timeoutChain && b.n > 1:
				paths["timeout chain: a new build landed after every earlier one expired"]++
			}
		}
		for _, l := range r.m.schedule {
			for _, p := range []string{"(no final word yet)", "refused at its first send", "cancel requested", "another transaction consumed", "answer lost", "reverted",
				"the nonce free", "a replacement: the same bytes", "refused past its expiry", "(uncertain)", "(rejected)"} {
				if strings.Contains(l, p) {
					paths[p]++
				}
			}
		}
		if len(r.violations) == 0 {
			continue
		}
		failed = append(failed, r.m.seed)
		for _, v := range r.violations {
			broken[fmt.Sprintf("%s: %s", r.m.kind, modelDigits.ReplaceAllString(v, "N"))]++
		}
		if shown < 3 {
			shown++
			t.Errorf("%v", r)
		}
	}
	t.Logf("explored %d runs: %v; paths taken (times): %v", *modelRuns, stats, paths)
	if n := len(failed); n > 0 {
		t.Errorf("%d of %d runs broke a rule; seeds (first 30): %v; rules broken (runs): %v", n, *modelRuns, failed[:min(n, 30)], broken)
	}
}

// A seed replays its run: the same schedule, the same end. (Without it a printed seed would not
// reproduce what broke.)
func TestTransactModelReplaysASeed(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := runModel(seed), runModel(seed)
		if a.outcome != b.outcome || strings.Join(a.m.schedule, "\n") != strings.Join(b.m.schedule, "\n") {
			t.Errorf("seed %d ran two ways:\n%s\n-- then --\n%s", seed, strings.Join(a.m.schedule, "\n"), strings.Join(b.m.schedule, "\n"))
		}
	}
}
