package starter

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enums "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/internal/cli"
)

// A failure the worker sealed (its message and its cause's in encrypted payloads) is shown by the
// starter as it was raised, read with the same keyset.
func TestSealedFailureIsOpenedWithTheKeyset(t *testing.T) {
	keyset := writeKeyset(t, searchKey)
	ks, err := codec.LoadKeyset(keyset)
	require.NoError(t, err)
	cause := errors.New("balance of " + staker + " too low")
	f := codec.FailureConverter(codec.DataConverter(codec.New(ks))).ErrorToFailure(fmt.Errorf("preflight: %w", cause))
	require.Equal(t, "Encoded failure", f.GetMessage(), "sealed as the worker writes it")

	desc := &workflowservice.DescribeWorkflowExecutionResponse{PendingActivities: []*workflowpb.PendingActivityInfo{
		{ActivityType: &commonpb.ActivityType{Name: "Preflight"}, Attempt: 2, State: enums.PENDING_ACTIVITY_STATE_SCHEDULED, LastFailure: f},
	}}
	r := &Session{temporal: cli.Temporal{PayloadKeyset: keyset}}
	dc, err := r.dataConverter()
	require.NoError(t, err)
	assert.Equal(t, "preflight: balance of "+staker+" too low", retries(desc, dc)[0].LastFailure)

	// Without the keyset the placeholder stays: nothing else can be read.
	g := codec.FailureConverter(codec.DataConverter(codec.New(ks))).ErrorToFailure(cause)
	(&Session{}).openFailure(g)
	assert.Equal(t, "Encoded failure", g.GetMessage())
}
