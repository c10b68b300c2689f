package metrics

import (
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/activities"
)

// Worker health gauges, set by the worker (see internal/worker).
const (
	// RPCVerified is 1 while a network's RPC is proven to serve it, labelled by chain and network.
	RPCVerified = "stakeflow_rpc_verified"
	// ServiceAuthOK is 1 while the staking service accepts the worker's token.
	ServiceAuthOK = "stakeflow_service_auth_ok"
)

// SetRPCVerified sets the RPCVerified gauge of a network: 1 while its RPC is proven to serve it,
// 0 otherwise. h may be nil.
func SetRPCVerified(h client.MetricsHandler, chain, network string, verified bool) {
	if h == nil {
		return
	}
	h.WithTags(map[string]string{
		activities.LabelChain: activities.LabelValue(chain), activities.LabelNetwork: activities.LabelValue(network),
	}).Gauge(RPCVerified).Update(boolValue(verified))
}

// SetServiceAuthOK sets the ServiceAuthOK gauge: 1 while the staking service accepts the worker's
// token, 0 otherwise. h may be nil.
func SetServiceAuthOK(h client.MetricsHandler, ok bool) {
	if h == nil {
		return
	}
	h.Gauge(ServiceAuthOK).Update(boolValue(ok))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
