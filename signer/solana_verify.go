package signer

import (
	"fmt"
	"strings"

	bin "github.com/gagliardetto/binary"
	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
)

// stakeAccountSpace is the size of a stake account (StakeStateV2).
const stakeAccountSpace = 200

// parsedIntent is an Intent with its addresses decoded.
type parsedIntent struct {
	Intent
	staker       solana.PublicKey
	vote         solana.PublicKey // zero when not given
	hasVote      bool
	stakeAccount solana.PublicKey
}

func intentErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrIntent, fmt.Sprintf(format, args...))
}

// parseIntent checks in and decodes its addresses.
func parseIntent(in Intent) (parsedIntent, error) {
	if in.Chain != "solana" {
		return parsedIntent{}, intentErr("chain %q is not solana", in.Chain)
	}
	staker, err := solana.PublicKeyFromBase58(in.Staker)
	if err != nil {
		return parsedIntent{}, intentErr("staker %q is not a base58 address", in.Staker)
	}
	return parseIntentFor(in, staker)
}

// parseIntentFor is parseIntent for a staker already decoded from in.Staker.
func parseIntentFor(in Intent, staker solana.PublicKey) (parsedIntent, error) {
	if in.Chain != "solana" {
		return parsedIntent{}, intentErr("chain %q is not solana", in.Chain)
	}
	p := parsedIntent{Intent: in, staker: staker}
	var err error
	switch in.Operation {
	case OpStake:
		if in.Lamports == 0 {
			return parsedIntent{}, intentErr("stake of 0 lamports")
		}
		if in.VoteAccount != "" {
			if p.vote, err = solana.PublicKeyFromBase58(in.VoteAccount); err != nil {
				return parsedIntent{}, intentErr("vote account %q is not a base58 address", in.VoteAccount)
			}
			p.hasVote = true
		}
	case OpUnstake, OpWithdraw:
		if p.stakeAccount, err = solana.PublicKeyFromBase58(in.StakeAccount); err != nil {
			return parsedIntent{}, intentErr("stake account %q is not a base58 address", in.StakeAccount)
		}
		if in.Operation == OpUnstake && in.Lamports != 0 {
			return parsedIntent{}, intentErr("unstake of %d lamports: Deactivate covers the whole stake account, so a partial amount cannot be verified (use 0)", in.Lamports)
		}
		if in.Operation == OpWithdraw && in.Lamports == 0 {
			return parsedIntent{}, intentErr("withdraw of 0 lamports")
		}
	default:
		return parsedIntent{}, intentErr("unknown operation %q", in.Operation)
	}
	return p, nil
}

// instrKind says which accepted layout an instruction decoded as.
type instrKind uint8

const (
	kindOther instrKind = iota // a system instruction other than CreateAccountWithSeed, or compute budget
	kindCreateWithSeed
	kindInitialize
	kindDelegate
	kindDeactivate
	kindWithdraw
)

// decodedInstr is one instruction with its program resolved and, for the layouts a staking
// transaction may contain, its data decoded. Account keys are read from the message on demand.
type decodedInstr struct {
	index   int
	program solana.PublicKey
	keys    []solana.PublicKey // the message's account keys
	idx     []uint8            // the instruction's account indexes into keys
	data    []byte
	name    string // e.g. "system.Transfer"
	kind    instrKind

	create   createWithSeedData // kindCreateWithSeed
	init     initializeData     // kindInitialize
	lamports uint64             // kindWithdraw

	// system holds solana-go's decoding of a system instruction other than CreateAccountWithSeed.
	// Such an instruction is always refused; the decoding only names it in the refusal.
	system *system.Instruction
}

// numAccounts returns the number of accounts the instruction lists.
func (d *decodedInstr) numAccounts() int { return len(d.idx) }

// account returns the instruction's i-th account key.
func (d *decodedInstr) account(i int) solana.PublicKey { return d.keys[d.idx[i]] }

