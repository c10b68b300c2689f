package workflows

import (
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// converterKey holds the client's data converter in a workflow's context.
type converterKey struct{}

// ConverterInterceptor hands workflow code the data converter of the client that runs it, so a
// memo field (written by the starter through the same converter, payload codec included) is read
// as it was written. Set it in client.Options.Interceptors beside that client's DataConverter: the
// SDK applies it to every worker of the client. Without it workflow code reads memos with the
// SDK's default converter.
func ConverterInterceptor(dc converter.DataConverter) interceptor.ClientInterceptor {
	return &converterInterceptor{dc: dc}
}

type converterInterceptor struct {
	interceptor.InterceptorBase
	dc converter.DataConverter
}

func (c *converterInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &converterInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, dc: c.dc}
}

type converterInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	dc converter.DataConverter
}

func (c *converterInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	return c.Next.ExecuteWorkflow(workflow.WithValue(ctx, converterKey{}, c.dc), in)
}

// dataConverter is the converter ConverterInterceptor put in ctx, or the SDK's default.
func dataConverter(ctx workflow.Context) converter.DataConverter {
	if dc, ok := ctx.Value(converterKey{}).(converter.DataConverter); ok {
		return dc
	}
	return converter.GetDefaultDataConverter()
}
