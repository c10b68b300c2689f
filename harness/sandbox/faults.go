package sandbox

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// Endpoint names used by FaultConfig.Endpoints and by the control API.
const (
	EndpointDelegatorAPR        = "delegatorAPR"
	EndpointNetworkAPY          = "networkAPY"
	EndpointCelestiaSend        = "celestiaSend"
	EndpointPolygonSend         = "polygonSend"
	EndpointEigenLayerProofs    = "eigenLayerVerifyCheckpointProofs"
	EndpointHyperliquidWithdraw = "hyperliquidWithdraw"
	EndpointValidatorStatus     = "validatorStatus"
	EndpointSSVRequests         = "ssvRequests"
	EndpointTONStatus           = "tonTransactionStatus"
	EndpointStake               = "stake"
	EndpointUnstake             = "unstake"
	EndpointWithdraw            = "withdraw"
	EndpointBroadcast           = "broadcast"
	// EndpointAll in FaultConfig.Endpoints applies to every endpoint that has
	// no entry of its own.
	EndpointAll = "*"
)

// EndpointNames lists every endpoint name in spec order.
var EndpointNames = []string{
	EndpointDelegatorAPR, EndpointNetworkAPY, EndpointCelestiaSend, EndpointPolygonSend,
	EndpointEigenLayerProofs, EndpointHyperliquidWithdraw, EndpointValidatorStatus, EndpointSSVRequests,
	EndpointTONStatus, EndpointStake, EndpointUnstake, EndpointWithdraw, EndpointBroadcast,
}

// FaultConfig injects failures into the service API. Counts ("the next N
// requests") are consumed first and in the order 429, 500, drop; rates are
// then drawn, in the same order, from an RNG seeded with Seed.
type FaultConfig struct {
	// Seed seeds the RNG used for the rates.
	Seed uint64 `json:"seed"`
	// Endpoints maps an endpoint name (see EndpointNames, or EndpointAll) to
	// its faults.
	Endpoints map[string]EndpointFaults `json:"endpoints,omitempty"`
	// BroadcastLostResponse makes a broadcast land on chain while the client
	// gets a 500 or a dropped connection.
	BroadcastLostResponse LostResponse `json:"broadcastLostResponse"`
	// BroadcastLoseThenRefuse makes a broadcast land on chain while the
	// client gets a 500 or a dropped connection, as BroadcastLostResponse
	// does, and then answers every later broadcast of the same signature 400
	// TransactionRejectedException with an instruction error
	// (loseThenRefuseMessage), never "already processed", without sending it
	// again. Next and Rate count broadcasts that land; a request that lost
	// its answer to BroadcastLostResponse or to an endpoint fault is not one.
	// Replacing the fault configuration forgets the refused signatures.
	BroadcastLoseThenRefuse LostResponse `json:"broadcastLoseThenRefuse,omitzero"`
	// BroadcastDropped answers that many next broadcasts (Next) or that
	// fraction of them (Rate) as sent, with the slot of the moment, without
	// submitting them: a transaction the service says it sent that never
	// reaches the chain. Its blockhash expires with the signature absent, so
	// the worker may build it again. Drop has no meaning here.
	BroadcastDropped LostResponse `json:"broadcastDropped,omitzero"`
	// PolygonSendLostResponse makes endpoint 4 forward a transaction to the
	// EVM chain (Config.EVMRPC) while the client gets a 500 or a dropped
	// connection.
	PolygonSendLostResponse LostResponse `json:"polygonSendLostResponse,omitzero"`
	// PolygonSendDropped makes endpoint 4 answer the transaction's hash
	// without forwarding it to the EVM chain: a transaction the service says
	// it sent that never mines. Drop has no meaning here.
	PolygonSendDropped LostResponse `json:"polygonSendDropped,omitzero"`
	// PolygonSendWrongHash is a lie of the service: endpoint 4 forwards the
	// transaction honestly but answers a transactionHash other than the
	// chain's (the Keccak-256 of the true hash) for that many next (Next) or
	// that fraction (Rate) of forwarded transactions; only the chain tells.
	// Drop has no meaning here.
	PolygonSendWrongHash LostResponse `json:"polygonSendWrongHash,omitzero"`
	// PolygonSendForwardThenRefuse is a lie of the service: endpoint 4
	// forwards the transaction to the EVM chain, then answers 400
	// TransactionRejectedException (forwardThenRefuseMessage) as though the
	// bytes never reached it, for that many next (Next) or that fraction
	// (Rate) of forwarded transactions; the transaction mines all the same,
	// and only the chain tells. Drop has no meaning here.
	PolygonSendForwardThenRefuse LostResponse `json:"polygonSendForwardThenRefuse,omitzero"`
	// CelestiaSendLostResponse makes endpoint 3 broadcast a transaction to the
	// Celestia ledger (Config.Celestia) while the client gets a 500 or a
	// dropped connection.
	CelestiaSendLostResponse LostResponse `json:"celestiaSendLostResponse,omitzero"`
	// CelestiaSendDropped is a lie of the service: endpoint 3 answers success
	// with the transaction's hash without broadcasting it, a transaction that
	// never lands. Drop has no meaning here.
	CelestiaSendDropped LostResponse `json:"celestiaSendDropped,omitzero"`
	// CelestiaSendWrongHash is a lie of the service: endpoint 3 broadcasts the
	// transaction honestly but answers the hash of other bytes (the SHA-256
	// of the true hash). Drop has no meaning here.
	CelestiaSendWrongHash LostResponse `json:"celestiaSendWrongHash,omitzero"`
	// CelestiaSendForwardThenRefuse is a lie of the service: endpoint 3 broadcasts the transaction
	// into the ledger (it lands) and answers 400 TransactionRejectedException with a refusal that
	// names no sequence (celestiaRefusedMessage), for that many next (Next) or that fraction
	// (Rate) of sends. Drop has no meaning here.
	CelestiaSendForwardThenRefuse LostResponse `json:"celestiaSendForwardThenRefuse,omitzero"`
}

