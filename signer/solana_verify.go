package signer

import (
	"encoding/binary"
	"fmt"
	"strings"

	bin "github.com/gagliardetto/binary"
	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
)

// stakeAccountSpace is the size of a stake account (StakeStateV2).
const stakeAccountSpace = 200

// Compute Budget instruction discriminators (first data byte).
const (
	cbSetComputeUnitLimit = 2
	cbSetComputeUnitPrice = 3
)

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

func parseIntent(in Intent) (*parsedIntent, error) {
	p := &parsedIntent{Intent: in}
	if in.Chain != "solana" {
		return nil, intentErr("chain %q is not solana", in.Chain)
	}
	var err error
	if p.staker, err = solana.PublicKeyFromBase58(in.Staker); err != nil {
		return nil, intentErr("staker %q is not a base58 address", in.Staker)
	}
	switch in.Operation {
	case OpStake:
		if in.Lamports == 0 {
			return nil, intentErr("stake of 0 lamports")
		}
		if in.VoteAccount != "" {
			if p.vote, err = solana.PublicKeyFromBase58(in.VoteAccount); err != nil {
				return nil, intentErr("vote account %q is not a base58 address", in.VoteAccount)
			}
			p.hasVote = true
		}
	case OpUnstake, OpWithdraw:
		if p.stakeAccount, err = solana.PublicKeyFromBase58(in.StakeAccount); err != nil {
			return nil, intentErr("stake account %q is not a base58 address", in.StakeAccount)
		}
		if in.Operation == OpUnstake && in.Lamports != 0 {
			return nil, intentErr("unstake of %d lamports: Deactivate covers the whole stake account, so a partial amount cannot be verified (use 0)", in.Lamports)
		}
		if in.Operation == OpWithdraw && in.Lamports == 0 {
			return nil, intentErr("withdraw of 0 lamports")
		}
	default:
		return nil, intentErr("unknown operation %q", in.Operation)
	}
	return p, nil
}

// decodedInstr is one instruction with its program and account keys resolved from the message.
type decodedInstr struct {
	index    int
	program  solana.PublicKey
	accounts []solana.PublicKey
	data     []byte
	name     string // e.g. "system.Transfer"
	system   *system.Instruction
	stake    *stake.Instruction
}

