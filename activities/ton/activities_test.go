package ton

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/apiclient"
)

// Hashes of one 32-byte value (bytes 0..31), each form written out by hand from RFC 4648.
const (
	hashHex    = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	hashB64    = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	hashB64Raw = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
)

func TestNormalizeHash(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{hashHex, hashHex},
		{strings.ToUpper(hashHex), hashHex},
		{"0x" + hashHex, hashHex},
		{hashB64, hashHex},
		{hashB64Raw, hashHex},
		{"+//7//v/+//7//v/+//7//v/+//7//v/+//7//v/+/8=", "fbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbff"},
		{"-__7__v_-__7__v_-__7__v_-__7__v_-__7__v_-_8=", "fbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbfffbff"},
	} {
		got, err := NormalizeHash(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	for _, bad := range []string{"", "xyz", hashHex[:62], hashHex + "00", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg==", "0x" + hashB64Raw} {
		_, err := NormalizeHash(bad)
		assert.ErrorIs(t, err, ErrBadHash, bad)
	}
}

// fakeService answers endpoint 9 from a script, one answer per call; the last repeats.
type fakeService struct {
	script []func() (*apiclient.TONTransactionStatus, error)
	asked  []string
}

func (f *fakeService) TONTransactionStatus(_ context.Context, network, hash string) (*apiclient.TONTransactionStatus, error) {
	f.asked = append(f.asked, network+"/"+hash)
	i := min(len(f.asked), len(f.script)) - 1
	return f.script[i]()
}

func status(hash string) func() (*apiclient.TONTransactionStatus, error) {
	return func() (*apiclient.TONTransactionStatus, error) {
		return &apiclient.TONTransactionStatus{Address: "EQAccount", Lt: "47000000000001", PrevTransactionHash: "prev", PrevTransactionLt: "46999999000001",
			Now: 1_700_000_000, OutMessagesCount: 1, OldStatus: "active", EndStatus: "active", TransactionHash: hash}, nil
	}
}

func apiErr(e *apiclient.APIError) func() (*apiclient.TONTransactionStatus, error) {
	return func() (*apiclient.TONTransactionStatus, error) { return nil, e }
}

var (
	notFound404 = apiErr(&apiclient.APIError{StatusCode: http.StatusNotFound, Name: "NotFoundException"})
	throttled7s = apiErr(&apiclient.APIError{StatusCode: http.StatusTooManyRequests, Name: apiclient.NameThrottler,
		RateLimit: &apiclient.RateLimit{HasRetryAfter: true, RetryAfter: 7 * time.Second}})
	failing500 = apiErr(&apiclient.APIError{StatusCode: http.StatusInternalServerError, Name: "InternalServerErrorException"})
)

func run(t *testing.T, svc *fakeService, in ConfirmInput) (Transaction, []time.Duration, error) {
	t.Helper()
	var waits []time.Duration
	a := &Activities{Service: svc, sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	v, err := env.ExecuteActivity(a.TONConfirm, in)
	var tx Transaction
	if err == nil {
		require.NoError(t, v.Get(&tx))
	}
	return tx, waits, err
}

// TestConfirmPollsUntilFound: not found twice, throttled (Retry-After 7s), a 500, then found: the
// pauses double from 1s on "not found" and failures, and the throttled read waits what the
// service asked; the base64 answer is the hex hash asked.
func TestConfirmPollsUntilFound(t *testing.T) {
	svc := &fakeService{script: []func() (*apiclient.TONTransactionStatus, error){notFound404, notFound404, throttled7s, failing500, status(hashB64)}}
	tx, waits, err := run(t, svc, ConfirmInput{Network: "testnet", Hash: hashB64Raw, Deadline: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 7 * time.Second, 4 * time.Second}, waits)
	assert.Equal(t, Transaction{Hash: hashHex, Account: "EQAccount", Lt: "47000000000001", PrevTransactionHash: "prev", PrevTransactionLt: "46999999000001",
		Time: time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC), OutMessagesCount: 1, OldStatus: "active", EndStatus: "active", Outcome: OutcomeFinal, Polls: 5}, tx)
	for _, q := range svc.asked {
		assert.Equal(t, "testnet/"+hashHex, q, "the service is asked the normalised hash")
	}
}

// TestConfirmLongRetryAfterHeartbeats: a Retry-After longer than the poll cap is waited out in
// slices no longer than the cap.
func TestConfirmLongRetryAfterHeartbeats(t *testing.T) {
	long := apiErr(&apiclient.APIError{StatusCode: http.StatusTooManyRequests, Name: apiclient.NameThrottler,
		RateLimit: &apiclient.RateLimit{HasRetryAfter: true, RetryAfter: 25 * time.Second}})
	svc := &fakeService{script: []func() (*apiclient.TONTransactionStatus, error){long, status(hashHex)}}
	_, waits, err := run(t, svc, ConfirmInput{Network: "mainnet", Hash: hashHex, Deadline: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{10 * time.Second, 10 * time.Second, 5 * time.Second}, waits)
}

func appErrType(t *testing.T, err error) (string, string) {
	t.Helper()
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	return ae.Type(), ae.Error()
}

// TestConfirmDeadline: a transaction never found fails, once the next pause would pass the
// deadline, with ErrTransactionNotFound naming the hash.
func TestConfirmDeadline(t *testing.T) {
	svc := &fakeService{script: []func() (*apiclient.TONTransactionStatus, error){notFound404}}
	_, _, err := run(t, svc, ConfirmInput{Network: "testnet", Hash: hashHex, Deadline: time.Now().Add(1500 * time.Millisecond)})
	require.Error(t, err)
	typ, msg := appErrType(t, err)
	assert.Equal(t, ErrTransactionNotFound, typ)
	assert.Contains(t, msg, hashHex)
	assert.Len(t, svc.asked, 2, "read at once, then after 1s; the next pause (2s) passes the deadline")
}

// TestConfirmRefuses: another hash answered, a missing lt, and a 400 end the activity for good.
func TestConfirmRefuses(t *testing.T) {
	other := status("ff" + hashHex[2:])
	noLt := func() (*apiclient.TONTransactionStatus, error) {
		s, _ := status(hashHex)()
		s.Lt = ""
		return s, nil
	}
	bad := apiErr(&apiclient.APIError{StatusCode: http.StatusBadRequest, Name: apiclient.NameValidation})
	for name, c := range map[string]struct {
		answer func() (*apiclient.TONTransactionStatus, error)
		typ    string
	}{"other hash": {other, activities.ErrServiceRejected}, "no lt": {noLt, activities.ErrServiceRejected}, "400": {bad, activities.ErrServiceRejected}} {
		t.Run(name, func(t *testing.T) {
			svc := &fakeService{script: []func() (*apiclient.TONTransactionStatus, error){c.answer}}
			_, _, err := run(t, svc, ConfirmInput{Network: "testnet", Hash: hashHex, Deadline: time.Now().Add(time.Hour)})
			typ, _ := appErrType(t, err)
			assert.Equal(t, c.typ, typ)
			assert.Len(t, svc.asked, 1)
		})
	}
}
