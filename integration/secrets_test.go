//go:build integration

package integration

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
)

// TestZZNoSecretInHistoriesOrLogs runs last (files and tests run in name order): it scans every
// workflow history the run produced and every log line for the staker keys in all their forms
// and for the service token. None may appear.
func TestZZNoSecretInHistoriesOrLogs(t *testing.T) {
	ctx := context.Background()
	secrets := map[string]string{}
	token, err := os.ReadFile(st.TokenFile)
	require.NoError(t, err)
	secrets["service token"] = strings.TrimSpace(string(token))
	files, err := filepath.Glob(filepath.Join(st.KeyDir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var ints []byte
		var arr []int
		require.NoError(t, json.Unmarshal(raw, &arr))
		for _, v := range arr {
			ints = append(ints, byte(v))
		}
		key := solana.PrivateKey(ints)
		name := key.PublicKey().String()
		secrets[name+" key base58"] = key.String()
		secrets[name+" seed base58"] = solana.PrivateKey(ints[:32]).String()[:40]
		secrets[name+" key hex"] = hex.EncodeToString(ints)
		secrets[name+" seed hex"] = hex.EncodeToString(ints[:32])
		secrets[name+" json array"] = strings.TrimSpace(string(raw))[:40]
		compact, _ := json.Marshal(arr)
		secrets[name+" json array compact"] = string(compact)[:40]
	}

	var corpus strings.Builder
	corpus.WriteString(logs.String())
	resp, err := st.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 1000})
	require.NoError(t, err)
	require.NotEmpty(t, resp.GetExecutions())
	for _, e := range resp.GetExecutions() {
		raw, err := exportHistory(ctx, e.GetExecution().GetWorkflowId())
		require.NoError(t, err)
		corpus.Write(raw)
	}
	text := corpus.String()
	require.Contains(t, text, st.Stakers[0].String(), "the scan must see the operations (public addresses are expected)")
	for what, s := range secrets {
		require.NotContains(t, text, s, "%s leaked into a workflow history or a log line", what)
	}
}
