package lease

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
)

// fakeStarter records a SignalWithStartWorkflow, and answers err.
type fakeStarter struct {
	id, signal string
	arg        any
	opts       client.StartWorkflowOptions
	wf         any
	args       []any
	err        error
}

func (f *fakeStarter) SignalWithStartWorkflow(_ context.Context, id, signal string, arg any, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	f.id, f.signal, f.arg, f.opts, f.wf, f.args = id, signal, arg, opts, wf, args
	return nil, f.err
}

// TestAskSignalsTheChainsLeaseStartingIt: the lease of (chain, network, address) is signalled
// with the request and started on the task queue given, with its chain, network and address;
// its ID names the chain family, so one address has one lease per chain.
func TestAskSignalsTheChainsLeaseStartingIt(t *testing.T) {
	const address = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01"
	st := &fakeStarter{}
	req := Request{Network: "mainnet", Address: address, WorkflowID: "op-1", RunID: "run-1"}
	require.NoError(t, Ask(context.Background(), st, "stakeflow-hyperliquid", Hyperliquid, req))
	assert.Equal(t, "nonce-lease/hyperliquid/mainnet/0xabcdef0123456789abcdef0123456789abcdef01", st.id)
	assert.Equal(t, client.StartWorkflowOptions{ID: st.id, TaskQueue: "stakeflow-hyperliquid"}, st.opts)
	assert.Equal(t, "acquire", st.signal)
	assert.Equal(t, Request{Chain: Hyperliquid, Network: "mainnet", Address: address, WorkflowID: "op-1", RunID: "run-1"}, st.arg)
	assert.Equal(t, "NonceLeaseWorkflow", st.wf)
	assert.Equal(t, []any{State{Chain: Hyperliquid, Network: "mainnet", Address: address}}, st.args)

	evm := &fakeStarter{}
	require.NoError(t, Ask(context.Background(), evm, "stakeflow-evm", EVM, req))
	assert.Equal(t, "nonce-lease/evm/mainnet/0xabcdef0123456789abcdef0123456789abcdef01", evm.id,
		"the same address on an EVM network is another lease")
}

// TestAskRefusals: a request for another chain's lease, naming no operation, or on a worker with
// no client or task queue is refused for good; an unavailable Temporal is retried.
func TestAskRefusals(t *testing.T) {
	req := Request{Network: "mainnet", Address: "celestia1xyz", WorkflowID: "op-1"}
	for name, c := range map[string]struct {
		starter Starter
		queue   string
		req     Request
		want    string
	}{
		"another chain's": {&fakeStarter{}, "q", Request{Chain: EVM, Network: "mainnet", Address: "celestia1xyz", WorkflowID: "op-1"}, "for a evm address"},
		"no operation":    {&fakeStarter{}, "q", Request{Network: "mainnet", Address: "celestia1xyz"}, "names no operation"},
		"no task queue":   {&fakeStarter{}, "", req, "no Temporal client or task queue"},
		"no client":       {nil, "q", req, "no Temporal client or task queue"},
	} {
		err := Ask(context.Background(), c.starter, c.queue, Celestia, c.req)
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(err, &appErr), name)
		assert.Equal(t, activities.ErrInvalidInput, appErr.Type(), name)
		assert.True(t, appErr.NonRetryable(), name)
		assert.Contains(t, appErr.Error(), c.want, name)
	}

	err := Ask(context.Background(), &fakeStarter{err: errors.New("connection refused")}, "q", Celestia, req)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr))
	assert.Equal(t, activities.ErrServiceUnavailable, appErr.Type())
	assert.False(t, appErr.NonRetryable())
	assert.Contains(t, appErr.Error(), "nonce-lease/celestia/mainnet/celestia1xyz")
}

// TestAskSignalsTheLeaseTheOperationNamed: an operation under encryption names its lease by the
// address's tag (IDOf); Ask signals that lease, and refuses a name outside the chain's network.
func TestAskSignalsTheLeaseTheOperationNamed(t *testing.T) {
	req := Request{Network: "mainnet", Address: "celestia1xyz", WorkflowID: "op-1", Lease: IDOf(Celestia, "mainnet", "h:0123")}
	st := &fakeStarter{}
	require.NoError(t, Ask(context.Background(), st, "q", Celestia, req))
	assert.Equal(t, "nonce-lease/celestia/mainnet/h:0123", st.id)
	assert.Equal(t, st.id, st.opts.ID)

	for _, lease := range []string{IDOf(Celestia, "testnet", "h:0123"), IDOf(EVM, "mainnet", "h:0123"), IDOf(Celestia, "mainnet", ""), "op-2"} {
		req.Lease = lease
		err := Ask(context.Background(), &fakeStarter{}, "q", Celestia, req)
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(err, &appErr), lease)
		assert.True(t, appErr.NonRetryable(), lease)
		assert.Contains(t, appErr.Error(), "not one of nonce-lease/celestia/mainnet/", lease)
	}
}