// loseThenRefuseMessage is the refusal of a re-broadcast under
// BroadcastLoseThenRefuse, after its reason token: what re-executing a
// landed stake transaction against the state it left gives (the system
// program's AccountAlreadyInUse), as a service that skips the status cache
// would answer.
const loseThenRefuseMessage = "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x0"

// forwardThenRefuseMessage is the refusal endpoint 4 answers, after its
// reason token, for a transaction it forwarded under
// PolygonSendForwardThenRefuse: a reason that says nothing about the chain.
const forwardThenRefuseMessage = "the transaction could not be processed"

// EndpointFaults are the faults of one endpoint.
type EndpointFaults struct {
	// Latency is added before the request is handled.
	Latency  Duration `json:"latency,omitempty"`
	Next429  int      `json:"next429,omitempty"`  // answer 429 to that many next requests
	Next500  int      `json:"next500,omitempty"`  // answer 500 to that many next requests
	NextDrop int      `json:"nextDrop,omitempty"` // drop that many next connections
	Rate429  float64  `json:"rate429,omitempty"`  // answer 429 to that fraction (0..1)
	Rate500  float64  `json:"rate500,omitempty"`  // answer 500 to that fraction (0..1)
	RateDrop float64  `json:"rateDrop,omitempty"` // drop that fraction (0..1)
	// RetryAfterSeconds is the Retry-After of injected 429s (default 1).
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty"`
}

// LostResponse describes broadcasts whose response is lost after the
// transaction was submitted.
type LostResponse struct {
	// Next loses the response of that many next broadcasts.
	Next int `json:"next,omitempty"`
	// Rate loses that fraction (0..1) of broadcast responses.
	Rate float64 `json:"rate,omitempty"`
	// Drop closes the connection instead of answering 500.
	Drop bool `json:"drop,omitempty"`
}

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("250ms") and also reads a number of milliseconds.
type Duration time.Duration

