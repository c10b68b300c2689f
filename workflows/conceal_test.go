package workflows

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/temporal"
)

// prefixTagger tags v as "t(" + v + ")"; with none set, it tags nothing (a keyset without a
// search key).
type prefixTagger struct{ none bool }

func (p prefixTagger) Tag(v string) (string, bool) {
	if p.none {
		return "", false
	}
	if v == "" {
		return "", true
	}
	return "t(" + v + ")", true
}

func TestConceal(t *testing.T) {
	in := []temporal.SearchAttributeUpdate{
		SAChain.ValueSet("solana"), SAStaker.ValueSet("alice"), SAAmount.ValueSet(1500),
		SAStakeAccount.ValueSet("acct"), SASignatures.ValueSet([]string{"s1", "s2"}), SAStep.ValueSet(StepDone),
	}
	values := func(updates []temporal.SearchAttributeUpdate) map[string]any {
		out := map[string]any{}
		for k, v := range temporal.NewSearchAttributes(updates...).GetUntypedValues() {
			out[k.GetName()] = v
		}
		return out
	}
	assert.Equal(t, values(in), values(Conceal(nil, in...)), "no tagger: unchanged")
	assert.Equal(t, map[string]any{
		"StakeflowChain": "solana", "StakeflowStaker": "t(alice)", "StakeflowStakeAccount": "t(acct)",
		"StakeflowSignatures": []string{"t(s1)", "t(s2)"}, "StakeflowStep": StepDone,
	}, values(Conceal(prefixTagger{}, in...)))
	assert.Equal(t, map[string]any{"StakeflowChain": "solana", "StakeflowStep": StepDone},
		values(Conceal(prefixTagger{none: true}, in...)), "no search key: left out")
	assert.Equal(t, map[string]any{"StakeflowStaker": ""}, values(Conceal(prefixTagger{}, SAStaker.ValueSet(""))),
		"an empty staker names nobody")
	unset := Conceal(prefixTagger{}, SAStaker.ValueUnset(), SAAmount.ValueUnset())
	assert.Len(t, unset, 2, "unsets pass")
	assert.False(t, temporal.NewSearchAttributes(unset...).ContainsKey(SAStaker))
}
