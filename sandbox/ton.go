package sandbox

import (
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
)

// tonNetworks are the network values of endpoint 9.
var tonNetworks = []string{"mainnet", "testnet"}

// tonTransactionStatus is the result of endpoint 9.
type tonTransactionStatus struct {
	Address             string `json:"address"`
	LT                  string `json:"lt"`
	PrevTransactionHash string `json:"prevTransactionHash"`
	PrevTransactionLT   string `json:"prevTransactionLt"`
	Now                 int64  `json:"now"`
	OutMessagesCount    int    `json:"outMessagesCount"`
	OldStatus           string `json:"oldStatus"`
	EndStatus           string `json:"endStatus"`
	TransactionHash     string `json:"transactionHash"`
}

// isTONHash accepts a 32-byte hash as hex or (URL-safe) base64.
func isTONHash(s string) bool {
	if b, err := hex.DecodeString(s); err == nil {
		return len(b) == 32
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return true
		}
	}
	return false
}

// tonStatus answers endpoint 9 with data derived from the hash.
func (s *server) tonStatus(r *http.Request, _ *reqContext) (any, *apiError) {
	network := r.PathValue("network")
	if !contains(tonNetworks, network) {
		return nil, invalidField("network", "isIn", "network must be one of the following values: %s", strings.Join(tonNetworks, ", "))
	}
	hash := r.PathValue("transactionHash")
	if !isTONHash(hash) {
		return nil, invalidField("transactionHash", "isHash", "transactionHash must be a 32-byte hash in hex or base64")
	}
	lt := 40_000_000_000_000 + int64(unitFloat("ton-lt", network, hash)*1e12)
	addr, _ := hex.DecodeString(hexDigest(36, "ton-addr", network, hash))
	addr[0], addr[1] = 0x11, 0x00
	prev, _ := hex.DecodeString(hexDigest(32, "ton-prev", network, hash))
	return tonTransactionStatus{
		Address:             base64.URLEncoding.EncodeToString(addr),
		LT:                  strconv.FormatInt(lt, 10),
		PrevTransactionHash: base64.StdEncoding.EncodeToString(prev),
		PrevTransactionLT:   strconv.FormatInt(lt-1_000_000-int64(unitFloat("ton-plt", hash)*1e6), 10),
		Now:                 1_700_000_000 + int64(unitFloat("ton-now", network, hash)*5e7),
		OutMessagesCount:    int(unitFloat("ton-out", hash) * 3),
		OldStatus:           "active",
		EndStatus:           "active",
		TransactionHash:     hash,
	}, nil
}
