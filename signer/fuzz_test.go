package signer

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
)

// fuzzPolicy is the policy FuzzVerify's signer runs under. The oracle reads its caps from here.
func fuzzPolicy(fx *fixture) SolanaPolicy {
	return SolanaPolicy{
		AllowedVoteAccounts: []string{fx.vote.String()},
		MaxComputeUnitPrice: 1_000_000,
		MaxComputeUnitLimit: 200_000,
		MaxFeeLamports:      100_000,
	}
}

// oracleBase is a transaction the signer must accept, with its intent: the starting point of
// FuzzVerify's mutations.
type oracleBase struct {
	name    string
	intent  Intent
	staking []solana.Instruction // as the sandbox builds them
	raw     []byte
}

func oracleBases(tb testing.TB, fx *fixture) []oracleBase {
	noVote := fx.stakeIntent()
	noVote.VoteAccount = "" // the allow-list decides
	mk := func(name string, intent Intent, staking []solana.Instruction, budget ...solana.Instruction) oracleBase {
		return oracleBase{name: name, intent: intent, staking: staking, raw: fx.txBytes(tb, fx.staker, append(budget, staking...)...)}
	}
	return []oracleBase{
		mk("stake", fx.stakeIntent(), fx.stakeInstrs()),
		// 5,000 + 1,000,000 × 50,000 / 1e6 = 55,000: a byte of either value can cross a cap.
		mk("stake, limit and price", fx.stakeIntent(), fx.stakeInstrs(), computeLimit(50_000), computePrice(1_000_000)),
		mk("stake, price and limit", fx.stakeIntent(), fx.stakeInstrs(), computePrice(10_000), computeLimit(200_000)),
		mk("stake, vote from the allow-list", noVote, fx.stakeInstrs(), computePrice(100)),
		mk("unstake, price", fx.unstakeIntent(), fx.unstakeInstrs(), computePrice(400_000)),
		mk("withdraw", fx.withdrawIntent(), fx.withdrawInstrs()),
	}
}

// mutate applies one mutation to a well-formed transaction: a byte (kind 0) or a field of the
// message: swap two account keys re-pointing the instructions (1), swap two instructions (2),
// drop one (3), repeat one (4), set a header field (5), add an account to an instruction (6).
func mutate(raw []byte, kind byte, pos uint16, val, a, b byte) []byte {
	kind %= 7
	if kind == 0 {
		out := bytes.Clone(raw)
		out[int(pos)%len(out)] = val
		return out
	}
	tx, err := solana.TransactionFromBytes(raw)
	if err != nil {
		panic(err) // raw is a base transaction
	}
	m := &tx.Message
	nk, ni := len(m.AccountKeys), len(m.Instructions)
	ia, ib := int(a)%ni, int(b)%ni
	switch kind {
	case 1:
		swapKeys(m, int(a)%nk, int(b)%nk)
	case 2:
		m.Instructions[ia], m.Instructions[ib] = m.Instructions[ib], m.Instructions[ia]
	case 3:
		if ni > 1 {
			m.Instructions = slices.Delete(m.Instructions, ia, ia+1)
		}
	case 4:
		m.Instructions = slices.Insert(m.Instructions, ia, m.Instructions[ia])
	case 5:
		switch a % 3 {
		case 0:
			m.Header.NumRequiredSignatures = val
		case 1:
			m.Header.NumReadonlySignedAccounts = val
		default:
			m.Header.NumReadonlyUnsignedAccounts = val
		}
	case 6:
		in := &m.Instructions[ia]
		in.Accounts = append(slices.Clone(in.Accounts), uint16(int(b)%nk))
	}
	out, err := tx.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return out
}

// normalForm renders a legacy message so that two messages render alike exactly when they are
// the same transaction for the runtime: header, blockhash, fee payer, every account key with its
// role in any order, and the instructions with their program and accounts resolved to keys.
func normalForm(m *solana.Message) (string, error) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "header %+v\nblockhash %s\npayer %s\n", m.Header, m.RecentBlockhash, m.AccountKeys[0])
	roles := make([]string, 0, len(m.AccountKeys))
	for _, k := range m.AccountKeys {
		w, err := m.IsWritable(k)
		if err != nil {
			return "", err
		}
		roles = append(roles, fmt.Sprintf("%s signer=%v writable=%v", k, m.IsSigner(k), w))
	}
	slices.Sort(roles)
	sb.WriteString(strings.Join(roles, "\n"))
	key := func(i uint16) (solana.PublicKey, error) {
		if int(i) >= len(m.AccountKeys) {
			return solana.PublicKey{}, fmt.Errorf("index %d out of range", i)
		}
		return m.AccountKeys[i], nil
	}
	for _, in := range m.Instructions {
		p, err := key(in.ProgramIDIndex)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&sb, "\n%s(", p)
		for _, a := range in.Accounts {
			k, err := key(a)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&sb, "%s ", k)
		}
		fmt.Fprintf(&sb, ") %x", []byte(in.Data))
	}
	return sb.String(), nil
}

