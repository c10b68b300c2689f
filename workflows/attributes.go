package workflows

import (
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// visibility batches an operation's search-attribute changes. Each upsert is a history event and a
// visibility write, the largest cost an operation adds to the Temporal server, so changes are
// queued and sent as one upsert only where an operation can rest (awaiting approval, confirming a
// sent transaction, a chain's wait, stalled), when it leaves one, and at its end:
// StakeflowStep never names a resting step the operation has left. Steps in between (checking the
// validator, building, signing, broadcasting) take milliseconds when the service answers; when it
// does not, the Web UI shows the pending activity with its last failure, and the status query and
// current details always carry the exact step.
type visibility struct {
	logger  log.Logger
	pending []pendingAttribute
	// resting lists the steps where this operation can rest: restingSteps and its chain's waits.
	resting []string
	// shown is the StakeflowStep value last sent (or set at start).
	shown string
	// tagger, when set, conceals the confidential attributes as they are queued (Conceal).
	tagger Tagger
}

// pendingAttribute is a search-attribute update waiting for the next flush.
type pendingAttribute struct {
	name   string
	update temporal.SearchAttributeUpdate
}

// restingSteps are the steps where any operation can stay for long; a chain adds its own waits
// (Setup.Waits).
var restingSteps = []string{StepAwaitingApproval, StepConfirming, StepStalled}

func (v *visibility) isResting(step string) bool {
	for _, s := range v.resting {
		if s == step {
			return true
		}
	}
	return false
}

// set queues update of the named attribute, replacing a queued update of the same name; with a
// tagger, concealed (Conceal), or not queued at all when Conceal leaves it out.
func (v *visibility) set(name string, update temporal.SearchAttributeUpdate) {
	if v.tagger != nil {
		c, ok := concealOne(v.tagger, update)
		if !ok {
			v.unset(name)
			return
		}
		update = c
	}
	for i := range v.pending {
		if v.pending[i].name == name {
			v.pending[i].update = update
			return
		}
	}
	v.pending = append(v.pending, pendingAttribute{name: name, update: update})
}

// setStep queues StakeflowStep = step, or drops a queued change when visibility shows step already
// (a wait re-entered, say).
func (v *visibility) setStep(step string) {
	if step == v.shown {
		v.unset(SAStep.GetName())
		return
	}
	v.set(SAStep.GetName(), SAStep.ValueSet(step))
}

// keyword is the value key shows for value: value itself, or under a tagger its concealed form;
// ok is false when the attribute is left out.
func (v *visibility) keyword(key temporal.SearchAttributeKeyKeyword, value string) (string, bool) {
	if v.tagger == nil {
		return value, true
	}
	c, ok := concealOne(v.tagger, key.ValueSet(value))
	if !ok {
		return "", false
	}
	shown, _ := temporal.NewSearchAttributes(c).GetKeyword(key)
	return shown, true
}

func (v *visibility) unset(name string) {
	out := v.pending[:0]
	for _, p := range v.pending {
		if p.name != name {
			out = append(out, p)
		}
	}
	v.pending = out
}

// flush sends the queued updates as one upsert; step is the operation's current step, which
// visibility shows from then on when a StakeflowStep change was queued.
func (v *visibility) flush(ctx workflow.Context, step string) {
	if len(v.pending) == 0 {
		return
	}
	updates := make([]temporal.SearchAttributeUpdate, len(v.pending))
	for i, p := range v.pending {
		updates[i] = p.update
		if p.name == SAStep.GetName() {
			v.shown = step
		}
	}
	v.pending = v.pending[:0]
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		v.logger.Warn("Search attributes not updated", "error", err)
	}
}

// leftRest reports whether StakeflowStep still names a resting step the operation, now at step,
// has left.
func (v *visibility) leftRest(step string) bool {
	return v.isResting(v.shown) && step != v.shown
}