// faultKind is what the injector decided for one request.
type faultKind int

const (
	faultNone faultKind = iota
	fault429
	fault500
	faultDrop
)

// faultDecision is the outcome for one request.
type faultDecision struct {
	kind       faultKind
	latency    time.Duration
	retryAfter int
	lost       bool // broadcast: submit, then lose the response
	lostDrop   bool
}

// faultInjector holds the mutable fault state.
type faultInjector struct {
	mu     sync.Mutex
	cfg    FaultConfig
	rng    *rand.Rand
	refuse map[string]bool // signatures whose later broadcasts are refused
}

func newFaultInjector(cfg FaultConfig) *faultInjector {
	f := &faultInjector{}
	f.set(cfg)
	return f
}

func (f *faultInjector) set(cfg FaultConfig) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cp := cfg
	cp.Endpoints = make(map[string]EndpointFaults, len(cfg.Endpoints))
	for k, v := range cfg.Endpoints {
		cp.Endpoints[k] = v
	}
	f.cfg = cp
	f.rng = rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	f.refuse = map[string]bool{}
}

func (f *faultInjector) get() FaultConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	cp := f.cfg
	cp.Endpoints = make(map[string]EndpointFaults, len(f.cfg.Endpoints))
	for k, v := range f.cfg.Endpoints {
		cp.Endpoints[k] = v
	}
	return cp
}

// decide consumes counts and draws rates for one request to endpoint.
func (f *faultInjector) decide(endpoint string) faultDecision {
	f.mu.Lock()
	defer f.mu.Unlock()
	var d faultDecision
	key := endpoint
	ef, ok := f.cfg.Endpoints[key]
	if !ok {
		key = EndpointAll
		ef, ok = f.cfg.Endpoints[key]
	}
	if ok {
		d.latency = time.Duration(ef.Latency)
		d.retryAfter = ef.RetryAfterSeconds
		if d.retryAfter < 1 {
			d.retryAfter = 1
		}
		switch {
		case ef.Next429 > 0:
			ef.Next429--
			d.kind = fault429
		case ef.Next500 > 0:
			ef.Next500--
			d.kind = fault500
		case ef.NextDrop > 0:
			ef.NextDrop--
			d.kind = faultDrop
		case f.draw(ef.Rate429):
			d.kind = fault429
		case f.draw(ef.Rate500):
			d.kind = fault500
		case f.draw(ef.RateDrop):
			d.kind = faultDrop
		}
		f.cfg.Endpoints[key] = ef
	}
	if endpoint == EndpointBroadcast && d.kind == faultNone {
		lr := &f.cfg.BroadcastLostResponse
		switch {
		case lr.Next > 0:
			lr.Next--
			d.lost = true
		case f.draw(lr.Rate):
			d.lost = true
		}
		d.lostDrop = lr.Drop
	}
	return d
}

// loseThenRefuse decides, for a broadcast of sig that just landed, whether
// its answer is lost under BroadcastLoseThenRefuse; if so it marks sig so
// that later broadcasts of it are refused. drop reports a dropped connection
// rather than a 500.
func (f *faultInjector) loseThenRefuse(sig string) (lost, drop bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lr := &f.cfg.BroadcastLoseThenRefuse
	switch {
	case lr.Next > 0:
		lr.Next--
		lost = true
	case f.draw(lr.Rate):
		lost = true
	}
	if lost {
		f.refuse[sig] = true
	}
	return lost, lr.Drop
}

// dropped decides whether this broadcast is answered as sent without being
// submitted (BroadcastDropped).
func (f *faultInjector) dropped() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	lr := &f.cfg.BroadcastDropped
	switch {
	case lr.Next > 0:
		lr.Next--
		return true
	case f.draw(lr.Rate):
		return true
	}
	return false
}

