package signer

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files and the fuzz seed corpus")

// testKey returns a deterministic key whose seed bytes are first, first+1, ...
func testKey(first byte) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = first + byte(i)
	}
	return ed25519.NewKeyFromSeed(seed)
}

func pubOf(k ed25519.PrivateKey) solana.PublicKey {
	return solana.PublicKeyFromBytes(k.Public().(ed25519.PublicKey))
}

// fixture holds the fixed keys and accounts every test transaction is built from.
type fixture struct {
	stakerKey    ed25519.PrivateKey
	staker       solana.PublicKey
	vote         solana.PublicKey
	otherVote    solana.PublicKey
	stranger     solana.PublicKey
	strangerKey  ed25519.PrivateKey
	stakeAccount solana.PublicKey // an existing stake account, for unstake and withdraw
	blockhash    solana.Hash
	seed         string
	derived      solana.PublicKey
	lamports     uint64
}

func newFixture() *fixture {
	f := &fixture{
		stakerKey:    testKey(201),
		strangerKey:  testKey(120),
		vote:         pubOf(testKey(20)),
		otherVote:    pubOf(testKey(40)),
		stakeAccount: pubOf(testKey(60)),
		seed:         "stake:op-0001",
		lamports:     2_000_000_000,
	}
	f.staker = pubOf(f.stakerKey)
	f.stranger = pubOf(f.strangerKey)
	bh := sha256.Sum256([]byte("stakeflow test blockhash"))
	f.blockhash = solana.HashFromBytes(bh[:])
	d, err := solana.CreateWithSeed(f.staker, f.seed, solana.StakeProgramID)
	if err != nil {
		panic(err)
	}
	f.derived = d
	return f
}

func (f *fixture) keyring() *SolanaKeyring {
	return &SolanaKeyring{keys: map[solana.PublicKey]ed25519.PrivateKey{f.staker: f.stakerKey}}
}

func (f *fixture) stakeIntent() Intent {
	return Intent{Chain: "solana", Network: "testnet", Operation: OpStake, Staker: f.staker.String(), Lamports: f.lamports, VoteAccount: f.vote.String()}
}

func (f *fixture) unstakeIntent() Intent {
	return Intent{Chain: "solana", Network: "testnet", Operation: OpUnstake, Staker: f.staker.String(), StakeAccount: f.stakeAccount.String()}
}

func (f *fixture) withdrawIntent() Intent {
	return Intent{Chain: "solana", Network: "testnet", Operation: OpWithdraw, Staker: f.staker.String(), Lamports: 1_500_000_000, StakeAccount: f.stakeAccount.String()}
}

func mustData(i interface{ Data() ([]byte, error) }) []byte {
	b, err := i.Data()
	if err != nil {
		panic(err)
	}
	return b
}

func meta(pk solana.PublicKey, writable, signer bool) *solana.AccountMeta {
	return &solana.AccountMeta{PublicKey: pk, IsWritable: writable, IsSigner: signer}
}

// createWithSeed is system CreateAccountWithSeed of created from base and seed, funded by the
// staker, in the honest form: funding, new and base account.
func (f *fixture) createWithSeed(base solana.PublicKey, seed string, created solana.PublicKey, lamports uint64, owner solana.PublicKey) solana.Instruction {
	return system.NewCreateAccountWithSeedInstruction(base, seed, lamports, stakeAccountSpace, owner, f.staker, created, base).Build()
}

// createWithSeedTwoAccounts is createWithSeed without the optional base account.
func (f *fixture) createWithSeedTwoAccounts(created solana.PublicKey) solana.Instruction {
	in := f.createWithSeed(f.staker, f.seed, created, f.lamports, solana.StakeProgramID)
	return solana.NewInstruction(solana.SystemProgramID, in.Accounts()[:2], mustData(in))
}

// initialize is stake Initialize with the corrected metas: the stake account is not a signer.
func initialize(stakeAcct, staker, withdrawer, custodian solana.PublicKey, lockupEpoch uint64) solana.Instruction {
	return initializeLockup(stakeAcct, staker, withdrawer, custodian, 0, lockupEpoch)
}

// initializeLockup is initialize with a lockup until unixTimestamp and epoch.
func initializeLockup(stakeAcct, staker, withdrawer, custodian solana.PublicKey, unixTimestamp int64, epoch uint64) solana.Instruction {
	b := stake.NewInitializeInstructionBuilder().SetStaker(staker).SetWithdrawer(withdrawer).
		SetLockupTimestamp(unixTimestamp).SetLockupEpoch(epoch).SetCustodian(custodian).
		SetStakeAccount(stakeAcct).SetRentSysvarAccount(solana.SysVarRentPubkey)
	return solana.NewInstruction(solana.StakeProgramID,
		solana.AccountMetaSlice{meta(stakeAcct, true, false), meta(solana.SysVarRentPubkey, false, false)}, mustData(b.Build()))
}

// delegate is stake DelegateStake with the corrected metas: the stake account is not a signer.
func delegate(stakeAcct, vote, authority solana.PublicKey) solana.Instruction {
	data := mustData(stake.NewDelegateStakeInstructionBuilder().Build())
	return solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{
		meta(stakeAcct, true, false), meta(vote, false, false), meta(solana.SysVarClockPubkey, false, false),
		meta(solana.SysVarStakeHistoryPubkey, false, false), meta(solana.SysVarStakeConfigPubkey, false, false),
		meta(authority, false, true)}, data)
}

func deactivate(stakeAcct, clock, authority solana.PublicKey, authoritySigns bool) solana.Instruction {
	data := mustData(stake.NewDeactivateInstructionBuilder().Build())
	return solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{
		meta(stakeAcct, true, false), meta(clock, false, false), meta(authority, false, authoritySigns)}, data)
}

