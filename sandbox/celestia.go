package sandbox

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strings"
)

// celestiaNetworks are the network values of endpoint 3.
var celestiaNetworks = []string{"celestia-mainnet-beta", "celestia-mocha-testnet"}

// celestiaSendResult is the result of endpoint 3.
type celestiaSendResult struct {
	Status          string      `json:"status"`
	BlockID         int64       `json:"blockId"`
	Fee             float64     `json:"fee"`
	Gas             celestiaGas `json:"gas"`
	TransactionHash string      `json:"transactionHash"`
}

// celestiaGas is the gas accounting of a Celestia broadcast.
type celestiaGas struct {
	Used   int64 `json:"used"`
	Wanted int64 `json:"wanted"`
}

// decodeCelestiaTx accepts base64 or hex (with or without 0x).
func decodeCelestiaTx(s string) ([]byte, bool) {
	h := strings.TrimPrefix(s, "0x")
	if b, err := hex.DecodeString(h); err == nil && len(b) > 0 {
		return b, true
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) > 0 {
		return b, true
	}
	return nil, false
}

// celestiaSend checks the shape of a signed Celestia transaction and
// answers a success derived from its bytes (endpoint 3). No chain backs it.
func (s *server) celestiaSend(r *http.Request, _ *reqContext) (any, *apiError) {
	network := r.PathValue("network")
	if !contains(celestiaNetworks, network) {
		return nil, invalidField("network", "isIn", "network must be one of the following values: %s", strings.Join(celestiaNetworks, ", "))
	}
	b, aerr := readBody(r)
	if aerr != nil {
		return nil, aerr
	}
	var errs []fieldError
	signed, ok := b.str("signedTransaction", true, &errs)
	var raw []byte
	if ok {
		if raw, ok = decodeCelestiaTx(signed); !ok {
			errs = append(errs, fieldErr("signedTransaction", "isBase64OrHex", "signedTransaction must be base64 or hexadecimal"))
		}
	}
	if len(errs) > 0 {
		return nil, validation(errs...)
	}
	sum := sha256.Sum256(raw)
	wanted := int64(100_000 + binary.BigEndian.Uint32(sum[0:4])%100_000)
	used := wanted * 8 / 10
	return celestiaSendResult{
		Status: "success", BlockID: 1_000_000 + int64(binary.BigEndian.Uint32(sum[4:8])%1_000_000),
		Fee: round(float64(wanted)*0.002/1e6, 6), Gas: celestiaGas{Used: used, Wanted: wanted},
		TransactionHash: strings.ToUpper(hex.EncodeToString(sum[:])),
	}, nil
}
