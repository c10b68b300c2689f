package cosmos

import "errors"

// Errors wrapped by the package.
var (
	// ErrIntent means the intent itself is invalid (bad address, amount, network or operation).
	ErrIntent = errors.New("invalid Celestia intent")
	// ErrMismatch means a transaction does not match its intent, the account or the policy.
	ErrMismatch = errors.New("transaction does not match the intent")
	// ErrUnknownKey means no key is loaded for the delegator.
	ErrUnknownKey = errors.New("no key for the delegator")
	// ErrKey means a key could not be derived or written.
	ErrKey = errors.New("cosmos key")
)
