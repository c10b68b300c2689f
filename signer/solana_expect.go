package signer

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/bits"

	"github.com/gagliardetto/solana-go"
	computebudget "github.com/gagliardetto/solana-go/programs/compute-budget"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
)

// The gate: verification by exact expectation.
//
// From the intent and the few values the staking service is allowed to choose, the gate builds
// the transaction stakeflow expects, with solana-go's builders, and accepts the service's
// transaction only if its message is that transaction's message. The service may choose:
//
//   - for every operation: the recent blockhash, and a compute budget of at most one
//     SetComputeUnitLimit (at most the policy's unit-limit cap) and at most one
//     SetComputeUnitPrice (at most the policy's unit-price cap), in either order, before the
//     staking instructions;
//   - for a stake: the new stake account's seed (at most 32 bytes), and the vote account when
//     the intent names none (then it must be on the policy's allow-list).
//
// Everything else follows from the intent: the staker pays and is the only signer, stake is
// CreateAccountWithSeed (funding, new and base account) + Initialize (staker and withdrawer =
// staker, no lockup) + DelegateStake, unstake is Deactivate, withdraw is Withdraw of the intent's
// lamports to the staker (five accounts, no custodian). The total fee must then be under the
// policy's cap.

// Compute budget instruction discriminators (first data byte).
const (
	cbSetComputeUnitLimit = 2
	cbSetComputeUnitPrice = 3
)

// Fee rules of the Solana runtime.
const (
	// lamportsPerSignature is the base fee per signature.
	lamportsPerSignature = 5_000
	// defaultInstructionUnits is the unit limit the runtime grants each instruction other than
	// compute budget when the transaction sets none (the most it grants: some builtins get less).
	defaultInstructionUnits = 200_000
	// maxTransactionUnits is the most any transaction may be granted.
	maxTransactionUnits = 1_400_000
	// microLamportsPerLamport converts a unit price into lamports.
	microLamportsPerLamport = 1_000_000
)

// choices are the values of a transaction that the staking service chose.
type choices struct {
	blockhash solana.Hash
	seed      string // stake: the new stake account's seed
	// noBase is true when the service's CreateAccountWithSeed lists no base account (2 accounts:
	// the base is the funding account, as @solana/web3.js builds it); otherwise it lists 3.
	noBase bool
	vote   solana.PublicKey // stake: the delegation target
	budget budget
}

// budget is a transaction's compute budget.
type budget struct {
	instrs    []solana.Instruction // rebuilt, in the service's order
	hasLimit  bool
	unitLimit uint32
	unitPrice uint64 // 0 when not set: no priority fee
}

// expectedSignatures is the number of signatures of every transaction stakeflow signs: the
// staker's, the only signer.
const expectedSignatures = 1

// stakingInstructions is the number of instructions other than compute budget of op's
// transaction.
func stakingInstructions(op Operation) int {
	if op == OpStake {
		return 3 // CreateAccountWithSeed, Initialize, DelegateStake
	}
	return 1 // Deactivate or Withdraw
}

