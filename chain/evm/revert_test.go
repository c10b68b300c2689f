package evmchain

import (
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encodeError is the revert data of the error with signature sig and arguments args of types,
// computed with go-ethereum's abi package from the signature alone: the first four bytes of its
// keccak256, then the arguments ABI-encoded.
func encodeError(t testing.TB, sig string, types []string, args ...any) []byte {
	t.Helper()
	var in abi.Arguments
	for _, ty := range types {
		typ, err := abi.NewType(ty, "", nil)
		require.NoError(t, err)
		in = append(in, abi.Argument{Type: typ})
	}
	packed, err := in.Pack(args...)
	require.NoError(t, err)
	return append(crypto.Keccak256([]byte(sig))[:4], packed...)
}

var holder = common.HexToAddress("0x00000000000000000000000000000000000000a1")

// TestDecodeRevert: revert data -> one-line reason, per kind of revert. Panic names follow the
// Solidity documentation's list of panic codes.
func TestDecodeRevert(t *testing.T) {
	big7 := big.NewInt(7)
	otherABI := mustABI(`[{"type":"error","name":"TooLate","inputs":[{"name":"deadline","type":"uint256"},{"name":"flag","type":"bool"},{"name":"","type":"bytes32"}]}]`)
	cases := []struct {
		name string
		data []byte
		abis []*abi.ABI
		want string
	}{
		{"Error(string)", encodeError(t, "Error(string)", []string{"string"}, "Too much slippage"), nil, "Too much slippage"},
		{"Panic assert", encodeError(t, "Panic(uint256)", []string{"uint256"}, big.NewInt(0x01)), nil, "panic 0x01: assertion failed"},
		{"Panic overflow", encodeError(t, "Panic(uint256)", []string{"uint256"}, big.NewInt(0x11)), nil, "panic 0x11: arithmetic overflow or underflow"},
		{"Panic division by zero", encodeError(t, "Panic(uint256)", []string{"uint256"}, big.NewInt(0x12)), nil, "panic 0x12: division or modulo by zero"},
		{"Panic enum", encodeError(t, "Panic(uint256)", []string{"uint256"}, big.NewInt(0x21)), nil, "panic 0x21: invalid enum value"},
		{"Panic pop", encodeError(t, "Panic(uint256)", []string{"uint256"}, big.NewInt(0x31)), nil, "panic 0x31: pop on an empty array"},
		{"Panic out of bounds", encodeError(t, "Panic(uint256)", []string{"uint256"}, big.NewInt(0x32)), nil, "panic 0x32: array index out of bounds"},
		{"Panic memory", encodeError(t, "Panic(uint256)", []string{"uint256"}, big.NewInt(0x41)), nil, "panic 0x41: out of memory (allocation too large)"},
		{"Panic unknown code", encodeError(t, "Panic(uint256)", []string{"uint256"}, big.NewInt(0x99)), nil, "panic 0x99: unknown panic code"},
		{"ERC-20 balance (EIP-6093)", encodeError(t, "ERC20InsufficientBalance(address,uint256,uint256)", []string{"address", "uint256", "uint256"}, holder, big.NewInt(5), big7), nil,
			"ERC20InsufficientBalance(sender=0x00000000000000000000000000000000000000A1, balance=5, needed=7)"},
		{"ERC-20 allowance (EIP-6093)", encodeError(t, "ERC20InsufficientAllowance(address,uint256,uint256)", []string{"address", "uint256", "uint256"}, holder, big.NewInt(0), big7), nil,
			"ERC20InsufficientAllowance(spender=0x00000000000000000000000000000000000000A1, allowance=0, needed=7)"},
		{"ERC-20 spender (EIP-6093)", encodeError(t, "ERC20InvalidSpender(address)", []string{"address"}, common.Address{}), nil,
			"ERC20InvalidSpender(spender=0x0000000000000000000000000000000000000000)"},
		{"POL token, no arguments", encodeError(t, "InvalidAddress()", nil), nil, "InvalidAddress()"},
		{"POL token mint cap", encodeError(t, "MaxMintExceeded(uint256,uint256)", []string{"uint256", "uint256"}, big.NewInt(1), big.NewInt(2)), nil,
			"MaxMintExceeded(maxMint=1, mintRequested=2)"},
		{"custom error of a given ABI", encodeError(t, "TooLate(uint256,bool,bytes32)", []string{"uint256", "bool", "bytes32"}, big7, true, [32]byte{0xab}), []*abi.ABI{otherABI},
			"TooLate(deadline=7, flag=true, arg2=0xab00000000000000000000000000000000000000000000000000000000000000)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := DecodeRevert(tc.data, tc.abis...)
			require.True(t, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestDecodeRevertUnknown: data that is no known error, or is cut short, is not decoded.
func TestDecodeRevertUnknown(t *testing.T) {
	balance := encodeError(t, "ERC20InsufficientBalance(address,uint256,uint256)", []string{"address", "uint256", "uint256"}, holder, big.NewInt(5), big.NewInt(7))
	for name, data := range map[string][]byte{
		"none":                 nil,
		"short":                {0x08, 0xc3, 0x79},
		"unknown selector":     encodeError(t, "Nope(uint256)", []string{"uint256"}, big.NewInt(1)),
		"custom error cut off": balance[:40],
		"panic cut off":        encodeError(t, "Panic(uint256)", []string{"uint256"}, big.NewInt(1))[:20],
	} {
		_, ok := DecodeRevert(data)
		assert.False(t, ok, name)
	}
	rev := newRevert(encodeError(t, "Nope(uint256)", []string{"uint256"}, big.NewInt(1)))
	assert.Empty(t, rev.Reason)
	assert.Contains(t, rev.Summary(), "execution reverted with data 0x")
}

func mustABI(s string) *abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(err)
	}
	return &a
}
