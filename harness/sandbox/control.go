package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"go.uber.org/zap"
)

// LedgerTransaction is one transaction that landed on the runtime.
type LedgerTransaction struct {
	Signature string   `json:"signature"` // first signature, base58
	Slot      uint64   `json:"slot"`      // slot it landed in
	FeePayer  string   `json:"feePayer"`  // first account key
	Accounts  []string `json:"accounts"`  // message account keys in order
	Airdrop   bool     `json:"airdrop"`   // true for runtime airdrops
}

// LedgerStakeAccount is a stake account the sandbox built a transaction
// for, with its state on chain.
type LedgerStakeAccount struct {
	Address   string `json:"address"`   // stake account address
	Staker    string `json:"staker"`    // staker (base, authorities, fee payer)
	Seed      string `json:"seed"`      // CreateAccountWithSeed seed
	CreatedAt string `json:"createdAt"` // when the transaction was built
	// RequestedLamports is the amount asked for at build time.
	RequestedLamports uint64 `json:"requestedLamports"`
	// Exists is false until the stake transaction lands (and after a full
	// withdrawal closes the account).
	Exists   bool   `json:"exists"`
	Lamports uint64 `json:"lamports"` // on-chain balance
	// State is uninitialized, initialized, activating, active,
	// deactivating, inactive or rewardsPool.
	State             string  `json:"state,omitempty"`
	Voter             string  `json:"voter,omitempty"`             // delegated vote account
	Stake             uint64  `json:"stake,omitempty"`             // delegated lamports
	ActivationEpoch   *uint64 `json:"activationEpoch,omitempty"`   // set once delegated
	DeactivationEpoch *uint64 `json:"deactivationEpoch,omitempty"` // 2^64-1 while not deactivating
}

// LedgerBroadcast counts the broadcasts received for one signature.
type LedgerBroadcast struct {
	Signature string `json:"signature"` // first signature, base58
	Count     int    `json:"count"`     // broadcasts received, accepted or not
}

// Ledger is the answer of GET /sandbox/ledger.
type Ledger struct {
	Epoch         uint64               `json:"epoch"`         // current epoch
	Slot          uint64               `json:"slot"`          // current slot
	Transactions  []LedgerTransaction  `json:"transactions"`  // landed, in order
	StakeAccounts []LedgerStakeAccount `json:"stakeAccounts"` // built, oldest first
	Broadcasts    []LedgerBroadcast    `json:"broadcasts"`    // by first receipt
}

// controlRoutes adds the unauthenticated test controls under /sandbox/.
func (s *server) controlRoutes(mux *http.ServeMux) {
	s.ssvControlRoutes(mux)
	s.hyperliquidRoutes(mux)
	mux.Handle("POST /sandbox/ton/transactions", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		var tx TONTransaction
		if err := decodeStrict(r, &tx); err != nil {
			return nil, invalidField("body", "isTONTransaction", "body must be a TON transaction: %v", err)
		}
		out, aerr := s.addTON(tx)
		if aerr != nil {
			return nil, aerr
		}
		s.log.Info("TON transaction recorded", zap.String("network", out.Network), zap.String("hash", out.Hash), zap.String("visibleAt", out.VisibleAt))
		return out, nil
	}))
	s.eigenControlRoutes(mux)
	mux.Handle("GET /sandbox/ledger", s.wrapPlain(s.ledgerHandler))
	mux.Handle("GET /sandbox/faults", s.wrapPlain(func(*http.Request, *reqContext) (any, *apiError) {
		return s.faults.get(), nil
	}))
	mux.Handle("POST /sandbox/faults", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		var cfg FaultConfig
		if err := decodeStrict(r, &cfg); err != nil {
			return nil, invalidField("body", "isFaultConfig", "body must be a fault configuration: %v", err)
		}
		if err := cfg.Validate(); err != nil {
			return nil, invalidField("body", "isFaultConfig", "%v", err)
		}
		s.faults.set(cfg)
		s.log.Info("faults set")
		return s.faults.get(), nil
	}))
	mux.Handle("GET /sandbox/hostile", s.wrapPlain(func(*http.Request, *reqContext) (any, *apiError) {
		return map[string]HostileMode{"mode": s.hostile.get()}, nil
	}))
	mux.Handle("POST /sandbox/hostile", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		var body struct {
			Mode HostileMode `json:"mode"`
		}
		if err := decodeStrict(r, &body); err != nil {
			return nil, invalidField("mode", "isString", "body must be {\"mode\": \"<hostile mode>\"}: %v", err)
		}
		if err := body.Mode.Validate(); err != nil {
			return nil, invalidField("mode", "isIn", "%v", err)
		}
		s.hostile.set(body.Mode)
		s.log.Info("hostile mode set", zap.String("mode", string(body.Mode)))
		return map[string]HostileMode{"mode": body.Mode}, nil
	}))
	mux.Handle("POST /sandbox/airdrop", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		var body struct {
			Address  string `json:"address"`
			Lamports uint64 `json:"lamports"`
		}
		if err := decodeStrict(r, &body); err != nil {
			return nil, invalidField("body", "isJson", "body must be {\"address\", \"lamports\"}: %v", err)
		}
		to, err := solana.PublicKeyFromBase58(body.Address)
		if err != nil {
			return nil, invalidField("address", "isSolanaAddress", "address must be a base58 Solana address")
		}
		if body.Lamports == 0 {
			return nil, invalidField("lamports", "isPositive", "lamports must be a positive integer")
		}
		if err := s.rt.Airdrop(r.Context(), to, body.Lamports); err != nil {
			return nil, runtimeError("airdrop", err)
		}
		bal, err := s.rpc.GetBalance(r.Context(), to, rpc.CommitmentProcessed)
		if err != nil {
			return nil, runtimeError("getBalance", err)
		}
		return map[string]any{"address": to.String(), "balance": bal.Value}, nil
	}))
	mux.Handle("POST /sandbox/warp", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		var body struct {
			Epochs uint64 `json:"epochs"`
		}
		if err := decodeStrict(r, &body); err != nil || body.Epochs == 0 {
			return nil, invalidField("epochs", "isPositive", "body must be {\"epochs\": <positive integer>}")
		}
		if err := s.rt.WarpEpochs(r.Context(), body.Epochs); err != nil {
			return nil, runtimeError("warp", err)
		}
		ei, err := s.rpc.GetEpochInfo(r.Context(), rpc.CommitmentProcessed)
		if err != nil {
			return nil, runtimeError("getEpochInfo", err)
		}
		return map[string]uint64{"epoch": ei.Epoch, "slot": ei.AbsoluteSlot}, nil
	}))
	mux.Handle("POST /sandbox/token/rotate", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		var body struct {
			Subject string   `json:"subject"`
			TTL     Duration `json:"ttl"`
		}
		if err := decodeStrict(r, &body); err != nil {
			return nil, invalidField("body", "isJson", "body must be {\"subject\", \"ttl\"?}: %v", err)
		}
		if body.Subject == "" {
			return nil, invalidField("subject", "isNotEmpty", "subject should not be empty")
		}
		if body.TTL < 0 {
			return nil, invalidField("ttl", "min", "ttl must not be negative")
		}
		tok, err := s.rotateToken(body.Subject, time.Duration(body.TTL))
		if err != nil {
			return nil, internalError(err.Error())
		}
		return map[string]string{"token": tok, "subject": body.Subject}, nil
	}))
	mux.Handle("POST /sandbox/expire-blockhashes", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		if err := s.rt.ExpireBlockhashes(r.Context()); err != nil {
			return nil, runtimeError("expire blockhashes", err)
		}
		return map[string]bool{"expired": true}, nil
	}))
}