// chooseBudget reads and checks the compute budget instructions of t, wherever they are (the
// comparison with the expected transaction then requires them first), and rebuilds them. The
// total fee is checked before the caps per unit: it is what the staker pays, so a budget over
// both is refused for its fee.
func (s *Solana) chooseBudget(t *wireTx, op Operation) (budget, error) {
	var b budget
	hasPrice := false
	for i, wi := range t.instrs {
		if t.keys[wi.programIndex] != solana.ComputeBudget {
			continue
		}
		name := instrName(solana.ComputeBudget, wi.data)
		check := fmt.Sprintf("instruction #%d %s", i, name)
		if len(wi.accounts) != 0 {
			return budget{}, mismatch(check+" accounts", "none", fmt.Sprintf("%d accounts", len(wi.accounts)))
		}
		switch {
		case len(wi.data) == 5 && wi.data[0] == cbSetComputeUnitLimit:
			if b.hasLimit {
				return budget{}, mismatch(check, "at most one SetComputeUnitLimit", "a second one")
			}
			b.hasLimit = true
			b.unitLimit = binary.LittleEndian.Uint32(wi.data[1:])
			b.instrs = append(b.instrs, computebudget.NewSetComputeUnitLimitInstruction(b.unitLimit).Build())
		case len(wi.data) == 9 && wi.data[0] == cbSetComputeUnitPrice:
			if hasPrice {
				return budget{}, mismatch(check, "at most one SetComputeUnitPrice", "a second one")
			}
			hasPrice = true
			b.unitPrice = binary.LittleEndian.Uint64(wi.data[1:])
			b.instrs = append(b.instrs, computebudget.NewSetComputeUnitPriceInstruction(b.unitPrice).Build())
		case len(wi.data) > 0 && (wi.data[0] == cbSetComputeUnitLimit || wi.data[0] == cbSetComputeUnitPrice):
			want := map[byte]string{cbSetComputeUnitLimit: "5 bytes of data", cbSetComputeUnitPrice: "9 bytes of data"}[wi.data[0]]
			return budget{}, mismatch(check, want, fmt.Sprintf("%d bytes", len(wi.data)))
		default:
			return budget{}, mismatch(check, "computeBudget.SetComputeUnitPrice or computeBudget.SetComputeUnitLimit", name)
		}
	}
	if err := s.checkFee(maxFee(expectedSignatures, b, stakingInstructions(op)), b); err != nil {
		return budget{}, err
	}
	if b.unitLimit > s.policy.MaxComputeUnitLimit {
		return budget{}, mismatch("compute unit limit", fmt.Sprintf("at most %d units", s.policy.MaxComputeUnitLimit), fmt.Sprint(b.unitLimit))
	}
	if b.unitPrice > s.policy.MaxComputeUnitPrice {
		return budget{}, mismatch("compute unit price", fmt.Sprintf("at most %d micro-lamports per unit", s.policy.MaxComputeUnitPrice), fmt.Sprint(b.unitPrice))
	}
	return b, nil
}

// checkFee refuses a fee over the policy's cap, naming both.
func (s *Solana) checkFee(f fee, b budget) error {
	if f.total <= s.policy.MaxFeeLamports {
		return nil
	}
	return mismatch("fee", fmt.Sprintf("at most %d lamports (the policy's cap)", s.policy.MaxFeeLamports),
		fmt.Sprintf("%d lamports (%d base + %d priority: %d micro-lamports per unit × %d units)",
			f.total, f.base, f.priority, b.unitPrice, f.limit))
}

// chooseVote checks a vote account the transaction delegates to against the intent and the
// policy, and returns it.
func (s *Solana) chooseVote(vote solana.PublicKey, in *parsedIntent) (solana.PublicKey, error) {
	if len(s.badVote) > 0 {
		return solana.PublicKey{}, mismatch("vote account allow-list", "base58 addresses", fmt.Sprintf("malformed entries %q", s.badVote))
	}
	if in.hasVote && vote != in.vote {
		return solana.PublicKey{}, mismatch("vote account", in.vote.String(), vote.String())
	}
	if len(s.allowed) > 0 && !s.allowed[vote] {
		return solana.PublicKey{}, mismatch("vote account", fmt.Sprintf("one on the allow-list %v", s.policy.AllowedVoteAccounts), vote.String())
	}
	if !in.hasVote && len(s.allowed) == 0 {
		return solana.PublicKey{}, mismatch("vote account", "named in the intent or on an allow-list (neither is set)", vote.String())
	}
	return vote, nil
}

