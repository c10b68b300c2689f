// Package ton holds TON's workflows on the operation core (package workflows).
//
// Watch (TONWatchWorkflow) follows one transaction, named by its hash (hex or base64, normalised
// once at validation), until the staking service reports it final, through the chain's confirm
// activity (activities/ton TONConfirm), the same step every TON operation that sends a
// transaction ends with (Confirm). Not found within the deadline (default one hour), the
// operation fails naming the hash.
package ton