// polygonLost decides whether the answer of a transaction endpoint 4 just
// forwarded is lost (PolygonSendLostResponse), and whether as a dropped
// connection rather than a 500.
func (f *faultInjector) polygonLost() (lost, drop bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lr := &f.cfg.PolygonSendLostResponse
	switch {
	case lr.Next > 0:
		lr.Next--
		lost = true
	case f.draw(lr.Rate):
		lost = true
	}
	return lost, lr.Drop
}

// polygonDropped decides whether endpoint 4 answers a transaction as sent
// without forwarding it (PolygonSendDropped).
func (f *faultInjector) polygonDropped() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	lr := &f.cfg.PolygonSendDropped
	switch {
	case lr.Next > 0:
		lr.Next--
		return true
	case f.draw(lr.Rate):
		return true
	}
	return false
}

// polygonWrongHash decides whether endpoint 4 answers a wrong hash for a
// transaction it forwarded (PolygonSendWrongHash).
func (f *faultInjector) polygonWrongHash() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	lr := &f.cfg.PolygonSendWrongHash
	switch {
	case lr.Next > 0:
		lr.Next--
		return true
	case f.draw(lr.Rate):
		return true
	}
	return false
}

// take consumes one of lr's next count, or draws its rate; drop is lr.Drop.
func (f *faultInjector) take(lr *LostResponse) (hit, drop bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case lr.Next > 0:
		lr.Next--
		hit = true
	case f.draw(lr.Rate):
		hit = true
	}
	return hit, lr.Drop
}

// refused reports whether broadcasts of sig are refused.
func (f *faultInjector) refused(sig string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refuse[sig]
}

func (f *faultInjector) draw(rate float64) bool {
	if rate <= 0 {
		return false
	}
	return f.rng.Float64() < rate
}

// Validate checks endpoint names, rates (0..1) and counts (>= 0).
func (c FaultConfig) Validate() error {
	for name, ef := range c.Endpoints {
		if name != EndpointAll && !contains(EndpointNames, name) {
			return fmt.Errorf("sandbox: unknown fault endpoint %q (known: %s, or %q)", name, strings.Join(EndpointNames, ", "), EndpointAll)
		}
		for field, r := range map[string]float64{"rate429": ef.Rate429, "rate500": ef.Rate500, "rateDrop": ef.RateDrop} {
			if r < 0 || r > 1 {
				return fmt.Errorf("sandbox: fault endpoint %q: %s %v is outside 0..1", name, field, r)
			}
		}
		if ef.Next429 < 0 || ef.Next500 < 0 || ef.NextDrop < 0 || ef.Latency < 0 || ef.RetryAfterSeconds < 0 {
			return fmt.Errorf("sandbox: fault endpoint %q: counts, latency and retryAfterSeconds must not be negative", name)
		}
	}
	for name, lr := range map[string]LostResponse{
		"broadcastLostResponse": c.BroadcastLostResponse, "broadcastLoseThenRefuse": c.BroadcastLoseThenRefuse,
		"broadcastDropped": c.BroadcastDropped,
	} {
		if lr.Rate < 0 || lr.Rate > 1 || lr.Next < 0 {
			return fmt.Errorf("sandbox: %s: rate must be within 0..1 and next must not be negative", name)
		}
	}
	for name, lr := range map[string]LostResponse{
		"polygonSendLostResponse": c.PolygonSendLostResponse, "polygonSendDropped": c.PolygonSendDropped,
		"polygonSendWrongHash": c.PolygonSendWrongHash, "celestiaSendLostResponse": c.CelestiaSendLostResponse,
		"celestiaSendDropped": c.CelestiaSendDropped, "celestiaSendWrongHash": c.CelestiaSendWrongHash,
		"polygonSendForwardThenRefuse": c.PolygonSendForwardThenRefuse, "celestiaSendForwardThenRefuse": c.CelestiaSendForwardThenRefuse,
	} {
		if lr.Rate < 0 || lr.Rate > 1 || lr.Next < 0 {
			return fmt.Errorf("sandbox: %s: rate must be within 0..1 and next must not be negative", name)
		}
	}
	return nil
}
