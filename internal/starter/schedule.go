package starter

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/workflows"
	wfevm "github.com/stakeflow/stakeflow/workflows/evm"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
)

// overlapPolicies maps the --overlap values to Temporal's overlap policies.
var overlapPolicies = map[string]enumspb.ScheduleOverlapPolicy{
	"skip":            enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	"buffer-one":      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	"buffer-all":      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL,
	"cancel-other":    enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
	"terminate-other": enumspb.SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER,
	"allow-all":       enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
}

// scheduleCmd dispatches `starter schedule <verb>`.
func (r *Session) scheduleCmd(fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	var id string
	if verb != "list" {
		fs.StringVar(&id, "schedule-id", "", "schedule ID")
	}
	need := func(ctx context.Context) (client.ScheduleHandle, client.Client, error) {
		if id == "" {
			return nil, nil, &UsageError{Msg: "schedule " + verb + ": --schedule-id is required"}
		}
		c, err := r.Client()
		if err != nil {
			return nil, nil, err
		}
		return c.ScheduleClient().GetHandle(ctx, id), c, nil
	}
	switch verb {
	case "create":
		return r.scheduleCreate(fs, &id), nil
	case "list":
		return r.scheduleList(), nil
	case "describe":
		return func(ctx context.Context) error {
			h, c, err := need(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			d, err := h.Describe(ctx)
			if err != nil {
				return fmt.Errorf("describe schedule %s: %w", id, err)
			}
			return r.print(formatSchedule(id, d), scheduleView(id, d))
		}, nil
	case "pause", "unpause", "trigger", "delete":
		var note string
		fs.StringVar(&note, "note", "", "why (recorded on the schedule, pause and unpause)")
		return func(ctx context.Context) error {
			h, c, err := need(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			switch verb {
			case "pause":
				err = h.Pause(ctx, client.SchedulePauseOptions{Note: note})
			case "unpause":
				err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: note})
			case "trigger":
				err = h.Trigger(ctx, client.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP})
			case "delete":
				err = h.Delete(ctx)
			}
			if err != nil {
				return fmt.Errorf("%s schedule %s: %w", verb, id, err)
			}
			return r.print(fmt.Sprintf("schedule %s: %s done", id, verb), map[string]string{"scheduleId": id, "action": verb})
		}, nil
	}
	return nil, &UsageError{Msg: fmt.Sprintf("unknown schedule command %q (create, list, describe, pause, unpause, trigger, delete)", verb)}
}