// choose reads the service's choices from t, its compute budget b already read by chooseBudget,
// and checks each against the intent and the policy. It reads each from the first instruction
// that can carry it; any other instruction, or any other value in it, then differs from the
// expected transaction.
func (s *Solana) choose(t *wireTx, in *parsedIntent, b budget) (*choices, error) {
	var err error
	c := &choices{blockhash: t.blockhash, budget: b}
	if in.Operation != OpStake {
		return c, nil
	}
	seedFound, voteFound := false, false
	for _, wi := range t.instrs {
		program := t.keys[wi.programIndex]
		disc, ok := discriminator(wi.data)
		if !ok {
			continue
		}
		switch {
		case !seedFound && program == solana.SystemProgramID && disc == system.Instruction_CreateAccountWithSeed:
			if cw, ok := decodeCreateWithSeed(wi.data); ok {
				if len(cw.seed) > solana.MaxSeedLength {
					return nil, mismatch("new stake account seed", fmt.Sprintf("at most %d bytes", solana.MaxSeedLength), fmt.Sprintf("%d bytes", len(cw.seed)))
				}
				c.seed, seedFound = string(cw.seed), true
				c.noBase = len(wi.accounts) == 2
			}
		case !voteFound && program == solana.StakeProgramID && disc == stake.Instruction_DelegateStake && len(wi.accounts) >= 2:
			c.vote, voteFound = t.keys[wi.accounts[1]], true
		}
	}
	if !seedFound {
		return nil, mismatch("instructions", "a system.CreateAccountWithSeed of the new stake account", "none")
	}
	switch {
	case in.hasVote:
		// The intent decides; the transaction's delegation is compared with it below.
		c.vote, err = s.chooseVote(in.vote, in)
	case voteFound:
		c.vote, err = s.chooseVote(c.vote, in)
	default:
		err = mismatch("instructions", "a stake.DelegateStake", "none")
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// expected is the transaction stakeflow expects, parsed as the service's is, with a name for
// each of its accounts.
type expected struct {
	tx           *wireTx
	staker, vote solana.PublicKey // vote is zero but for a stake
	stakeAccount solana.PublicKey
	staking      int // instructions other than compute budget
}

// buildError reports that the expected transaction could not be built from the choices. It is a
// verification failure: nothing is signed.
func buildError(what string, err error) error {
	return mismatch("expected transaction", "buildable from the intent and the service's choices", fmt.Sprintf("%s: %v", what, err))
}

// expect builds the transaction stakeflow expects for the intent and the service's choices, as
// solana-go's builders build it (the sandbox builds with them), with the account metas of a
// seed-derived stake account corrected (solana-go v1.14's Initialize and DelegateStake mark the
// stake account as a signer, which an account without a key can never be). The instruction data
// comes from this package's encoders, pinned to the builders' bytes by TestEncodersMatchSolanaGo.
func expect(in *parsedIntent, c *choices) (*expected, error) {
	e := &expected{staker: in.staker}
	var staking []solana.Instruction
	switch in.Operation {
	case OpStake:
		stakeAcc, ok := deriveWithSeed(in.staker, []byte(c.seed), solana.StakeProgramID)
		if !ok {
			return nil, buildError("stake account address", fmt.Errorf("seed of %d bytes", len(c.seed)))
		}
		createMetas := solana.AccountMetaSlice{
			solana.Meta(in.staker).WRITE().SIGNER(),
			solana.Meta(stakeAcc).WRITE(),
			solana.Meta(in.staker).SIGNER(),
		}
		if c.noBase {
			// The same instruction in the form that leaves out the base account because it is
			// the funding account: nothing differs on chain.
			createMetas = createMetas[:2]
		}
		staking = []solana.Instruction{
			solana.NewInstruction(solana.SystemProgramID, createMetas,
				encodeCreateWithSeed(in.staker, c.seed, in.Lamports, stakeAccountSpace, solana.StakeProgramID)),
			solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{
				solana.Meta(stakeAcc).WRITE(),
				solana.Meta(solana.SysVarRentPubkey),
			}, encodeInitialize(in.staker, in.staker)),
			solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{
				solana.Meta(stakeAcc).WRITE(),
				solana.Meta(c.vote),
				solana.Meta(solana.SysVarClockPubkey),
				solana.Meta(solana.SysVarStakeHistoryPubkey),
				solana.Meta(solana.SysVarStakeConfigPubkey),
				solana.Meta(in.staker).SIGNER(),
			}, encodeNoArgs(stake.Instruction_DelegateStake)),
		}
		e.stakeAccount = stakeAcc
		e.vote = c.vote
	case OpUnstake:
		staking = []solana.Instruction{solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{
			solana.Meta(in.stakeAccount).WRITE(),
			solana.Meta(solana.SysVarClockPubkey),
			solana.Meta(in.staker).SIGNER(),
		}, encodeNoArgs(stake.Instruction_Deactivate))}
		e.stakeAccount = in.stakeAccount
	case OpWithdraw:
		staking = []solana.Instruction{solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{
			solana.Meta(in.stakeAccount).WRITE(),
			solana.Meta(in.staker).WRITE(),
			solana.Meta(solana.SysVarClockPubkey),
			solana.Meta(solana.SysVarStakeHistoryPubkey),
			solana.Meta(in.staker).SIGNER(),
		}, encodeWithdraw(in.Lamports))}
		e.stakeAccount = in.stakeAccount
	default:
		return nil, intentErr("unknown operation %q", in.Operation)
	}
	e.staking = len(staking)

	instrs := make([]solana.Instruction, 0, len(c.budget.instrs)+len(staking))
	instrs = append(append(instrs, c.budget.instrs...), staking...)
	var err error
	if e.tx, err = compile(in.staker, instrs, c.blockhash); err != nil {
		return nil, err
	}
	return e, nil
}

