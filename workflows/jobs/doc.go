// Package jobs holds the data jobs' workflows, one per kind, each started by a Temporal Schedule
// for one scope:
//
//   - APYJob (type APYJobWorkflow), scope a network of endpoint 2: collects the network APY of
//     every staking period since the last one stored.
//   - RewardsJob (type RewardsJobWorkflow), scope a network of endpoint 1 and a delegator address:
//     the same for the delegator's rewards.
//   - SSVJob (type SSVJobWorkflow), no scope: the statuses of the SSV set-up requests of the
//     worker's token, one event row per status change.
//
// A job validates its scope first: an unknown network or a malformed address ends it at once with
// the non-retryable InvalidInput. It then calls its activity (package activities/jobs), a bounded
// unit of work, until the activity reports it has caught up. After MaxActivities calls, or when
// the server suggests it, the job continues as new with its totals carried, so its history stays
// small however far behind it starts. Its current details in the Web UI say what it has done so
// far; its result sums the calls. One job of a kind per scope runs at a time: the schedule's ID
// names the scope and its overlap policy skips a run while the previous one is going.
//
// Bounded whatever the service answers. The activities end a call on a page that does not
// advance (ErrPageNotAdvancing, naming the offsets); the job ends the run on it, and on two calls
// in a row that stop at the same staking period. A run caps its requests across its
// continue-as-new chain (Limits.MaxRequests, default DefaultMaxRequests) and ends with
// ErrRequestCap naming the cap when the service still has pages. Each of those failures is
// counted (stakeflow_job_failures_total{job,failure_type}) and posted as a "failed" event when the
// worker has a webhook.
//
// A call that keeps failing in a way that may heal (the service or the store down, throttled past
// the call's five attempts, a timeout) does not end the job: it stalls visibly and tries again
// after a minute, doubling up to six hours. The status query (workflows.QueryStatus, a Status:
// state collecting/stalled/caught up/failed, progress, the stall with its last error and next
// try) and the current details say so; the stall is counted once
// (stakeflow_job_stalls_total{job}) and posted once as a "stalled" event. While the job stalls,
// its schedule skips, so nothing hammers the service. Jobs started before this behaviour (version
// marker "job-stall") keep failing at once.
//
// Workflow code here is deterministic: no I/O, no wall clock, no randomness, no goroutines, no map
// iteration.
package jobs