func withdraw(stakeAcct, recipient, authority solana.PublicKey, lamports uint64) solana.Instruction {
	data := mustData(stake.NewWithdrawInstructionBuilder().SetLamports(lamports).Build())
	return solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{
		meta(stakeAcct, true, false), meta(recipient, true, false), meta(solana.SysVarClockPubkey, false, false),
		meta(solana.SysVarStakeHistoryPubkey, false, false), meta(authority, false, true)}, data)
}

func computePrice(microLamports uint64) solana.Instruction {
	data := make([]byte, 9)
	data[0] = cbSetComputeUnitPrice
	binary.LittleEndian.PutUint64(data[1:], microLamports)
	return solana.NewInstruction(solana.ComputeBudget, nil, data)
}

func computeLimit(units uint32) solana.Instruction {
	data := make([]byte, 5)
	data[0] = cbSetComputeUnitLimit
	binary.LittleEndian.PutUint32(data[1:], units)
	return solana.NewInstruction(solana.ComputeBudget, nil, data)
}

// authorize is a raw stake Authorize(newAuthority, Staker) instruction.
func authorize(stakeAcct, newAuthority, authority solana.PublicKey) solana.Instruction {
	data := make([]byte, 0, 40)
	data = binary.LittleEndian.AppendUint32(data, stake.Instruction_Authorize)
	data = append(data, newAuthority[:]...)
	data = binary.LittleEndian.AppendUint32(data, 0)
	return solana.NewInstruction(solana.StakeProgramID, solana.AccountMetaSlice{
		meta(stakeAcct, true, false), meta(solana.SysVarClockPubkey, false, false), meta(authority, false, true)}, data)
}

// must returns ix, failing on a build error.
func must(ix solana.Instruction, err error) solana.Instruction {
	if err != nil {
		panic(err)
	}
	return ix
}

// stakeInstrs is the stake of the fixture's intent, built as the sandbox builds it.
func (f *fixture) stakeInstrs() []solana.Instruction {
	return []solana.Instruction{
		must(createStakeAccountIx(f.staker, f.derived, f.seed, f.lamports)),
		must(initializeIx(f.derived, f.staker, f.staker)),
		must(delegateIx(f.derived, f.vote, f.staker)),
	}
}

// unstakeInstrs is the unstake of the fixture's intent, built as the sandbox builds it.
func (f *fixture) unstakeInstrs() []solana.Instruction {
	return []solana.Instruction{must(deactivateIx(f.stakeAccount, f.staker))}
}

// withdrawInstrs is the withdraw of the fixture's intent, built as the sandbox builds it.
func (f *fixture) withdrawInstrs() []solana.Instruction {
	return []solana.Instruction{must(withdrawIx(f.stakeAccount, f.staker, f.staker, 1_500_000_000))}
}

// txBytes compiles instructions into an unsigned legacy wire transaction paid by payer.
func (f *fixture) txBytes(tb testing.TB, payer solana.PublicKey, instrs ...solana.Instruction) []byte {
	tb.Helper()
	tx, err := solana.NewTransaction(instrs, f.blockhash, solana.TransactionPayer(payer))
	require.NoError(tb, err)
	b, err := tx.MarshalBinary()
	require.NoError(tb, err)
	return b
}

func (f *fixture) tx64(tb testing.TB, payer solana.PublicKey, instrs ...solana.Instruction) string {
	return base64.StdEncoding.EncodeToString(f.txBytes(tb, payer, instrs...))
}

// goldenInstruction is the golden-file form of one compiled instruction.
type goldenInstruction struct {
	Program  string       `json:"program"`
	Accounts []goldenMeta `json:"accounts"`
	Data     string       `json:"data"` // hex
}

type goldenMeta struct {
	Pubkey   string `json:"pubkey"`
	Signer   bool   `json:"signer"`
	Writable bool   `json:"writable"`
}

type goldenTx struct {
	Instructions []goldenInstruction `json:"instructions"`
	Transaction  string              `json:"transaction"` // base64 unsigned wire bytes
}

func toGolden(tb testing.TB, instrs []solana.Instruction, tx string) goldenTx {
	g := goldenTx{Transaction: tx}
	for _, in := range instrs {
		data, err := in.Data()
		require.NoError(tb, err)
		gi := goldenInstruction{Program: in.ProgramID().String(), Data: fmt.Sprintf("%x", data)}
		for _, m := range in.Accounts() {
			gi.Accounts = append(gi.Accounts, goldenMeta{m.PublicKey.String(), m.IsSigner, m.IsWritable})
		}
		g.Instructions = append(g.Instructions, gi)
	}
	return g
}

// checkGolden compares got with testdata/<name>, rewriting it under -update.
func checkGolden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(tb, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(tb, err, "golden file missing; run go test ./signer/ -run Golden -update")
	require.Equal(tb, string(want), string(got), "golden file %s differs", path)
}

func mustJSON(tb testing.TB, v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(tb, err)
	return append(b, '\n')
}

// withdrawCustodian is stake Withdraw with the optional lockup custodian as sixth account.
func withdrawCustodian(stakeAcct, recipient, authority solana.PublicKey, lamports uint64, custodian solana.PublicKey) solana.Instruction {
	in := withdraw(stakeAcct, recipient, authority, lamports)
	metas := append(in.Accounts(), meta(custodian, false, false))
	return solana.NewInstruction(solana.StakeProgramID, metas, mustData(in))
}

// withAccount is in with one more account, read-only, at the end.
func withAccount(in solana.Instruction, extra solana.PublicKey) solana.Instruction {
	return solana.NewInstruction(in.ProgramID(), append(in.Accounts(), meta(extra, false, false)), mustData(in))
}
