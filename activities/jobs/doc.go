// Package jobs holds the activities of the data jobs: they read the staking service's analytics
// (network APY, a delegator's rewards) and the SSV set-up requests made with the worker's token,
// and keep them in the store.
//
// # Contract
//
//   - Each activity is a bounded unit of work: it reads from the store where to resume, pages
//     through the service (limit 1000), upserts page by page, heartbeats after each page and
//     returns counts with More set when it stopped at its bound (MaxRecords) before catching up.
//     The workflow calls it again until More is false. Upserts are idempotent, so a retried
//     attempt repeats work but never duplicates a row.
//   - CollectAPY(network) resumes at the last stored staking period number (read again: its APY
//     may still move while the period runs) and records the newest period's APY in the gauge
//     stakeflow_network_apy{network}.
//   - CollectRewards(network, address) resumes at the start of the last stored staking period
//     (read again until it is finalized). Amounts, net amounts and fees are stored as the exact
//     decimal text the service sent.
//   - WatchSSV pages through every set-up request of the token, upserts each request's status;
//     the store answers the status changes it saw (one event row each). A request entering a
//     failed status (FailedStatus) is logged at error level. The gauge
//     stakeflow_ssv_requests{status} is set from the store's counts after each call.
//   - Service errors are classified by activities.ClassifyService: a 429 is retried after the
//     service's Retry-After (NextRetryDelay), a refused argument is InvalidInput, non-retryable.
//     Store errors are retried with backoff (ErrStoreUnavailable).
//   - Resuming the first time (nothing stored): from Since when given, else the service's default
//     period (one month back). Network APY resumes by staking period number; the service bounds a
//     query without startAt to the last month, so a job stopped for longer resumes a month back
//     unless Since reaches further.
package jobs
