package starter

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/stakeflow/stakeflow/approval"
	"github.com/stakeflow/stakeflow/approval/approvaltest"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/workflows"
)

func seedKey(b byte) ed25519.PrivateKey {
	seed := bytes.Repeat([]byte{b}, ed25519.SeedSize)
	return ed25519.NewKeyFromSeed(seed)
}

// writeKey writes k as an OpenSSH private key file with mode perm; passphrase encrypts it.
func writeKey(t *testing.T, k any, perm os.FileMode, passphrase string) string {
	t.Helper()
	var block *pem.Block
	var err error
	if passphrase != "" {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(k, "test", []byte(passphrase))
	} else {
		block, err = ssh.MarshalPrivateKey(k, "test")
	}
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "id")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(block), perm))
	require.NoError(t, os.Chmod(path, perm))
	return path
}

func TestKeyFileIsReadOnlyWhenPrivateAndEd25519(t *testing.T) {
	k := seedKey(7)
	sg, err := readKeyFile("key", writeKey(t, k, 0o600, ""))
	require.NoError(t, err)
	assert.Equal(t, k.Public(), sg.Public())
	sig, err := sg.Sign("text")
	require.NoError(t, err)
	assert.True(t, ed25519.Verify(k.Public().(ed25519.PublicKey), []byte("text"), sig))

	for _, c := range []struct {
		name string
		path func() string
		want string
	}{
		{"group readable", func() string { return writeKey(t, k, 0o640, "") }, "has mode 0640: the group or others may use it"},
		{"world readable", func() string { return writeKey(t, k, 0o604, "") }, "has mode 0604"},
		{"encrypted", func() string { return writeKey(t, k, 0o600, "secret") }, "the key is encrypted: add it to your SSH agent (ssh-add) and use --ssh-agent"},
		{"not a key", func() string {
			p := filepath.Join(t.TempDir(), "id")
			require.NoError(t, os.WriteFile(p, []byte("hello"), 0o600))
			return p
		}, "not an OpenSSH private key file"},
		{"missing", func() string { return filepath.Join(t.TempDir(), "none") }, "no such file"},
	} {
		_, err := readKeyFile("sign-key", c.path())
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
		assert.True(t, strings.HasPrefix(err.Error(), "--sign-key"), "%s: the error names the flag the file came from: %v", c.name, err)
	}
}

// serveAgent serves an in-process SSH agent holding keys.
func serveAgent(t *testing.T, keys ...any) {
	t.Helper()
	var added []agent.AddedKey
	for _, k := range keys {
		added = append(added, agent.AddedKey{PrivateKey: k})
	}
	approvaltest.ServeAgent(t, added...)
}

func fp(k ed25519.PrivateKey) string { return approval.Fingerprint(k.Public().(ed25519.PublicKey)) }

func TestAgentSignsWithItsEd25519Key(t *testing.T) {
	bob, carol := seedKey(1), seedKey(2)
	serveAgent(t, bob, carol)
	s := signing{sshAgent: true}
	_, _, err := s.signer("key")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the agent holds 2 ed25519 keys")
	assert.Contains(t, err.Error(), "pick one with --key-fingerprint")

	s.fingerprint = fp(carol)
	sg, done, err := s.signer("key")
	require.NoError(t, err)
	defer done()
	assert.Equal(t, carol.Public(), sg.Public())
	text := approval.Statement{OperationID: "op", Decision: approval.Approve, Intent: strings.Repeat("a", 64), At: time.Unix(0, 0)}.Text()
	signed, err := signStatement(sg, text)
	require.NoError(t, err)
	// The agent's signature is plain Ed25519 over the statement's bytes.
	sig, err := base64.StdEncoding.DecodeString(signed.Signature)
	require.NoError(t, err)
	assert.True(t, ed25519.Verify(carol.Public().(ed25519.PublicKey), []byte(text), sig))
	assert.Equal(t, ed25519.Sign(carol, []byte(text)), sig, "Ed25519 is deterministic: the same bytes as a key file's")

	s.fingerprint = fp(seedKey(3))
	_, _, err = s.signer("key")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the agent holds no ed25519 key "+fp(seedKey(3)))
}

func TestAgentWithoutASocketIsNamed(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	_, _, err := (&signing{sshAgent: true}).signer("key")
	require.EqualError(t, err, "--ssh-agent: SSH_AUTH_SOCK is not set (start ssh-agent and ssh-add your key)")
}

// decideClient is a Temporal client serving one operation's status and recording the decisions
// sent; statuses are answered in order, the last repeating.
type decideClient struct {
	client.Client
	statuses []workflows.Status
	queries  int
	sent     []workflows.ApprovalInput
	updates  []string
}

func (c *decideClient) QueryWorkflow(_ context.Context, _, _ string, _ string, _ ...any) (converter.EncodedValue, error) {
	st := c.statuses[min(c.queries, len(c.statuses)-1)]
	c.queries++
	p, err := converter.GetDefaultDataConverter().ToPayloads(st)
	if err != nil {
		return nil, err
	}
	return encoded{p}, nil
}

type encoded struct{ p *commonpb.Payloads }

func (e encoded) HasValue() bool  { return true }
func (e encoded) Get(v any) error { return converter.GetDefaultDataConverter().FromPayloads(e.p, v) }

func (c *decideClient) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	in := o.Args[0].(workflows.ApprovalInput)
	c.sent = append(c.sent, in)
	c.updates = append(c.updates, o.UpdateName)
	st := c.statuses[len(c.statuses)-1]
	st.Approval.Decisions = append(st.Approval.Decisions, workflows.ApprovalRecord{Approver: "bob", Decision: workflows.DecisionApproved})
	return updateHandle{st: st}, nil
}

