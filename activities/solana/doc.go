// Package solana holds Solana's Temporal activities: thin adapters from the staking service
// client (apiclient), the Solana signer and read-only Solana chain access to typed results. Error
// types, outcomes and metric names are the core's (package solana).
//
// Errors are classified where they enter, as Temporal application errors whose Type is one of
// the activities.Err* constants:
//   - bad input, API 400/403/404 and verification failures are non-retryable;
//   - a 401 (the client has already re-read its token file) and a missing token are
//     ErrServiceUnauthorized, retried: a rotated token must not fail an operation half done;
//   - a 429, and a 5xx that carries Retry-After (503), are retried after the service's delay
//     (NextRetryDelay); other 5xx answers, bodies that are not the service's envelope, and network
//     errors retry with the caller's backoff;
//   - chain reads go through a reader proven to serve the network (its RPC's genesis hash): until
//     it is, reads fail with ErrChainUnverified, retried; RPC refusals that asking again will not
//     change (HTTP 401/403 from the provider, JSON-RPC invalid params or method not found) are
//     ErrChainRejected, non-retryable for the activity (see its contract: the workflow stalls the
//     step visibly and tries again on its own schedule); other RPC failures are ErrChainUnavailable.
//
// The chain has the last word over the service: CheckFresh proves a signed transaction new before
// its first broadcast, CheckValidator needs our own RPC to find the validator current (and its
// commission within policy) besides the service's "active", and Confirm reports a failure only
// once finalized and an expiry only from a proven reader.
//
// A broadcast refused because the chain already processed the same bytes counts as sent; one
// refused because the blockhash is unknown returns ErrBlockhashExpired so that the workflow proves
// the transaction cannot land before building another. The spec does not fix the broadcast
// endpoint's error forms, so both are recognised from the error's name and message.
//
// A transaction error the chain reports, in a refused broadcast (ErrTransactionRejected) or in a
// transaction that landed failed (ConfirmResult.Error), reads cause first: decoded to names by
// solchain.DecodeTxError with the program of the failing instruction, such as "insufficient funds:
// the staker's balance does not cover the amount plus fees (System program error 1,
// ResultWithNegativeLamports)". The refusal keeps the service's whole answer as its cause; the
// on-chain error follows the decoded line after "; ".
//
// Sign, Broadcast and Confirm record signer refusals, broadcast outcomes and fees through
// activity.GetMetricsHandler; their names, and the label keys of every stakeflow metric, are
// defined in metrics.go (internal/metrics/doc.go lists them all).
//
// Activities are idempotent: Build and the reads have no effect, Sign is deterministic (ed25519),
// and Broadcast re-sends the bytes it is given.
package solana
