package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"go.uber.org/zap"

	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/apiclient"
	"github.com/stakeflow/stakeflow/store"
	wfjobs "github.com/stakeflow/stakeflow/workflows/jobs"
)

// The run's data job: the APY history of one network over a year, read a few periods per activity
// (so that it runs for a while, continuing as new), into the worker's default store, a SQLite file
// in the run's directory. The worker is killed once while the job is at work; after the run the job
// runs again, and the store must hold each of the service's periods exactly once, as it sent them.
const (
	jobNetwork    = "kusama"
	jobHistory    = 365 * 24 * time.Hour
	jobMaxRecords = 10
)

// jobDSN is the store the run's worker opens.
func (r *runner) jobDSN() string { return "sqlite:" + filepath.Join(r.cfg.Dir, "stakeflow.db") }

func (r *runner) jobInput() wfjobs.APYJobInput {
	return wfjobs.APYJobInput{Network: jobNetwork, Since: r.jobSince,
		Limits: wfjobs.Limits{MaxRecords: jobMaxRecords, MaxActivities: 20}}
}

// startDataJob starts the data job and kills the worker once while the job has an activity at
// work (as soon as the store holds some of its rows and it is still running).
func (r *runner) startDataJob(ctx context.Context) {
	r.jobSince = time.Now().UTC().Add(-jobHistory).Truncate(24 * time.Hour)
	r.jobID = fmt.Sprintf("chaos-apy-%d", r.cfg.Seed)
	if !r.start(ctx, wfjobs.Module, r.jobID, "chaos: the APY history of "+jobNetwork, wfjobs.APYJobWorkflowType, r.jobInput()) {
		return
	}
	// The worker opened (and migrated) the store before it was ready: the run reads it alongside.
	db, err := store.Open(ctx, r.jobDSN())
	if err != nil {
		r.log.Warn("The run's store cannot be read; the worker is not killed during the data job", zap.Error(err))
		return
	}
	defer func() { _ = db.Close() }()
	for ctx.Err() == nil {
		d, err := r.client.DescribeWorkflowExecution(ctx, r.jobID, "")
		if err == nil && d.GetWorkflowExecutionInfo().GetCloseTime() != nil {
			r.log.Warn("The data job ended before the worker could be killed at work")
			return
		}
		if err == nil && len(d.GetPendingActivities()) > 0 && jobRows(ctx, db) > 0 {
			r.log.Info("Killing the worker (SIGKILL) while the data job is at work")
			starts, _, _ := r.worker.counts()
			r.worker.kill(time.Second)
			r.mu.Lock()
			r.jobKills++
			r.mu.Unlock()
			if err := r.worker.awaitRestart(ctx, starts, 2*time.Minute); err != nil {
				r.log.Warn("The worker did not come back", zap.Error(err))
			}
			return
		}
		sleepCtx(ctx, 20*time.Millisecond)
	}
}

// jobRows counts the rows db holds for the job's network (0 when it cannot be read).
func jobRows(ctx context.Context, db *store.DB) int {
	rows, err := db.APYs(ctx, store.Query{Network: jobNetwork})
	if err != nil {
		return 0
	}
	return len(rows)
}

// checkDataJob waits for the job, runs it again, and compares the store with the service's pages.
func (r *runner) checkDataJob(ctx context.Context, rep *Report, tokenFile string) {
	if r.jobID == "" {
		return
	}
	var p wfjobs.Progress
	var state, typ, failure string
	if !r.awaitResult(ctx, r.jobID, &p, &state, &typ, &failure) {
		rep.Violations = append(rep.Violations, Violation{Op: r.jobID, What: "the data job did not complete: " + state + " " + failure})
		return
	}
	again := r.jobID + "-again"
	if !r.start(ctx, wfjobs.Module, again, "chaos: the APY history again", wfjobs.APYJobWorkflowType, r.jobInput()) ||
		!r.awaitResult(ctx, again, &p, &state, &typ, &failure) {
		rep.Violations = append(rep.Violations, Violation{Op: again, What: "the data job's second run did not complete: " + failure})
		return
	}
	svc, err := apiclient.New(r.sb.URL(), apiclient.WithTokenFile(tokenFile))
	if err != nil {
		rep.Violations = append(rep.Violations, Violation{What: "the service client: " + err.Error()})
		return
	}
	want := map[int64]string{}
	for rec, err := range svc.NetworkAPYAll(ctx, jobNetwork, apiclient.NetworkAPYQuery{StartAt: r.jobSince, Limit: 1000}) {
		if err != nil {
			rep.Violations = append(rep.Violations, Violation{What: "reading the service's APY pages: " + err.Error()})
			return
		}
		want[rec.StakingPeriodNumber] = rec.NetworkAPY.String()
	}
	db, err := store.Open(ctx, r.jobDSN())
	if err != nil {
		rep.Violations = append(rep.Violations, Violation{What: "opening the run's store: " + err.Error()})
		return
	}
	defer func() { _ = db.Close() }()
	rows, err := db.APYs(ctx, actjobs.Query{Network: jobNetwork})
	if err != nil {
		rep.Violations = append(rep.Violations, Violation{What: "reading the run's store: " + err.Error()})
		return
	}
	rep.JobPeriods, rep.JobRows = len(want), len(rows)
	r.mu.Lock()
	rep.JobKills = r.jobKills
	r.mu.Unlock()
	rep.Violations = append(rep.Violations, compareAPY(r.jobID, want, rows)...)
}

// compareAPY finds what differs between the periods the service served (period -> APY text) and
// the rows stored: a period stored twice, stored but not served, stored with another APY, or
// served but not stored.
func compareAPY(job string, want map[int64]string, rows []store.APY) []Violation {
	var out []Violation
	seen := map[int64]bool{}
	for _, row := range rows {
		w, ok := want[row.Period]
		switch {
		case seen[row.Period]:
			out = append(out, Violation{Op: job, What: fmt.Sprintf("period %d stored twice", row.Period)})
		case !ok:
			out = append(out, Violation{Op: job, What: fmt.Sprintf("period %d stored, not served", row.Period)})
		case w != row.NetworkAPY:
			out = append(out, Violation{Op: job, What: fmt.Sprintf("period %d: stored APY %s, served %s", row.Period, row.NetworkAPY, w)})
		}
		seen[row.Period] = true
	}
	var missing []int64
	for period := range want {
		if !seen[period] {
			missing = append(missing, period)
		}
	}
	slices.Sort(missing)
	for _, period := range missing {
		out = append(out, Violation{Op: job, What: fmt.Sprintf("period %d served, not stored", period)})
	}
	return out
}
