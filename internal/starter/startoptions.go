package starter

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/workflows"
)

// StartOptions are the options every operation is started with: the operation ID as workflow ID,
// refused when that ID was ever used (also after the first run finished), the project's task
// queue, a one-line summary for the Web UI and the search attributes known at start (see
// wfsolana.StakeAttributes and wfsolana.UnstakeAttributes). StakeflowStep starts at validating
// unless attrs set it. Attributes set at start cost no upsert: the workflows send only what
// changes later.
func StartOptions(operationID, summary, taskQueue string, attrs ...temporal.SearchAttributeUpdate) client.StartWorkflowOptions {
	sa := temporal.NewSearchAttributes(attrs...)
	if !sa.ContainsKey(workflows.SAStep) {
		sa = temporal.NewSearchAttributes(append(attrs, workflows.SAStep.ValueSet(workflows.StepValidating))...)
	}
	return client.StartWorkflowOptions{
		ID:                       operationID,
		TaskQueue:                taskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		// Without this the client hands back the earlier run instead of refusing.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            summary,
		TypedSearchAttributes:                    sa,
	}
}
