package workflows

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/approval"
)

// Signed approvals: the worker's approvers come with the policy; every decision is a statement
// signed by one of their keys.

// testKey is a fixed Ed25519 key from a one-byte seed.
func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed([]byte(strings.Repeat(string(rune('a'+seed%26)), 32)))
}

// sshFingerprint is OpenSSH's fingerprint of a key, computed here from the SSH wire form by
// hand (string "ssh-ed25519", string key) rather than by the code under test.
func sshFingerprint(k ed25519.PrivateKey) string {
	pub := k.Public().(ed25519.PublicKey)
	wire := append([]byte{0, 0, 0, 11}, "ssh-ed25519"...)
	wire = append(wire, 0, 0, 0, 32)
	wire = append(wire, pub...)
	sum := sha256.Sum256(wire)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

func approverOf(name string, k ed25519.PrivateKey) approval.Approver {
	pub := k.Public().(ed25519.PublicKey)
	return approval.Approver{Name: name, PublicKey: pub, Fingerprint: sshFingerprint(k)}
}

var (
	bobKey, carolKey, daveKey, malloryKey = testKey(1), testKey(2), testKey(3), testKey(4)
	configured                            = []approval.Approver{approverOf("bob", bobKey), approverOf("carol", carolKey), approverOf("dave", daveKey)}
)

// statementFor is a valid statement of decision on the running operation, made now.
func (s *CoreSuite) statementFor(decision string) approval.Statement {
	st := s.status()
	return approval.Statement{OperationID: st.OperationID, Decision: decision, Intent: st.IntentDigest, At: s.env.Now()}
}

// signedInput signs the statement with k; tamper, when set, changes the input after signing.
func signedInput(k ed25519.PrivateKey, st approval.Statement, tamper func(*ApprovalInput)) ApprovalInput {
	sg := approval.Sign(k, st.Text())
	in := ApprovalInput{Approver: "typed-name", Statement: sg.Statement, PublicKey: sg.PublicKey, Signature: sg.Signature}
	if tamper != nil {
		tamper(&in)
	}
	return in
}

// send sends an update at d built then; the outcome is recorded under label (refusal message or
// "accepted").
func (s *CoreSuite) send(update, label string, d time.Duration, in func() ApprovalInput, outcomes map[string]string) {
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(update, label, &testsuite.TestUpdateCallback{
			OnAccept:   func() { outcomes[label] = "accepted" },
			OnReject:   func(err error) { outcomes[label] = err.Error() },
			OnComplete: func(any, error) {},
		}, in())
	}, d)
}

func (s *CoreSuite) TestSignedApprovalNamesTheKeyAndTheConfiguredName() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: 1, Approvers: configured}
	out := map[string]string{}
	var waiting string
	s.env.RegisterDelayedCallback(func() { waiting = s.details() }, time.Minute)
	s.send(UpdateApprove, "bob", time.Hour, func() ApprovalInput {
		in := signedInput(bobKey, s.statementFor(approval.Approve), nil)
		in.Reason = "checked"
		return in
	}, out)
	s.run(coreInput{Amount: "1500", RequestedBy: "alice", Steps: 1})
	s.result()
	s.Equal("accepted", out["bob"])
	st := s.status()
	s.Equal(ModeSigned, st.Approval.Mode)
	s.Equal(DecisionApproved, st.Approval.Decision)
	s.Require().Len(st.Approval.Decisions, 1)
	d := st.Approval.Decisions[0]
	s.Equal("bob", d.Approver, "the configured name, not the typed one")
	s.Equal(sshFingerprint(bobKey), d.Fingerprint)
	s.Equal("checked", d.Reason)
	s.Contains(waiting, "signed by configured approvers' keys")
	s.Contains(s.details(), "approved by bob ("+sshFingerprint(bobKey)+")")
	s.Equal(1, s.f.builds)
}

