// Package metrics lists every stakeflow metric (below), and records those recorded outside the
// workflows and activities: the staking service calls, counted and timed by Service (a decorator
// of the client, activities.StakingService), and the worker's health gauges (SetRPCVerified,
// SetServiceAuthOK). It records through a Temporal metrics handler (client.MetricsHandler), the
// same pipeline that carries the Temporal SDK's metrics. The worker exports that pipeline in the
// Prometheus text format on /metrics (see package internal/metrics/prom).
//
// Each metric is defined where it is recorded. The workflows define and record the operations'
// metrics (package workflows, metrics.go) through workflow.GetMetricsHandler(ctx), which drops
// what is recorded while a workflow replays its history, so a count kept there moves once per
// event however often the workflow is replayed. The activities define and record theirs (package
// activities, metrics.go) through activity.GetMetricsHandler(ctx). Package activities also holds
// the label keys of every metric (activities.LabelChain, ...), and activities.LabelValue, which
// turns an empty label value into "unknown".
//
// Every handler passed in here may be nil: nothing is recorded then.
//
// # Metrics
//
// Names are stable; a metric's labels never change from one sample to the next. Label values are
// short identifiers (chain "solana", network "testnet", operation "stake", ...). Samples recorded
// from workflows and activities also carry the SDK's own labels (namespace, task_queue,
// workflow_type, activity_type, client_name, worker_type); those of Service carry only their own.
//
// Operations, defined and recorded by package workflows (workflows.MetricOperationsStarted, ...),
// exactly once per event, replay-safe. The operation label is the operation started: the withdraw
// phase of an unstake counts under "unstake".
//
//	stakeflow_operations_started_total{chain,network,operation}
//	    operations started (after their input was validated).
//	stakeflow_operations_completed_total{chain,network,operation}
//	    operations that reached their end successfully.
//	stakeflow_operations_failed_total{chain,network,operation,failure_type}
//	    started operations that ended in failure (input refused before the start is not counted); failure_type is the application error type (for example
//	    VerificationFailed, Rejected, TooManyBuilds, TransactionRejected), or Cancelled, Timeout,
//	    Other.
//	stakeflow_rebuilds_total{chain,network,operation}
//	    transactions built again for the same intent because the previous one was proven unable
//	    to land (its blockhash expired and its signature is absent).
//	stakeflow_confirmations_total{chain,network,operation,outcome}
//	    confirmation results: finalized, failed (landed with an on-chain error) or expired.
//	stakeflow_stalls_total{chain,network,operation}
//	    operations that entered a stall: a step that cannot go on for a reason that does not heal
//	    by retrying at once (an RPC or the service refusing the worker); counted once per stall.
//
// Activities, defined and recorded by package activities (activities.MetricBroadcasts, ...):
//
//	stakeflow_broadcasts_total{chain,network,outcome,reason}
//	    broadcast answers: outcome "sent" and "already_processed" (reason "none"), or
//	    "refused" with reason "blockhash_expired", "rejected", "throttled", "unavailable",
//	    "unauthorized" (the service refused the worker's token) or "error" (a refusal the activity
//	    retries or cannot classify).
//	stakeflow_fee_lamports_total{chain,network,operation}
//	    lamports paid in fees by finalized transactions, failed or not, as the chain records them
//	    (getTransaction at finalized); recorded by Confirm.
//	stakeflow_fee_transactions_total{chain,network,operation}
//	    the transactions whose fee is in stakeflow_fee_lamports_total: the ratio of the two is the
//	    mean fee.
//	stakeflow_signer_refusals_total{chain,operation,check}
//	    transactions the signer refused to sign; check names the verification that failed, in
//	    snake case ("fee_payer", "vote_account", "program", ...), or "unknown_key", "decode",
//	    "intent", "other".
//
// Data jobs, defined and set by package activities/jobs (jobs.MetricNetworkAPY, ...):
//
//	stakeflow_network_apy{network}
//	    the newest staking period's network APY, percent, as the APY job last read it.
//	stakeflow_ssv_requests{status}
//	    stored SSV set-up requests by status, after each run of the SSV job (0 for a status no
//	    request holds any more).
//
// Staking service calls, recorded by ServiceObserver in this package (ServiceRequests, ...), which
// the worker sets on its staking service client: every call of every endpoint is counted, whichever
// chain's activities or data job makes it.
//
//	stakeflow_service_requests_total{endpoint,status}
//	    calls by endpoint, one label per endpoint of the service interface (apiclient.Endpoints):
//	    "delegator_apr", "network_apy", "celestia_send", "polygon_send",
//	    "eigenlayer_verify_checkpoint_proofs", "hyperliquid_withdraw", "validator_status",
//	    "ssv_requests", "ton_transaction_status", "stake", "unstake", "withdraw", "broadcast";
//	    and status: "ok", the HTTP status of an error answer ("400", "429", "503", ...),
//	    "transport", "invalid_request" (no token to send) or "canceled". An argument the client
//	    refuses before sending anything is not a call and is not counted.
//	stakeflow_service_request_duration_seconds{endpoint}
//	    histogram of call latency, answers and errors alike.
//	stakeflow_service_errors_total{endpoint,status,exception}
//	    error answers by the service's exception name (APIError.Name, for example
//	    ValidationException, ThrottlerException), "unexpected_response" for bodies that are not
//	    the service's envelope, or the status word above for calls that got no answer.
//	stakeflow_service_throttled_total{endpoint}
//	    429 answers.
//	stakeflow_service_retry_after_seconds{endpoint}
//	    histogram of the Retry-After delays of 429 answers: the activities hand each to Temporal as
//	    the next retry's delay, so the next attempt waits exactly this long.
//
// Worker health, defined in this package (RPCVerified, ServiceAuthOK) and set by the worker (see
// internal/worker):
//
//	stakeflow_rpc_verified{chain,network}
//	    1 while the network's RPC is proven to serve it (its genesis hash is the network's and no
//	    read failed since it was read), 0 otherwise; the worker is not ready while any is 0.
//	stakeflow_service_auth_ok
//	    1 while the staking service accepts the worker's token, 0 once it refused it even after
//	    the client re-read the token file; the worker is not ready while it is 0.
//
// The SDK's metrics (temporal_workflow_completed_total, temporal_activity_execution_latency_seconds,
// temporal_request_total, ...) are exported alongside, named as the SDK names them with the
// Prometheus suffixes _total (counters) and _seconds (timers).
package metrics
