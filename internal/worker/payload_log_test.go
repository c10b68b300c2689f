package worker

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/stakeflow/stakeflow/codec"
)

// The worker logs its search key's fingerprint as it starts (the one `starter keyset show`
// prints, so that an operator can tell whether the starter and the worker tag alike), never the
// key; without a search key it warns instead.
func TestWorkerLogsItsSearchKeyFingerprint(t *testing.T) {
	f, err := codec.NewKeyFile("k1")
	require.NoError(t, err)
	search, err := base64.StdEncoding.DecodeString(f.SearchKey)
	require.NoError(t, err)
	write := func(f codec.KeysetFile) string {
		path := filepath.Join(t.TempDir(), "keyset.json")
		b, err := json.Marshal(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o600))
		return path
	}
	logged := func(keyset string) *observer.ObservedLogs {
		core, logs := observer.New(zapcore.InfoLevel)
		var cfg Config
		cfg.Temporal.PayloadKeyset = keyset
		logPayloadProtection(cfg, zap.New(core))
		return logs
	}

	logs := logged(write(f))
	entries := logs.FilterMessage("Search key").All()
	require.Len(t, entries, 1)
	assert.Equal(t, codec.SearchKeyFingerprint(search), entries[0].ContextMap()["fingerprint"])
	for _, e := range logs.All() {
		assert.NotContains(t, e.Message, f.SearchKey)
		for _, v := range e.ContextMap() {
			assert.NotContains(t, v, f.SearchKey)
		}
	}
	assert.Empty(t, logs.FilterMessageSnippet("has no searchKey").All())

	f.SearchKey = ""
	logs = logged(write(f))
	assert.Empty(t, logs.FilterMessage("Search key").All())
	assert.Len(t, logs.FilterMessageSnippet("The payload keyset has no searchKey").All(), 1)
}