// The intent digest is the SHA-256 of the canonical encoding of what was fixed at start, written
// out here by hand.
func (s *CoreSuite) TestStatusShowsTheIntentDigest() {
	s.run(coreInput{Amount: "1500", Validator: "val-1", Account: "acct-9", Steps: 1})
	s.result()
	want := sha256.Sum256([]byte("stakeflow intent v1\n" +
		"operation-id \"default-test-workflow-id\"\nchain \"fakechain\"\nnetwork \"devnet\"\noperation \"bond\"\n" +
		"staker \"alice\"\namount \"1500\"\nunit \"micro\"\nvalidator \"val-1\"\naccount \"acct-9\"\n"))
	s.Equal(fmt.Sprintf("%x", want), s.status().IntentDigest)
}

func (s *CoreSuite) TestSignedDecisionsThatCannotCountAreRefused() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: 1, Approvers: configured}
	out := map[string]string{}
	approve := func(k ed25519.PrivateKey, edit func(*approval.Statement), tamper func(*ApprovalInput)) func() ApprovalInput {
		return func() ApprovalInput {
			st := s.statementFor(approval.Approve)
			if edit != nil {
				edit(&st)
			}
			return signedInput(k, st, tamper)
		}
	}
	cases := []struct {
		label  string
		update string
		in     func() ApprovalInput
		want   string
	}{
		{"free text", UpdateApprove, func() ApprovalInput { return ApprovalInput{Approver: "bob"} }, "this worker takes only signed decisions"},
		{"unknown key", UpdateApprove, approve(malloryKey, nil, nil), "key " + sshFingerprint(malloryKey) + " is not one of the worker's approvers"},
		{"forged", UpdateApprove, approve(bobKey, nil, func(in *ApprovalInput) {
			sig, _ := base64.StdEncoding.DecodeString(in.Signature)
			sig[0] ^= 1
			in.Signature = base64.StdEncoding.EncodeToString(sig)
		}), "the signature does not verify with key " + sshFingerprint(bobKey)},
		{"altered", UpdateApprove, approve(bobKey, nil, func(in *ApprovalInput) {
			in.Statement = strings.Replace(in.Statement, "operation: default-test-workflow-id", "operation: other-op", 1)
		}), "the signature does not verify"},
		{"signed by another key than named", UpdateApprove, approve(malloryKey, nil, func(in *ApprovalInput) {
			in.PublicKey = base64.StdEncoding.EncodeToString(bobKey.Public().(ed25519.PublicKey))
		}), "the signature does not verify with key " + sshFingerprint(bobKey)},
		{"other operation", UpdateApprove, approve(bobKey, func(st *approval.Statement) { st.OperationID = "other-op" }, nil),
			`the statement is for operation "other-op", not "default-test-workflow-id"`},
		{"other decision", UpdateReject, approve(bobKey, nil, nil), "the statement says approve, but this update is reject"},
		{"old intent", UpdateApprove, approve(bobKey, func(st *approval.Statement) { st.Intent = strings.Repeat("ab", 32) }, nil),
			"the statement signs intent abab"},
		{"future", UpdateApprove, approve(bobKey, func(st *approval.Statement) { st.At = st.At.Add(time.Hour) }, nil), "more than 5m0s after the workflow's clock"},
		{"before start", UpdateApprove, approve(bobKey, func(st *approval.Statement) { st.At = st.At.Add(-48 * time.Hour) }, nil), "before the operation started"},
		{"not canonical", UpdateApprove, func() ApprovalInput {
			return signedInput(bobKey, approval.Statement{}, func(in *ApprovalInput) {
				sg := approval.Sign(bobKey, "stakeflow approval v1\noperation: x\n")
				in.Statement, in.Signature = sg.Statement, sg.Signature
			})
		}, "the statement has 2 lines, want 5"},
	}
	for i, c := range cases {
		s.send(c.update, c.label, time.Duration(i+1)*time.Minute, c.in, out)
	}
	s.send(UpdateApprove, "valid", time.Hour, approve(carolKey, nil, nil), out)
	s.run(coreInput{Amount: "1500", RequestedBy: "alice", Steps: 1})
	s.result()
	for _, c := range cases {
		s.Contains(out[c.label], c.want, c.label)
		for _, k := range []ed25519.PrivateKey{bobKey, carolKey, malloryKey} {
			s.NotContains(out[c.label], base64.StdEncoding.EncodeToString(k.Public().(ed25519.PublicKey)), "no key bytes in the refusal")
		}
	}
	s.Equal("accepted", out["valid"])
	ap := s.status().Approval
	s.Require().Len(ap.Decisions, 1, "only the valid statement counted")
	s.Equal("carol", ap.Decisions[0].Approver)
}

