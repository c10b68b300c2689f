// Package keystest has a recording key backend for tests of the chain signers: it records what a
// signer hands the backend and can fail instead of signing.
package keystest

import (
	"context"
	"sync"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// Call is one Sign call a Recorder received.
type Call struct {
	Account keys.Account
	Scheme  keys.Scheme
	Payload []byte
}

// Recorder is a keys.Backend that records every Sign call, then fails with Err when it is set
// and otherwise passes the call to Inner.
type Recorder struct {
	Inner keys.Backend
	Err   error

	mu    sync.Mutex
	calls []Call
}

// Accounts returns Inner's accounts.
func (r *Recorder) Accounts() []keys.Account { return r.Inner.Accounts() }

// Sign records the call, then fails with Err or has Inner sign.
func (r *Recorder) Sign(ctx context.Context, acct keys.Account, scheme keys.Scheme, payload []byte) ([]byte, error) {
	r.mu.Lock()
	r.calls = append(r.calls, Call{Account: acct, Scheme: scheme, Payload: append([]byte(nil), payload...)})
	r.mu.Unlock()
	if r.Err != nil {
		return nil, r.Err
	}
	return r.Inner.Sign(ctx, acct, scheme, payload)
}

// Calls returns the calls recorded so far.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}