// compile lays out the legacy message of instrs paid by payer as Solana compiles one: the fee
// payer first, then signer-writable, signer-read-only, writable and read-only accounts, each class
// in order of first appearance (the instructions' accounts, then their programs), programs
// read-only: the order solana-go compiles in. match compares a service's message with it
// account by account (order within a class is free), so only the roles and the instruction list
// matter; the wire bytes are never needed. solana-go's NewTransaction builds the same message but
// spends most of a verification base58-encoding the keys it sorts by.
func compile(payer solana.PublicKey, instrs []solana.Instruction, blockhash solana.Hash) (*wireTx, error) {
	// A message holds a dozen keys at most: slices and linear scans beat maps here.
	type entry struct {
		key  solana.PublicKey
		role role
	}
	order := make([]entry, 1, 12)
	order[0] = entry{payer, role{signer: true, writable: true}}
	add := func(k solana.PublicKey, r role) {
		for i := range order {
			if order[i].key == k {
				order[i].role = role{signer: order[i].role.signer || r.signer, writable: order[i].role.writable || r.writable}
				return
			}
		}
		order = append(order, entry{k, r})
	}
	for _, in := range instrs {
		for _, m := range in.Accounts() {
			add(m.PublicKey, role{signer: m.IsSigner, writable: m.IsWritable})
		}
	}
	for _, in := range instrs {
		add(in.ProgramID(), role{})
	}
	t := &wireTx{blockhash: blockhash, keys: make([]solana.PublicKey, 0, len(order))}
	for _, class := range []role{{true, true}, {true, false}, {false, true}, {false, false}} {
		for _, e := range order {
			if e.role != class {
				continue
			}
			t.keys = append(t.keys, e.key)
			switch class {
			case role{true, true}:
				t.header.NumRequiredSignatures++
			case role{true, false}:
				t.header.NumRequiredSignatures++
				t.header.NumReadonlySignedAccounts++
			case role{false, false}:
				t.header.NumReadonlyUnsignedAccounts++
			}
		}
	}
	index := func(k solana.PublicKey) uint8 {
		for i, tk := range t.keys {
			if tk == k {
				return uint8(i)
			}
		}
		return 0 // every key was added above
	}
	t.sigCount = int(t.header.NumRequiredSignatures)
	t.instrs = make([]wireInstr, 0, len(instrs))
	for _, in := range instrs {
		data, err := in.Data()
		if err != nil {
			return nil, buildError("instruction data", err)
		}
		metas := in.Accounts()
		wi := wireInstr{programIndex: index(in.ProgramID()), accounts: make([]uint8, len(metas)), data: data}
		for i, m := range metas {
			wi.accounts[i] = index(m.PublicKey)
		}
		t.instrs = append(t.instrs, wi)
	}
	return t, nil
}

// role is what an account may do in a transaction: sign, be written, both or neither.
type role struct{ signer, writable bool }

func (r role) String() string {
	switch {
	case r.signer && r.writable:
		return "signer, writable"
	case r.signer:
		return "signer, read-only"
	case r.writable:
		return "writable"
	}
	return "read-only"
}

// roleAt is the role the message header gives account i of t: the first NumRequiredSignatures
// accounts sign, the last NumReadonlySignedAccounts of those and the last
// NumReadonlyUnsignedAccounts of the others are read-only.
func roleAt(t *wireTx, i int) role {
	h := t.header
	signers := int(h.NumRequiredSignatures)
	if i < signers {
		return role{signer: true, writable: i < signers-int(h.NumReadonlySignedAccounts)}
	}
	return role{writable: i < len(t.keys)-int(h.NumReadonlyUnsignedAccounts)}
}

