package apiclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/stakeflow/stakeflow/apiclient"
)

// Example shows a call, the response info hook and error classification.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-42")
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"name":"ThrottlerException","message":"ThrottlerException","code":0,"errors":null},` +
			`"result":null,"requestId":"req-42","timestamp":"2026-11-22T00:00:00Z"}`))
	}))
	defer srv.Close()

	c, err := apiclient.New(srv.URL+"/api", apiclient.WithToken("example-token"))
	if err != nil {
		panic(err)
	}
	var info apiclient.ResponseInfo
	ctx := apiclient.WithResponseInfo(context.Background(), &info)
	_, err = c.Stake(ctx, apiclient.StakeRequest{
		Chain: apiclient.ChainSolana, Network: "testnet",
		StakerAddress: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", Amount: "1000000000",
	})
	var apiErr *apiclient.APIError
	if errors.As(err, &apiErr) {
		d, _ := apiErr.RetryAfter()
		fmt.Println(apiclient.IsThrottled(err), apiErr.Retryable(), d, info.RequestID)
	}
	// Output: true true 3s req-42
}
