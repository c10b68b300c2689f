//go:build integration

package integration

import (
	"context"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/stakeflow/stakeflow/approval"
	"github.com/stakeflow/stakeflow/approval/approvaltest"
	"github.com/stakeflow/stakeflow/internal/module"
	"github.com/stakeflow/stakeflow/internal/worker"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
	"github.com/stakeflow/stakeflow/workflows"
)

// The approvers of the signed-approvals worker, their keys derived from fixed labels so that the
// secrets scan knows them too (approverKeys).
const (
	signedStakerOne = 26 // a single approval (60 SOL)
	signedStakerTwo = 27 // two approvals (75 SOL, above the signed worker's dual threshold)
	signedPrefix    = "stakeflow-signed"
	dualThreshold   = 70 * sol
)

// approverKey is the Ed25519 key of name in these tests: the approvers bob and carol, and
// mallory whom the worker does not know.
func approverKey(name string) ed25519.PrivateKey {
	seed := sha512.Sum512([]byte("stakeflow integration approver key: " + name))
	return ed25519.NewKeyFromSeed(seed[:ed25519.SeedSize])
}

// approverKeys are every private key the approval tests sign with, by name.
func approverKeys() map[string]ed25519.PrivateKey {
	out := map[string]ed25519.PrivateKey{}
	for _, n := range []string{"bob", "carol", "mallory"} {
		out[n] = approverKey(n)
	}
	return out
}

// keyFile writes name's key as an unencrypted OpenSSH private key file (mode 0600).
func keyFile(t *testing.T, dir, name string) string {
	t.Helper()
	block, err := ssh.MarshalPrivateKey(approverKey(name), name+"@stakeflow-it")
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(block), 0o600))
	return path
}

func authorizedLine(t *testing.T, name string) string {
	t.Helper()
	pk, err := ssh.NewPublicKey(approverKey(name).Public())
	require.NoError(t, err)
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + " " + name + "@laptop"
}

func keyFingerprint(t *testing.T, name string) string {
	t.Helper()
	pk, err := ssh.NewPublicKey(approverKey(name).Public())
	require.NoError(t, err)
	return ssh.FingerprintSHA256(pk)
}

// signedWorker runs a worker configured with approvers bob and carol on its own task queues
// (signedPrefix), its Solana module asking two approvals from dualThreshold; it logs into the
// package's logs, which the secrets scan reads.
func signedWorker(t *testing.T, dir string) {
	t.Helper()
	file := filepath.Join(dir, "approvers")
	require.NoError(t, os.WriteFile(file, []byte("# the treasury's approvers\n"+
		"bob "+authorizedLine(t, "bob")+"\ncarol "+authorizedLine(t, "carol")+"\n"), 0o644))
	cfg := st.WorkerConfig()
	cfg.Temporal.TaskQueuePrefix = signedPrefix
	cfg.ApproversFile = file
	sol, ok := module.Find[*solanamod.Module](cfg.Modules)
	require.True(t, ok)
	sol.DualApprovalThreshold = dualThreshold
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg.HealthListener, cfg.HealthAddr = ln, ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- worker.Run(ctx, cfg, zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), logs, zapcore.DebugLevel)).Named("signed-worker"))
	}()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

// serveAgent serves an in-process SSH agent holding the keys of names, as an approver's
// ssh-agent would.
func serveAgent(t *testing.T, names ...string) {
	t.Helper()
	var keys []agent.AddedKey
	for _, n := range names {
		keys = append(keys, agent.AddedKey{PrivateKey: approverKey(n), Comment: n})
	}
	approvaltest.ServeAgent(t, keys...)
}

// signedRun runs the admin tool against the signed worker's queues.
func signedRun(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return starterRun(t, append(args, "--task-queue-prefix", signedPrefix)...)
}

// sendDecision sends a decision straight through Temporal, as someone bypassing the admin tool
// would; it returns the refusal, if any.
func sendDecision(t *testing.T, id, update string, in workflows.ApprovalInput) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := st.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: update, Args: []any{in},
		WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return err
	}
	var s workflows.Status
	return h.Get(ctx, &s)
}

