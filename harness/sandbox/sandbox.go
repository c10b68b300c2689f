package sandbox

import (
	"context"
	"errors"
	"fmt"
	"github.com/ethereum/go-ethereum/common"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
	"github.com/stakeflow/stakeflow/harness/sandbox/solanart"
)

// DefaultAddr is the listen address used when Config.Addr is empty.
const DefaultAddr = "127.0.0.1:0"

// ErrNoTokenSecret is returned by Start when Config.TokenSecret is empty.
var ErrNoTokenSecret = errors.New("sandbox: Config.TokenSecret is required")

// Config configures a Sandbox.
type Config struct {
	// Addr is the HTTP listen address; default 127.0.0.1:0 (a free port).
	Addr string
	// TokenSecret is the HS256 secret bearer tokens are checked with; required.
	TokenSecret []byte
	// Runtime configures the Solana runtime the sandbox starts and stops.
	Runtime solanart.Options
	// RateLimit is a RateLimit-Policy such as "100;w=1,1000;w=60", applied per
	// bearer token; empty means no limit.
	RateLimit string
	// Faults are the initial injected faults.
	Faults FaultConfig
	// Hostile is the initial hostile mode.
	Hostile HostileMode
	// DefaultVoteAccount is the vote account stakes are delegated to;
	// default: the runtime's first healthy vote account.
	DefaultVoteAccount string
	// EVMRPC is the JSON-RPC URL of an EVM chain (a geth --dev node, say)
	// that endpoint 4 forwards signed Polygon transactions to; empty: endpoint
	// 4 only checks their shape and answers the Keccak-256 of their bytes.
	EVMRPC string
	// Celestia, when set, gives each Celestia network of endpoint 3 an
	// in-memory ledger (harness/sandbox/celestiachain) that endpoint 3 broadcasts into
	// and whose Cosmos REST paths are served under /chains/{network}/; unset,
	// endpoint 3 only checks the shape of what it is sent.
	Celestia *CelestiaOptions
	// EigenLayer, when set, is the EigenLayer stand-ins deployment endpoint 5 builds real proofs
	// transactions from (its beacon state model and the chain it lives on); nil: endpoint 5
	// answers a transaction derived from the request alone, with no chain behind it.
	EigenLayer *evmchain.EigenLayer
	// Logger receives the sandbox's logs; default no-op.
	Logger *zap.Logger
}

// Sandbox is a running local staking service: an HTTP server in front of a
// Solana runtime.
type Sandbox struct {
	srv       *server
	rt        *solanart.Runtime
	http      *http.Server
	url       string
	serveErr  chan error
	closeOnce sync.Once
	closeErr  error
}

// Start starts the Solana runtime and the HTTP server. ctx bounds start-up
// only; the sandbox lives until Close.
func Start(ctx context.Context, cfg Config) (*Sandbox, error) {
	if len(cfg.TokenSecret) == 0 {
		return nil, ErrNoTokenSecret
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	windows, err := ParseRatePolicy(cfg.RateLimit)
	if err != nil {
		return nil, err
	}
	if err := cfg.Faults.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Hostile.Validate(); err != nil {
		return nil, err
	}
	var vote solana.PublicKey
	if cfg.DefaultVoteAccount != "" {
		if vote, err = solana.PublicKeyFromBase58(cfg.DefaultVoteAccount); err != nil {
			return nil, fmt.Errorf("sandbox: DefaultVoteAccount %q is not a base58 address: %w", cfg.DefaultVoteAccount, err)
		}
	}
	addr := cfg.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sandbox: listen on %s: %w", addr, err)
	}
	rtOpts := cfg.Runtime
	if rtOpts.Logger == nil {
		rtOpts.Logger = log.Named("solanart")
	}
	var evm *evmBackend
	if cfg.EVMRPC != "" {
		if evm, err = dialEVM(ctx, cfg.EVMRPC); err != nil {
			_ = ln.Close()
			return nil, err
		}
	}
	rt, err := solanart.Start(ctx, rtOpts)
	if err != nil {
		_ = ln.Close()
		if evm != nil {
			evm.rpc.Close()
		}
		return nil, fmt.Errorf("sandbox: start Solana runtime: %w", err)
	}
	srv := &server{
		log: log, secret: newTokenSecret(cfg.TokenSecret), limiter: newRateLimiter(windows, time.Now),
		faults: newFaultInjector(cfg.Faults), rt: rt, rpc: rt.RPC(), vote: vote, now: nowFunc,
		broadcasts: map[string]int{}, lastBuilt: map[replayKey]unsignedTxResult{},
		ledger: func(ctx context.Context) ([]LedgerTransaction, error) {
			entries, err := rt.Ledger(ctx)
			if err != nil {
				return nil, err
			}
			out := make([]LedgerTransaction, len(entries))
			for i, e := range entries {
				accs := make([]string, len(e.Accounts))
				for j, a := range e.Accounts {
					accs[j] = a.String()
				}
				out[i] = LedgerTransaction{Signature: e.Signature.String(), Slot: e.Slot, FeePayer: e.FeePayer.String(), Accounts: accs, Airdrop: e.Airdrop}
			}
			return out, nil
		},
	}
	srv.hostile.set(cfg.Hostile)
	if evm != nil {
		evmBackends.Store(srv, evm)
	}
	if cfg.Celestia != nil {
		celestiaBackends.Store(srv, newCelestiaLedgers(*cfg.Celestia))
	}
	if cfg.EigenLayer != nil {
		eigenBackends.Store(srv, cfg.EigenLayer)
	}
	s := &Sandbox{
		srv:      srv,
		rt:       rt,
		http:     &http.Server{Handler: srv.routes(), ReadHeaderTimeout: 10 * time.Second},
		url:      "http://" + ln.Addr().String(),
		serveErr: make(chan error, 1),
	}
	go func() { s.serveErr <- s.http.Serve(ln) }()
	log.Info("sandbox listening", zap.String("url", s.url), zap.String("solanaRPC", rt.URL()))
	return s, nil
}

