package evmchain

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// knownErrorsJSON declares the custom errors of the contracts stakeflow calls, as a JSON ABI:
//   - the POL token's own errors (IPolygonEcosystemToken in 0xPolygon/pol-token);
//   - the standard ERC-20 errors of EIP-6093 (IERC20Errors, OpenZeppelin Contracts 5), which
//     ERC-20 tokens built on OpenZeppelin 5 raise for a short balance or allowance.
//
// The Polygon ValidatorShare and StakeManager, and POL's ERC-20 logic (OpenZeppelin 4.9), revert
// with Error(string), which needs no declaration.
const knownErrorsJSON = `[
{"type":"error","name":"InvalidAddress","inputs":[]},
{"type":"error","name":"MaxMintExceeded","inputs":[{"name":"maxMint","type":"uint256"},{"name":"mintRequested","type":"uint256"}]},
{"type":"error","name":"ERC20InsufficientBalance","inputs":[{"name":"sender","type":"address"},{"name":"balance","type":"uint256"},{"name":"needed","type":"uint256"}]},
{"type":"error","name":"ERC20InvalidSender","inputs":[{"name":"sender","type":"address"}]},
{"type":"error","name":"ERC20InvalidReceiver","inputs":[{"name":"receiver","type":"address"}]},
{"type":"error","name":"ERC20InsufficientAllowance","inputs":[{"name":"spender","type":"address"},{"name":"allowance","type":"uint256"},{"name":"needed","type":"uint256"}]},
{"type":"error","name":"ERC20InvalidApprover","inputs":[{"name":"approver","type":"address"}]},
{"type":"error","name":"ERC20InvalidSpender","inputs":[{"name":"spender","type":"address"}]}
]`

// knownErrors is knownErrorsJSON parsed.
var knownErrors = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(knownErrorsJSON))
	if err != nil {
		panic("chain/evm: knownErrorsJSON does not parse: " + err.Error())
	}
	return a
}()

// panicReasons names the codes of Solidity's Panic(uint256), as the Solidity documentation lists
// them ("Panic via assert and Error via require", Control Structures).
var panicReasons = map[uint64]string{
	0x00: "generic panic",
	0x01: "assertion failed",
	0x11: "arithmetic overflow or underflow",
	0x12: "division or modulo by zero",
	0x21: "invalid enum value",
	0x22: "incorrectly encoded storage byte array",
	0x31: "pop on an empty array",
	0x32: "array index out of bounds",
	0x41: "out of memory (allocation too large)",
	0x51: "call to a zero-initialized internal function",
}

var (
	errorStringSelector = [4]byte{0x08, 0xc3, 0x79, 0xa0} // Error(string)
	panicSelector       = [4]byte{0x4e, 0x48, 0x7b, 0x71} // Panic(uint256)
)

// DecodeRevert names revert data: the message of Error(string); "panic 0x11: arithmetic overflow
// or underflow" for Panic(uint256); ErrorName(arg=value, ...) for a custom error declared in one of
// abis or among the errors of the contracts stakeflow calls. ok is false for data none of these
// decode.
func DecodeRevert(data []byte, abis ...*abi.ABI) (reason string, ok bool) {
	if len(data) < 4 {
		return "", false
	}
	var sel [4]byte
	copy(sel[:], data[:4])
	switch sel {
	case errorStringSelector:
		s, err := abi.UnpackRevert(data)
		return s, err == nil
	case panicSelector:
		if _, err := abi.UnpackRevert(data); err != nil {
			return "", false
		}
		code := new(big.Int).SetBytes(data[4:36])
		name, known := panicReasons[code.Uint64()]
		if !known || !code.IsUint64() {
			name = "unknown panic code"
		}
		return fmt.Sprintf("panic 0x%02x: %s", code, name), true
	}
	for _, a := range append(append([]*abi.ABI{}, abis...), &knownErrors) {
		e, err := a.ErrorByID(sel)
		if err != nil {
			continue
		}
		vals, err := e.Inputs.Unpack(data[4:])
		if err != nil {
			continue
		}
		return renderError(e, vals), true
	}
	return "", false
}

// renderError writes a custom error as ErrorName(arg=value, ...).
func renderError(e *abi.Error, vals []any) string {
	var b strings.Builder
	b.WriteString(e.Name)
	b.WriteByte('(')
	for i, in := range e.Inputs {
		if i > 0 {
			b.WriteString(", ")
		}
		name := in.Name
		if name == "" {
			name = fmt.Sprintf("arg%d", i)
		}
		b.WriteString(name)
		b.WriteByte('=')
		if i < len(vals) {
			b.WriteString(renderValue(vals[i]))
		}
	}
	b.WriteByte(')')
	return b.String()
}

func renderValue(v any) string {
	switch v := v.(type) {
	case common.Address:
		return v.Hex()
	case *big.Int:
		return v.String()
	case string:
		return fmt.Sprintf("%q", v)
	case []byte:
		return "0x" + hex.EncodeToString(v)
	case [32]byte:
		return "0x" + hex.EncodeToString(v[:])
	}
	return fmt.Sprint(v)
}
