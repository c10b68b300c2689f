package replaytest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOperationOfEvent(t *testing.T) {
	for id, want := range map[string]string{
		"stake-7/completed":                      "stake-7",
		"stake-7/stalled/3":                      "stake-7",
		"schedule-x-2026-11-25T09:00:00Z/failed": "schedule-x-2026-11-25T09:00:00Z",
		"a/completed/b/awaiting-approval":        "a/completed/b",
	} {
		got, ok := OperationOfEvent(id)
		assert.True(t, ok, id)
		assert.Equal(t, want, got, id)
	}
	for _, id := range []string{"stake-7", "stake-7/completedx", "stake-7/stalled/x", "/completed"} {
		_, ok := OperationOfEvent(id)
		assert.False(t, ok, id)
	}
}