func (d *decodedInstr) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", d.index, d.name)
	if d.system != nil {
		switch x := d.system.Impl.(type) {
		case *system.Transfer:
			fmt.Fprintf(&b, " of %d lamports", deref(x.Lamports))
			if len(d.accounts) > 1 {
				fmt.Fprintf(&b, " to %s", d.accounts[1])
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
	switch {
	case p.Equals(solana.SystemProgramID):
		return "system"
	case p.Equals(solana.StakeProgramID):
		return "stake"
	case p.Equals(solana.ComputeBudget):
		return "computeBudget"
	}
	return p.String()
}

var systemNames = map[uint32]string{
	system.Instruction_CreateAccount: "CreateAccount", system.Instruction_Assign: "Assign",
	system.Instruction_Transfer: "Transfer", system.Instruction_CreateAccountWithSeed: "CreateAccountWithSeed",
	system.Instruction_AdvanceNonceAccount: "AdvanceNonceAccount", system.Instruction_WithdrawNonceAccount: "WithdrawNonceAccount",
	system.Instruction_InitializeNonceAccount: "InitializeNonceAccount", system.Instruction_AuthorizeNonceAccount: "AuthorizeNonceAccount",
	system.Instruction_Allocate: "Allocate", system.Instruction_AllocateWithSeed: "AllocateWithSeed",
	system.Instruction_AssignWithSeed: "AssignWithSeed", system.Instruction_TransferWithSeed: "TransferWithSeed",
}

var stakeNames = []string{"Initialize", "Authorize", "DelegateStake", "Split", "Withdraw", "Deactivate",
	"SetLockup", "Merge", "AuthorizeWithSeed", "InitializeChecked", "AuthorizeChecked",
	"AuthorizeCheckedWithSeed", "SetLockupChecked", "GetMinimumDelegation", "DeactivateDelinquent",
	"Redelegate", "MoveStake", "MoveLamports"}

// instrName names an instruction by program and discriminator without decoding its body.
func instrName(program solana.PublicKey, data []byte) string {
	p := programName(program)
	switch {
	case program.Equals(solana.SystemProgramID) && len(data) >= 4:
		if n, ok := systemNames[binary.LittleEndian.Uint32(data)]; ok {
			return p + "." + n
		}
	case program.Equals(solana.StakeProgramID) && len(data) >= 4:
		if d := binary.LittleEndian.Uint32(data); d < uint32(len(stakeNames)) {
			return p + "." + stakeNames[d]
		}
	case program.Equals(solana.ComputeBudget) && len(data) >= 1:
		switch data[0] {
		case 0:
			return p + ".RequestUnits"
		case 1:
			return p + ".RequestHeapFrame"
		case cbSetComputeUnitLimit:
			return p + ".SetComputeUnitLimit"
		case cbSetComputeUnitPrice:
			return p + ".SetComputeUnitPrice"
		case 4:
			return p + ".SetLoadedAccountsDataSizeLimit"
		}
	}
	return p + ".unknown"
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

func (s *Solana) verify(t *wireTx, in *parsedIntent) (*Verified, error) {
	if t.versioned {
		got := fmt.Sprintf("v%d", t.version)
		if t.numLookups > 0 {
			got += fmt.Sprintf(" with %d address lookup tables", t.numLookups)
		}
		return nil, mismatch("message version", "legacy", got)
	}
	h := t.header
	if t.sigCount != int(h.NumRequiredSignatures) {
		return nil, mismatch("signature slots", fmt.Sprintf("%d (as the header requires)", h.NumRequiredSignatures), fmt.Sprint(t.sigCount))
	}
	if !t.keys[0].Equals(in.staker) {
		return nil, mismatch("fee payer", in.staker.String(), t.keys[0].String())
	}
	if h.NumRequiredSignatures != 1 {
		signers := make([]string, 0, len(t.keys))
		for i := 0; i < int(h.NumRequiredSignatures) && i < len(t.keys); i++ {
			signers = append(signers, t.keys[i].String())
		}
		return nil, mismatch("required signers", "only the staker "+in.staker.String(),
			fmt.Sprintf("%d signers [%s]", h.NumRequiredSignatures, strings.Join(signers, ", ")))
	}
	if h.NumReadonlySignedAccounts != 0 {
		return nil, mismatch("fee payer", "writable", "read-only")
	}
	if int(h.NumReadonlyUnsignedAccounts) > len(t.keys)-1 {
		return nil, mismatch("message header", fmt.Sprintf("at most %d read-only unsigned accounts", len(t.keys)-1), fmt.Sprint(h.NumReadonlyUnsignedAccounts))
	}
	seen := make(map[solana.PublicKey]int, len(t.keys))
	for i, k := range t.keys {
		if j, dup := seen[k]; dup {
			return nil, mismatch("account keys", "no duplicates", fmt.Sprintf("%s at indexes %d and %d", k, j, i))
		}
		seen[k] = i
	}

	v := &Verified{Operation: in.Operation, Staker: in.staker.String(), RecentBlockhash: t.blockhash.String(), tx: t}
	var main []*decodedInstr
	var hasPrice, hasLimit bool
	for i, wi := range t.instrs {
		d := &decodedInstr{index: i, program: t.keys[wi.programIndex], data: wi.data}
		for _, a := range wi.accounts {
			d.accounts = append(d.accounts, t.keys[a])
		}
		d.name = instrName(d.program, d.data)
		if wi.programIndex == 0 {
			return nil, mismatch(fmt.Sprintf("instruction #%d program", i), "system, stake or computeBudget", "the fee payer")
		}
		switch {
		case d.program.Equals(solana.ComputeBudget):
			if err := s.checkComputeBudget(d, v, &hasPrice, &hasLimit); err != nil {
				return nil, err
			}
			continue
		case d.program.Equals(solana.SystemProgramID):
			d.system = new(system.Instruction)
			if err := decodeExact(d.data, d.system); err != nil {
				return nil, mismatch(fmt.Sprintf("instruction %s", d), "well-formed instruction data", err.Error())
			}
		case d.program.Equals(solana.StakeProgramID):
			switch d.name {
			case "stake.Initialize", "stake.DelegateStake", "stake.Deactivate", "stake.Withdraw":
			default:
				return nil, mismatch(fmt.Sprintf("instruction #%d", i), "stake Initialize, DelegateStake, Deactivate or Withdraw", d.name)
			}
			d.stake = new(stake.Instruction)
			if err := decodeExact(d.data, d.stake); err != nil {
				return nil, mismatch(fmt.Sprintf("instruction %s", d), "well-formed instruction data", err.Error())
			}
		default:
			return nil, mismatch(fmt.Sprintf("instruction #%d program", i), "system, stake or computeBudget", d.program.String())
		}
		main = append(main, d)
	}

	var want []string
	switch in.Operation {
	case OpStake:
		want = []string{"system.CreateAccountWithSeed", "stake.Initialize", "stake.DelegateStake"}
	case OpUnstake:
		want = []string{"stake.Deactivate"}
	case OpWithdraw:
		want = []string{"stake.Withdraw"}
	}
	got := make([]string, len(main))
	for i, d := range main {
		got[i] = d.String()
	}
	for i, w := range want {
		if i >= len(main) {
			return nil, mismatch("instructions", strings.Join(want, ", "), "["+strings.Join(got, ", ")+"]")
		}
		if main[i].name != w {
			return nil, mismatch(fmt.Sprintf("instruction %d of %s", i+1, in.Operation), w, main[i].String())
		}
	}
	if len(main) > len(want) {
		return nil, mismatch("unexpected instruction", "only "+strings.Join(want, ", "), main[len(want)].String())
	}

	var err error
	switch in.Operation {
	case OpStake:
		err = s.checkStake(main, in, v)
	case OpUnstake:
		err = checkDeactivate(main[0], in, v)
	case OpWithdraw:
		err = checkWithdraw(main[0], in, v)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (s *Solana) checkComputeBudget(d *decodedInstr, v *Verified, hasPrice, hasLimit *bool) error {
	check := "instruction " + d.String()
	if len(d.accounts) != 0 {
		return mismatch(check, "no accounts", fmt.Sprintf("%d accounts", len(d.accounts)))
	}
	if len(d.data) == 0 {
		return mismatch(check, "SetComputeUnitPrice or SetComputeUnitLimit", "empty data")
	}
	switch d.data[0] {
	case cbSetComputeUnitPrice:
		if len(d.data) != 9 {
			return mismatch(check, "9 bytes of data", fmt.Sprintf("%d bytes", len(d.data)))
		}
		if *hasPrice {
			return mismatch(check, "at most one SetComputeUnitPrice", "a second one")
		}
		*hasPrice = true
		v.ComputeUnitPrice = binary.LittleEndian.Uint64(d.data[1:])
		if v.ComputeUnitPrice > s.policy.MaxComputeUnitPrice {
			return mismatch("compute unit price", fmt.Sprintf("at most %d micro-lamports per unit", s.policy.MaxComputeUnitPrice), fmt.Sprint(v.ComputeUnitPrice))
		}
	case cbSetComputeUnitLimit:
		if len(d.data) != 5 {
			return mismatch(check, "5 bytes of data", fmt.Sprintf("%d bytes", len(d.data)))
		}
		if *hasLimit {
			return mismatch(check, "at most one SetComputeUnitLimit", "a second one")
		}
		*hasLimit = true
		v.ComputeUnitLimit = binary.LittleEndian.Uint32(d.data[1:])
		if v.ComputeUnitLimit > s.policy.MaxComputeUnitLimit {
			return mismatch("compute unit limit", fmt.Sprintf("at most %d units", s.policy.MaxComputeUnitLimit), fmt.Sprint(v.ComputeUnitLimit))
		}
	default:
		return mismatch(check, "computeBudget.SetComputeUnitPrice or computeBudget.SetComputeUnitLimit", d.name)
	}
	return nil
}

// wantAccounts checks an instruction's account list against exact expectations; a zero key in
// want matches anything (the caller checks it).
func wantAccounts(d *decodedInstr, roles []string, want []solana.PublicKey) error {
	if len(d.accounts) != len(want) {
		return mismatch(fmt.Sprintf("instruction %s accounts", d), fmt.Sprintf("%d accounts (%s)", len(want), strings.Join(roles, ", ")), fmt.Sprint(len(d.accounts)))
	}
	for i, w := range want {
		if w.IsZero() {
			continue
		}
		if !d.accounts[i].Equals(w) {
			return mismatch(fmt.Sprintf("instruction %s %s", d, roles[i]), w.String(), d.accounts[i].String())
		}
	}
	return nil
}

func (s *Solana) checkStake(main []*decodedInstr, in *parsedIntent, v *Verified) error {
	create, initInstr, delegate := main[0], main[1], main[2]

	// CreateAccountWithSeed: funded and based on the staker, owned by the stake program.
	c, ok := create.system.Impl.(*system.CreateAccountWithSeed)
	if !ok || c.Base == nil || c.Seed == nil || c.Lamports == nil || c.Space == nil || c.Owner == nil {
		return mismatch("instruction "+create.String(), "CreateAccountWithSeed data", "incomplete data")
	}
	if !c.Base.Equals(in.staker) {
		return mismatch("new stake account base", in.staker.String(), c.Base.String())
	}
	if !c.Owner.Equals(solana.StakeProgramID) {
		return mismatch("new stake account owner", solana.StakeProgramID.String(), c.Owner.String())
	}
	if *c.Lamports != in.Lamports {
		return mismatch("stake amount", fmt.Sprintf("%d lamports", in.Lamports), fmt.Sprintf("%d lamports", *c.Lamports))
	}
	if *c.Space != stakeAccountSpace {
		return mismatch("new stake account size", fmt.Sprintf("%d bytes", stakeAccountSpace), fmt.Sprintf("%d bytes", *c.Space))
	}
	derived, err := solana.CreateWithSeed(in.staker, *c.Seed, solana.StakeProgramID)
	if err != nil {
		return mismatch("new stake account seed", fmt.Sprintf("at most %d bytes", solana.MaxSeedLength), fmt.Sprintf("%d bytes", len(*c.Seed)))
	}
	switch len(create.accounts) {
	case 2:
		err = wantAccounts(create, []string{"funding account", "new stake account"}, []solana.PublicKey{in.staker, derived})
	default:
		err = wantAccounts(create, []string{"funding account", "new stake account", "base account"}, []solana.PublicKey{in.staker, derived, in.staker})
	}
	if err != nil {
		return err
	}

	// Initialize: both authorities are the staker; no lockup anyone but the staker could lift.
	ini, ok := initInstr.stake.Impl.(*stake.Initialize)
	if !ok || ini.Authorized == nil || ini.Authorized.Staker == nil || ini.Authorized.Withdrawer == nil ||
		ini.Lockup == nil || ini.Lockup.UnixTimestamp == nil || ini.Lockup.Epoch == nil || ini.Lockup.Custodian == nil {
		return mismatch("instruction "+initInstr.String(), "Initialize data", "incomplete data")
	}
	if err := wantAccounts(initInstr, []string{"stake account", "rent sysvar"}, []solana.PublicKey{derived, solana.SysVarRentPubkey}); err != nil {
		return err
	}
	if !ini.Authorized.Staker.Equals(in.staker) {
		return mismatch("stake authority", in.staker.String(), ini.Authorized.Staker.String())
	}
	if !ini.Authorized.Withdrawer.Equals(in.staker) {
		return mismatch("withdraw authority", in.staker.String(), ini.Authorized.Withdrawer.String())
	}
	cust := *ini.Lockup.Custodian
	if !cust.IsZero() && !cust.Equals(in.staker) {
		return mismatch("lockup custodian", "none or the staker "+in.staker.String(), cust.String())
	}
	if cust.IsZero() && (*ini.Lockup.UnixTimestamp != 0 || *ini.Lockup.Epoch != 0) {
		return mismatch("lockup", "none", fmt.Sprintf("until unix time %d / epoch %d", *ini.Lockup.UnixTimestamp, *ini.Lockup.Epoch))
	}

	// DelegateStake: that account, by the staker, to the intended validator.
	if err := wantAccounts(delegate,
		[]string{"stake account", "vote account", "clock sysvar", "stake history sysvar", "stake config", "stake authority"},
		[]solana.PublicKey{derived, {}, solana.SysVarClockPubkey, solana.SysVarStakeHistoryPubkey, solana.SysVarStakeConfigPubkey, in.staker}); err != nil {
		return err
	}
	vote := delegate.accounts[1]
	if in.hasVote && !vote.Equals(in.vote) {
		return mismatch("vote account", in.vote.String(), vote.String())
	}
	if len(s.badVote) > 0 {
		return mismatch("vote account allow-list", "base58 addresses", fmt.Sprintf("malformed entries %q", s.badVote))
	}
	if len(s.allowed) > 0 && !s.allowed[vote] {
		return mismatch("vote account", fmt.Sprintf("one on the allow-list %v", s.policy.AllowedVoteAccounts), vote.String())
	}
	if !in.hasVote && len(s.allowed) == 0 {
		return mismatch("vote account", "named in the intent or on an allow-list (neither is set)", vote.String())
	}

	v.StakeAccount = derived.String()
	v.VoteAccount = vote.String()
	v.Seed = *c.Seed
	v.Lamports = *c.Lamports
	return nil
}

func checkDeactivate(d *decodedInstr, in *parsedIntent, v *Verified) error {
	if _, ok := d.stake.Impl.(*stake.Deactivate); !ok {
		return mismatch("instruction "+d.String(), "Deactivate", d.name)
	}
	if err := wantAccounts(d, []string{"stake account", "clock sysvar", "stake authority"},
		[]solana.PublicKey{in.stakeAccount, solana.SysVarClockPubkey, in.staker}); err != nil {
		return err
	}
	v.StakeAccount = in.stakeAccount.String()
	return nil
}

func checkWithdraw(d *decodedInstr, in *parsedIntent, v *Verified) error {
	w, ok := d.stake.Impl.(*stake.Withdraw)
	if !ok || w.Lamports == nil {
		return mismatch("instruction "+d.String(), "Withdraw data", "incomplete data")
	}
	roles := []string{"stake account", "recipient", "clock sysvar", "stake history sysvar", "withdraw authority"}
	want := []solana.PublicKey{in.stakeAccount, in.staker, solana.SysVarClockPubkey, solana.SysVarStakeHistoryPubkey, in.staker}
	if len(d.accounts) == 6 {
		roles = append(roles, "lockup custodian")
		want = append(want, in.staker)
	}
	if err := wantAccounts(d, roles, want); err != nil {
		return err
	}
	if *w.Lamports != in.Lamports {
		return mismatch("withdraw amount", fmt.Sprintf("%d lamports", in.Lamports), fmt.Sprintf("%d lamports", *w.Lamports))
	}
	v.StakeAccount = in.stakeAccount.String()
	v.Lamports = *w.Lamports
	return nil
}
