package hyperliquid

import (
	"strconv"

	acthl "github.com/stakeflow/stakeflow/activities/hyperliquid"
)

func weiOf(amount string) (uint64, error) { return acthl.WeiOf(amount) }

func parseUint(s string) (uint64, bool) {
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}