func (d *decodedInstr) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", d.index, d.name)
	if d.system != nil {
		switch x := d.system.Impl.(type) {
		case *system.Transfer:
			fmt.Fprintf(&b, " of %d lamports", deref(x.Lamports))
			if d.numAccounts() > 1 {
				fmt.Fprintf(&b, " to %s", d.account(1))
			}
		case *system.CreateAccount:
			fmt.Fprintf(&b, " of %d lamports", deref(x.Lamports))
		}
	}
	return b.String()
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func programName(p solana.PublicKey) string {
	switch p {
	case solana.SystemProgramID:
		return "system"
	case solana.StakeProgramID:
		return "stake"
	case solana.ComputeBudget:
		return "computeBudget"
	}
	return p.String()
}

// systemNames names the system instructions by discriminator.
var systemNames = prefixed("system.", "CreateAccount", "Assign", "Transfer", "CreateAccountWithSeed",
	"AdvanceNonceAccount", "WithdrawNonceAccount", "InitializeNonceAccount", "AuthorizeNonceAccount",
	"Allocate", "AllocateWithSeed", "AssignWithSeed", "TransferWithSeed")

// stakeNames names the stake instructions by discriminator.
var stakeNames = prefixed("stake.", "Initialize", "Authorize", "DelegateStake", "Split", "Withdraw", "Deactivate",
	"SetLockup", "Merge", "AuthorizeWithSeed", "InitializeChecked", "AuthorizeChecked",
	"AuthorizeCheckedWithSeed", "SetLockupChecked", "GetMinimumDelegation", "DeactivateDelinquent",
	"Redelegate", "MoveStake", "MoveLamports")

// computeBudgetNames names the compute budget instructions by discriminator.
var computeBudgetNames = prefixed("computeBudget.", "RequestUnits", "RequestHeapFrame", "SetComputeUnitLimit",
	"SetComputeUnitPrice", "SetLoadedAccountsDataSizeLimit")

func prefixed(prefix string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// instrName names an instruction by program and discriminator without decoding its body.
func instrName(program solana.PublicKey, data []byte) string {
	switch program {
	case solana.SystemProgramID:
		if d, ok := discriminator(data); ok && d < uint32(len(systemNames)) {
			return systemNames[d]
		}
		return "system.unknown"
	case solana.StakeProgramID:
		if d, ok := discriminator(data); ok && d < uint32(len(stakeNames)) {
			return stakeNames[d]
		}
		return "stake.unknown"
	case solana.ComputeBudget:
		if len(data) >= 1 && int(data[0]) < len(computeBudgetNames) {
			return computeBudgetNames[data[0]]
		}
		return "computeBudget.unknown"
	}
	return programName(program) + ".unknown"
}

// decodeExact decodes data into v with solana-go's bincode decoder and refuses trailing bytes.
// A panic in the decoder is reported as a decode failure.
func decodeExact(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("instruction data does not decode")
		}
	}()
	dec := bin.NewBinDecoder(data)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("instruction data does not decode: %v", err)
	}
	if dec.Remaining() != 0 {
		return fmt.Errorf("instruction data has %d trailing bytes", dec.Remaining())
	}
	return nil
}

// malformed refuses an instruction whose data is not its layout. It asks solana-go's decoder
// (ref) why, so that the refusal reads the same whichever decoder found the fault; the
// instruction is refused even if that decoder were to accept it.
func malformed(d *decodedInstr, ref any) error {
	reason := fmt.Sprintf("%d bytes that are not the %s layout", len(d.data), d.name)
	if err := decodeExact(d.data, ref); err != nil {
		reason = err.Error()
	}
	return mismatch(fmt.Sprintf("instruction %s", d), "well-formed instruction data", reason)
}