func (r *Session) scheduleCreate(fs *flag.FlagSet, id *string) func(context.Context) error {
	var in wfsolana.StakeInput
	var lamports, sol, cron, overlap string
	var chain, operation, share, polAmount, weiAmount string
	var every, offset, catchup time.Duration
	var paused, pauseOnFailure bool
	var job, address, since string
	fs.StringVar(&job, "job", "", "data job each run starts instead of an operation: apy (--network), rewards (--network, --address) or ssv")
	fs.StringVar(&address, "address", "", "rewards job: the delegator address")
	fs.StringVar(&since, "since", "", "apy and rewards jobs: where a scope with nothing stored starts (a date or RFC 3339 time; default: the service's, a month back)")
	fs.StringVar(&chain, "chain", wfsolana.Chain, "chain of the scheduled operation: solana or polygon")
	fs.StringVar(&operation, "operation", "", "operation each run starts: solana stake (default); polygon delegate, withdraw-rewards or restake")
	fs.StringVar(&in.Network, "network", "", "network: Solana mainnet-beta or testnet; Polygon (Ethereum) mainnet, sepolia or dev")
	fs.StringVar(&in.Staker, "staker", "", "staker address")
	fs.StringVar(&lamports, "lamports", "", "amount of each stake in lamports")
	fs.StringVar(&sol, "sol", "", "amount of each stake in SOL")
	fs.StringVar(&in.VoteAccount, "vote-account", "", "validator vote account (default: chosen by the service within the worker's --allowed-vote-accounts)")
	fs.StringVar(&share, "validator-share", "", "Polygon: the validator's ValidatorShare contract (0x...)")
	fs.StringVar(&polAmount, "pol", "", "Polygon delegate: amount of each run in POL")
	fs.StringVar(&weiAmount, "wei", "", "Polygon delegate: amount of each run in wei")
	fs.StringVar(&in.RequestedBy, "requested-by", "", "who requests each run (cannot approve it; default the OS user)")
	fs.StringVar(&cron, "cron", "", `cron expression, e.g. "0 9 * * MON" (UTC)`)
	fs.DurationVar(&every, "every", 0, "interval between runs, e.g. 24h")
	fs.DurationVar(&offset, "offset", 0, "offset of the interval, e.g. 9h for every day at 09:00 UTC")
	fs.StringVar(&overlap, "overlap", "skip", "when a run is still going at the next time: skip, buffer-one, buffer-all, cancel-other, terminate-other, allow-all")
	fs.DurationVar(&catchup, "catchup-window", 10*time.Minute, "runs missed while Temporal was unavailable are started only within this window")
	fs.BoolVar(&paused, "paused", false, "create the schedule paused")
	fs.BoolVar(&pauseOnFailure, "pause-on-failure", true, "pause the schedule when a run fails, so that nobody misses it")
	return func(ctx context.Context) error {
		fail := func(msg string) error { return &UsageError{Msg: "schedule create: " + msg} }
		var jobAction *scheduledAction
		if job != "" {
			var set []string
			fs.Visit(func(f *flag.Flag) {
				switch f.Name {
				case "chain", "operation", "staker", "lamports", "sol", "vote-account", "validator-share", "pol", "wei", "requested-by":
					set = append(set, "--"+f.Name)
				}
			})
			if len(set) > 0 {
				return fail(fmt.Sprintf("%s: an operation's, not a data job's", strings.Join(set, ", ")))
			}
			from, err := parseTime("--since", since)
			if err != nil {
				return fail(err.Error())
			}
			a, suggested, err := r.jobScheduled(job, in.Network, address, from)
			if err != nil {
				return fail(err.Error())
			}
			if *id == "" {
				*id = suggested
			}
			jobAction = &a
		} else if address != "" || since != "" {
			return fail("--address and --since are the data jobs': give --job")
		}
		if *id == "" {
			return fail("--schedule-id is required")
		}
		if err := workflows.ValidateOperationID(*id); err != nil {
			return fail(err.Error())
		}
		if (cron == "") == (every == 0) {
			return fail("give exactly one of --cron or --every")
		}
		if every < 0 || (every > 0 && every < time.Minute) {
			return fail("--every must be at least 1m")
		}
		if offset < 0 || (offset > 0 && offset >= every) {
			return fail("--offset must be less than --every")
		}
		pol, ok := overlapPolicies[overlap]
		if !ok {
			return fail(fmt.Sprintf("--overlap %q: want one of skip, buffer-one, buffer-all, cancel-other, terminate-other, allow-all", overlap))
		}
		if in.RequestedBy == "" {
			// Each run is requested by whoever created the schedule: they cannot approve it.
			in.RequestedBy = CurrentUser()
		}
		var action scheduledAction
		if jobAction != nil {
			action = *jobAction
		} else {
			a, err := operationScheduled(chain, operation, in, lamports, sol, share, polAmount, weiAmount)
			if err != nil {
				return fail(err.Error())
			}
			action = a
		}
		spec := client.ScheduleSpec{}
		if cron != "" {
			spec.CronExpressions = []string{cron}
		} else {
			spec.Intervals = []client.ScheduleIntervalSpec{{Every: every, Offset: offset}}
		}
		attrs, err := r.Conceal(action.attrs)
		if err != nil {
			return err
		}
		action.attrs = attrs
		c, err := r.Client()
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.ScheduleClient().Create(ctx, scheduleOptions(*id, r.temporal.TaskQueue(action.module), spec, action, pol, catchup, pauseOnFailure, paused))
		if err != nil {
			return fmt.Errorf("create schedule %s: %w", *id, err)
		}
		return r.print(fmt.Sprintf("created schedule %s: %s, %s", *id, describeSpec(cron, every, offset), action.summary),
			map[string]string{"scheduleId": *id})
	}
}

