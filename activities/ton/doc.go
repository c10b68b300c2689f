// Package ton holds TON's Temporal activities: thin adapters from the staking service client
// (endpoint 9, a transaction's status by hash) to typed results.
//
// TONConfirm is the chain's confirm step: every TON operation follows its transaction to finality
// through it, and the watch operation (workflows/ton) is that step alone. It polls endpoint 9
// with backoff while the transaction is not found (404), honours a 429's Retry-After, retries a
// failing service with backoff, heartbeats, and ends when the service answers the transaction,
// or at the caller's deadline with ErrTransactionNotFound (non-retryable) naming the hash.
//
// The service indexes transactions of committed blocks only; a TON block referenced by the
// masterchain does not revert, so an answer whose hash is the one asked and whose lt is set is
// final. An answer for another hash is ErrServiceRejected: the service is not to be trusted
// with this transaction.
//
// Hashes are 32 bytes, given in hex or base64 (standard or URL-safe, padded or not): NormalizeHash
// turns each form into lower-case hex once, at the edge, and everything after compares that form.
package ton