func (c *decideClient) Close() {}

type updateHandle struct {
	client.WorkflowUpdateHandle
	st workflows.Status
}

func (h updateHandle) Get(_ context.Context, v any) error {
	*(v.(*workflows.Status)) = h.st
	return nil
}

func TestApproveSignsTheStatusIntentAfterThePolicyAnswered(t *testing.T) {
	bob := seedKey(1)
	at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	statementClock = func() time.Time { return at.Add(300 * time.Millisecond) }
	policyPoll = time.Millisecond
	t.Cleanup(func() { statementClock, policyPoll = time.Now, 500*time.Millisecond })
	digest := strings.Repeat("3c", 32)
	waiting := workflows.Status{OperationID: "stake-1", Chain: "solana", Network: "testnet", Operation: "stake", Staker: "S",
		Amount: "2000000000", Unit: "lamports", RequestedBy: "alice", IntentDigest: digest, Step: workflows.StepValidating}
	ready := waiting
	ready.Step, ready.Approval = workflows.StepAwaitingApproval, workflows.Approval{Required: true, Mode: workflows.ModeSigned, ApprovalsRequired: 2}
	c := &decideClient{statuses: []workflows.Status{waiting, waiting, ready}}
	var out bytes.Buffer
	err := Run(context.Background(), []string{"approve", "--id", "stake-1", "--key", writeKey(t, bob, 0o600, ""), "--reason", "ok"}, &out,
		func(cli.Temporal) (client.Client, error) { return c, nil })
	require.NoError(t, err)
	assert.Equal(t, 3, c.queries, "waited until the policy answered")
	require.Len(t, c.sent, 1)
	in := c.sent[0]
	assert.Equal(t, workflows.UpdateApprove, c.updates[0])
	assert.Equal(t, "ok", in.Reason)
	assert.Empty(t, in.Approver, "a signed decision is named by its key")
	assert.Equal(t, "stakeflow approval v1\noperation: stake-1\ndecision: approve\nintent: "+digest+"\nat: 2026-12-02T12:00:00Z\n", in.Statement)
	pub, err := approval.Signed{Statement: in.Statement, PublicKey: in.PublicKey, Signature: in.Signature}.Verify()
	require.NoError(t, err)
	assert.Equal(t, []byte(bob.Public().(ed25519.PublicKey)), pub)
	assert.Contains(t, out.String(), "approve stake-1: solana stake on testnet")
	assert.Contains(t, out.String(), "intent:      "+digest)
	assert.Contains(t, out.String(), "signed with: "+fp(bob))
	assert.Contains(t, out.String(), "1 of 2 approvals")
}

func TestDecisionsOfTheWrongModeAreRefusedBeforeSending(t *testing.T) {
	policyPoll = time.Millisecond
	t.Cleanup(func() { policyPoll = 500 * time.Millisecond })
	named := workflows.Status{OperationID: "op", Step: workflows.StepAwaitingApproval, Approval: workflows.Approval{Mode: workflows.ModeNamed}}
	signed := workflows.Status{OperationID: "op", Step: workflows.StepAwaitingApproval, Approval: workflows.Approval{Mode: workflows.ModeSigned}}
	for _, c := range []struct {
		st   workflows.Status
		args []string
		want string
	}{
		{named, []string{"reject", "--id", "op", "--key", writeKey(t, seedKey(1), 0o600, "")}, "the worker has no approvers configured (named mode): decide with --approver NAME"},
		{signed, []string{"approve", "--id", "op", "--approver", "bob"}, "the worker takes only signed decisions: give --key FILE or --ssh-agent"},
	} {
		dc := &decideClient{statuses: []workflows.Status{c.st}}
		err := Run(context.Background(), c.args, &bytes.Buffer{}, func(cli.Temporal) (client.Client, error) { return dc, nil })
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
		assert.Empty(t, dc.sent)
	}
}

// startClient records the starts sent through it.
type startClient struct {
	client.Client
	started []client.StartWorkflowOptions
}

func (s *startClient) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	s.started = append(s.started, o)
	return startedRun{id: o.ID}, nil
}

func (s *startClient) DescribeTaskQueue(context.Context, string, enums.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	return &workflowservice.DescribeTaskQueueResponse{}, nil
}

func (s *startClient) Close() {}

type startedRun struct {
	client.WorkflowRun
	id string
}

func (r startedRun) GetID() string    { return r.id }
func (r startedRun) GetRunID() string { return "run-1" }

func TestASignedStartCarriesItsStatementInTheMemo(t *testing.T) {
	alice := seedKey(9)
	statementClock = func() time.Time { return time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC) }
	t.Cleanup(func() { statementClock = time.Now })
	serveAgent(t, alice)
	c := &startClient{}
	var out bytes.Buffer
	err := Run(context.Background(), []string{"stake", "--network", "testnet", "--staker", staker, "--sol", "1", "--id", "stake-9", "--ssh-agent"}, &out,
		func(cli.Temporal) (client.Client, error) { return c, nil })
	require.NoError(t, err)
	require.Len(t, c.started, 1)
	signed, ok := c.started[0].Memo[workflows.MemoStart].(approval.Signed)
	require.True(t, ok, "memo %v", c.started[0].Memo)
	assert.Equal(t, "stakeflow start v1\noperation: stake-9\nchain: solana\nkind: stake\nstaker: "+staker+"\nat: 2026-12-02T12:00:00Z\n", signed.Statement)
	pub, err := signed.Verify()
	require.NoError(t, err)
	assert.Equal(t, []byte(alice.Public().(ed25519.PublicKey)), pub)
	assert.Contains(t, out.String(), "start signed with: "+fp(alice))
}