// label names account key k of the expected transaction.
func (e *expected) label(k solana.PublicKey) string {
	switch k {
	case e.staker:
		return "staker"
	case e.stakeAccount:
		return "stake account"
	case solana.SystemProgramID:
		return "system program"
	case solana.StakeProgramID:
		return "stake program"
	case solana.ComputeBudget:
		return "compute budget program"
	case solana.SysVarRentPubkey:
		return "rent sysvar"
	case solana.SysVarClockPubkey:
		return "clock sysvar"
	case solana.SysVarStakeHistoryPubkey:
		return "stake history sysvar"
	case solana.SysVarStakeConfigPubkey:
		return "stake config"
	}
	if !e.vote.IsZero() && k == e.vote {
		return "vote account"
	}
	return k.String()
}

// match reports the first difference between t and the expected transaction, or nil when t's
// message is the expected one.
//
// Equal means: same header, same recent blockhash, the same account keys each with the same
// role (signer and/or writable), and the same instructions, each resolved to its program, its
// account keys in order and its data bytes. The account keys may come in another order within
// a role class (signer-writable, signer-read-only, writable, read-only): builders order keys of
// one class differently (solana-go sorts them stably by role and keeps first appearance, others
// sort by address), and the order changes nothing on chain, where every instruction names its
// accounts by key. Only the fee payer's place is fixed: it is the first key.
func (e *expected) match(t *wireTx) error {
	w := e.tx
	if t.versioned {
		return mismatch("message version", "legacy", fmt.Sprintf("v%d", t.version))
	}
	if t.sigCount != w.sigCount {
		return mismatch("signature slots", fmt.Sprint(w.sigCount), fmt.Sprint(t.sigCount))
	}
	if t.keys[0] != w.keys[0] {
		return mismatch("account 0 (fee payer)", w.keys[0].String(), t.keys[0].String())
	}
	// A message holds a dozen keys at most: linear scans beat maps here.
	find := func(keys []solana.PublicKey, k solana.PublicKey) int {
		for i, x := range keys {
			if x == k {
				return i
			}
		}
		return -1
	}
	for i, k := range t.keys {
		if j := find(t.keys[:i], k); j >= 0 {
			return mismatch(fmt.Sprintf("account %d (%s)", i, e.label(k)), "each account once", fmt.Sprintf("%s again (first at account %d)", k, j))
		}
		j := find(w.keys, k)
		if j < 0 {
			return mismatch(fmt.Sprintf("account %d (unexpected)", i), "no such account", k.String())
		}
		if want, got := roleAt(w, j), roleAt(t, i); want != got {
			return mismatch(fmt.Sprintf("account %d (%s) flags", i, e.label(k)), want.String(), got.String())
		}
	}
	for _, k := range w.keys {
		if find(t.keys, k) < 0 {
			return mismatch(fmt.Sprintf("account (%s)", e.label(k)), k.String(), "missing")
		}
	}
	// Same keys with the same roles give the same header; compared anyway, so that equality
	// never rests on that reasoning alone.
	if t.header != w.header {
		return mismatch("message header", headerString(w.header), headerString(t.header))
	}
	if t.blockhash != w.blockhash {
		return mismatch("recent blockhash", w.blockhash.String(), t.blockhash.String())
	}
	for i := 0; i < len(t.instrs) && i < len(w.instrs); i++ {
		ti, wi := t.instrs[i], w.instrs[i]
		name := instrName(w.keys[wi.programIndex], wi.data)
		if tp, wp := t.keys[ti.programIndex], w.keys[wi.programIndex]; tp != wp {
			return mismatch(fmt.Sprintf("instruction %d (%s) program", i, name), e.label(wp), e.label(tp))
		}
		if len(ti.accounts) != len(wi.accounts) {
			return mismatch(fmt.Sprintf("instruction %d (%s) accounts", i, name), fmt.Sprint(len(wi.accounts)), fmt.Sprint(len(ti.accounts)))
		}
		for a := range wi.accounts {
			if tk, wk := t.keys[ti.accounts[a]], w.keys[wi.accounts[a]]; tk != wk {
				return mismatch(fmt.Sprintf("instruction %d (%s) account %d", i, name, a), e.label(wk), e.label(tk))
			}
		}
		if !bytes.Equal(ti.data, wi.data) {
			return mismatch(fmt.Sprintf("instruction %d (%s) data", i, name), dataString(wi.data, ti.data), dataString(ti.data, wi.data))
		}
	}
	if len(t.instrs) != len(w.instrs) {
		got := fmt.Sprintf("%d instructions", len(t.instrs))
		if len(t.instrs) > len(w.instrs) {
			extra := t.instrs[len(w.instrs)]
			got += fmt.Sprintf(", the first extra one %s", instrName(t.keys[extra.programIndex], extra.data))
		}
		return mismatch("instructions", fmt.Sprintf("%d instructions", len(w.instrs)), got)
	}
	return nil
}

