package signer

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileCase is a transaction that must be refused, and the text the refusal must contain.
type hostileCase struct {
	name   string
	policy SolanaPolicy
	intent func(f *fixture) Intent
	tx     func(t testing.TB, f *fixture) string
	is     error
	want   []string
}

func hostileCases() []hostileCase {
	stakeIntent := func(f *fixture) Intent { return f.stakeIntent() }
	unstakeIntent := func(f *fixture) Intent { return f.unstakeIntent() }
	withdrawIntent := func(f *fixture) Intent { return f.withdrawIntent() }
	stakeWith := func(mod func(f *fixture, in []solana.Instruction) []solana.Instruction) func(t testing.TB, f *fixture) string {
		return func(t testing.TB, f *fixture) string { return f.tx64(t, f.staker, mod(f, f.stakeInstrs())...) }
	}
	raw := func(mod func(f *fixture, b []byte) string) func(t testing.TB, f *fixture) string {
		return func(t testing.TB, f *fixture) string { return mod(f, f.txBytes(t, f.staker, f.stakeInstrs()...)) }
	}
	return []hostileCase{
		{name: "wrong fee payer", intent: stakeIntent, is: ErrVerification, want: []string{"fee payer"},
			tx: func(t testing.TB, f *fixture) string { return f.tx64(t, f.stranger, f.stakeInstrs()...) }},
		{name: "extra system transfer to a stranger", intent: stakeIntent, is: ErrVerification,
			want: []string{"unexpected instruction", "system.Transfer of 5000 lamports to"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append(in, system.NewTransferInstruction(5000, f.staker, f.stranger).Build())
			})},
		{name: "transfer before the stake", intent: stakeIntent, is: ErrVerification, want: []string{"instruction 1 of stake", "system.Transfer"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{system.NewTransferInstruction(5000, f.staker, f.stranger).Build()}, in...)
			})},
		{name: "another vote account", intent: stakeIntent, is: ErrVerification, want: []string{"vote account", "want " + newFixture().vote.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[2] = delegate(f.derived, f.otherVote, f.staker)
				return in
			})},
		{name: "vote account not on allow-list", policy: SolanaPolicy{AllowedVoteAccounts: []string{newFixture().vote.String()}},
			intent: func(f *fixture) Intent { in := f.stakeIntent(); in.VoteAccount = ""; return in },
			is:     ErrVerification, want: []string{"allow-list"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[2] = delegate(f.derived, f.otherVote, f.staker)
				return in
			})},
		{name: "intended vote account not on allow-list", policy: SolanaPolicy{AllowedVoteAccounts: []string{newFixture().otherVote.String()}},
			intent: stakeIntent, is: ErrVerification, want: []string{"allow-list"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in })},
		{name: "no vote account intended and no allow-list", intent: func(f *fixture) Intent { in := f.stakeIntent(); in.VoteAccount = ""; return in },
			is: ErrVerification, want: []string{"vote account", "neither is set"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in })},
		{name: "malformed allow-list entry", policy: SolanaPolicy{AllowedVoteAccounts: []string{"not-an-address"}},
			intent: stakeIntent, is: ErrVerification, want: []string{"allow-list", "not-an-address"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in })},
		{name: "other stake amount", intent: stakeIntent, is: ErrVerification, want: []string{"stake amount", "want 2000000000 lamports, got 3000000000 lamports"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[0] = f.createWithSeed(f.staker, f.seed, f.derived, 3_000_000_000, solana.StakeProgramID)
				return in
			})},
		{name: "new account not derived from its seed", intent: stakeIntent, is: ErrVerification, want: []string{"new stake account"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[0] = f.createWithSeed(f.staker, "another-seed", f.derived, f.lamports, solana.StakeProgramID)
				return in
			})},
		{name: "new account owned by another program", intent: stakeIntent, is: ErrVerification, want: []string{"owner"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[0] = f.createWithSeed(f.staker, f.seed, f.derived, f.lamports, solana.SystemProgramID)
				return in
			})},
		{name: "other base for the new account", intent: stakeIntent, is: ErrVerification, want: []string{"new stake account base", "got " + newFixture().stranger.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				// The data names the stranger as base; the accounts do not, so the stranger's
				// signature is not required and the base check is what refuses it.
				d, _ := solana.CreateWithSeed(f.stranger, f.seed, solana.StakeProgramID)
				bad := f.createWithSeed(f.stranger, f.seed, d, f.lamports, solana.StakeProgramID)
				in[0] = solana.NewInstruction(solana.SystemProgramID, solana.AccountMetaSlice{
					meta(f.staker, true, true), meta(d, true, false), meta(f.staker, false, true)}, mustData(bad))
				return in
			})},
		{name: "other base, signing", intent: stakeIntent, is: ErrVerification, want: []string{"required signers", newFixture().stranger.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				d, _ := solana.CreateWithSeed(f.stranger, f.seed, solana.StakeProgramID)
				in[0] = f.createWithSeed(f.stranger, f.seed, d, f.lamports, solana.StakeProgramID)
				return in
			})},
		{name: "CreateAccount needs the new account to sign", intent: stakeIntent, is: ErrVerification, want: []string{"required signers", newFixture().stranger.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[0] = system.NewCreateAccountInstruction(f.lamports, stakeAccountSpace, solana.StakeProgramID, f.staker, f.stranger).Build()
				return in
			})},
		{name: "other stake account (unstake)", intent: unstakeIntent, is: ErrVerification, want: []string{"stake account", "want " + newFixture().stakeAccount.String()},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, deactivate(f.otherVote, solana.SysVarClockPubkey, f.staker, true))
			}},
		{name: "other stake account (withdraw)", intent: withdrawIntent, is: ErrVerification, want: []string{"stake account"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, withdraw(f.otherVote, f.staker, f.staker, 1_500_000_000))
			}},
		{name: "other recipient", intent: withdrawIntent, is: ErrVerification, want: []string{"recipient", "got " + newFixture().stranger.String()},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, withdraw(f.stakeAccount, f.stranger, f.staker, 1_500_000_000))
			}},
		{name: "withdraw with a stranger as lockup custodian", intent: withdrawIntent, is: ErrVerification, want: []string{"accounts", "want 5 accounts", "got 6"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, withdrawCustodian(f.stakeAccount, f.staker, f.staker, 1_500_000_000, f.otherVote))
			}},
		{name: "other withdraw amount", intent: withdrawIntent, is: ErrVerification, want: []string{"withdraw amount"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, withdraw(f.stakeAccount, f.staker, f.staker, 1_500_000_001))
			}},
		{name: "deactivate by another authority", intent: unstakeIntent, is: ErrVerification, want: []string{"stake authority"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, deactivate(f.stakeAccount, solana.SysVarClockPubkey, f.stranger, false))
			}},
		{name: "deactivate with a substituted clock", intent: unstakeIntent, is: ErrVerification, want: []string{"clock sysvar"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, deactivate(f.stakeAccount, f.stranger, f.staker, true))
			}},
		{name: "unstake carrying a withdraw", intent: unstakeIntent, is: ErrVerification, want: []string{"unexpected instruction", "stake.Withdraw"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, append(f.unstakeInstrs(), withdraw(f.stakeAccount, f.stranger, f.staker, 1))...)
			}},
		{name: "extra stake Authorize", intent: stakeIntent, is: ErrVerification, want: []string{"stake.Authorize"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append(in, authorize(f.derived, f.stranger, f.staker))
			})},
		{name: "unknown program", intent: stakeIntent, is: ErrVerification, want: []string{"program", "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append(in, solana.NewInstruction(solana.MemoProgramID, nil, []byte("hi")))
			})},
		{name: "compute unit price over cap", policy: SolanaPolicy{MaxComputeUnitPrice: 100_000}, intent: stakeIntent, is: ErrVerification,
			want: []string{"compute unit price", "at most 100000", "got 100001"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computePrice(100_001)}, in...)
			})},
		{name: "compute unit price over default cap", intent: stakeIntent, is: ErrVerification, want: []string{"compute unit price"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computeLimit(10), computePrice(DefaultMaxComputeUnitPrice + 1)}, in...)
			})},
		{name: "compute unit limit over cap", policy: SolanaPolicy{MaxComputeUnitLimit: 100_000}, intent: stakeIntent, is: ErrVerification,
			want: []string{"compute unit limit", "want at most 100000 units, got 100001"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computeLimit(100_001)}, in...)
			})},
		{name: "compute unit limit over default cap", intent: unstakeIntent, is: ErrVerification,
			want: []string{"compute unit limit", "want at most 200000 units, got 1400000"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, append([]solana.Instruction{computeLimit(1_400_000)}, f.unstakeInstrs()...)...)
			}},
		{name: "fee over cap: high unit limit, unit price under its cap", intent: stakeIntent, is: ErrVerification,
			// 5,000 base + 1,000,000 micro-lamports × 200,000 units / 1,000,000 = 205,000 lamports.
			want: []string{"fee", "want at most 100000 lamports", "got 205000 lamports (5000 base + 200000 priority"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computeLimit(200_000), computePrice(1_000_000)}, in...)
			})},
		{name: "fee over cap: largest unit limit at 1 lamport a unit (both per-unit caps exceeded too)", intent: unstakeIntent, is: ErrVerification,
			// What the sandbox's fee-heavy mode asks: 5,000 + 1,000,000 × 1,400,000 / 1,000,000.
			want: []string{"fee", "got 1405000 lamports"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, append([]solana.Instruction{computeLimit(1_400_000), computePrice(1_000_000)}, f.unstakeInstrs()...)...)
			}},
		{name: "fee over cap: unit price alone, at the runtime's default limit", intent: stakeIntent, is: ErrVerification,
			// No limit set: 3 instructions × 200,000 units; 5,000 + 200,000 × 600,000 / 1,000,000 = 125,000.
			want: []string{"fee", "got 125000 lamports (5000 base + 120000 priority: 200000 micro-lamports per unit × 600000 units)"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computePrice(200_000)}, in...)
			})},
		{name: "fee over a configured cap", policy: SolanaPolicy{MaxFeeLamports: 5_000}, intent: withdrawIntent, is: ErrVerification,
			// 5,000 + ceil(1 × 1 / 1,000,000) = 5,001: a part of a lamport is paid as a whole one.
			want: []string{"fee", "want at most 5000 lamports", "got 5001 lamports"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, append([]solana.Instruction{computePrice(1), computeLimit(1)}, f.withdrawInstrs()...)...)
			}},
		{name: "duplicate compute unit price", intent: stakeIntent, is: ErrVerification, want: []string{"at most one SetComputeUnitPrice"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computePrice(1), computePrice(2)}, in...)
			})},
		{name: "other compute budget instruction", intent: stakeIntent, is: ErrVerification, want: []string{"computeBudget.RequestHeapFrame"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{solana.NewInstruction(solana.ComputeBudget, nil, []byte{1, 0, 0, 1, 0})}, in...)
			})},
		{name: "stake account required to sign", intent: stakeIntent, is: ErrVerification, want: []string{"required signers", newFixture().derived.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = stake.NewInitializeInstruction(f.staker, f.staker, f.derived).Build()
				return in
			})},
		{name: "stake authority is a stranger", intent: stakeIntent, is: ErrVerification, want: []string{"stake authority", "got " + newFixture().stranger.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = initialize(f.derived, f.stranger, f.staker, solana.PublicKey{}, 0)
				return in
			})},
		{name: "withdraw authority is a stranger", intent: stakeIntent, is: ErrVerification, want: []string{"withdraw authority", "got " + newFixture().stranger.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = initialize(f.derived, f.staker, f.stranger, solana.PublicKey{}, 0)
				return in
			})},
		{name: "lockup custodian is a stranger", intent: stakeIntent, is: ErrVerification, want: []string{"lockup", "custodian " + newFixture().stranger.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = initialize(f.derived, f.staker, f.staker, f.stranger, 0)
				return in
			})},
		{name: "lockup nobody can lift", intent: stakeIntent, is: ErrVerification, want: []string{"lockup", "epoch 999"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = initialize(f.derived, f.staker, f.staker, solana.PublicKey{}, 999)
				return in
			})},
		{name: "delegate signed by a stranger", intent: stakeIntent, is: ErrVerification, want: []string{"required signers"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[2] = delegate(f.derived, f.vote, f.stranger)
				return in
			})},
		{name: "duplicate delegate", intent: stakeIntent, is: ErrVerification, want: []string{"unexpected instruction", "stake.DelegateStake"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append(in, delegate(f.derived, f.otherVote, f.staker))
			})},
		{name: "missing delegate", intent: stakeIntent, is: ErrVerification, want: []string{"instructions"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in[:2] })},
		{name: "durable nonce", intent: stakeIntent, is: ErrVerification, want: []string{"system.AdvanceNonceAccount"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{system.NewAdvanceNonceAccountInstruction(f.stranger, solana.SysVarRecentBlockHashesPubkey, f.staker).Build()}, in...)
			})},
		{name: "versioned message", intent: stakeIntent, is: ErrVerification, want: []string{"message version", "want legacy, got v0"},
			tx: func(t testing.TB, f *fixture) string {
				tx, err := solana.NewTransaction(f.stakeInstrs(), f.blockhash, solana.TransactionPayer(f.staker))
				require.NoError(t, err)
				tx.Message.SetVersion(solana.MessageVersionV0)
				b, err := tx.MarshalBinary()
				require.NoError(t, err)
				return base64.StdEncoding.EncodeToString(b)
			}},
		{name: "missing signature slot", intent: stakeIntent, is: ErrVerification, want: []string{"signature slots"},
			tx: raw(func(f *fixture, b []byte) string {
				return base64.StdEncoding.EncodeToString(append([]byte{0}, b[65:]...))
			})},
		{name: "garbage: empty", intent: stakeIntent, is: ErrDecode, want: []string{"empty"},
			tx: func(testing.TB, *fixture) string { return "" }},
		{name: "garbage: not any encoding", intent: stakeIntent, is: ErrDecode, want: []string{"not valid base64, base58 or hex"},
			tx: func(testing.TB, *fixture) string { return "!!not a transaction!!" }},
		{name: "garbage: base64 of noise", intent: stakeIntent, is: ErrDecode, want: []string{"not a well-formed transaction", "as base64"},
			tx: func(testing.TB, *fixture) string {
				return base64.StdEncoding.EncodeToString([]byte("hello, this is not a transaction"))
			}},
		{name: "garbage: truncated", intent: stakeIntent, is: ErrDecode, want: []string{"truncated"},
			tx: raw(func(f *fixture, b []byte) string { return base64.StdEncoding.EncodeToString(b[:len(b)-3]) })},
		{name: "garbage: trailing bytes", intent: stakeIntent, is: ErrDecode, want: []string{"left over"},
			tx: raw(func(f *fixture, b []byte) string { return base64.StdEncoding.EncodeToString(append(b, 0)) })},
		{name: "garbage: oversized", intent: stakeIntent, is: ErrDecode, want: []string{"longer than any encoding"},
			tx: func(testing.TB, *fixture) string { return string(make([]byte, 5000)) }},
		{name: "intent: other chain", intent: func(f *fixture) Intent { in := f.stakeIntent(); in.Chain = "ethereum"; return in },
			is: ErrIntent, want: []string{"chain"}, tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in })},
		{name: "intent: partial unstake", intent: func(f *fixture) Intent { in := f.unstakeIntent(); in.Lamports = 5; return in },
			is: ErrIntent, want: []string{"partial amount"}, tx: func(t testing.TB, f *fixture) string { return f.tx64(t, f.staker, f.unstakeInstrs()...) }},
		{name: "intent: unknown operation", intent: func(f *fixture) Intent { in := f.stakeIntent(); in.Operation = "redelegate"; return in },
			is: ErrIntent, want: []string{"redelegate"}, tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction { return in })},
		{name: "lockup with the staker as custodian", intent: stakeIntent, is: ErrVerification,
			want: []string{"lockup", "want none", "epoch 999999", "custodian " + newFixture().staker.String()},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = initialize(f.derived, f.staker, f.staker, f.staker, 999_999)
				return in
			})},
		{name: "lockup with no custodian until a date", intent: stakeIntent, is: ErrVerification,
			want: []string{"lockup", "want none", "until unix time 4102444800"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[1] = initializeLockup(f.derived, f.staker, f.staker, solana.PublicKey{}, 4_102_444_800, 0)
				return in
			})},
		{name: "writable stake account marked read-only", intent: stakeIntent, is: ErrVerification,
			// One more read-only unsigned account in the header turns the last writable unsigned
			// account, the stake account, read-only: the runtime would fail the transaction after
			// charging its fee.
			want: []string{"account 1 (stake account) flags: want writable, got read-only"},
			tx: raw(func(f *fixture, b []byte) string {
				b[1+64+2]++
				return base64.StdEncoding.EncodeToString(b)
			})},
		{name: "writable stake account marked read-only (unstake)", intent: unstakeIntent, is: ErrVerification,
			want: []string{"account 1 (stake account) flags: want writable, got read-only"},
			tx: func(t testing.TB, f *fixture) string {
				b := f.txBytes(t, f.staker, f.unstakeInstrs()...)
				b[1+64+2]++
				return base64.StdEncoding.EncodeToString(b)
			}},
		{name: "extra account in an instruction", intent: stakeIntent, is: ErrVerification,
			want: []string{"stake.DelegateStake accounts", "want 6 accounts", "got 7"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[2] = withAccount(in[2], f.stranger)
				return in
			})},
		{name: "extra account in a withdraw", intent: withdrawIntent, is: ErrVerification,
			want: []string{"stake.Withdraw", "accounts", "got 6"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, withAccount(f.withdrawInstrs()[0], f.stranger))
			}},
		{name: "withdraw with the staker as lockup custodian", intent: withdrawIntent, is: ErrVerification,
			want: []string{"accounts", "want 5 accounts", "got 6"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, withdrawCustodian(f.stakeAccount, f.staker, f.staker, 1_500_000_000, f.staker))
			}},
		{name: "reordered instructions", intent: stakeIntent, is: ErrVerification,
			want: []string{"instruction 1 of stake", "want system.CreateAccountWithSeed", "got #0 stake.Initialize"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return []solana.Instruction{in[1], in[0], in[2]}
			})},
		{name: "compute budget after the staking instructions", intent: stakeIntent, is: ErrVerification,
			want: []string{"computeBudget.SetComputeUnitPrice position", "want before the staking instructions", "got after #3 stake.DelegateStake"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return append([]solana.Instruction{computeLimit(10_000)}, append(in, computePrice(1))...)
			})},
		{name: "compute budget between the staking instructions", intent: stakeIntent, is: ErrVerification,
			want: []string{"computeBudget.SetComputeUnitLimit position", "got after #0 system.CreateAccountWithSeed"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				return []solana.Instruction{in[0], computeLimit(10_000), in[1], in[2]}
			})},
		{name: "duplicate compute unit limit", intent: withdrawIntent, is: ErrVerification, want: []string{"at most one SetComputeUnitLimit"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, append([]solana.Instruction{computeLimit(1000), computePrice(1), computeLimit(1000)}, f.withdrawInstrs()...)...)
			}},
		{name: "compute budget with an account", intent: unstakeIntent, is: ErrVerification,
			want: []string{"computeBudget.SetComputeUnitPrice accounts", "want none, got 1 accounts"},
			tx: func(t testing.TB, f *fixture) string {
				return f.tx64(t, f.staker, append([]solana.Instruction{withAccount(computePrice(1), f.stranger)}, f.unstakeInstrs()...)...)
			}},
		{name: "seed over 32 bytes", intent: stakeIntent, is: ErrVerification,
			want: []string{"new stake account seed", "want at most 32 bytes, got 33 bytes"},
			tx: stakeWith(func(f *fixture, in []solana.Instruction) []solana.Instruction {
				in[0] = f.createWithSeed(f.staker, strings.Repeat("s", 33), f.derived, f.lamports, solana.StakeProgramID)
				return in
			})},
		{name: "intent says stake, tx unstakes", intent: stakeIntent, is: ErrVerification, want: []string{"stake.Deactivate"},
			tx: func(t testing.TB, f *fixture) string { return f.tx64(t, f.staker, f.unstakeInstrs()...) }},
	}
}