// decodeStrict decodes a JSON body rejecting unknown fields; an empty body
// decodes to the zero value.
func decodeStrict(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// ledgerHandler answers GET /sandbox/ledger.
func (s *server) ledgerHandler(r *http.Request, _ *reqContext) (any, *apiError) {
	l, err := s.snapshot(r.Context())
	if err != nil {
		return nil, err
	}
	return l, nil
}

// snapshot assembles the ledger.
func (s *server) snapshot(ctx context.Context) (*Ledger, *apiError) {
	txs, err := s.ledger(ctx)
	if err != nil {
		return nil, runtimeError("ledger", err)
	}
	ei, err := s.rpc.GetEpochInfo(ctx, rpc.CommitmentProcessed)
	if err != nil {
		return nil, runtimeError("getEpochInfo", err)
	}
	s.mu.Lock()
	built := append([]*builtStake(nil), s.stakes...)
	bcs := make([]LedgerBroadcast, 0, len(s.broadcastOrder))
	for _, sig := range s.broadcastOrder {
		bcs = append(bcs, LedgerBroadcast{Signature: sig, Count: s.broadcasts[sig]})
	}
	s.mu.Unlock()
	stakes := make([]LedgerStakeAccount, 0, len(built))
	if len(built) > 0 {
		keys := make([]solana.PublicKey, len(built))
		for i, b := range built {
			keys[i] = b.Address
		}
		accs, err := s.rpc.GetMultipleAccountsWithOpts(ctx, keys, &rpc.GetMultipleAccountsOpts{Commitment: rpc.CommitmentProcessed})
		if err != nil {
			return nil, runtimeError("getMultipleAccounts", err)
		}
		for i, b := range built {
			la := LedgerStakeAccount{Address: b.Address.String(), Staker: b.Staker.String(), Seed: b.Seed,
				CreatedAt: formatTime(b.CreatedAt), RequestedLamports: b.Lamports}
			if i < len(accs.Value) && accs.Value[i] != nil {
				acc := accs.Value[i]
				la.Exists, la.Lamports = true, acc.Lamports
				if st, err := decodeStakeState(acc.Data.GetBinary()); err == nil {
					la.State = st.label(ei.Epoch)
					if st.State == stakeStateStake {
						a, d := st.ActivationEpoch, st.DeactivationEpoch
						la.Voter, la.Stake, la.ActivationEpoch, la.DeactivationEpoch = st.Voter.String(), st.Stake, &a, &d
					}
				}
			}
			stakes = append(stakes, la)
		}
	}
	if txs == nil {
		txs = []LedgerTransaction{}
	}
	return &Ledger{Epoch: ei.Epoch, Slot: ei.AbsoluteSlot, Transactions: txs, StakeAccounts: stakes, Broadcasts: bcs}, nil
}
