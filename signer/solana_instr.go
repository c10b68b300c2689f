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
