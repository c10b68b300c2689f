package replaytest

import (
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"
)

// Ceilings bound the history of every recorded run of each workflow type, in bytes: the sum of
// its events' encoded sizes (HistorySize), about what the server counts (HistorySizeBytes). Each
// is the largest recorded run of the type (`make record-histories`) with half as much again of
// headroom, so that a change that makes a workflow's history grow (a large value in a payload, a
// loop of activities) fails the replay test of its package the day its histories are recorded.
// Temporal warns at 10 MB of history and terminates the workflow at 50 MB; an EigenLayer
// checkpoint, the one operation whose work grows without bound, continues as new within
// eigenlayer.HistoryBudgetBytes, each run under 2 MB whatever the pod's size.
var Ceilings = map[string]int{
	"StakeWorkflow":                   40_000,
	"UnstakeWorkflow":                 45_000,
	"WithdrawWorkflow":                25_000,
	"PolygonDelegateWorkflow":         32_000,
	"PolygonUnstakeWorkflow":          42_000,
	"PolygonWithdrawRewardsWorkflow":  21_000,
	"CelestiaDelegateWorkflow":        30_000,
	"CelestiaRedelegateWorkflow":      22_000,
	"CelestiaUndelegateWorkflow":      26_000,
	"CelestiaWithdrawRewardsWorkflow": 21_000,
	"HyperliquidWithdrawWorkflow":     25_000,
	"TONWatchWorkflow":                9_000,
	"APYJobWorkflow":                  7_000,
	"RewardsJobWorkflow":              4_000,
	"SSVJobWorkflow":                  4_000,
	"NonceLeaseWorkflow":              13_000,
	"EigenLayerCheckpointWorkflow":    65_000,
}

// HistorySize is the sum of h's events' encoded sizes, in bytes.
func HistorySize(h *historypb.History) int {
	n := 0
	for _, ev := range h.GetEvents() {
		n += proto.Size(ev)
	}
	return n
}