// decodeStake decodes the data of an accepted stake instruction by its discriminator.
func decodeStake(d *decodedInstr) error {
	disc, _ := discriminator(d.data)
	ok := false
	switch disc {
	case stake.Instruction_Initialize:
		d.kind = kindInitialize
		d.init, ok = decodeInitialize(d.data)
	case stake.Instruction_DelegateStake:
		d.kind = kindDelegate
		ok = decodeNoArgs(d.data, disc)
	case stake.Instruction_Deactivate:
		d.kind = kindDeactivate
		ok = decodeNoArgs(d.data, disc)
	case stake.Instruction_Withdraw:
		d.kind = kindWithdraw
		d.lamports, ok = decodeWithdraw(d.data)
	}
	if !ok {
		return malformed(d, new(stake.Instruction))
	}
	return nil
}

// verify checks t against the intent and the policy and returns what it verified, in two passes.
// The named checks look for the known ways a transaction differs from what was asked, and name
// the difference in the operator's terms ("vote account", "stake amount", "lockup"). The gate
// then builds the transaction stakeflow expects and accepts t only if it is that transaction: the
// named checks give the message, the gate decides.
func (s *Solana) verify(t *wireTx, in *parsedIntent) (*Verified, error) {
	b, err := s.checkNamed(t, in)
	if err != nil {
		return nil, err
	}
	return s.gateBudget(t, in, b)
}

// checkNamed runs the named checks and returns the compute budget they read.
func (s *Solana) checkNamed(t *wireTx, in *parsedIntent) (budget, error) {
	if t.versioned {
		got := fmt.Sprintf("v%d", t.version)
		if t.numLookups > 0 {
			got += fmt.Sprintf(" with %d address lookup tables", t.numLookups)
		}
		return budget{}, mismatch("message version", "legacy", got)
	}
	h := t.header
	if t.sigCount != int(h.NumRequiredSignatures) {
		return budget{}, mismatch("signature slots", fmt.Sprintf("%d (as the header requires)", h.NumRequiredSignatures), fmt.Sprint(t.sigCount))
	}
	if t.keys[0] != in.staker {
		return budget{}, mismatch("fee payer", in.staker.String(), t.keys[0].String())
	}
	if h.NumRequiredSignatures != 1 {
		signers := make([]string, 0, len(t.keys))
		for i := 0; i < int(h.NumRequiredSignatures) && i < len(t.keys); i++ {
			signers = append(signers, t.keys[i].String())
		}
		return budget{}, mismatch("required signers", "only the staker "+in.staker.String(),
			fmt.Sprintf("%d signers [%s]", h.NumRequiredSignatures, strings.Join(signers, ", ")))
	}
	if h.NumReadonlySignedAccounts != 0 {
		return budget{}, mismatch("fee payer", "writable", "read-only")
	}
	if int(h.NumReadonlyUnsignedAccounts) > len(t.keys)-1 {
		return budget{}, mismatch("message header", fmt.Sprintf("at most %d read-only unsigned accounts", len(t.keys)-1), fmt.Sprint(h.NumReadonlyUnsignedAccounts))
	}
	// A message holds at most a few dozen keys (it fits in 1232 bytes), so a pairwise scan is
	// cheaper than a set. It reports the first key seen twice, with its first index.
	for i := 1; i < len(t.keys); i++ {
		for j := 0; j < i; j++ {
			if t.keys[j] == t.keys[i] {
				return budget{}, mismatch("account keys", "no duplicates", fmt.Sprintf("%s at indexes %d and %d", t.keys[i], j, i))
			}
		}
	}
	b, err := s.chooseBudget(t, in.Operation)
	if err != nil {
		return budget{}, err
	}

	all := make([]decodedInstr, len(t.instrs))
	main := make([]*decodedInstr, 0, 3)
	for i, wi := range t.instrs {
		d := &all[i]
		*d = decodedInstr{index: i, program: t.keys[wi.programIndex], keys: t.keys, idx: wi.accounts, data: wi.data}
		d.name = instrName(d.program, d.data)
		if wi.programIndex == 0 {
			return budget{}, mismatch(fmt.Sprintf("instruction #%d program", i), "system, stake or computeBudget", "the fee payer")
		}
		switch d.program {
		case solana.ComputeBudget:
			// The runtime reads the compute budget wherever it is; stakeflow's transactions set it
			// first, so a service has no reason to put it anywhere else.
			if len(main) > 0 {
				return budget{}, mismatch(fmt.Sprintf("instruction %s position", d), "before the staking instructions", "after "+main[len(main)-1].String())
			}
			continue
		case solana.SystemProgramID:
			if disc, ok := discriminator(d.data); ok && disc == system.Instruction_CreateAccountWithSeed {
				if d.create, ok = decodeCreateWithSeed(d.data); !ok {
					return budget{}, malformed(d, new(system.Instruction))
				}
				d.kind = kindCreateWithSeed
				break
			}
			d.system = new(system.Instruction)
			if err := decodeExact(d.data, d.system); err != nil {
				return budget{}, mismatch(fmt.Sprintf("instruction %s", d), "well-formed instruction data", err.Error())
			}
		case solana.StakeProgramID:
			switch d.name {
			case "stake.Initialize", "stake.DelegateStake", "stake.Deactivate", "stake.Withdraw":
			default:
				return budget{}, mismatch(fmt.Sprintf("instruction #%d", i), "stake Initialize, DelegateStake, Deactivate or Withdraw", d.name)
			}
			if err := decodeStake(d); err != nil {
				return budget{}, err
			}
		default:
			return budget{}, mismatch(fmt.Sprintf("instruction #%d program", i), "system, stake or computeBudget", d.program.String())
		}
		main = append(main, d)
	}

	var want []string
	switch in.Operation {
	case OpStake:
		want = wantStake
	case OpUnstake:
		want = wantUnstake
	case OpWithdraw:
		want = wantWithdraw
	}
	for i, w := range want {
		if i >= len(main) {
			got := make([]string, len(main))
			for i, d := range main {
				got[i] = d.String()
			}
			return budget{}, mismatch("instructions", strings.Join(want, ", "), "["+strings.Join(got, ", ")+"]")
		}
		if main[i].name != w {
			return budget{}, mismatch(fmt.Sprintf("instruction %d of %s", i+1, in.Operation), w, main[i].String())
		}
	}
	if len(main) > len(want) {
		return budget{}, mismatch("unexpected instruction", "only "+strings.Join(want, ", "), main[len(want)].String())
	}

	switch in.Operation {
	case OpStake:
		err = s.checkStake(main, in)
	case OpUnstake:
		err = checkDeactivate(main[0], in)
	default:
		err = checkWithdraw(main[0], in)
	}
	return b, err
}

