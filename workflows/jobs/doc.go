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
// Workflow code here is deterministic: no I/O, no wall clock, no randomness, no goroutines, no map
// iteration.
package jobs