func headerString(h solana.MessageHeader) string {
	return fmt.Sprintf("%d signers (%d read-only), %d read-only unsigned", h.NumRequiredSignatures, h.NumReadonlySignedAccounts, h.NumReadonlyUnsignedAccounts)
}

// dataString shows a from the first byte where it differs from b, at most 16 bytes of it.
func dataString(a, b []byte) string {
	at := 0
	for at < len(a) && at < len(b) && a[at] == b[at] {
		at++
	}
	rest := a[at:]
	more := ""
	if len(rest) > 16 {
		rest, more = rest[:16], "…"
	}
	return fmt.Sprintf("%d bytes, from byte %d: %s%s", len(a), at, hex.EncodeToString(rest), more)
}

// fee is the most a transaction pays if it lands, whether it succeeds or fails.
type fee struct {
	base     uint64 // lamportsPerSignature per signature
	priority uint64 // unit price × unit limit, rounded up to whole lamports
	total    uint64 // base + priority
	limit    uint64 // the unit limit in force: the requested one, or the runtime's default
}

// maxFee is the fee of a transaction with these signatures, this compute budget and this many
// other instructions. Amounts saturate at MaxUint64 instead of overflowing.
func maxFee(signatures int, b budget, staking int) fee {
	f := fee{limit: min(uint64(defaultInstructionUnits)*uint64(staking), maxTransactionUnits)}
	if b.hasLimit {
		f.limit = uint64(b.unitLimit)
	}
	hi, lo := bits.Mul64(b.unitPrice, f.limit)
	lo, carry := bits.Add64(lo, microLamportsPerLamport-1, 0)
	hi += carry
	if hi >= microLamportsPerLamport {
		f.priority = math.MaxUint64
	} else {
		f.priority, _ = bits.Div64(hi, lo, microLamportsPerLamport)
	}
	f.base = lamportsPerSignature * uint64(signatures)
	if f.total, carry = bits.Add64(f.base, f.priority, 0); carry != 0 {
		f.total = math.MaxUint64
	}
	return f
}

// gate builds the expected transaction from the intent and the service's choices, requires t to
// be it, and the fee to be under the cap. It returns what was verified.
func (s *Solana) gate(t *wireTx, in *parsedIntent) (*Verified, error) {
	if t.versioned {
		return nil, mismatch("message version", "legacy", fmt.Sprintf("v%d", t.version))
	}
	b, err := s.chooseBudget(t, in.Operation)
	if err != nil {
		return nil, err
	}
	return s.gateBudget(t, in, b)
}

// gateBudget is gate for t's compute budget b, already read by chooseBudget.
func (s *Solana) gateBudget(t *wireTx, in *parsedIntent, b budget) (*Verified, error) {
	c, err := s.choose(t, in, b)
	if err != nil {
		return nil, err
	}
	e, err := expect(in, c)
	if err != nil {
		return nil, err
	}
	if err := e.match(t); err != nil {
		return nil, err
	}
	// The fee again, from the counts of the transaction now known to be the expected one.
	f := maxFee(int(e.tx.header.NumRequiredSignatures), c.budget, e.staking)
	if err := s.checkFee(f, c.budget); err != nil {
		return nil, err
	}

	v := &Verified{
		Operation:        in.Operation,
		Staker:           in.Intent.Staker, // the intent's spelling of the same key: base58 is canonical
		StakeAccount:     in.StakeAccount,  // unstake, withdraw: the intent's spelling; a stake's below
		RecentBlockhash:  c.blockhash.String(),
		ComputeUnitPrice: c.budget.unitPrice,
		ComputeUnitLimit: c.budget.unitLimit,
		FeeLamports:      f.total,
		tx:               t,
	}
	switch in.Operation {
	case OpStake:
		v.StakeAccount = e.stakeAccount.String()
		v.VoteAccount = in.VoteAccount // base58 is canonical: the intent's spelling of the same key
		if !in.hasVote {
			v.VoteAccount = c.vote.String()
		}
		v.Seed = c.seed
		v.Lamports = in.Lamports
	case OpWithdraw:
		v.Lamports = in.Lamports
	}
	return v, nil
}
