package workflows

import (
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Tagger writes the confidential search attributes when payloads are encrypted. A payload codec
// cannot seal search attributes (the server indexes them), so with a Tagger StakeflowStaker,
// StakeflowStakeAccount and StakeflowSignatures hold a keyed tag of each value instead of the value,
// and StakeflowAmount is not written (see Conceal and docs/encryption.md). codec.Tagger is the
// one the worker and the starter use.
type Tagger interface {
	// Tag is the value indexed in place of v, the same for the same v; ok is false when v is to be
	// left out altogether.
	Tag(v string) (tag string, ok bool)
}

// taggerKey holds the client's Tagger in a workflow's context.
type taggerKey struct{}

// TaggerInterceptor hands workflow code the Tagger of the client that runs it, so operations
// write their confidential search attributes as that client's starter does. Set it in
// client.Options.Interceptors beside ConverterInterceptor (cli.Temporal.Encrypt does): the SDK
// applies it to every worker of the client. Without it workflow code writes them clear.
func TaggerInterceptor(t Tagger) interceptor.ClientInterceptor {
	return &taggerInterceptor{t: t}
}

type taggerInterceptor struct {
	interceptor.InterceptorBase
	t Tagger
}

func (c *taggerInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &taggerInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, t: c.t}
}

type taggerInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	t Tagger
}

func (c *taggerInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	return c.Next.ExecuteWorkflow(workflow.WithValue(ctx, taggerKey{}, c.t), in)
}

// versionConcealed marks the operations started under a Tagger. Only they conceal: an operation
// started clear, replayed by a worker that has since been given a keyset, keeps writing its
// attributes and naming its nonce lease as it did (the same commands, the same lease).
const versionConcealed = "conceal-attributes"

// operationTagger is the Tagger the operation of ctx writes under: the one TaggerInterceptor put in
// ctx when the operation started under it (versionConcealed), else nil (written clear).
func operationTagger(ctx workflow.Context) Tagger {
	t, _ := ctx.Value(taggerKey{}).(Tagger)
	if t == nil || workflow.GetVersion(ctx, versionConcealed, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	return t
}

// Conceal is updates as they are written under t: StakeflowStaker, StakeflowStakeAccount and each
// of StakeflowSignatures tagged (left out when t tags nothing), StakeflowAmount left out, every
// other attribute as it is. With t nil, updates unchanged. Unsets pass through.
func Conceal(t Tagger, updates ...temporal.SearchAttributeUpdate) []temporal.SearchAttributeUpdate {
	if t == nil {
		return updates
	}
	out := make([]temporal.SearchAttributeUpdate, 0, len(updates))
	for _, u := range updates {
		if c, ok := concealOne(t, u); ok {
			out = append(out, c)
		}
	}
	return out
}

// concealOne is u under t; ok is false when it is to be left out.
func concealOne(t Tagger, u temporal.SearchAttributeUpdate) (temporal.SearchAttributeUpdate, bool) {
	sa := temporal.NewSearchAttributes(u)
	for _, key := range []temporal.SearchAttributeKeyKeyword{SAStaker, SAStakeAccount} {
		if v, set := sa.GetKeyword(key); set {
			tag, ok := t.Tag(v)
			return key.ValueSet(tag), ok
		}
	}
	if vs, set := sa.GetKeywordList(SASignatures); set {
		tags := make([]string, 0, len(vs))
		for _, v := range vs {
			if tag, ok := t.Tag(v); ok {
				tags = append(tags, tag)
			}
		}
		return SASignatures.ValueSet(tags), len(tags) > 0
	}
	if _, set := sa.GetInt64(SAAmount); set {
		return nil, false
	}
	return u, true
}

// NameInID is v as an ID that workflow code makes may name it (a workflow ID is never encrypted):
// its tag when the operation of ctx writes under a Tagger (operationTagger), v itself otherwise. A
// Tagger with no search key cannot tag: v is then named as it is (docs/encryption.md). The tag is
// recorded in the history (a side effect): the operation keeps the name it chose when it replays on
// a worker given another search key, where the ID it signals must be the same.
func NameInID(ctx workflow.Context, v string) (string, error) {
	t := operationTagger(ctx)
	if t == nil {
		return v, nil
	}
	var name string
	err := workflow.SideEffect(ctx, func(workflow.Context) any {
		if tag, ok := t.Tag(v); ok {
			return tag
		}
		return v
	}).Get(&name)
	return name, err
}
