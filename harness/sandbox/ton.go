package sandbox

import (
	"github.com/stakeflow/stakeflow/chain/networks"

	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tonNetworks are the network values of endpoint 9.
var tonNetworks = networks.TON.Names()

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

// TONTransaction is a transaction the sandbox records for endpoint 9 (POST /sandbox/ton/transactions).
// Zero fields take defaults: a random hash, a derived address and lt, now, active → active.
type TONTransaction struct {
	Network string `json:"network"`
	// Hash is the transaction hash, 32 bytes in hex or base64; endpoint 9 finds it in either form.
	Hash                string `json:"hash,omitempty"`
	Address             string `json:"address,omitempty"`
	LT                  string `json:"lt,omitempty"`
	PrevTransactionHash string `json:"prevTransactionHash,omitempty"`
	PrevTransactionLT   string `json:"prevTransactionLt,omitempty"`
	Now                 int64  `json:"now,omitempty"`
	OutMessagesCount    int    `json:"outMessagesCount,omitempty"`
	OldStatus           string `json:"oldStatus,omitempty"`
	EndStatus           string `json:"endStatus,omitempty"`
	// Delay is how long after it is recorded endpoint 9 starts finding it (not found before).
	Delay Duration `json:"delay,omitempty"`
	// VisibleAt is when endpoint 9 starts finding it (set by the sandbox).
	VisibleAt string `json:"visibleAt,omitempty"`
}

// tonLedger holds the recorded TON transactions by network and normalised hash.
type tonLedger struct {
	mu  sync.Mutex
	txs map[string]tonEntry
}

type tonEntry struct {
	status  tonTransactionStatus
	visible time.Time
}

// parseTONHash reads a 32-byte hash given as hex or (URL-safe, padded or not) base64.
func parseTONHash(s string) ([]byte, bool) {
	if b, err := hex.DecodeString(s); err == nil {
		return b, len(b) == 32
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, true
		}
	}
	return nil, false
}

func tonKey(network string, hash []byte) string { return network + "/" + hex.EncodeToString(hash) }

// addTON records tx; it answers the record as endpoint 9 will serve it.
func (s *server) addTON(tx TONTransaction) (TONTransaction, *apiError) {
	if !contains(tonNetworks, tx.Network) {
		return tx, invalidField("network", "isIn", "network must be one of the following values: %s", strings.Join(tonNetworks, ", "))
	}
	var hash []byte
	if tx.Hash == "" {
		raw, _ := hex.DecodeString(hexDigest(32, "ton-new", tx.Network, newRequestID()))
		hash = raw
		tx.Hash = hex.EncodeToString(raw)
	} else {
		var ok bool
		if hash, ok = parseTONHash(tx.Hash); !ok {
			return tx, invalidField("hash", "isHash", "hash must be a 32-byte hash in hex or base64")
		}
	}
	if tx.Delay < 0 {
		return tx, invalidField("delay", "min", "delay must not be negative")
	}
	now := s.now()
	if tx.Address == "" {
		addr, _ := hex.DecodeString(hexDigest(36, "ton-addr", tx.Network, tx.Hash))
		addr[0], addr[1] = 0x11, 0x00
		tx.Address = base64.URLEncoding.EncodeToString(addr)
	}
	if tx.LT == "" {
		tx.LT = strconv.FormatInt(40_000_000_000_000+int64(unitFloat("ton-lt", tx.Network, tx.Hash)*1e12), 10)
	}
	if tx.PrevTransactionHash == "" {
		prev, _ := hex.DecodeString(hexDigest(32, "ton-prev", tx.Network, tx.Hash))
		tx.PrevTransactionHash = base64.StdEncoding.EncodeToString(prev)
	}
	if tx.PrevTransactionLT == "" {
		lt, err := strconv.ParseInt(tx.LT, 10, 64)
		if err != nil || lt <= 0 {
			return tx, invalidField("lt", "isNumberString", "lt must be a positive integer as text")
		}
		tx.PrevTransactionLT = strconv.FormatInt(lt-1_000_000, 10)
	}
	if tx.Now == 0 {
		tx.Now = now.Unix()
	}
	if tx.OldStatus == "" {
		tx.OldStatus = "active"
	}
	if tx.EndStatus == "" {
		tx.EndStatus = "active"
	}
	visible := now.Add(time.Duration(tx.Delay))
	tx.VisibleAt = formatTime(visible)
	st := tonTransactionStatus{
		Address: tx.Address, LT: tx.LT, PrevTransactionHash: tx.PrevTransactionHash, PrevTransactionLT: tx.PrevTransactionLT,
		Now: tx.Now, OutMessagesCount: tx.OutMessagesCount, OldStatus: tx.OldStatus, EndStatus: tx.EndStatus,
		TransactionHash: base64.StdEncoding.EncodeToString(hash),
	}
	s.ton.mu.Lock()
	defer s.ton.mu.Unlock()
	if s.ton.txs == nil {
		s.ton.txs = map[string]tonEntry{}
	}
	key := tonKey(tx.Network, hash)
	if _, dup := s.ton.txs[key]; dup {
		return tx, invalidField("hash", "isUnique", "transaction %s is already recorded on %s", tx.Hash, tx.Network)
	}
	s.ton.txs[key] = tonEntry{status: st, visible: visible}
	return tx, nil
}

// tonStatus answers endpoint 9 from the recorded transactions: 404 for a hash not recorded, or
// recorded with a delay not yet over. The hash is found in hex or base64; the answer carries it
// in base64, as TON explorers do.
func (s *server) tonStatus(r *http.Request, _ *reqContext) (any, *apiError) {
	network := r.PathValue("network")
	if !contains(tonNetworks, network) {
		return nil, invalidField("network", "isIn", "network must be one of the following values: %s", strings.Join(tonNetworks, ", "))
	}
	raw := r.PathValue("transactionHash")
	hash, ok := parseTONHash(raw)
	if !ok {
		return nil, invalidField("transactionHash", "isHash", "transactionHash must be a 32-byte hash in hex or base64")
	}
	s.ton.mu.Lock()
	e, found := s.ton.txs[tonKey(network, hash)]
	s.ton.mu.Unlock()
	if !found || s.now().Before(e.visible) {
		return nil, &apiError{Status: http.StatusNotFound, Name: nameNotFound, Code: codeNotFound, Type: typeClient,
			Message: fmt.Sprintf("Transaction %s not found on TON %s", raw, network)}
	}
	return e.status, nil
}