// TestSolanaRefusesHostile: every hostile transaction is refused by Verify and by Sign, with an
// error that names the difference, and nothing is signed. The rows that are well-formed and meant
// for the intent are also refused by the gate alone (the exact-expectation comparison without the
// named checks in front of it), so that neither pass is the only thing standing between a
// hostile service and a signature.
func TestSolanaRefusesHostile(t *testing.T) {
	for _, tc := range hostileCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture()
			s := NewSolana(f.keyring(), tc.policy)
			unsigned := tc.tx(t, f)
			intent := tc.intent(f)

			v, err := s.Verify(unsigned, intent)
			require.Error(t, err)
			assert.Nil(t, v)
			assert.ErrorIs(t, err, tc.is)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			if errors.Is(err, ErrVerification) {
				var ve *VerificationError
				require.ErrorAs(t, err, &ve)
				assert.NotEmpty(t, ve.Check)
			}

			signed, serr := s.Sign(context.Background(), unsigned, intent)
			assert.Nil(t, signed, "nothing is signed")
			require.Error(t, serr)
			assert.Equal(t, err.Error(), serr.Error())

			if tc.is != ErrVerification {
				return
			}
			tx, _, derr := decodeSolanaTx(unsigned)
			require.NoError(t, derr)
			pi, perr := parseIntent(intent)
			require.NoError(t, perr)
			gv, gerr := s.gate(tx, &pi)
			assert.Nil(t, gv, "the gate alone refuses it")
			var ge *VerificationError
			require.ErrorAs(t, gerr, &ge, "the gate alone refuses it")
			assert.NotEmpty(t, ge.Check)
		})
	}
}
