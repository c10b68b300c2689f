package sandbox

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/chain/networks"
	"github.com/stakeflow/stakeflow/harness/sandbox/celestiachain"
)

// celestiaNetworks are the network values of endpoint 3: the product's catalogue (the same fact).
var celestiaNetworks = networks.Celestia.Names()

// CelestiaOptions configure the sandbox's Celestia ledgers.
type CelestiaOptions struct {
	// UnbondingTime is the staking params' unbonding time; default Celestia's, CelestiaUnbondingTime.
	UnbondingTime time.Duration
	// BlockTime is how often the ledgers produce a block by themselves (0: only with
	// transactions; see celestiachain.Options.BlockTime).
	BlockTime time.Duration
}

// CelestiaUnbondingTime is Celestia's unbonding period: 14 days and 1 hour since CIP-037
// (formerly 21 days), celestia-app pkg/appconsts/app_consts.go UnbondingTime = 337 * time.Hour,
// set in genesis by app/default_overrides.go and held by app/param_filters.go, which refuses any
// other value in a staking MsgUpdateParams (commit 74614c2e4df0b409deb7e31320ce9ce3790efb78).
const CelestiaUnbondingTime = 337 * time.Hour

// CelestiaValidators are the validator set of every sandbox Celestia ledger.
var CelestiaValidators = []string{
	celestiachain.ValidatorAddress("1"), celestiachain.ValidatorAddress("2"), celestiachain.ValidatorAddress("3"),
}

// celestiaBackends maps each server started with Config.Celestia to its ledgers by network.
var celestiaBackends sync.Map // *server -> map[string]*celestiachain.Ledger

func newCelestiaLedgers(o CelestiaOptions) map[string]*celestiachain.Ledger {
	if o.UnbondingTime <= 0 {
		o.UnbondingTime = CelestiaUnbondingTime
	}
	out := map[string]*celestiachain.Ledger{}
	for _, n := range networks.Celestia {
		out[n.Name] = celestiachain.New(celestiachain.Options{ChainID: n.ID, UnbondingTime: o.UnbondingTime, Validators: CelestiaValidators, BlockTime: o.BlockTime})
	}
	return out
}

func (s *server) celestiaLedger(network string) *celestiachain.Ledger {
	v, ok := celestiaBackends.Load(s)
	if !ok {
		return nil
	}
	return v.(map[string]*celestiachain.Ledger)[network]
}

// CelestiaLedger returns the ledger of a Celestia network (nil without Config.Celestia).
func (s *Sandbox) CelestiaLedger(network string) *celestiachain.Ledger {
	return s.srv.celestiaLedger(network)
}

// CelestiaREST is the base URL of a Celestia network's Cosmos REST paths.
func (s *Sandbox) CelestiaREST(network string) string { return s.url + "/chains/" + network }

// celestiaRoutes serves each ledger's REST paths and controls under /chains/{network}/.
func (s *server) celestiaRoutes(mux *http.ServeMux) {
	for _, network := range celestiaNetworks {
		prefix := "/chains/" + network
		mux.Handle(prefix+"/", http.StripPrefix(prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l := s.celestiaLedger(network)
			if l == nil {
				http.NotFound(w, r)
				return
			}
			l.Handler().ServeHTTP(w, r)
		})))
	}
}

// celestiaRefusedMessage is endpoint 3's refusal under CelestiaSendForwardThenRefuse: the chain's
// words for a fee under the minimum gas price, for a transaction that in fact landed.
const celestiaRefusedMessage = "insufficient fees; got: 400utia required: 800utia: insufficient fee"

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

// celestiaSend is endpoint 3. With Config.Celestia it broadcasts the
// transaction into the network's ledger: a transaction the ledger refuses is
// answered 400 TransactionRejectedException with the chain's code and log; a
// re-send of one already included is answered success with its hash, as
// "already in cache" means it is on its way. Without it, the sandbox checks the
// shape and answers a success derived from the bytes.
func (s *server) celestiaSend(r *http.Request, rc *reqContext) (any, *apiError) {
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
	l := s.celestiaLedger(network)
	if l == nil {
		wanted := int64(100_000 + binary.BigEndian.Uint32(sum[0:4])%100_000)
		used := wanted * 8 / 10
		return celestiaSendResult{
			Status: "success", BlockID: 1_000_000 + int64(binary.BigEndian.Uint32(sum[4:8])%1_000_000),
			Fee: round(float64(wanted)*celestiachain.DefaultMinGasPriceMilli/1e9, 6), Gas: celestiaGas{Used: used, Wanted: wanted},
			TransactionHash: strings.ToUpper(hex.EncodeToString(sum[:])),
		}, nil
	}
	hash := celestiachain.TxHash(raw)
	log := s.log.With(zap.String("txHash", hash), zap.String("network", network))
	if dropped, _ := s.faults.take(&s.faults.cfg.CelestiaSendDropped); dropped {
		log.Info("injected fault", zap.String("fault", "celestiaSendDropped"))
		return celestiaSendResult{Status: "success", TransactionHash: hash}, nil
	}
	res := l.Broadcast(raw)
	if res.Code == celestiachain.CodeTxInCache {
		if prev, ok := l.Tx(hash); ok {
			res = prev
		}
	} else if res.Code != 0 && res.Height == 0 {
		log.Info("transaction refused by the chain", zap.Uint32("code", res.Code), zap.String("log", res.Log))
		return nil, txRejected("Rejected", res.Log)
	}
	if refuse, _ := s.faults.take(&s.faults.cfg.CelestiaSendForwardThenRefuse); refuse && res.Height > 0 {
		log.Info("injected fault", zap.String("fault", "celestiaSendForwardThenRefuse"), zap.Int64("height", res.Height))
		return nil, txRejected("Rejected", celestiaRefusedMessage)
	}
	rc.fault.lost, rc.fault.lostDrop = s.faults.take(&s.faults.cfg.CelestiaSendLostResponse)
	log.Info("transaction broadcast", zap.Int64("height", res.Height), zap.Uint32("code", res.Code))
	out := celestiaSendResult{
		Status: "success", BlockID: res.Height, Gas: celestiaGas{Used: int64(res.GasUsed), Wanted: int64(res.GasWanted)},
		TransactionHash: res.Hash,
	}
	if res.Code != 0 {
		out.Status = "failed"
	}
	if wrong, _ := s.faults.take(&s.faults.cfg.CelestiaSendWrongHash); wrong {
		other := sha256.Sum256([]byte(res.Hash))
		out.TransactionHash = strings.ToUpper(hex.EncodeToString(other[:]))
		log.Info("injected fault", zap.String("fault", "celestiaSendWrongHash"), zap.String("answered", out.TransactionHash))
	}
	return out, nil
}
