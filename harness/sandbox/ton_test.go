//go:build integration

package sandbox

import (
	"bytes"
	"encoding/hex"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/apiclient"
)

// TestTONTransactionAppearsAfterDelay: a transaction recorded with a delay is not found until the
// delay is over, then found with what was recorded; one recorded twice is refused.
func TestTONTransactionAppearsAfterDelay(t *testing.T) {
	ctx := testCtx(t)
	cl := client(t, shared.URL(), "ton-user")
	hash := hex.EncodeToString(bytes.Repeat([]byte{0x5a}, 32))
	start := time.Now()
	rec, err := shared.AddTONTransaction(TONTransaction{Network: "testnet", Hash: hash, Delay: Duration(time.Second)})
	require.NoError(t, err)
	_, err = cl.TONTransactionStatus(ctx, "testnet", hash)
	var apiErr *apiclient.APIError
	require.ErrorAs(t, err, &apiErr, "not found before the delay is over")
	assert.Equal(t, http.StatusNotFound, apiErr.StatusCode)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		st, err := cl.TONTransactionStatus(ctx, "testnet", hash)
		require.NoError(c, err)
		assert.Equal(c, rec.LT, st.Lt)
		assert.Equal(c, rec.Address, st.Address)
	}, 10*time.Second, 50*time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "found only once the delay was over")

	_, err = shared.AddTONTransaction(TONTransaction{Network: "testnet", Hash: hash})
	require.Error(t, err, "a hash is recorded once")
	_, err = shared.AddTONTransaction(TONTransaction{Network: "testnet", Hash: "xyz"})
	require.Error(t, err)
}
