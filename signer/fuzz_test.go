package signer

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/require"
)

// fuzzSeeds returns the correct and hostile transactions used as the FuzzVerify seed corpus.
func fuzzSeeds(t *testing.T) []struct {
	unsigned string
	op       uint8
} {
	f := newFixture()
	seeds := []struct {
		unsigned string
		op       uint8
	}{
		{f.tx64(t, f.staker, f.stakeInstrs()...), 0},
		{f.tx64(t, f.staker, append([]solana.Instruction{computeLimit(50_000), computePrice(10_000)}, f.stakeInstrs()...)...), 0},
		{f.tx64(t, f.staker, f.unstakeInstrs()...), 1},
		{f.tx64(t, f.staker, f.withdrawInstrs()...), 2},
	}
	for i, tc := range hostileCases() {
		seeds = append(seeds, struct {
			unsigned string
			op       uint8
		}{tc.tx(t, f), uint8(i % 3)})
	}
	return seeds
}

// TestWriteFuzzCorpus rewrites testdata/fuzz/FuzzVerify under -update.
func TestWriteFuzzCorpus(t *testing.T) {
	if !*update {
		return
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzVerify")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for i, s := range fuzzSeeds(t) {
		body := fmt.Sprintf("go test fuzz v1\nstring(%s)\nbyte(%s)\n", strconv.Quote(s.unsigned), strconv.QuoteRune(rune(s.op)))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644))
	}
}

// FuzzVerify feeds arbitrary strings to decode, verify and sign. It must never panic, and
// whatever it signs must have verified and must carry a valid staker signature.
func FuzzVerify(f *testing.F) {
	fx := newFixture()
	s := NewSolana(fx.keyring(), SolanaPolicy{AllowedVoteAccounts: []string{fx.vote.String()}})
	intents := []Intent{fx.stakeIntent(), fx.unstakeIntent(), fx.withdrawIntent()}
	f.Fuzz(func(t *testing.T, unsigned string, op byte) {
		intent := intents[int(op)%len(intents)]
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
	})
}
