// Package activities holds stakeflow's Temporal activities: thin adapters from the staking
// service client (apiclient), the signer and read-only chain access to typed results.
//
// Errors are classified where they enter, as Temporal application errors whose Type is one of
// the Err* constants:
//   - bad input, API 400/401/403/404 and verification failures are non-retryable;
//   - a 429 is retried after the service's Retry-After (NextRetryDelay);
//   - 5xx answers, bodies that are not the service's envelope, and network errors retry with the
//     caller's backoff.
//
// A broadcast refused because the chain already processed the same bytes counts as sent; one
// refused because the blockhash is unknown returns ErrBlockhashExpired so that the workflow proves
// the transaction cannot land before building another. The spec does not fix the broadcast
// endpoint's error forms, so both are recognised from the error's name and message.
//
// Sign and Broadcast record signer refusals and broadcast outcomes through
// activity.GetMetricsHandler (names and labels in internal/metrics).
//
// Activities are idempotent: Build and the reads have no effect, Sign is deterministic (ed25519),
// and Broadcast re-sends the bytes it is given.
package activities
