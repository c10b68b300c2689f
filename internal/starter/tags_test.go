package starter

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/stakeflow/stakeflow/approval"
	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/workflows"
)

var searchKey = bytes.Repeat([]byte{0x33}, codec.SearchKeySize)

// tagOf is a search tag computed with crypto/hmac alone, as docs/encryption.md describes it.
func tagOf(v string) string {
	m := hmac.New(sha256.New, searchKey)
	m.Write([]byte(v))
	return "h:" + hex.EncodeToString(m.Sum(nil))[:32]
}

// writeKeyset writes a 0600 keyset file, with searchKey when search is set.
func writeKeyset(t *testing.T, search []byte) string {
	t.Helper()
	f := codec.KeysetFile{Current: "k1", Keys: []codec.Key{{ID: "k1", Key: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, codec.KeySize))}}}
	if search != nil {
		f.SearchKey = base64.StdEncoding.EncodeToString(search)
	}
	b, err := json.Marshal(f)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "keyset.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func startAttrs(o client.StartWorkflowOptions) map[string]any {
	got := map[string]any{}
	for k, v := range o.TypedSearchAttributes.GetUntypedValues() {
		got[k.GetName()] = v
	}
	return got
}

// Under a keyset the start carries the staker's tag, no amount, and the clear operation and step;
// the signed start statement (in the memo, a payload) still names the staker itself.
func TestStartUnderAKeysetCarriesTags(t *testing.T) {
	statementClock = func() time.Time { return time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC) }
	t.Cleanup(func() { statementClock = time.Now })
	serveAgent(t, seedKey(9))
	c := &startClient{}
	err := Run(context.Background(), []string{"stake", "--network", "testnet", "--staker", staker, "--sol", "1", "--id", "stake-t",
		"--ssh-agent", "--payload-keyset", writeKeyset(t, searchKey)}, &bytes.Buffer{},
		func(cli.Temporal) (client.Client, error) { return c, nil })
	require.NoError(t, err)
	require.Len(t, c.started, 1)
	assert.Equal(t, map[string]any{
		"StakeflowChain": "solana", "StakeflowNetwork": "testnet", "StakeflowOperation": "stake",
		"StakeflowStaker": tagOf(staker), "StakeflowStep": workflows.StepValidating,
	}, startAttrs(c.started[0]))
	signed, ok := c.started[0].Memo[workflows.MemoStart].(approval.Signed)
	require.True(t, ok)
	assert.Contains(t, signed.Statement, "staker: "+staker+"\n")
}

// A rewards job's schedule, whose suggested ID names its address, names the address's tag.
func TestRewardsScheduleUnderAKeysetNamesTheTag(t *testing.T) {
	rec := &scheduleRecorder{schedules: &schedules{}}
	require.NoError(t, Run(context.Background(), []string{"schedule", "create", "--every", "1h", "--job", "rewards", "--network", "ethereum",
		"--address", delegator, "--payload-keyset", writeKeyset(t, searchKey)}, &bytes.Buffer{},
		func(cli.Temporal) (client.Client, error) { return rec, nil }))
	require.Len(t, rec.schedules.created, 1)
	o := rec.schedules.created[0]
	assert.Equal(t, "job-rewards-ethereum-"+tagOf(delegator), o.ID)
	a, ok := o.Action.(*client.ScheduleWorkflowAction)
	require.True(t, ok)
	staker, _ := a.TypedSearchAttributes.GetKeyword(workflows.SAStaker)
	assert.Equal(t, tagOf(delegator), staker)
}

// listClient records the visibility queries sent through it.
type listClient struct {
	client.Client
	queries []string
}

func (l *listClient) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	l.queries = append(l.queries, req.GetQuery())
	return &workflowservice.ListWorkflowExecutionsResponse{}, nil
}

func (l *listClient) Close() {}

func TestListSearchesTheTagUnderAKeyset(t *testing.T) {
	const sig = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
	keyset := writeKeyset(t, searchKey)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--staker", staker}, "StakeflowStaker = '" + tagOf(staker) + "'"},
		{[]string{"--account", staker}, "StakeflowStakeAccount = '" + tagOf(staker) + "'"},
		{[]string{"--tx", sig}, "StakeflowSignatures = '" + tagOf(sig) + "'"},
		// An EVM address in upper case finds what its lower-case form was tagged as.
		{[]string{"--staker", "0x" + strings.ToUpper(delegator[2:])}, "StakeflowStaker = '" + tagOf(delegator) + "'"},
	} {
		lc := &listClient{}
		err := Run(context.Background(), append([]string{"list", "--payload-keyset", keyset}, c.args...), &bytes.Buffer{},
			func(cli.Temporal) (client.Client, error) { return lc, nil })
		require.NoError(t, err)
		require.Len(t, lc.queries, 1)
		assert.Contains(t, lc.queries[0], c.want)
		assert.NotContains(t, lc.queries[0], c.args[1], "the value itself is never sent")
	}
	// Without a keyset the value itself is searched.
	lc := &listClient{}
	require.NoError(t, Run(context.Background(), []string{"list", "--staker", staker}, &bytes.Buffer{},
		func(cli.Temporal) (client.Client, error) { return lc, nil }))
	assert.Contains(t, lc.queries[0], "StakeflowStaker = '"+staker+"'")
}

func TestTagPrintsEachValuesTag(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, Run(context.Background(), []string{"tag", "--payload-keyset", writeKeyset(t, searchKey), staker, delegator}, &out, nil))
	assert.Equal(t, tagOf(staker)+"  "+staker+"\n"+tagOf(delegator)+"  "+delegator+"\n", out.String())
}

func TestTagAndSearchRefusedWithoutASearchKey(t *testing.T) {
	noSearch := writeKeyset(t, nil)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tag", staker}, "tag: give --payload-keyset"},
		{[]string{"tag", "--payload-keyset", noSearch}, "tag: give the values"},
		{[]string{"tag", "--payload-keyset", noSearch, staker}, "has no searchKey"},
		{[]string{"tag", "--payload-keyset", writeKeyset(t, searchKey), staker, "--json"}, `"--json": flags go before the values`},
		{[]string{"list", "--payload-keyset", noSearch, "--staker", staker}, "list --staker: the keyset " + noSearch + " has no searchKey"},
	} {
		err := Run(context.Background(), c.args, &bytes.Buffer{}, func(cli.Temporal) (client.Client, error) {
			t.Fatalf("%v dialled Temporal", c.args)
			return nil, nil
		})
		require.ErrorContains(t, err, c.want, "%v", c.args)
	}
}

// A new keyset holds a search key, never printed, and rotating the payload key keeps it: every
// tag written before the rotation stays findable.
func TestKeysetKeepsItsSearchKeyAcrossRotation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keyset.json")
	out, err := keyset(t, "new", "--id", "k1", "--out", file)
	require.NoError(t, err)
	search := readRaw(t, file).SearchKey
	raw, err := base64.StdEncoding.DecodeString(search)
	require.NoError(t, err)
	assert.Len(t, raw, codec.SearchKeySize)
	assert.NotContains(t, out, search)

	var before bytes.Buffer
	require.NoError(t, Run(context.Background(), []string{"tag", "--payload-keyset", file, staker}, &before, nil))
	_, err = keyset(t, "rotate", "--id", "k2", file)
	require.NoError(t, err)
	assert.Equal(t, search, readRaw(t, file).SearchKey)
	var after bytes.Buffer
	require.NoError(t, Run(context.Background(), []string{"tag", "--payload-keyset", file, staker}, &after, nil))
	assert.Equal(t, before.String(), after.String())
}