// operationScheduled is the action of an operation's schedule.
func operationScheduled(chain, operation string, in wfsolana.StakeInput, lamports, sol, share, polAmount, weiAmount string) (scheduledAction, error) {
	fail := func(msg string) (scheduledAction, error) { return scheduledAction{}, errors.New(msg) }
	var action scheduledAction
	switch chain {
	case wfsolana.Chain:
		if operation != "" && operation != "stake" {
			return fail(fmt.Sprintf("--operation %q: a Solana schedule stakes (stake)", operation))
		}
		if share != "" || polAmount != "" || weiAmount != "" {
			return fail("--validator-share, --pol and --wei are Polygon's: give --chain polygon")
		}
		n, err := parseLamports(lamports, sol)
		if err != nil {
			return fail(err.Error())
		}
		if n == 0 {
			return fail("give the amount with --lamports or --sol")
		}
		in.Lamports = n
		if err := in.Validate(); err != nil {
			return fail(err.Error())
		}
		action = scheduledAction{module: wfsolana.Module, workflow: wfsolana.StakeWorkflow, input: in, summary: wfsolana.StakeSummary(in), attrs: wfsolana.StakeAttributes(in)}
	case wfpolygon.Chain:
		a, err := polygonScheduled(operation, in.Network, in.Staker, share, polAmount, weiAmount, in.RequestedBy)
		if err != nil {
			return fail(err.Error())
		}
		if lamports != "" || sol != "" || in.VoteAccount != "" {
			return fail("--lamports, --sol and --vote-account are Solana's")
		}
		action = a
	default:
		return fail(fmt.Sprintf("--chain %q: want solana or polygon", chain))
	}
	return action, nil
}

// scheduleOptions are the options a schedule is created with.
func scheduleOptions(id, taskQueue string, spec client.ScheduleSpec, action scheduledAction, overlap enumspb.ScheduleOverlapPolicy,
	catchup time.Duration, pauseOnFailure, paused bool) client.ScheduleOptions {
	start := StartOptions(id, action.summary, taskQueue, action.attrs...)
	if action.job {
		start.TypedSearchAttributes = temporal.NewSearchAttributes(action.attrs...)
	}
	return client.ScheduleOptions{
		ID:   id,
		Spec: spec,
		Action: &client.ScheduleWorkflowAction{
			// Each run's workflow ID is this ID plus the scheduled time, so a scheduled time
			// can start at most one run.
			ID:                    id,
			Workflow:              action.workflow,
			Args:                  []any{action.input},
			TaskQueue:             taskQueue,
			StaticSummary:         "scheduled " + start.StaticSummary,
			TypedSearchAttributes: start.TypedSearchAttributes,
		},
		Overlap:        overlap,
		CatchupWindow:  catchup,
		PauseOnFailure: pauseOnFailure,
		Paused:         paused,
		Note:           "created by starter",
	}
}

func describeSpec(cron string, every, offset time.Duration) string {
	if cron != "" {
		return "cron " + cron + " (UTC)"
	}
	s := "every " + every.String()
	if offset > 0 {
		s += " offset " + offset.String()
	}
	return s
}

type scheduleAction struct {
	ScheduledAt time.Time `json:"scheduledAt"`
	OperationID string    `json:"operationId"`
}

type scheduleDesc struct {
	ScheduleID string           `json:"scheduleId"`
	Paused     bool             `json:"paused"`
	Note       string           `json:"note,omitempty"`
	Recent     []scheduleAction `json:"recentActions"`
	Next       []time.Time      `json:"nextActionTimes"`
	Running    []string         `json:"running"`
}

func scheduleView(id string, d *client.ScheduleDescription) scheduleDesc {
	v := scheduleDesc{ScheduleID: id, Paused: d.Schedule.State.Paused, Note: d.Schedule.State.Note,
		Next: d.Info.NextActionTimes, Recent: []scheduleAction{}, Running: []string{}}
	for _, a := range d.Info.RecentActions {
		op := ""
		if a.StartWorkflowResult != nil {
			op = a.StartWorkflowResult.WorkflowID
		}
		v.Recent = append(v.Recent, scheduleAction{ScheduledAt: a.ScheduleTime, OperationID: op})
	}
	for _, w := range d.Info.RunningWorkflows {
		v.Running = append(v.Running, w.WorkflowID)
	}
	return v
}