// oracleVerdict decides, independently of the code under test, whether the signer must accept
// raw for base's intent under policy: raw must be a canonical legacy transaction with one
// signature slot, whose compute budget (the only thing besides the blockhash the service may
// choose here) is well-formed, under the caps and in front, and whose message is, up to the
// order of keys within a role class, the base's staking instructions after that compute budget.
func oracleVerdict(fx *fixture, base oracleBase, policy SolanaPolicy, raw []byte) (accept bool, why string) {
	defer func() {
		if r := recover(); r != nil {
			accept, why = false, fmt.Sprintf("solana-go cannot read it: %v", r)
		}
	}()
	if len(raw) > 1232 {
		return false, "too large"
	}
	tx, err := solana.TransactionFromBytes(raw)
	if err != nil {
		return false, "solana-go cannot read it: " + err.Error()
	}
	if again, err := tx.MarshalBinary(); err != nil || !bytes.Equal(again, raw) {
		return false, "not in canonical form"
	}
	m := &tx.Message
	if m.IsVersioned() || len(m.AccountKeys) == 0 || len(tx.Signatures) != 1 || m.Header.NumRequiredSignatures != 1 {
		return false, "not a legacy transaction with one signature"
	}
	var budget []solana.Instruction
	var limit, price *big.Int
	for _, in := range m.Instructions {
		if int(in.ProgramIDIndex) >= len(m.AccountKeys) || m.AccountKeys[in.ProgramIDIndex] != solana.ComputeBudget {
			continue
		}
		d := []byte(in.Data)
		switch {
		case len(in.Accounts) != 0:
			return false, "compute budget with accounts"
		case len(d) == 5 && d[0] == 2 && limit == nil:
			limit = new(big.Int).SetUint64(uint64(binary.LittleEndian.Uint32(d[1:])))
		case len(d) == 9 && d[0] == 3 && price == nil:
			price = new(big.Int).SetUint64(binary.LittleEndian.Uint64(d[1:]))
		default:
			return false, "compute budget instruction not allowed"
		}
		budget = append(budget, solana.NewInstruction(solana.ComputeBudget, nil, bytes.Clone(d)))
	}
	if limit != nil && limit.Uint64() > uint64(policy.MaxComputeUnitLimit) {
		return false, "unit limit over its cap"
	}
	if price != nil && price.Uint64() > policy.MaxComputeUnitPrice {
		return false, "unit price over its cap"
	}
	// Fee: 5,000 lamports for the one signature + ceil(price × limit / 1e6), the limit being the
	// runtime's 200,000 per staking instruction (at most 1,400,000) when none is set.
	fee := big.NewInt(5_000)
	if price != nil {
		units := limit
		if units == nil {
			units = big.NewInt(min(200_000*int64(len(base.staking)), 1_400_000))
		}
		prio := new(big.Int).Mul(price, units)
		prio.Add(prio, big.NewInt(999_999))
		prio.Div(prio, big.NewInt(1_000_000))
		fee.Add(fee, prio)
	}
	if fee.Cmp(new(big.Int).SetUint64(policy.MaxFeeLamports)) > 0 {
		return false, "fee over the cap"
	}
	want, _, err := unsignedTx(fx.staker, m.RecentBlockhash, append(budget, base.staking...)...)
	if err != nil {
		return false, "cannot build the expected transaction: " + err.Error()
	}
	gotForm, err := normalForm(m)
	if err != nil {
		return false, err.Error()
	}
	wantForm, err := normalForm(&want.Message)
	if err != nil {
		panic(err)
	}
	if gotForm != wantForm {
		return false, "not the expected transaction"
	}
	return true, "the expected transaction"
}

// FuzzVerify checks two things on each input.
//
// unsigned (with op choosing the intent) is arbitrary: decode, verify and sign must never panic,
// Verify and Sign must agree, and whatever is signed must carry a valid staker signature.
//
// The rest mutates one byte or one field of a transaction the signer must accept (base chooses
// it) and requires the signer to accept the mutant exactly when an independent oracle, which
// rebuilds the expected transaction as the sandbox does and compares normalised messages, says
// it is still the expected transaction.
func FuzzVerify(f *testing.F) {
	fx := newFixture()
	policy := fuzzPolicy(fx)
	s := NewSolana(fx.keyring(), policy)
	intents := []Intent{fx.stakeIntent(), fx.unstakeIntent(), fx.withdrawIntent()}
	bases := oracleBases(f, fx)

	for i, tc := range hostileCases() {
		f.Add(tc.tx(f, fx), byte(i%3), byte(0), byte(0), uint16(0), byte(0), byte(0), byte(0))
	}
	for i := range bases {
		f.Add(base64.StdEncoding.EncodeToString(bases[i].raw), byte(i%3), byte(i), byte(0), uint16(0), bases[i].raw[0], byte(0), byte(0))
		for kind := byte(0); kind < 7; kind++ {
			f.Add("", byte(0), byte(i), kind, uint16(67+int(kind)*29), kind+1, kind+2, kind+4)
		}
	}

	f.Fuzz(func(t *testing.T, unsigned string, op, base, kind byte, pos uint16, val, a, b byte) {
		fuzzArbitrary(t, s, fx, unsigned, intents[int(op)%len(intents)])

		bs := bases[int(base)%len(bases)]
		mutant := mutate(bs.raw, kind, pos, val, a, b)
		accept, why := oracleVerdict(fx, bs, policy, mutant)
		v, err := s.Verify(base64.StdEncoding.EncodeToString(mutant), bs.intent)
		if accept != (err == nil) {
			t.Fatalf("%s mutated (kind %d, pos %d, val %d, a %d, b %d): oracle says accept=%v (%s), signer says %v\n%s",
				bs.name, kind%7, pos, val, a, b, accept, why, err, hex.EncodeToString(mutant))
		}
		if err == nil {
			fuzzSigned(t, s, fx, mutant, bs.intent, v)
		}
	})
}

