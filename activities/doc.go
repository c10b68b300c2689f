// Package activities is what every chain's activities share: the error types their failures are
// classified into where they enter (Err*, NonRetryable), the confirmation outcomes, the policy's
// decision, the classification of the staking service's errors (ClassifyService), and the names and
// labels of the metrics activities record. Each chain's activities live in their own package below
// (activities/solana, activities/evm).
//
// Errors are Temporal application errors whose Type is one of the Err* constants:
//   - bad input, API 400/403/404 and verification failures are non-retryable;
//   - a 401 (the client has already re-read its token file) and a missing token are
//     ErrServiceUnauthorized, retried: a rotated token must not fail an operation half done;
//   - a 429, and a 5xx that carries Retry-After (503), are retried after the service's delay
//     (NextRetryDelay); other 5xx answers, bodies that are not the service's envelope, and network
//     errors retry with the caller's backoff;
//   - chain reads go through a reader proven to serve the network: until it is, reads fail with
//     ErrChainUnverified, retried; RPC refusals that asking again will not change are
//     ErrChainRejected, non-retryable for the activity (the workflow stalls the step visibly and
//     tries again on its own schedule); other RPC failures are ErrChainUnavailable.
//
// The names and label keys of every stakeflow metric are defined in metrics.go
// (internal/metrics/doc.go lists them all).
package activities