func formatSchedule(id string, d *client.ScheduleDescription) string {
	v := scheduleView(id, d)
	var b strings.Builder
	state := "active"
	if v.Paused {
		state = "paused"
	}
	fmt.Fprintf(&b, "schedule %s: %s", id, state)
	if v.Note != "" {
		fmt.Fprintf(&b, " (%s)", v.Note)
	}
	for _, t := range v.Next {
		fmt.Fprintf(&b, "\n  next:    %s", t.UTC().Format(time.RFC3339))
	}
	for _, a := range v.Recent {
		fmt.Fprintf(&b, "\n  ran:     %s  %s", a.ScheduledAt.UTC().Format(time.RFC3339), a.OperationID)
	}
	for _, w := range v.Running {
		fmt.Fprintf(&b, "\n  running: %s", w)
	}
	return b.String()
}

func (r *Session) scheduleList() func(context.Context) error {
	return func(ctx context.Context) error {
		c, err := r.Client()
		if err != nil {
			return err
		}
		defer c.Close()
		it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 100})
		if err != nil {
			return fmt.Errorf("list schedules: %w", err)
		}
		type row struct {
			ScheduleID string      `json:"scheduleId"`
			Paused     bool        `json:"paused"`
			Next       []time.Time `json:"nextActionTimes"`
		}
		rows := []row{}
		var b strings.Builder
		fmt.Fprintf(&b, "%-40s %-7s %s", "SCHEDULE", "STATE", "NEXT")
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				return fmt.Errorf("list schedules: %w", err)
			}
			rw := row{ScheduleID: e.ID, Paused: e.Paused, Next: e.NextActionTimes}
			rows = append(rows, rw)
			state, next := "active", "-"
			if e.Paused {
				state = "paused"
			}
			if len(e.NextActionTimes) > 0 {
				next = e.NextActionTimes[0].UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(&b, "\n%-40s %-7s %s", e.ID, state, next)
		}
		return r.print(b.String(), rows)
	}
}

var errNoVerb = errors.New("schedule: give a command: create, list, describe, pause, unpause, trigger, delete")

// scheduledAction is what each run of a schedule starts.
type scheduledAction struct {
	// module names the task queue the runs start on (workflows.TaskQueueOf).
	module   string
	workflow any
	input    any
	summary  string
	attrs    []temporal.SearchAttributeUpdate
	// job is true for a data job: its runs record no StakeflowStep.
	job bool
}

// polygonScheduled is a Polygon schedule's action: a delegate of the amount given, or a rewards
// withdrawal or restake (no amount: each run takes what has accrued).
func polygonScheduled(operation, network, staker, share, pol, wei, requestedBy string) (scheduledAction, error) {
	var in any
	amount := ""
	switch operation {
	case wfpolygon.OpDelegate:
		w, err := ParseWei(wei, pol)
		if err != nil {
			return scheduledAction{}, err
		}
		amount = w
		d := wfpolygon.DelegateInput{Network: network, Staker: staker, ValidatorShare: share, Amount: amount, RequestedBy: requestedBy}
		if err := d.Validate(); err != nil {
			return scheduledAction{}, err
		}
		in = d
	case wfpolygon.OpWithdrawRewards, wfpolygon.OpRestake:
		if pol != "" || wei != "" {
			return scheduledAction{}, fmt.Errorf("--pol and --wei: %s takes the rewards accrued, no amount", operation)
		}
		rw := wfpolygon.RewardsInput{Network: network, Staker: staker, ValidatorShare: share, RequestedBy: requestedBy}
		if err := rw.Validate(); err != nil {
			return scheduledAction{}, err
		}
		in = rw
	case "":
		return scheduledAction{}, fmt.Errorf("give --operation: delegate, withdraw-rewards or restake")
	default:
		return scheduledAction{}, fmt.Errorf("--operation %q: a Polygon schedule runs delegate, withdraw-rewards or restake (an unstake waits days for its claim: start it by hand)", operation)
	}
	types := map[string]string{wfpolygon.OpDelegate: wfpolygon.DelegateWorkflowType,
		wfpolygon.OpWithdrawRewards: wfpolygon.WithdrawRewardsWorkflowType, wfpolygon.OpRestake: wfpolygon.RestakeWorkflowType}
	stakerHex := common.HexToAddress(staker).Hex()
	return scheduledAction{module: wfevm.Module, workflow: types[operation], input: in,
		summary: wfpolygon.Summary(operation, network, stakerHex, common.HexToAddress(share).Hex(), amount),
		attrs:   wfpolygon.Attributes(operation, network, stakerHex)}, nil
}
