package chaos

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stakeflow/stakeflow/harness/sandbox"
)

// fileCore is a JSON zap core writing every level to f.
func fileCore(f *os.File) zapcore.Core {
	return zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.Lock(f), zapcore.DebugLevel)
}

// Write prints the report: the run's settings, the faults injected, the outcomes, the paths the
// run must exercise (each one it did not is named), and every violation found.
func (r *Report) Write(w io.Writer) error {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "chaos run: %d operations (%.0f%% stake -> unstake -> withdraw), concurrency %d, seed %d, %s\n",
		c.Ops, 100*c.ChainShare, c.Concurrency, c.Seed, r.Duration.Round(time.Second))
	fmt.Fprintf(&b, "started %s, files in %s\n\n", r.Started.UTC().Format(time.RFC3339), r.Dir)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "faults injected\t429\t500\tdrop\tlost response\tnever sent\tre-send refused\tlatency\t")
	kinds := []string{Fault429, Fault500, FaultDrop, FaultLostResponse, FaultDropped, FaultRefusedResend}
	total := make([]int, len(kinds))
	for _, ep := range r.faultEndpoints() {
		fmt.Fprintf(tw, "%s\t", ep)
		for i, k := range kinds {
			n := r.Faults.Get(ep, k)
			total[i] += n
			fmt.Fprintf(tw, "%d\t", n)
		}
		lat := "-"
		if f, ok := r.FaultConfig.Endpoints[ep]; ok && f.Latency > 0 {
			lat = time.Duration(f.Latency).String()
		}
		fmt.Fprintf(tw, "%s\t\n", lat)
	}
	fmt.Fprint(tw, "total\t")
	for _, n := range total {
		fmt.Fprintf(tw, "%d\t", n)
	}
	fmt.Fprint(tw, "\t\n")
	_ = tw.Flush()
	during := ""
	if r.TemporalRestarts > 0 {
		during = " (one while Temporal was down)"
	}
	fmt.Fprintf(&b, "\nprocess faults: worker killed (SIGKILL) %d%s, worker exited on its own %d, worker processes started %d;\n",
		r.WorkerKills, during, r.WorkerExits, r.WorkerStarts)
	fmt.Fprintf(&b, "Temporal dev server stopped and started again %d; epochs warped %d and chain advanced past an expiry %d (of these, %d without waiting for a quiet moment)\n\n",
		r.TemporalRestarts, r.Warps, r.SlotAdvances, r.ForcedWarps)

	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "outcomes\tcount\t")
	fmt.Fprintf(tw, "operations completed\t%d\t\n", r.Completed)
	fmt.Fprintf(tw, "operations failed\t%d\t\n", r.Failed)
	fmt.Fprintf(tw, "webhook events expected at the operations' ends\t%d\t\n", r.WebhookExpected)
	fmt.Fprintf(tw, "webhook events delivered (distinct, signed)\t%d\t\n", r.WebhookEvents)
	fmt.Fprintf(tw, "webhook posts repeating a delivered event\t%d\t\n", r.WebhookDuplicates)
	fmt.Fprintf(tw, "data job: APY periods served / rows stored (worker killed at work %d)\t%d / %d\t\n", r.JobKills, r.JobPeriods, r.JobRows)
	types := make([]string, 0, len(r.FailedByType))
	for t := range r.FailedByType {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		fmt.Fprintf(tw, "  failed: %s\t%d\t\n", t, r.FailedByType[t])
	}
	fmt.Fprintf(tw, "operations still running\t%d\t\n", r.Running)
	fmt.Fprintf(tw, "operations never started\t%d\t\n", r.NotStarted)
	fmt.Fprintf(tw, "transactions finalized\t%d\t\n", r.Transactions)
	fmt.Fprintf(tw, "  built more than once\t%d\t\n", r.Rebuilt)
	fmt.Fprintf(tw, "  most builds for one transaction\t%d\t\n", r.MaxBuilds)
	fmt.Fprintf(tw, "broadcasts answered already processed\t%d\t\n", r.AlreadyProcessed)
	fmt.Fprintf(tw, "signatures broadcast more than once\t%d\t\n", r.Resent)
	if r.CelestiaOps > 0 {
		fmt.Fprintf(tw, "celestia delegates completed\t%d of %d\t\n", r.CelestiaCompleted, r.CelestiaOps)
		fmt.Fprintf(tw, "celestia transactions on the ledger\t%d\t\n", r.CelestiaTransactions)
	}
	if r.PolygonOps > 0 {
		fmt.Fprintf(tw, "polygon operations completed\t%d of %d\t\n", r.PolygonCompleted, r.PolygonOps)
		fmt.Fprintf(tw, "polygon transactions landed\t%d\t\n", r.PolygonTransactions)
		fmt.Fprintf(tw, "polygon checkpoints advanced\t%d\t\n", r.PolygonCheckpoints)
		fmt.Fprintf(tw, "polygon transactions never forwarded / landed after\t%d / %d\t\n", r.PolygonDropped, r.PolygonDroppedThenLanded)
	}
	if r.CheckpointOps > 0 {
		fmt.Fprintf(tw, "eigenlayer checkpoints completed\t%d of %d\t\n", r.CheckpointsCompleted, r.CheckpointOps)
		fmt.Fprintf(tw, "eigenlayer checkpoint transactions landed\t%d\t\n", r.CheckpointTransactions)
	}
	_ = tw.Flush()

	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "paths the run must exercise\tcount\t")
	for _, p := range r.Paths() {
		mark := ""
		if p.Count == 0 {
			mark = "  MISSING"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", p.Name, p.Count, mark)
	}
	_ = tw.Flush()
	if missing := r.Unexercised(); len(missing) > 0 {
		fmt.Fprintf(&b, "\n%d PATHS NOT EXERCISED:\n", len(missing))
		for _, m := range missing {
			fmt.Fprintf(&b, "  - %s\n", m)
		}
	}

	if r.OK() {
		fmt.Fprintf(&b, "\nOK: no violation\n")
	} else {
		fmt.Fprintf(&b, "\n%d VIOLATIONS:\n", len(r.Violations))
		for _, v := range r.Violations {
			fmt.Fprintf(&b, "  - %s\n", v)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// faultEndpoints lists the endpoints with faults configured or injected.
func (r *Report) faultEndpoints() []string {
	seen := map[string]bool{}
	for _, ep := range r.Faults.Endpoints() {
		seen[ep] = true
	}
	for _, ep := range faultEndpoints {
		seen[ep] = true
	}
	out := make([]string, 0, len(seen))
	for ep := range seen {
		out = append(out, ep)
	}
	sort.Strings(out)
	return out
}

// Path is a fault class or a recovery path a run must go through, and how often it did.
type Path struct {
	// Name says what happened.
	Name string
	// Count is how often the run saw it happen.
	Count int
	// Forced says how the run makes it happen.
	Forced string
}

// Endpoint groups whose faults the run must show, each with its endpoints.
var pathEndpoints = []struct {
	name      string
	endpoints []string
}{
	{"build", buildEndpoints},
	{"broadcast", []string{sandbox.EndpointBroadcast}},
	{"validator status", []string{sandbox.EndpointValidatorStatus}},
}

// Paths lists every fault class and recovery path the run must go through, with how often it did:
// the rare ones are forced through the sandbox's controls (see EventForcedExpiry and FaultStage).
// A worker kill while confirming is listed when the run kills the worker, a Temporal restart when
// it restarts Temporal.
func (r *Report) Paths() []Path {
	ps := []Path{
		{Name: "rebuilt after a proven expiry (a dropped transaction never landed; its second build landed once)", Count: r.RebuiltAfterExpiry,
			Forced: "at the start of the run the sandbox drops the next broadcast (BroadcastDropped); once its operation confirms it, the chain is advanced past its blockhash validity and the expiry margin (AdvanceSlots)"},
		{Name: `broadcast answered "already processed" (landed, answer lost, re-sent)`, Count: r.AlreadyProcessed,
			Forced: "the first broadcast of each lost-answer stage lands with its answer lost (BroadcastLostResponse.Next), then at the seeded rate"},
		{Name: "broadcast landed with its answer lost as a 500", Count: r.LostAnswers500,
			Forced: "the run's first broadcast to reach the service (BroadcastLostResponse.Next, stage lost-answer-500)"},
		{Name: "broadcast landed with its answer lost as a dropped connection", Count: r.LostAnswersDropped,
			Forced: "the first broadcast at half of the run (BroadcastLostResponse.Next with Drop, stage lost-answer-drop)"},
		{Name: "re-send refused after a lost answer; the operation completed, landed once", Count: r.RefusedThenDone,
			Forced: "the run's first broadcast to land without losing its answer otherwise (BroadcastLoseThenRefuse.Next, OpeningFaults; stage switches wait for its refusal)"},
	}
	if r.Config.WorkerKills > 0 {
		ps = append(ps, Path{Name: "worker killed (SIGKILL) while an operation was confirming", Count: r.KillsWhileConfirming,
			Forced: "the forced expiry's kill waits until the dropped transaction's operation runs its Confirm activity"})
	}
	for _, g := range pathEndpoints {
		for _, k := range []struct{ kind, name string }{{Fault429, "429 with Retry-After"}, {Fault500, "500"}, {FaultDrop, "dropped connection"}} {
			n := 0
			for _, ep := range g.endpoints {
				n += r.Faults.Get(ep, k.kind)
			}
			ps = append(ps, Path{Name: g.name + ": " + k.name, Count: n,
				Forced: "the first request of every endpoint gets a 429, the second a 500, the third a dropped connection (Next429, Next500, NextDrop in OpeningFaults)"})
		}
	}
	if r.Config.PolygonOps > 0 {
		for _, k := range []struct{ kind, name string }{{Fault429, "429 with Retry-After"}, {Fault500, "500"}, {FaultDrop, "dropped connection"}} {
			ps = append(ps, Path{Name: "polygon send: " + k.name, Count: r.Faults.Get(sandbox.EndpointPolygonSend, k.kind),
				Forced: "the first requests of endpoint 4 (Next429, Next500, NextDrop in OpeningFaults)"})
		}
		ps = append(ps,
			Path{Name: "polygon: transaction forwarded with its answer lost; the operation completed, landed once", Count: r.PolygonLostAnswers,
				Forced: "the first Polygon transaction endpoint 4 forwards (PolygonSendLostResponse.Next, OpeningFaults), then at the seeded rate"},
			Path{Name: "polygon: transaction answered for but never forwarded; sent again from the worker's own reading, landed once", Count: r.PolygonDroppedThenLanded,
				Forced: "the first Polygon transaction to reach endpoint 4's handler (PolygonSendDropped.Next, OpeningFaults)"})
	}
	if r.Config.RestartTemporal {
		ps = append(ps, Path{Name: "Temporal dev server stopped and started again", Count: r.TemporalRestarts,
			Forced: "a restart scheduled between 25% and 60% of the run"})
	}
	return ps
}

// Unexercised names each path of Paths the run did not go through, and how it was to be forced.
func (r *Report) Unexercised() []string {
	var out []string
	for _, p := range r.Paths() {
		if p.Count == 0 {
			out = append(out, fmt.Sprintf("%s: never happened (forced by: %s)", p.Name, p.Forced))
		}
	}
	return out
}