// The instruction sequence of each operation, compute budget instructions aside.
var (
	wantStake    = []string{"system.CreateAccountWithSeed", "stake.Initialize", "stake.DelegateStake"}
	wantUnstake  = []string{"stake.Deactivate"}
	wantWithdraw = []string{"stake.Withdraw"}
)

// wantAccounts checks an instruction's account list against exact expectations; a zero key in
// want matches anything (the caller checks it).
func wantAccounts(d *decodedInstr, roles []string, want []solana.PublicKey) error {
	if d.numAccounts() != len(want) {
		return mismatch(fmt.Sprintf("instruction %s accounts", d), fmt.Sprintf("%d accounts (%s)", len(want), strings.Join(roles, ", ")), fmt.Sprint(d.numAccounts()))
	}
	for i, w := range want {
		if w.IsZero() {
			continue
		}
		if got := d.account(i); got != w {
			return mismatch(fmt.Sprintf("instruction %s %s", d, roles[i]), w.String(), got.String())
		}
	}
	return nil
}

// Account roles of the instructions checked.
var (
	rolesCreate     = []string{"funding account", "new stake account", "base account"}
	rolesInitialize = []string{"stake account", "rent sysvar"}
	rolesDelegate   = []string{"stake account", "vote account", "clock sysvar", "stake history sysvar", "stake config", "stake authority"}
	rolesDeactivate = []string{"stake account", "clock sysvar", "stake authority"}
	rolesWithdraw   = []string{"stake account", "recipient", "clock sysvar", "stake history sysvar", "withdraw authority"}
)

