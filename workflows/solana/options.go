package solana

import (
	"go.temporal.io/sdk/workflow"

	"github.com/stakeflow/stakeflow/workflows"
)

// StakeStepOptions are the options StakeWorkflow runs its activities with under the default
// Options, by activity name: CheckPolicy and Sign local, the others normal. The benchmark's
// same-shape ceiling runs no-op activities with exactly these.
func StakeStepOptions() (normal map[string]workflow.ActivityOptions, local map[string]workflow.LocalActivityOptions) {
	opts := workflows.Options{}.WithDefaults()
	normal = map[string]workflow.ActivityOptions{
		"CheckValidator": workflows.ValidatorOptions(),
		"Build":          workflows.BuildOptions(opts),
		"CheckFresh":     workflows.FreshOptions(),
		"Broadcast":      workflows.BroadcastOptions(opts),
		"Confirm":        workflows.ConfirmOptions(),
	}
	local = map[string]workflow.LocalActivityOptions{
		"CheckPolicy": workflows.PolicyOptions(),
		"Sign":        workflows.SignOptions(),
	}
	return normal, local
}
