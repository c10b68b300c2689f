package evm

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps exactly one of them, except the
// context's own error when Sign is cancelled. All of them are permanent: the same input gives the
// same answer.
var (
	// ErrVerification means the transaction does not match the intent or the policy.
	ErrVerification = errors.New("transaction verification failed")
	// ErrDecode means the unsigned transaction could not be decoded.
	ErrDecode = errors.New("cannot decode transaction")
	// ErrIntent means the intent itself is incomplete or malformed.
	ErrIntent = errors.New("invalid intent")
	// ErrUnknownKey means no key is loaded for the staker.
	ErrUnknownKey = errors.New("no key for address")
	// ErrKeyLoad means a key or passphrase file could not be loaded.
	ErrKeyLoad = errors.New("cannot load key")
	// ErrPolicy means the policy is incomplete or malformed.
	ErrPolicy = errors.New("invalid policy")
)

// VerificationError reports the first check the transaction failed. It wraps ErrVerification.
type VerificationError struct {
	// Field names what was compared, for example "to", "nonce" or "approve amount".
	Field string
	// Want is what the intent or policy requires.
	Want string
	// Got is what the transaction contains.
	Got string
}

// Error implements error.
func (e *VerificationError) Error() string {
	return fmt.Sprintf("%s: %s: want %s, got %s", ErrVerification.Error(), e.Field, e.Want, e.Got)
}

// Is reports whether target is ErrVerification.
func (e *VerificationError) Is(target error) bool { return target == ErrVerification }

func mismatch(field, want, got string) error {
	return &VerificationError{Field: field, Want: want, Got: got}
}

// UnknownKeyError names an address for which no key is loaded. It wraps ErrUnknownKey.
type UnknownKeyError struct {
	// Address is the address asked for.
	Address string
}

// Error implements error.
func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("%s %s", ErrUnknownKey.Error(), e.Address)
}

// Is reports whether target is ErrUnknownKey.
func (e *UnknownKeyError) Is(target error) bool { return target == ErrUnknownKey }

func intentErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrIntent, fmt.Sprintf(format, args...))
}

func decodeErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDecode, fmt.Sprintf(format, args...))
}
