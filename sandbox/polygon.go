package sandbox

import (
	"encoding/hex"
	"net/http"
	"strings"
)

// polygonSendResult is the sandbox's answer to endpoint 4 (the spec does not
// show the 200 payload).
type polygonSendResult struct {
	TransactionHash string `json:"transactionHash"`
}

// polygonSend checks the shape of a signed Polygon (EVM) transaction and
// answers its hash (endpoint 4). No chain backs it.
func (s *server) polygonSend(r *http.Request, _ *reqContext) (any, *apiError) {
	b, aerr := readBody(r)
	if aerr != nil {
		return nil, aerr
	}
	var errs []fieldError
	signed, ok := b.str("signedTransaction", true, &errs)
	var raw []byte
	if ok {
		h, hasPrefix := strings.CutPrefix(signed, "0x")
		var err error
		raw, err = hex.DecodeString(h)
		if !hasPrefix || err != nil || len(raw) == 0 {
			errs = append(errs, fieldErr("signedTransaction", "isHexadecimal", "signedTransaction must be 0x-prefixed hexadecimal"))
		}
	}
	staker, _ := b.str("stakerAddress", true, &errs)
	if len(errs) > 0 {
		return nil, validation(errs...)
	}
	if !isEVMAddress(staker) {
		return nil, invalidDelegator("stakerAddress", staker, "polygon")
	}
	return polygonSendResult{TransactionHash: "0x" + hex.EncodeToString(keccak256(raw))}, nil
}
