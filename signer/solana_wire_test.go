package signer

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/gagliardetto/solana-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Decoding of the wire format at its edges: the packet size, leftover bytes, account indexes,
// hex case and string lengths.

// TestParsesTransactionOfExactlyPacketSize: Solana accepts a transaction of up to 1232 bytes
// (PACKET_DATA_SIZE); one of exactly that size parses, one byte more does not.
func TestParsesTransactionOfExactlyPacketSize(t *testing.T) {
	f := newFixture()
	sized := func(total int) []byte {
		base := len(f.txBytes(t, f.staker, solana.NewInstruction(solana.MemoProgramID, nil, make([]byte, 200))))
		// Data lengths up to 16383 take two compact-u16 bytes, as 200 does.
		return f.txBytes(t, f.staker, solana.NewInstruction(solana.MemoProgramID, nil, bytes.Repeat([]byte{'m'}, 200+total-base)))
	}
	raw := sized(1232)
	require.Len(t, raw, 1232)
	_, err := parseWireTx(raw)
	require.NoError(t, err)

	raw = sized(1233)
	require.Len(t, raw, 1233)
	_, err = parseWireTx(raw)
	require.ErrorContains(t, err, "transaction is 1233 bytes, over the 1232-byte limit")
}

// TestRefusesLeftoverBytesCountingThem: bytes after the message are refused, counted.
func TestRefusesLeftoverBytesCountingThem(t *testing.T) {
	f := newFixture()
	raw := append(f.txBytes(t, f.staker, f.unstakeInstrs()...), 1, 2, 3)
	_, err := parseWireTx(raw)
	require.EqualError(t, err, "3 bytes left over after the message")
}

// TestRefusesAccountIndexPastTheAccounts: an instruction that names an account one past the last
// (in a legacy message, or a v0 message without lookup tables, where every account is listed) is
// a decode error, not something the verifier ever looks up.
func TestRefusesAccountIndexPastTheAccounts(t *testing.T) {
	f := newFixture()
	for _, v0 := range []bool{false, true} {
		t.Run(fmt.Sprintf("v0 %v", v0), func(t *testing.T) {
			tx, err := solana.NewTransaction(f.unstakeInstrs(), f.blockhash, solana.TransactionPayer(f.staker))
			require.NoError(t, err)
			n := len(tx.Message.AccountKeys)
			tx.Message.Instructions[0].Accounts[0] = uint16(n)
			if v0 {
				tx.Message.SetVersion(solana.MessageVersionV0)
			}
			raw, err := tx.MarshalBinary()
			require.NoError(t, err)
			s := NewSolana(f.keyring(), SolanaPolicy{})
			require.NotPanics(t, func() { _, err = s.Verify(base64.StdEncoding.EncodeToString(raw), f.unstakeIntent()) })
			require.ErrorIs(t, err, ErrDecode)
			assert.Contains(t, err.Error(), fmt.Sprintf("instruction 0 account index %d out of range (%d accounts)", n, n))
		})
	}
}

// TestDecodesUpperCaseHex: hex in upper case (digits A to F) is hex too.
func TestDecodesUpperCaseHex(t *testing.T) {
	f := newFixture()
	s := NewSolana(f.keyring(), SolanaPolicy{})
	upper := strings.ToUpper(hex.EncodeToString(f.txBytes(t, f.staker, f.unstakeInstrs()...)))
	require.True(t, strings.ContainsRune(upper, 'A') && strings.ContainsRune(upper, 'F'), "the fixture's hex holds A and F")
	v, err := s.Verify(upper, f.unstakeIntent())
	require.NoError(t, err)
	assert.Equal(t, "hex", v.Encoding)
}

// TestRefusesOverlongStringByItsLength: a string longer than four characters per byte of the
// largest transaction is refused for its length, before any decoding; one of exactly that length
// is decoded (and refused for what it decodes to).
func TestRefusesOverlongStringByItsLength(t *testing.T) {
	_, _, err := decodeSolanaTx(strings.Repeat("A", 4*1232+1))
	require.ErrorIs(t, err, ErrDecode)
	assert.Contains(t, err.Error(), "4929 characters is longer than any encoding of a 1232-byte transaction")
	_, _, err = decodeSolanaTx(strings.Repeat("A", 4*1232))
	require.ErrorIs(t, err, ErrDecode)
	assert.NotContains(t, err.Error(), "longer than any encoding")
}
