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
//   - Nothing the service says about progress is trusted. Each activity pages itself, one request
//     per page (Service is the per-page client): a page must start at the offset asked and bring
//     at least one row not read before in the call, else the call ends with the non-retryable
//     ErrPageNotAdvancing naming the offsets and the repeated row (a pager that answers the same
//     page whatever the offset reads two pages, not millions). A call sends at most MaxRequests
//     requests (default DefaultMaxRequests; the job passes what is left of its run's cap) and says
//     Capped when that stopped it. Requests are paced under the service's rate limit: the
//     slowest window of RateLimit-Policy (else RateLimit-Limit over RateLimit-Reset), learnt from
//     any response, a 429's included, sets the interval between any two requests of the worker's
//     jobs (at most MaxPace; MinInterval is a floor).
//   - Records are checked against the interface's meaning before they are stored, and a record
//     that contradicts itself or the chain is stored with its Flag (the reasons), never dropped
//     and never silently as true (check.go): an APY outside [MinAPY, MaxAPY] percent, a negative
//     execution-layer APY or execution reward (fees and MEV are paid, never taken), netAmount not
//     amount minus fee within rounding (two gwei or one part in a billion), a negative fee, a
//     period that ends before it starts, an SSV request of fewer than one validator or an amount
//     per validator outside [MinSSVAmount, MaxSSVAmount] ETH. Negative consensus rewards and
//     network APYs above -100% are kept unflagged: penalties and slashing produce them. A number
//     in exponent form is stored as exact decimal text; one too large to write out is flagged and
//     stored as unknown. A flagged APY does not set stakeflow_network_apy.
//   - Service errors are classified by activities.ClassifyService: a 429 is retried after the
//     service's Retry-After (NextRetryDelay), a refused argument is InvalidInput, non-retryable.
//     Store errors are retried with backoff (ErrStoreUnavailable).
//   - Resuming the first time (nothing stored): from Since when given, else the service's default
//     period (one month back). Network APY resumes by staking period number; the service bounds a
//     query without startAt to the last month, so a job stopped for longer resumes a month back
//     unless Since reaches further.
package jobs
