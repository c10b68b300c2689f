package keys_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// short signs with a signature one byte short of the scheme's.
type short struct{}

func (short) Accounts() []keys.Account { return []keys.Account{{Address: "addr1", Handle: "h1"}} }
func (short) Sign(context.Context, keys.Account, keys.Scheme, []byte) ([]byte, error) {
	return make([]byte, 64), nil
}

// TestSignChecksLengthsAndNamesTheAccount: a digest scheme refuses a payload that is not 32
// bytes before the backend is asked, and a signature of the wrong length is refused; both errors
// name the account and wrap ErrSign.
func TestSignChecksLengthsAndNamesTheAccount(t *testing.T) {
	acct, ok := keys.Find(short{}, "addr1")
	require.True(t, ok)
	_, err := keys.Sign(context.Background(), short{}, acct, keys.Secp256k1Recoverable, make([]byte, 31))
	require.ErrorIs(t, err, keys.ErrSign)
	assert.Contains(t, err.Error(), "account addr1")
	assert.Contains(t, err.Error(), "payload is 31 bytes, want 32")
	_, err = keys.Sign(context.Background(), short{}, acct, keys.Secp256k1Recoverable, make([]byte, 32))
	require.ErrorIs(t, err, keys.ErrSign)
	assert.Contains(t, err.Error(), "signature is 64 bytes, want 65")
	sig, err := keys.Sign(context.Background(), short{}, acct, keys.Secp256k1, make([]byte, 32))
	require.NoError(t, err)
	assert.Len(t, sig, 64)
	_, ok = keys.Find(short{}, "addr2")
	assert.False(t, ok)
	var se *keys.SignError
	_, err = keys.Sign(context.Background(), nil, acct, keys.Ed25519, nil)
	require.True(t, errors.As(err, &se))
	assert.Equal(t, "addr1", se.Address)
}
