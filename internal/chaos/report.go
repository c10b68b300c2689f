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

	"github.com/stakeflow/stakeflow/sandbox"
)

// fileCore is a JSON zap core writing every level to f.
func fileCore(f *os.File) zapcore.Core {
	return zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.Lock(f), zapcore.DebugLevel)
}

// Write prints the report: the run's settings, the faults injected, the outcomes and every
// violation found.
func (r *Report) Write(w io.Writer) error {
	c := r.Config
	var b strings.Builder
	fmt.Fprintf(&b, "chaos run: %d operations (%.0f%% stake -> unstake -> withdraw), concurrency %d, seed %d, %s\n",
		c.Ops, 100*c.ChainShare, c.Concurrency, c.Seed, r.Duration.Round(time.Second))
	fmt.Fprintf(&b, "started %s, files in %s\n\n", r.Started.UTC().Format(time.RFC3339), r.Dir)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "faults injected\t429\t500\tdrop\tlost response\tlatency\t")
	kinds := []string{Fault429, Fault500, FaultDrop, FaultLostResponse}
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
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\t\t\n", total[0], total[1], total[2], total[3])
	_ = tw.Flush()
	during := ""
	if r.TemporalRestarts > 0 {
		during = " (one while Temporal was down)"
	}
	fmt.Fprintf(&b, "\nprocess faults: worker killed (SIGKILL) %d%s, worker exited on its own %d, worker processes started %d;\n",
		r.WorkerKills, during, r.WorkerExits, r.WorkerStarts)
	fmt.Fprintf(&b, "Temporal dev server stopped and started again %d; epochs warped %d (%d without waiting for a quiet moment)\n\n",
		r.TemporalRestarts, r.Warps, r.ForcedWarps)

	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "outcomes\tcount\t")
	fmt.Fprintf(tw, "operations completed\t%d\t\n", r.Completed)
	fmt.Fprintf(tw, "operations failed\t%d\t\n", r.Failed)
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
	_ = tw.Flush()

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
	for _, ep := range []string{sandbox.EndpointStake, sandbox.EndpointUnstake, sandbox.EndpointWithdraw,
		sandbox.EndpointBroadcast, sandbox.EndpointValidatorStatus} {
		seen[ep] = true
	}
	out := make([]string, 0, len(seen))
	for ep := range seen {
		out = append(out, ep)
	}
	sort.Strings(out)
	return out
}
