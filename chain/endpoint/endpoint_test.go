package endpoint

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRedactRemovesCredentialsFromRealErrors makes real requests to endpoints that carry every
// kind of credential and checks that none of them survives in the error Go's HTTP client returns,
// once redacted.
func TestRedactRemovesCredentialsFromRealErrors(t *testing.T) {
	for _, ep := range []string{
		"http://alice:s3cret-pass@127.0.0.1:1/path-token-123?api-key=QUERYSECRET",
		"http://alice:s3cret-pass@127.0.0.1:1/v2/path-token-123",
		"https://127.0.0.1:1/path-token-123",
		"http://127.0.0.1:1/?api-key=QUERYSECRET",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep, nil)
		require.NoError(t, err)
		_, err = http.DefaultClient.Do(req)
		cancel()
		require.Error(t, err, "nothing listens on port 1")
		got := Redact(errors.Join(err, errors.New("again: "+ep)).Error(), ep)
		for _, secret := range []string{"s3cret-pass", "alice", "path-token-123", "QUERYSECRET"} {
			require.NotContains(t, got, secret, "endpoint %s: %s", ep, got)
		}
		require.Contains(t, got, "127.0.0.1:1", "the host stays, to say which endpoint failed")
	}
}

func TestShort(t *testing.T) {
	require.Equal(t, "https://rpc.example:8899", Short("https://u:p@rpc.example:8899/token?x=1"))
	require.Equal(t, "[endpoint]", Short("not a url"))
}