func (s *Solana) checkStake(main []*decodedInstr, in *parsedIntent) error {
	create, initInstr, delegate := main[0], main[1], main[2]

	// CreateAccountWithSeed: funded and based on the staker, owned by the stake program.
	c := &create.create
	if c.base != in.staker {
		return mismatch("new stake account base", in.staker.String(), c.base.String())
	}
	if c.owner != solana.StakeProgramID {
		return mismatch("new stake account owner", solana.StakeProgramID.String(), c.owner.String())
	}
	if c.lamports != in.Lamports {
		return mismatch("stake amount", fmt.Sprintf("%d lamports", in.Lamports), fmt.Sprintf("%d lamports", c.lamports))
	}
	if c.space != stakeAccountSpace {
		return mismatch("new stake account size", fmt.Sprintf("%d bytes", stakeAccountSpace), fmt.Sprintf("%d bytes", c.space))
	}
	derived, ok := deriveWithSeed(in.staker, c.seed, solana.StakeProgramID)
	if !ok {
		return mismatch("new stake account seed", fmt.Sprintf("at most %d bytes", solana.MaxSeedLength), fmt.Sprintf("%d bytes", len(c.seed)))
	}
	// The base account may be left out when it is the funding account (as @solana/web3.js
	// builds it): the system program then takes the funding account's signature for the base's.
	want := []solana.PublicKey{in.staker, derived, in.staker}
	if create.numAccounts() == 2 {
		want = want[:2]
	}
	if err := wantAccounts(create, rolesCreate[:len(want)], want); err != nil {
		return err
	}

	// Initialize: both authorities are the staker, and no lockup at all. A lockup keeps the SOL
	// in the stake account until its date or epoch unless the custodian signs, so even one with
	// the staker as custodian makes the withdrawal depend on more than the staker's key.
	ini := &initInstr.init
	if err := wantAccounts(initInstr, rolesInitialize, []solana.PublicKey{derived, solana.SysVarRentPubkey}); err != nil {
		return err
	}
	if ini.staker != in.staker {
		return mismatch("stake authority", in.staker.String(), ini.staker.String())
	}
	if ini.withdrawer != in.staker {
		return mismatch("withdraw authority", in.staker.String(), ini.withdrawer.String())
	}
	if ini.unixTimestamp != 0 || ini.epoch != 0 || !ini.custodian.IsZero() {
		return mismatch("lockup", "none", fmt.Sprintf("until unix time %d / epoch %d, custodian %s", ini.unixTimestamp, ini.epoch, ini.custodian))
	}

	// DelegateStake: that account, by the staker, to the intended validator.
	if err := wantAccounts(delegate, rolesDelegate,
		[]solana.PublicKey{derived, {}, solana.SysVarClockPubkey, solana.SysVarStakeHistoryPubkey, solana.SysVarStakeConfigPubkey, in.staker}); err != nil {
		return err
	}
	vote := delegate.account(1)
	if in.hasVote && vote != in.vote {
		return mismatch("vote account", in.vote.String(), vote.String())
	}
	_, err := s.chooseVote(vote, in)
	return err
}

func checkDeactivate(d *decodedInstr, in *parsedIntent) error {
	if d.kind != kindDeactivate {
		return mismatch("instruction "+d.String(), "Deactivate", d.name)
	}
	return wantAccounts(d, rolesDeactivate, []solana.PublicKey{in.stakeAccount, solana.SysVarClockPubkey, in.staker})
}

func checkWithdraw(d *decodedInstr, in *parsedIntent) error {
	if d.kind != kindWithdraw {
		return mismatch("instruction "+d.String(), "Withdraw data", "incomplete data")
	}
	if err := wantAccounts(d, rolesWithdraw, []solana.PublicKey{in.stakeAccount, in.staker, solana.SysVarClockPubkey, solana.SysVarStakeHistoryPubkey, in.staker}); err != nil {
		return err
	}
	if d.lamports != in.Lamports {
		return mismatch("withdraw amount", fmt.Sprintf("%d lamports", in.Lamports), fmt.Sprintf("%d lamports", d.lamports))
	}
	return nil
}