// fuzzArbitrary feeds an arbitrary string to Verify and Sign.
func fuzzArbitrary(t *testing.T, s *Solana, fx *fixture, unsigned string, intent Intent) {
	v, verr := s.Verify(unsigned, intent)
	signed, serr := s.Sign(context.Background(), unsigned, intent)
	if (verr == nil) != (serr == nil) {
		t.Fatalf("Verify and Sign disagree: %v / %v", verr, serr)
	}
	if serr != nil {
		if signed != nil {
			t.Fatal("signed despite an error")
		}
		return
	}
	if v == nil {
		t.Fatal("no verification result")
	}
	checkSignature(t, fx, signed)
}

// fuzzSigned signs an accepted mutant and checks the signature and the fee reported.
func fuzzSigned(t *testing.T, s *Solana, fx *fixture, raw []byte, intent Intent, v *Verified) {
	signed, err := s.Sign(context.Background(), base64.StdEncoding.EncodeToString(raw), intent)
	if err != nil {
		t.Fatalf("verified but not signed: %v", err)
	}
	if signed.FeeLamports != v.FeeLamports || v.FeeLamports > s.Policy().MaxFeeLamports || v.FeeLamports < 5_000 {
		t.Fatalf("fee %d (verified %d) outside [5000, cap]", signed.FeeLamports, v.FeeLamports)
	}
	checkSignature(t, fx, signed)
}

// checkSignature checks that signed carries a valid staker signature over its message.
func checkSignature(t *testing.T, fx *fixture, signed *Signed) {
	raw, err := base64.StdEncoding.DecodeString(signed.SignedTransaction)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := parseWireTx(raw)
	if err != nil {
		t.Fatal(err)
	}
	sig := raw[tx.sigOffset : tx.sigOffset+64]
	if !ed25519.Verify(fx.stakerKey.Public().(ed25519.PublicKey), tx.message(), sig) {
		t.Fatal("signature does not verify")
	}
}

// TestMutationSweep runs FuzzVerify's oracle over every single-byte mutation (two values per
// byte) and a grid of field mutations of every base transaction, so that the oracle's verdicts
// hold without a fuzzing run, and checks that the sweep is not vacuous: for each base, some
// mutants are accepted (blockhash, signature slot, compute budget values, keys swapped within a
// role class) and most are refused. Under the race detector it takes every third byte.
func TestMutationSweep(t *testing.T) {
	fx := newFixture()
	policy := fuzzPolicy(fx)
	s := NewSolana(fx.keyring(), policy)
	for _, bs := range oracleBases(t, fx) {
		t.Run(bs.name, func(t *testing.T) {
			accepted, refused := 0, 0
			check := func(kind byte, pos uint16, val, a, b byte) {
				mutant := mutate(bs.raw, kind, pos, val, a, b)
				accept, why := oracleVerdict(fx, bs, policy, mutant)
				_, err := s.Verify(base64.StdEncoding.EncodeToString(mutant), bs.intent)
				if accept != (err == nil) {
					t.Fatalf("kind %d pos %d val %d a %d b %d: oracle accept=%v (%s), signer %v", kind, pos, val, a, b, accept, why, err)
				}
				if accept {
					accepted++
				} else {
					refused++
				}
			}
			stride := 1
			if raceEnabled {
				stride = 3
			}
			for pos := 0; pos < len(bs.raw); pos += stride {
				for _, val := range []byte{bs.raw[pos] ^ 1, 0xff} {
					check(0, uint16(pos), val, 0, 0)
				}
			}
			for kind := byte(1); kind < 7; kind++ {
				for a := byte(0); a < 8; a++ {
					for b := byte(0); b < 8; b++ {
						check(kind, 0, b, a, b)
					}
				}
			}
			t.Logf("%d mutants accepted, %d refused", accepted, refused)
			if accepted == 0 || refused == 0 {
				t.Fatalf("vacuous sweep: %d accepted, %d refused", accepted, refused)
			}
		})
	}
}