func (s *CoreSuite) TestSignedDualApprovalNeedsTwoKeys() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: 2, Approvers: configured}
	out := map[string]string{}
	var afterTwice Status
	s.send(UpdateApprove, "bob", time.Hour, func() ApprovalInput { return signedInput(bobKey, s.statementFor(approval.Approve), nil) }, out)
	s.send(UpdateApprove, "bob again", 2*time.Hour, func() ApprovalInput { return signedInput(bobKey, s.statementFor(approval.Approve), nil) }, out)
	s.send(UpdateApprove, "bob replayed", 3*time.Hour, func() ApprovalInput {
		// bob's first statement, sent again as it was.
		st := s.statementFor(approval.Approve)
		st.At = st.At.Add(-2 * time.Hour)
		return signedInput(bobKey, st, nil)
	}, out)
	s.env.RegisterDelayedCallback(func() { afterTwice = s.status() }, 4*time.Hour)
	s.send(UpdateApprove, "carol", 5*time.Hour, func() ApprovalInput { return signedInput(carolKey, s.statementFor(approval.Approve), nil) }, out)
	start := s.env.Now()
	s.run(coreInput{Amount: "1500", RequestedBy: "alice", Steps: 1})
	s.result()
	s.Equal("accepted", out["bob"])
	s.Contains(out["bob again"], "key "+sshFingerprint(bobKey)+" (bob) already approved this operation")
	s.Contains(out["bob replayed"], "already approved")
	s.Empty(afterTwice.Approval.Decision, "one key approving twice is one approval")
	s.Len(afterTwice.Approval.Decisions, 1)
	s.Equal("accepted", out["carol"])
	s.Equal(DecisionApproved, s.status().Approval.Decision)
	s.GreaterOrEqual(s.env.Now().Sub(start), 5*time.Hour, "built only after the second key approved")
}

func (s *CoreSuite) TestSignedRejectionStops() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true, Approvers: configured}
	out := map[string]string{}
	s.send(UpdateReject, "dave", time.Hour, func() ApprovalInput {
		in := signedInput(daveKey, s.statementFor(approval.Reject), nil)
		in.Reason = "wrong validator"
		return in
	}, out)
	s.run(coreInput{Amount: "1500", Steps: 1})
	s.Equal("rejected by dave: wrong validator; nothing was built or signed", s.failure().Message())
	s.Equal(sshFingerprint(daveKey), s.status().Approval.Decisions[0].Fingerprint)
	s.Equal(0, s.f.builds)
}

// The key that signed the start cannot decide; neither can the configured approver whose name
// is the initiator's when the start was not signed.
func (s *CoreSuite) TestTheInitiatorsKeyCannotDecide() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true, Approvers: configured}
	start := approval.Sign(bobKey, approval.Start{OperationID: "default-test-workflow-id", Chain: fakeChainName, Operation: "bond", Staker: "alice", At: s.env.Now()}.Text())
	out := map[string]string{}
	s.send(UpdateApprove, "bob", time.Hour, func() ApprovalInput { return signedInput(bobKey, s.statementFor(approval.Approve), nil) }, out)
	s.send(UpdateReject, "bob rejects", 2*time.Hour, func() ApprovalInput { return signedInput(bobKey, s.statementFor(approval.Reject), nil) }, out)
	s.send(UpdateApprove, "carol", 3*time.Hour, func() ApprovalInput { return signedInput(carolKey, s.statementFor(approval.Approve), nil) }, out)
	s.run(coreInput{Amount: "1500", RequestedBy: "bob", Steps: 1, StartMemo: &start})
	s.result()
	s.Equal(sshFingerprint(bobKey), s.status().InitiatorFingerprint)
	s.Contains(out["bob"], "key "+sshFingerprint(bobKey)+" signed the start of this operation and cannot also approve or reject it")
	s.Contains(out["bob rejects"], "signed the start of this operation")
	s.Equal("accepted", out["carol"])
}