// signedBy is a decision on st signed with name's key; edit changes the statement first.
func signedBy(name string, s approval.Statement) workflows.ApprovalInput {
	sg := approval.Sign(approverKey(name), s.Text())
	return workflows.ApprovalInput{Statement: sg.Statement, PublicKey: sg.PublicKey, Signature: sg.Signature}
}

// TestSignedApprovals runs operations on a worker configured with approvers, every decision
// through the admin tool with a key file or an SSH agent, and the forgeries straight through
// Temporal: the initiator's signed key, an unknown key, a free-text name, a forged signature and
// statements replayed from another operation, the other decision and an old intent digest are
// refused; one key approving twice counts once; dual approval passes only with two keys.
func TestSignedApprovals(t *testing.T) {
	dir := t.TempDir()
	signedWorker(t, dir)
	bob, carol, mallory := keyFile(t, dir, "bob"), keyFile(t, dir, "carol"), keyFile(t, dir, "mallory")

	// One approval: started by carol, an approver, with her key.
	one := st.Stakers[signedStakerOne]
	idOne := operationID(t, "stake-one")
	out, err := signedRun(t, "stake", "--network", "testnet", "--staker", one.String(), "--sol", "60", "--id", idOne,
		"--requested-by", "carol", "--sign-key", carol)
	require.NoError(t, err, out)
	require.Contains(t, out, "start signed with: "+keyFingerprint(t, "carol"))
	recordAs(idOne, "StakeWorkflow-signed-start-and-approval")
	waitStep(t, idOne, workflows.StepAwaitingApproval)
	status := queryStatus(t, idOne)
	require.Equal(t, workflows.ModeSigned, status.Approval.Mode)
	require.Equal(t, keyFingerprint(t, "carol"), status.InitiatorFingerprint)
	require.Len(t, status.IntentDigest, 64)

	// Two approvals.
	two := st.Stakers[signedStakerTwo]
	idTwo := operationID(t, "stake-two")
	out, err = signedRun(t, "stake", "--network", "testnet", "--staker", two.String(), "--sol", "75", "--id", idTwo, "--requested-by", "dan")
	require.NoError(t, err, out)
	recordAs(idTwo, "StakeWorkflow-signed-dual-approval")
	waitStep(t, idTwo, workflows.StepAwaitingApproval)
	statusTwo := queryStatus(t, idTwo)
	require.Equal(t, 2, statusTwo.Approval.ApprovalsRequired)

	// Refused through the admin tool: the initiator's key (carol is an approver, but her key
	// signed the start), an unknown key, a free-text name.
	_, err = signedRun(t, "approve", "--id", idOne, "--key", carol)
	require.ErrorContains(t, err, "key "+keyFingerprint(t, "carol")+" signed the start of this operation and cannot also approve or reject it")
	_, err = signedRun(t, "reject", "--id", idOne, "--key", carol)
	require.ErrorContains(t, err, "signed the start of this operation")
	_, err = signedRun(t, "approve", "--id", idOne, "--key", mallory)
	require.ErrorContains(t, err, "key "+keyFingerprint(t, "mallory")+" is not one of the worker's approvers")
	_, err = signedRun(t, "approve", "--id", idOne, "--approver", "bob")
	require.ErrorContains(t, err, "the worker takes only signed decisions")

	// Forged and replayed, straight through Temporal.
	now := time.Now().UTC().Truncate(time.Second)
	valid := approval.Statement{OperationID: idOne, Decision: approval.Approve, Intent: status.IntentDigest, At: now}
	forged := signedBy("bob", valid)
	forged.Statement = strings.Replace(forged.Statement, "decision: approve", "decision: reject", 1)
	err = sendDecision(t, idOne, workflows.UpdateReject, forged)
	require.ErrorContains(t, err, "the signature does not verify with key "+keyFingerprint(t, "bob"))
	otherOp := valid
	otherOp.OperationID, otherOp.Intent = idTwo, statusTwo.IntentDigest
	err = sendDecision(t, idOne, workflows.UpdateApprove, signedBy("bob", otherOp))
	require.ErrorContains(t, err, "the statement is for operation \""+idTwo+"\"")
	otherDecision := valid
	otherDecision.Decision = approval.Reject
	err = sendDecision(t, idOne, workflows.UpdateApprove, signedBy("bob", otherDecision))
	require.ErrorContains(t, err, "the statement says reject, but this update is approve")
	oldIntent := valid
	oldIntent.Intent = approval.Intent{OperationID: idOne, Chain: status.Chain, Network: status.Network, Operation: status.Operation,
		Staker: status.Staker, Amount: "50000000000", Unit: status.Unit, Validator: status.Validator, Account: status.Account}.Digest()
	err = sendDecision(t, idOne, workflows.UpdateApprove, signedBy("bob", oldIntent))
	require.ErrorContains(t, err, "the statement signs intent "+oldIntent.Intent)
	require.Empty(t, queryStatus(t, idOne).Approval.Decisions, "no refused decision counted")
	require.Empty(t, landedBy(t, one), "nothing is sent before approval")

	// Bob approves with his key file: the operation goes on.
	out, err = signedRun(t, "approve", "--id", idOne, "--key", bob, "--reason", "treasury plan")
	require.NoError(t, err, out)
	require.Contains(t, out, "intent:      "+status.IntentDigest)
	require.Contains(t, out, "signed with: "+keyFingerprint(t, "bob"))
	require.Contains(t, out, "approved (latest decision by bob ("+keyFingerprint(t, "bob")+"))")

	// Dual approval: bob approves with his key file, then again through his agent: one key
	// counts once; carol's agent key makes two.
	serveAgent(t, "bob", "carol")
	out, err = signedRun(t, "approve", "--id", idTwo, "--key", bob)
	require.NoError(t, err, out)
	require.Contains(t, out, "1 of 2 approvals")
	_, err = signedRun(t, "approve", "--id", idTwo, "--ssh-agent", "--key-fingerprint", keyFingerprint(t, "bob"))
	require.ErrorContains(t, err, "key "+keyFingerprint(t, "bob")+" (bob) already approved this operation")
	require.Equal(t, workflows.StepAwaitingApproval, queryStatus(t, idTwo).Step, "one key approving twice is one approval")
	require.Empty(t, landedBy(t, two))
	out, err = signedRun(t, "approve", "--id", idTwo, "--ssh-agent", "--key-fingerprint", keyFingerprint(t, "carol"))
	require.NoError(t, err, out)
	require.Contains(t, out, "signed with: "+keyFingerprint(t, "carol"))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, id := range []string{idOne, idTwo} {
		require.NoError(t, st.Client.GetWorkflow(ctx, id, "").Get(ctx, nil), id)
	}
	require.Len(t, landedBy(t, one), 1)
	require.Len(t, landedBy(t, two), 1)
	done := queryStatus(t, idOne)
	require.Len(t, done.Approval.Decisions, 1)
	require.Equal(t, "bob", done.Approval.Decisions[0].Approver)
	require.Equal(t, keyFingerprint(t, "bob"), done.Approval.Decisions[0].Fingerprint)
	require.Equal(t, "treasury plan", done.Approval.Decisions[0].Reason)
	doneTwo := queryStatus(t, idTwo)
	require.Len(t, doneTwo.Approval.Decisions, 2)
	require.Equal(t, []string{keyFingerprint(t, "bob"), keyFingerprint(t, "carol")},
		[]string{doneTwo.Approval.Decisions[0].Fingerprint, doneTwo.Approval.Decisions[1].Fingerprint})
	out, err = signedRun(t, "status", "--id", idTwo)
	require.NoError(t, err, out)
	require.Contains(t, out, "(signed by approvers' keys)")
	require.Contains(t, out, "approved by carol ("+keyFingerprint(t, "carol")+")")
	require.Contains(t, out, "intent:    "+doneTwo.IntentDigest)
}
