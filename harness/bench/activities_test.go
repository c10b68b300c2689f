package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	actel "github.com/stakeflow/stakeflow/activities/eigenlayer"
	actevm "github.com/stakeflow/stakeflow/activities/evm"
	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
	"github.com/stakeflow/stakeflow/internal/module"
)

// A bare side finds its activities by type, wherever the module lists them, and a module that
// built none of that type is named in the error.
func TestActivitiesOfFindsByType(t *testing.T) {
	evm, el := &actevm.Activities{}, &actel.Activities{}
	b := module.Built{Activities: []any{el, evm}}
	gotEVM, err := activitiesOf[*actevm.Activities](b)
	require.NoError(t, err)
	assert.Same(t, evm, gotEVM)
	gotEL, err := activitiesOf[*actel.Activities](b)
	require.NoError(t, err)
	assert.Same(t, el, gotEL)
	_, err = activitiesOf[*acthl.Activities](b)
	assert.ErrorContains(t, err, "the module built no *hyperliquid.Activities")
}