func (s *CoreSuite) TestTheInitiatorsNameCannotDecideWhenTheStartIsNotSigned() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true, Approvers: configured}
	out := map[string]string{}
	s.send(UpdateApprove, "carol", time.Hour, func() ApprovalInput { return signedInput(carolKey, s.statementFor(approval.Approve), nil) }, out)
	s.send(UpdateApprove, "dave", 2*time.Hour, func() ApprovalInput { return signedInput(daveKey, s.statementFor(approval.Approve), nil) }, out)
	s.run(coreInput{Amount: "1500", RequestedBy: "Carol", Steps: 1})
	s.result()
	s.Contains(out["carol"], "carol started this operation and cannot also approve or reject it")
	s.Equal("accepted", out["dave"])
}

func (s *CoreSuite) TestASignedStartThatDoesNotVerifyFailsBeforeThePolicy() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true, Approvers: configured}
	for _, c := range []struct {
		name   string
		start  approval.Start
		tamper func(*approval.Signed)
		want   string
	}{
		{"other operation", approval.Start{OperationID: "other", Chain: fakeChainName, Operation: "bond", Staker: "alice"}, nil, `it names operation "other"`},
		{"other staker", approval.Start{OperationID: "default-test-workflow-id", Chain: fakeChainName, Operation: "bond", Staker: "eve"}, nil, "it names fakechain bond of eve, not fakechain bond of alice"},
		{"forged", approval.Start{OperationID: "default-test-workflow-id", Chain: fakeChainName, Operation: "bond", Staker: "alice"},
			func(sg *approval.Signed) { sg.Statement = strings.Replace(sg.Statement, "alice", "alicf", 1) }, "the signature does not verify"},
	} {
		s.SetupTest()
		s.f.policy = activities.PolicyDecision{ApprovalRequired: true, Approvers: configured}
		c.start.At = s.env.Now()
		sg := approval.Sign(bobKey, c.start.Text())
		if c.tamper != nil {
			c.tamper(&sg)
		}
		s.run(coreInput{Amount: "1500", Steps: 1, StartMemo: &sg})
		e := s.failure()
		s.Equal(activities.ErrInvalidInput, e.Type(), c.name)
		s.Contains(e.Message(), "invalid signed start: "+c.want, c.name)
		s.Empty(s.status().InitiatorFingerprint, c.name)
		s.Equal(0, s.f.builds, c.name)
	}
}

func (s *CoreSuite) TestNamedModeSaysItIsNotSeparationOfDuties() {
	s.f.policy = activities.PolicyDecision{ApprovalRequired: true}
	var waiting Status
	var details string
	s.env.RegisterDelayedCallback(func() { waiting, details = s.status(), s.details() }, time.Minute)
	s.decide(UpdateApprove, "bob", "", time.Hour, nil)
	s.run(coreInput{Amount: "1500", Steps: 1})
	s.result()
	s.Equal(ModeNamed, waiting.Approval.Mode)
	s.Contains(details, "not separation of duties")
	s.Empty(s.status().Approval.Decisions[0].Fingerprint)
}

