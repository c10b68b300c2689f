package chaos

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestWhereItStandsAsksNoMoreOnceItsBudgetIsSpent: once the status queries of the operations
// left running have taken statusBudget, the rest are not asked (the runner has no client here:
// asking would panic), so that the report is written in time.
func TestWhereItStandsAsksNoMoreOnceItsBudgetIsSpent(t *testing.T) {
	r := &runner{}
	r.statusOnce.Do(func() { r.statusBy = time.Now().Add(-time.Millisecond) })
	assert.Equal(t, "(its status was not asked: the status queries of the operations left running had taken 1m0s)", r.whereItStands("op-1"))
}