// URL is the base URL of the service API (without /api/v1).
func (s *Sandbox) URL() string { return s.url }

// Runtime is the Solana runtime behind the sandbox.
func (s *Sandbox) Runtime() *solanart.Runtime { return s.rt }

// SetFaults replaces the injected faults (and reseeds their RNG). An
// invalid configuration is refused and leaves the faults unchanged.
func (s *Sandbox) SetFaults(f FaultConfig) error {
	if err := f.Validate(); err != nil {
		return err
	}
	s.srv.faults.set(f)
	return nil
}

// SetHostile switches the hostile mode; HostileNone is honest.
func (s *Sandbox) SetHostile(m HostileMode) error {
	if err := m.Validate(); err != nil {
		return err
	}
	s.srv.hostile.set(m)
	return nil
}

// Faults returns the current fault configuration, counts as consumed so far.
func (s *Sandbox) Faults() FaultConfig { return s.srv.faults.get() }

// Hostile returns the current hostile mode.
func (s *Sandbox) Hostile() HostileMode { return s.srv.hostile.get() }

// Ledger returns what GET /sandbox/ledger answers: the transactions that
// landed, the stake accounts the sandbox built with their on-chain state,
// and the broadcasts received per signature.
func (s *Sandbox) Ledger(ctx context.Context) (*Ledger, error) {
	l, aerr := s.srv.snapshot(ctx)
	if aerr != nil {
		return nil, aerr
	}
	return l, nil
}

// MintToken returns a bearer token for subject signed with the secret the
// sandbox accepts now (Config.TokenSecret until RotateToken). ttl is as in
// the package function MintToken.
func (s *Sandbox) MintToken(subject string, ttl time.Duration) (string, error) {
	return MintToken(s.srv.secret.get(), subject, ttl)
}

// RotateToken switches the accepted token secret to a fresh random one, so
// every token minted before is answered 401 WrongTokenException, and
// returns a token for subject (ttl as in MintToken) signed with the new
// secret. An empty subject is refused and leaves the secret unchanged.
func (s *Sandbox) RotateToken(subject string, ttl time.Duration) (string, error) {
	return s.srv.rotateToken(subject, ttl)
}

// AddTONTransaction records a TON transaction endpoint 9 finds once its Delay is over (as POST
// /sandbox/ton/transactions does), and returns it with its defaults filled in.
func (s *Sandbox) AddTONTransaction(tx TONTransaction) (TONTransaction, error) {
	out, aerr := s.srv.addTON(tx)
	if aerr != nil {
		return out, aerr
	}
	return out, nil
}

// HyperliquidURL is the base URL of the emulated Hyperliquid API of network (mainnet or testnet):
// the worker's --hyperliquid-api value; /exchange and /info follow it.
func (s *Sandbox) HyperliquidURL(network string) string { return s.url + "/hyperliquid/" + network }

// HyperliquidFund adds wei (10^-8 HYPE) to user's undelegated staking balance on network.
func (s *Sandbox) HyperliquidFund(network string, user common.Address, wei uint64) HyperliquidAccount {
	return s.srv.HyperliquidFund(network, user, wei)
}

// HyperliquidWarp moves network's L1 clock forward by d: withdrawals whose queue has passed
// reach spot.
func (s *Sandbox) HyperliquidWarp(network string, d time.Duration) time.Time {
	return s.srv.hl.chain(network, s.srv.now).advance(d)
}

// HyperliquidAccount is user's balances and pending withdrawals on network.
func (s *Sandbox) HyperliquidAccount(network string, user common.Address) HyperliquidAccount {
	return s.srv.hl.chain(network, s.srv.now).account(user)
}

// SetHyperliquidHostile sets endpoint 6's mode for delegator.
func (s *Sandbox) SetHyperliquidHostile(delegator common.Address, m HyperliquidHostileMode) error {
	if err := m.Validate(); err != nil {
		return err
	}
	s.srv.hl.setHostile(delegator.Hex(), m)
	return nil
}

// HyperliquidRequests counts endpoint 6's answers for delegator.
func (s *Sandbox) HyperliquidRequests(delegator common.Address) int {
	return s.srv.hl.Requests(delegator.Hex())
}

// Close stops the HTTP server and the Solana runtime.
func (s *Sandbox) Close() error {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		errHTTP := s.http.Shutdown(ctx)
		if errHTTP != nil {
			errHTTP = errors.Join(errHTTP, s.http.Close())
		}
		if err := <-s.serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errHTTP = errors.Join(errHTTP, err)
		}
		s.closeErr = errors.Join(errHTTP, s.rt.Close())
		if evm := s.srv.evm(); evm != nil {
			evm.rpc.Close()
			evmBackends.Delete(s.srv)
		}
		celestiaBackends.Delete(s.srv)
		// The EigenLayer deployment is the caller's: it stays open.
		eigenBackends.Delete(s.srv)
	})
	return s.closeErr
}