// The gate, explored: random sequences of decisions from configured keys, unknown keys, forged
// signatures, statements replayed from another operation, decision or intent, and the
// initiator's key, with one or two approvals required. The gate opens iff enough distinct
// configured keys other than the initiator's approved with valid statements before any valid
// rejection; it is rejected iff a valid rejection came first; else it times out.
func (s *CoreSuite) TestSignedGateProperty() {
	keys := []ed25519.PrivateKey{bobKey, carolKey, daveKey}
	// Valid approvals are drawn more often, so that keys approving twice and second approvals
	// come up.
	kinds := []string{"approve", "approve", "approve", "approve", "reject", "unknown", "forged", "other-op", "other-decision", "old-intent", "initiator", "future"}
	opened, rejected, timedOut := 0, 0, 0
	for seed := uint64(1); seed <= 200; seed++ {
		s.SetupTest()
		r := rand.New(rand.NewPCG(seed, 29))
		required := 1 + r.IntN(2)
		s.f.policy = activities.PolicyDecision{ApprovalRequired: true, ApprovalsRequired: required, Approvers: configured}
		initiator := -1
		in := coreInput{Amount: "1500", RequestedBy: "someone", Steps: 1, Options: Options{ApprovalTimeout: 100 * time.Hour}}
		if r.IntN(2) == 0 {
			initiator = r.IntN(len(keys))
			sg := approval.Sign(keys[initiator], approval.Start{OperationID: "default-test-workflow-id", Chain: fakeChainName, Operation: "bond", Staker: "alice", At: s.env.Now()}.Text())
			in.StartMemo = &sg
		}
		// The model, independent of the workflow: what each event should do.
		want, decided, approvals := "timed-out", false, map[int]bool{}
		n := 1 + r.IntN(8)
		out := map[string]string{}
		expect := map[string]bool{}
		for i := 0; i < n; i++ {
			kind := kinds[r.IntN(len(kinds))]
			k := r.IntN(len(keys))
			if kind == "initiator" {
				if initiator < 0 {
					kind = "unknown"
				} else {
					k = initiator
				}
			}
			label := fmt.Sprintf("%d-%s-%d", i, kind, k)
			update, decision := UpdateApprove, approval.Approve
			if kind == "reject" || (kind == "initiator" && r.IntN(2) == 0) {
				update, decision = UpdateReject, approval.Reject
			}
			key := keys[k]
			if kind == "unknown" {
				key = malloryKey
			}
			s.send(update, label, time.Duration(i+1)*time.Hour, func() ApprovalInput {
				st := s.statementFor(decision)
				switch kind {
				case "other-op":
					st.OperationID = "another-operation"
				case "other-decision":
					st.Decision = approval.Reject
				case "old-intent":
					st.Intent = fmt.Sprintf("%064x", seed)
				case "future":
					st.At = st.At.Add(time.Hour)
				}
				return signedInput(key, st, func(in *ApprovalInput) {
					if kind == "forged" {
						in.Statement = strings.Replace(in.Statement, "at: ", "at:  ", 1)
					}
				})
			}, out)
			valid := (kind == "approve" || kind == "reject") && k != initiator && !approvals[k]
			if decided {
				continue
			}
			expect[label] = valid
			if valid && update == UpdateReject {
				want, decided = DecisionRejected, true
			} else if valid {
				approvals[k] = true
				if len(approvals) >= required {
					want, decided = DecisionApproved, true
				}
			}
		}
		s.run(in)
		for label, valid := range expect {
			if valid {
				s.Equal("accepted", out[label], "seed %d: %s", seed, label)
			} else {
				s.NotEqual("accepted", out[label], "seed %d: %s", seed, label)
				s.NotEmpty(out[label], "seed %d: %s was sent", seed, label)
			}
		}
		ap := s.status().Approval
		s.Equal(want, ap.Decision, "seed %d", seed)
		seen := map[string]bool{}
		for _, d := range ap.Decisions {
			s.False(seen[d.Fingerprint], "seed %d: one key decided twice", seed)
			seen[d.Fingerprint] = true
			if initiator >= 0 {
				s.NotEqual(sshFingerprint(keys[initiator]), d.Fingerprint, "seed %d: the initiator decided", seed)
			}
		}
		switch want {
		case DecisionApproved:
			opened++
			s.Equal(1, s.f.builds, "seed %d", seed)
		case DecisionRejected:
			rejected++
			s.Equal(0, s.f.builds, "seed %d", seed)
		default:
			timedOut++
			s.Equal(0, s.f.builds, "seed %d", seed)
		}
	}
	// The seeds explore every outcome.
	s.Positive(opened)
	s.Positive(rejected)
	s.Positive(timedOut)
	s.T().Logf("opened %d, rejected %d, timed out %d", opened, rejected, timedOut)
}
