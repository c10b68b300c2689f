package hyperliquid

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// Errors the package wraps.
var (
	// ErrDecode: the unsigned request is not a JSON (or base64 of JSON) user-signed action.
	ErrDecode = errors.New("undecodable Hyperliquid request")
	// ErrVerification: the request does not do what was asked; nothing was signed.
	ErrVerification = errors.New("verification of the Hyperliquid request failed")
	// ErrIntent: the intent cannot be checked (bad network, address or amount).
	ErrIntent = errors.New("invalid intent")
)

// TypeCWithdraw is the only action type the signer signs: staking balance to spot.
const TypeCWithdraw = "cWithdraw"

// Action is a user-signed cWithdraw action, as the exchange takes it.
type Action struct {
	Type             string `json:"type"`
	SignatureChainID string `json:"signatureChainId"`
	HyperliquidChain string `json:"hyperliquidChain"`
	// Wei is HYPE × 10^8.
	Wei   uint64 `json:"wei"`
	Nonce uint64 `json:"nonce"`
}

// Unsigned is a decoded request of endpoint 6.
type Unsigned struct {
	Action Action
	// Nonce is the envelope's nonce; 0 when the request is the bare action.
	Nonce uint64
	// Other names the envelope's fields besides action and nonce (the service may name the
	// delegator there); they are not signed.
	Other map[string]string
}

// Decode reads the unsigned request: JSON text or base64 of JSON, the action alone or inside
// {"action", "nonce", ...}. Everything else is refused with ErrDecode.
func Decode(s string) (*Unsigned, error) {
	raw := []byte(strings.TrimSpace(s))
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrDecode)
	}
	if raw[0] != '{' {
		var dec []byte
		var err error
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if dec, err = enc.Strict().DecodeString(string(raw)); err == nil {
				break
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: neither JSON nor base64 of JSON", ErrDecode)
		}
		raw = bytes.TrimSpace(dec)
		if len(raw) == 0 || raw[0] != '{' {
			return nil, fmt.Errorf("%w: base64 of something other than a JSON object", ErrDecode)
		}
	}
	top, err := object(raw)
	if err != nil {
		return nil, err
	}
	u := &Unsigned{Other: map[string]string{}}
	actionRaw, wrapped := top["action"]
	if !wrapped {
		actionRaw = raw
	} else {
		for k, v := range top {
			switch k {
			case "action":
			case "nonce":
				if u.Nonce, err = whole("nonce", v); err != nil {
					return nil, err
				}
			default:
				u.Other[k] = string(v)
			}
		}
	}
	if u.Action, err = decodeAction(actionRaw); err != nil {
		return nil, err
	}
	return u, nil
}

var actionFields = []string{"type", "signatureChainId", "hyperliquidChain", "wei", "nonce"}

// decodeAction reads a cWithdraw-shaped action: exactly its five fields, the numbers whole.
// Another type's fields are refused here as unknown, so the verifier's type check names it.
func decodeAction(raw []byte) (Action, error) {
	fields, err := object(raw)
	if err != nil {
		return Action{}, err
	}
	var a Action
	if t, ok := fields["type"]; ok {
		if err := json.Unmarshal(t, &a.Type); err != nil {
			return a, fmt.Errorf("%w: action.type is not a string", ErrDecode)
		}
	}
	if a.Type != TypeCWithdraw {
		// Verification names the type; the other fields are not read.
		return a, nil
	}
	for k := range fields {
		if !contains(actionFields, k) {
			return a, fmt.Errorf("%w: action has field %q, which cWithdraw has not", ErrDecode, k)
		}
	}
	for _, k := range actionFields {
		if _, ok := fields[k]; !ok {
			return a, fmt.Errorf("%w: action lacks %s", ErrDecode, k)
		}
	}
	for k, dst := range map[string]*string{"signatureChainId": &a.SignatureChainID, "hyperliquidChain": &a.HyperliquidChain} {
		if err := json.Unmarshal(fields[k], dst); err != nil {
			return a, fmt.Errorf("%w: action.%s is not a string", ErrDecode, k)
		}
	}
	if a.Wei, err = whole("action.wei", fields["wei"]); err != nil {
		return a, err
	}
	if a.Nonce, err = whole("action.nonce", fields["nonce"]); err != nil {
		return a, err
	}
	return a, nil
}

// object decodes a JSON object into its raw fields, refusing duplicate keys and trailing data.
func object(raw []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: not a JSON object", ErrDecode)
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDecode, err)
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: field %q: %v", ErrDecode, k, err)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%w: field %q appears twice", ErrDecode, k)
		}
		out[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecode, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrDecode)
	}
	return out, nil
}

// whole reads a JSON number that is a whole uint64, written without fraction or exponent.
func whole(name string, raw json.RawMessage) (uint64, error) {
	s := string(bytes.TrimSpace(raw))
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s is %s, not a whole number up to 2^64-1", ErrDecode, name, s)
	}
	return v, nil
}

// WeiOf reads an amount of HYPE written as a decimal number (a JSON number's text: "12.5",
// "1e-3") exactly, and returns it × 10^8. An amount that is not positive, has more precision than
// 10^-8, or is past uint64 is refused: it cannot be withdrawn exactly.
func WeiOf(amount string) (uint64, error) {
	amount = strings.TrimSpace(amount)
	r, ok := new(big.Rat).SetString(amount)
	if !ok || !jsonNumber.MatchString(amount) {
		return 0, fmt.Errorf("%w: amount %q is not a decimal number", ErrIntent, amount)
	}
	if r.Sign() <= 0 {
		return 0, fmt.Errorf("%w: amount %q is not positive", ErrIntent, amount)
	}
	r.Mul(r, new(big.Rat).SetInt64(100_000_000))
	if !r.IsInt() {
		return 0, fmt.Errorf("%w: amount %q has more than 8 decimals: not a whole number of wei (10^-8 HYPE)", ErrIntent, amount)
	}
	if !r.Num().IsUint64() {
		return 0, fmt.Errorf("%w: amount %q is more than 2^64-1 wei", ErrIntent, amount)
	}
	return r.Num().Uint64(), nil
}

// jsonNumber is the grammar of a JSON number (RFC 8259).
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
