package polygon

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/workflows"
)

func TestRewardsInputIsValidated(t *testing.T) {
	e := newEnv(t)
	e.ExecuteWorkflow(RestakeWorkflowType, RewardsInput{Network: network, Staker: staker, ValidatorShare: staker})
	require.ErrorContains(t, e.GetWorkflowError(), "invalid validatorShare")
	assert.Zero(t, e.leases)
	assert.NoError(t, RewardsInput{Network: network, Staker: staker, ValidatorShare: share}.Validate())
	assert.Error(t, RewardsInput{Network: network, Staker: staker, ValidatorShare: share, Options: workflows.Options{MaxBuilds: 11}}.Validate())
}

func fieldOf(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var ie *workflows.InputError
	require.True(t, errors.As(err, &ie), "want an InputError, got %v", err)
	return ie.Field
}

func TestDelegateInputFields(t *testing.T) {
	bare := strings.TrimPrefix(share, "0x")
	tests := []struct {
		name  string
		edit  func(*DelegateInput)
		field string
	}{
		{"valid", func(*DelegateInput) {}, ""},
		{"staker missing", func(in *DelegateInput) { in.Staker = "" }, "staker"},
		{"share without 0x", func(in *DelegateInput) { in.ValidatorShare = bare }, "validatorShare"},
		{"share the zero address", func(in *DelegateInput) { in.ValidatorShare = "0x0000000000000000000000000000000000000000" }, "validatorShare"},
		{"share is the staker in other case", func(in *DelegateInput) {
			in.Staker = "0xabcdefabcdefabcdefabcdefabcdefabcdefabcd"
			in.ValidatorShare = "0xABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCD"
		}, "validatorShare"},
		{"amount missing", func(in *DelegateInput) { in.Amount = "" }, "amount"},
		{"amount with +", func(in *DelegateInput) { in.Amount = "+5" }, "amount"},
		{"amount zero", func(in *DelegateInput) { in.Amount = "0" }, "amount"},
		{"amount negative", func(in *DelegateInput) { in.Amount = "-1" }, "amount"},
		{"amount 1 wei", func(in *DelegateInput) { in.Amount = "1" }, ""},
		{"amount 2^256-1", func(in *DelegateInput) {
			in.Amount = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)).String()
		}, ""},
		{"amount 2^256", func(in *DelegateInput) { in.Amount = new(big.Int).Lsh(big.NewInt(1), 256).String() }, "amount"},
		{"options", func(in *DelegateInput) { in.Options.MaxBuilds = -1 }, "options.maxBuilds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := delegateInput()
			tt.edit(&in)
			assert.Equal(t, tt.field, fieldOf(t, in.Validate()))
		})
	}
}

func TestFormatPOLOfWhatIsNoAmount(t *testing.T) {
	assert.Equal(t, "0 POL", FormatPOL("0"))
	assert.Equal(t, "-1 wei", FormatPOL("-1"))
	assert.Equal(t, "lots wei", FormatPOL("lots"))
}

func TestSummaries(t *testing.T) {
	assert.Equal(t, "delegate 1.5 POL from "+staker+" to validator share "+share+" (dev)",
		Summary(OpDelegate, network, staker, share, "1500000000000000000"))
	assert.Equal(t, "unstake 2 POL from validator share "+share+", wait for the withdrawal delay, claim to "+staker+" (dev)",
		Summary(OpUnstake, network, staker, share, polWei(2)))
	assert.Equal(t, "withdraw "+staker+"'s rewards from validator share "+share+" (dev)", Summary(OpWithdrawRewards, network, staker, share, ""))
	assert.Equal(t, "restake "+staker+"'s rewards with validator share "+share+" (dev)", Summary(OpRestake, network, staker, share, ""))
	assert.Equal(t, "mystery", Summary("mystery", network, staker, share, ""))
	attrs := temporal.NewSearchAttributes(Attributes(OpRestake, network, staker)...)
	v, _ := attrs.GetKeyword(workflows.SAChain)
	assert.Equal(t, Chain, v)
	v, _ = attrs.GetKeyword(workflows.SAOperation)
	assert.Equal(t, OpRestake, v)
}
