package signer

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/stake"
	"github.com/gagliardetto/solana-go/programs/system"
)

// The instruction layouts a staking transaction may contain, decoded by hand. Each is bincode:
// a little-endian u32 discriminator, then fixed fields (little-endian integers, 32-byte keys)
// and, for the seed, a u64 length followed by its bytes. A layout decodes only when the data has
// exactly its length: no field may be short and no byte may be left over. solana-go's decoders
// (system.Instruction, stake.Instruction) decode the same bytes to the same values; tests hold
// the two to each other.

// Data lengths of the fixed layouts.
const (
	createWithSeedFixedLen = 4 + 32 + 8 + 8 + 8 + 32 // all but the seed bytes
	initializeLen          = 4 + 32 + 32 + 8 + 8 + 32
	withdrawLen            = 4 + 8
	noArgsLen              = 4 // DelegateStake, Deactivate
)

// createWithSeedData is the data of system CreateAccountWithSeed.
type createWithSeedData struct {
	base     solana.PublicKey
	seed     []byte // aliases the transaction bytes
	lamports uint64
	space    uint64
	owner    solana.PublicKey
}

// initializeData is the data of stake Initialize.
type initializeData struct {
	staker        solana.PublicKey
	withdrawer    solana.PublicKey
	unixTimestamp int64
	epoch         uint64
	custodian     solana.PublicKey
}

// discriminator returns the u32 instruction discriminator, or false when data is shorter.
func discriminator(data []byte) (uint32, bool) {
	if len(data) < 4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(data), true
}

// decodeCreateWithSeed decodes system CreateAccountWithSeed data.
func decodeCreateWithSeed(data []byte) (createWithSeedData, bool) {
	var c createWithSeedData
	if d, ok := discriminator(data); !ok || d != system.Instruction_CreateAccountWithSeed || len(data) < createWithSeedFixedLen {
		return c, false
	}
	n := binary.LittleEndian.Uint64(data[36:44])
	if n != uint64(len(data)-createWithSeedFixedLen) {
		return c, false
	}
	copy(c.base[:], data[4:36])
	p := 44 + int(n)
	c.seed = data[44:p]
	c.lamports = binary.LittleEndian.Uint64(data[p:])
	c.space = binary.LittleEndian.Uint64(data[p+8:])
	copy(c.owner[:], data[p+16:p+48])
	return c, true
}

// decodeInitialize decodes stake Initialize data.
func decodeInitialize(data []byte) (initializeData, bool) {
	var in initializeData
	if d, ok := discriminator(data); !ok || d != stake.Instruction_Initialize || len(data) != initializeLen {
		return in, false
	}
	copy(in.staker[:], data[4:36])
	copy(in.withdrawer[:], data[36:68])
	in.unixTimestamp = int64(binary.LittleEndian.Uint64(data[68:76]))
	in.epoch = binary.LittleEndian.Uint64(data[76:84])
	copy(in.custodian[:], data[84:116])
	return in, true
}

// decodeWithdraw decodes stake Withdraw data and returns its lamports.
func decodeWithdraw(data []byte) (uint64, bool) {
	if d, ok := discriminator(data); !ok || d != stake.Instruction_Withdraw || len(data) != withdrawLen {
		return 0, false
	}
	return binary.LittleEndian.Uint64(data[4:]), true
}

// decodeNoArgs reports whether data is exactly the discriminator want (DelegateStake, Deactivate).
func decodeNoArgs(data []byte, want uint32) bool {
	d, ok := discriminator(data)
	return ok && d == want && len(data) == noArgsLen
}

// The encoders below write the data of the instructions stakeflow expects, in the layouts the
// decoders above read. They do what solana-go's builders do without its reflection-driven encoder,
// which cost a verification more than the rest of it together; TestEncodersMatchSolanaGo pins each
// one to the builder's bytes.

// encodeCreateWithSeed is system CreateAccountWithSeed data: base, seed (u64 length and bytes),
// lamports, space, owner.
func encodeCreateWithSeed(base solana.PublicKey, seed string, lamports, space uint64, owner solana.PublicKey) []byte {
	b := make([]byte, 0, createWithSeedFixedLen+len(seed))
	b = binary.LittleEndian.AppendUint32(b, system.Instruction_CreateAccountWithSeed)
	b = append(b, base[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(seed)))
	b = append(b, seed...)
	b = binary.LittleEndian.AppendUint64(b, lamports)
	b = binary.LittleEndian.AppendUint64(b, space)
	return append(b, owner[:]...)
}

// encodeInitialize is stake Initialize data with both authorities given and no lockup.
func encodeInitialize(staker, withdrawer solana.PublicKey) []byte {
	b := make([]byte, initializeLen)
	binary.LittleEndian.PutUint32(b, stake.Instruction_Initialize)
	copy(b[4:36], staker[:])
	copy(b[36:68], withdrawer[:])
	return b // lockup: unix timestamp, epoch and custodian all zero
}

// encodeWithdraw is stake Withdraw data.
func encodeWithdraw(lamports uint64) []byte {
	b := binary.LittleEndian.AppendUint32(make([]byte, 0, withdrawLen), stake.Instruction_Withdraw)
	return binary.LittleEndian.AppendUint64(b, lamports)
}

// encodeNoArgs is the data of an instruction that is its discriminator alone (DelegateStake,
// Deactivate).
func encodeNoArgs(disc uint32) []byte {
	return binary.LittleEndian.AppendUint32(make([]byte, 0, noArgsLen), disc)
}

// deriveWithSeed is solana.CreateWithSeed without allocating: sha256(base || seed || owner).
// It reports false when the seed is longer than solana.MaxSeedLength.
func deriveWithSeed(base solana.PublicKey, seed []byte, owner solana.PublicKey) (solana.PublicKey, bool) {
	if len(seed) > solana.MaxSeedLength {
		return solana.PublicKey{}, false
	}
	var buf [32 + solana.MaxSeedLength + 32]byte
	n := copy(buf[:], base[:])
	n += copy(buf[n:], seed)
	n += copy(buf[n:], owner[:])
	return solana.PublicKey(sha256.Sum256(buf[:n])), true
}
