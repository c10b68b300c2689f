package codec

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// TestWorkflowCodeCannotOpenPanicsNamingTheKey: in workflow code, a payload under a key the
// keyset lacks, one that fails authentication, or a clear one (strict codec) panics with the key's
// ID or the cause (the SDK then fails the workflow task, retried, instead of the workflow); the
// lenient codec reads a clear one; activities and clients get errors, never a panic.
func TestWorkflowCodeCannotOpenPanicsNamingTheKey(t *testing.T) {
	old := DataConverter(New(keyset(t, "k1", key("k1", 1))))
	sealed, err := old.ToPayload("the stake's input")
	require.NoError(t, err)
	tampered, err := old.ToPayload("the stake's input")
	require.NoError(t, err)
	tampered.Data[len(tampered.Data)-1] ^= 1

	rotated := DataConverter(New(keyset(t, "k2", key("k2", 2))))
	inWorkflow := rotated.(converter.ContextAware).WithWorkflowContext(nil)
	var s string
	panicked := func(f func()) (msg string) {
		defer func() {
			if r := recover(); r != nil {
				msg = fmt.Sprint(r)
			}
		}()
		f()
		return ""
	}
	msg := panicked(func() { _ = inWorkflow.FromPayload(sealed, &s) })
	require.Contains(t, msg, `key ID "k1"`)
	msg = panicked(func() {
		_ = inWorkflow.FromPayloads(&commonpb.Payloads{Payloads: []*commonpb.Payload{sealed}}, &s)
	})
	require.Contains(t, msg, `key ID "k1"`)
	both := DataConverter(New(keyset(t, "k2", key("k2", 2), key("k1", 1)))).(converter.ContextAware).WithWorkflowContext(nil)
	msg = panicked(func() { _ = both.FromPayload(tampered, &s) })
	require.Contains(t, msg, `key "k1"`)
	require.Contains(t, msg, "authentication")
	require.NoError(t, both.FromPayload(sealed, &s))
	require.Equal(t, "the stake's input", s)

	clear, err := converter.GetDefaultDataConverter().ToPayload("clear")
	require.NoError(t, err)
	msg = panicked(func() { _ = inWorkflow.FromPayload(clear, &s) })
	require.Contains(t, msg, "not encrypted")
	lenient := DataConverter(NewLenient(keyset(t, "k2", key("k2", 2)))).(converter.ContextAware).WithWorkflowContext(nil)
	require.Empty(t, panicked(func() { require.NoError(t, lenient.FromPayload(clear, &s)) }))
	require.Equal(t, "clear", s)
	require.Empty(t, panicked(func() {
		require.ErrorIs(t, rotated.(converter.ContextAware).WithContext(t.Context()).FromPayload(clear, &s), ErrClearPayload)
	}))

	inActivity := rotated.(converter.ContextAware).WithContext(t.Context())
	require.Empty(t, panicked(func() { require.ErrorIs(t, inActivity.FromPayload(sealed, &s), ErrUnknownKey) }))
	require.Empty(t, panicked(func() { require.ErrorIs(t, rotated.FromPayload(sealed, &s), ErrUnknownKey) }))
}

// TestFailureToErrorLeavesTheFailureSealed: reading a sealed failure into an error leaves the
// failure as it was (the SDK records a local activity's failure after reading it), and the error
// has the message.
func TestFailureToErrorLeavesTheFailureSealed(t *testing.T) {
	fc := FailureConverter(DataConverter(New(keyset(t, "k1", key("k1", 1)))))
	f := fc.ErrorToFailure(errors.New("vote account: want A, got B"))
	placeholder := f.GetMessage()
	require.NotContains(t, placeholder, "vote account")
	err := fc.FailureToError(f)
	require.ErrorContains(t, err, "vote account: want A, got B")
	require.Equal(t, placeholder, f.GetMessage(), "the failure keeps its placeholder")
	require.Equal(t, placeholder, fc.ErrorToFailure(err).GetMessage(), "the error's failure is the sealed one")
}
