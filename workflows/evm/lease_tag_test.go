package evm

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/stakeflow/stakeflow/lease"
	"github.com/stakeflow/stakeflow/workflows"
)

// hashTagger tags a value with a hash of it, standing in for the keyset's tagger.
type hashTagger struct{}

func (hashTagger) Tag(v string) (string, bool) {
	sum := sha256.Sum256([]byte(v))
	return "h:" + hex.EncodeToString(sum[:8]), true
}

// Under a tagger (payloads encrypted) the address's nonce lease, whose workflow ID the server
// shows in clear, is named by the address's tag: the operation asks for it and gives it back
// under that ID.
func TestLeaseUnderATaggerIsNamedByTheTag(t *testing.T) {
	c := &evmChain{}
	env := newLeaseEnv(t, c, time.Minute, lease.Grant{Nonce: 7})
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{
		workflows.TaggerInterceptor(hashTagger{}).(interceptor.WorkerInterceptor)}})
	tag, _ := hashTagger{}.Tag(addr)
	tagged := "nonce-lease/evm/dev/" + tag
	var releasedTo []string
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", lease.SignalRelease, mock.Anything).
		Return(func(_, id, _, _ string, _ any) error {
			releasedTo = append(releasedTo, id)
			return nil
		})
	env.ExecuteWorkflow(leaseWorkflow, leaseInput{Steps: []string{"approve"}, Options: workflows.Options{ConfirmPollInterval: 3 * time.Second}})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, c.requests, 1)
	assert.Equal(t, tagged, c.requests[0].Lease)
	assert.Equal(t, []string{tagged}, releasedTo)
	assert.NotContains(t, tagged, addr[2:])
}
