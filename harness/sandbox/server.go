package sandbox

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"go.uber.org/zap"
)

// solanaRuntime is what the sandbox needs from the Solana runtime.
type solanaRuntime interface {
	RPC() *rpc.Client
	VoteAccounts() []solana.PublicKey
	DelinquentVoteAccounts() []solana.PublicKey
	CreateVoteAccount(ctx context.Context, commission uint8) (solana.PublicKey, error)
	Airdrop(ctx context.Context, to solana.PublicKey, lamports uint64) error
	WarpEpochs(ctx context.Context, n uint64) error
	ExpireBlockhashes(ctx context.Context) error
}

// ledgerFunc lists the transactions that landed on the runtime.
type ledgerFunc func(ctx context.Context) ([]LedgerTransaction, error)

// apiPrefixes are the two published address forms.
var apiPrefixes = []string{"/api/v1", "/api/api/v1"}

// reqContext is what the middleware hands a handler.
type reqContext struct {
	requestID string
	subject   string
	fault     faultDecision
}

// handlerFunc answers one API request with a result or an error.
type handlerFunc func(r *http.Request, rc *reqContext) (any, *apiError)

// server is the HTTP face of the sandbox.
type server struct {
	log     *zap.Logger
	secret  *tokenSecret
	limiter *rateLimiter
	faults  *faultInjector
	hostile hostileState
	rt      solanaRuntime
	rpc     *rpc.Client
	ledger  ledgerFunc
	vote    solana.PublicKey // configured default vote account, zero = first healthy
	now     func() time.Time

	mu             sync.Mutex
	stakes         []*builtStake // in build order
	broadcasts     map[string]int
	broadcastOrder []string
	minDelegation  uint64
	lastBuilt      map[replayKey]unsignedTxResult // last result per staker and operation

	unlistedMu sync.Mutex // serialises the creation of an unlisted validator

	ssv ssvStatuses // statuses set-up requests were moved to

	ton tonLedger // TON transactions endpoint 9 answers from

	hl hyperliquidSandbox // endpoint 6's hostile modes and the emulated Hyperliquid L1

	repeatPages atomic.Bool // endpoints 1 and 2 answer their first page whatever the offset (SetRepeatPages)
}

// builtStake is a stake account the sandbox built a transaction for.
type builtStake struct {
	Address   solana.PublicKey
	Staker    solana.PublicKey
	Seed      string
	Vote      solana.PublicKey
	Lamports  uint64
	CreatedAt time.Time
}

// routes returns the HTTP handler with every API route at both address
// forms and the control API under /sandbox/.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	api := []struct {
		name, method, path string
		h                  handlerFunc
	}{
		{EndpointDelegatorAPR, http.MethodGet, "/{network}/data/delegator/apr", s.delegatorAPR},
		{EndpointNetworkAPY, http.MethodGet, "/{network}/data/network/apy", s.networkAPY},
		{EndpointCelestiaSend, http.MethodPost, "/celestia/{network}/transaction/send", s.celestiaSend},
		{EndpointPolygonSend, http.MethodPost, "/polygon/transaction/send", s.polygonSend},
		{EndpointEigenLayerProofs, http.MethodPost, "/eth/staking/eigenlayer/tx/verify-checkpoint-proofs", s.eigenLayerProofs},
		{EndpointHyperliquidWithdraw, http.MethodPost, "/hyperliquid/{network}/staking/withdraw", s.hyperliquidWithdraw},
		{EndpointValidatorStatus, http.MethodGet, "/solana/{network}/validator/status", s.validatorStatus},
		{EndpointSSVRequests, http.MethodGet, "/eth/staking/ssv/request", s.ssvRequests},
		{EndpointTONStatus, http.MethodGet, "/ton/{network}/transactions/status/{transactionHash}", s.tonStatus},
		{EndpointStake, http.MethodPost, "/unified/staking/stake", s.stake},
		{EndpointUnstake, http.MethodPost, "/unified/staking/unstake", s.unstake},
		{EndpointWithdraw, http.MethodPost, "/unified/staking/withdraw", s.withdraw},
		{EndpointBroadcast, http.MethodPost, "/unified/transaction/broadcast", s.broadcast},
	}
	for _, prefix := range apiPrefixes {
		for _, e := range api {
			mux.Handle(e.method+" "+prefix+e.path, s.wrap(e.name, e.h))
			mux.Handle(prefix+e.path, s.wrapPlain(methodNotAllowed(e.method)))
		}
	}
	s.controlRoutes(mux)
	s.celestiaRoutes(mux)
	mux.Handle("/", s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
		return nil, &apiError{Status: http.StatusNotFound, Name: nameNotFound, Code: codeNotFound, Type: typeClient,
			Message: "Cannot " + r.Method + " " + r.URL.Path}
	}))
	return mux
}

// wrap runs the API middleware around h: request id, bearer token, rate
// limit, injected faults, then the envelope.
func (s *server) wrap(name string, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := &reqContext{requestID: newRequestID()}
		w.Header().Set("x-request-id", rc.requestID)
		log := s.log.With(zap.String("requestId", rc.requestID), zap.String("endpoint", name))
		subject, aerr := authenticate(r, s.secret.get())
		if aerr != nil {
			log.Debug("request refused", zap.String("error", aerr.Name))
			writeError(w, rc.requestID, aerr)
			return
		}
		rc.subject = subject
		if aerr := s.limiter.allow(bearerKey(r)); aerr != nil {
			log.Debug("request throttled")
			writeError(w, rc.requestID, aerr)
			return
		}
		rc.fault = s.faults.decide(name)
		if rc.fault.latency > 0 {
			t := time.NewTimer(rc.fault.latency)
			select {
			case <-r.Context().Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		switch rc.fault.kind {
		case fault429:
			log.Info("injected fault", zap.String("fault", "429"))
			writeError(w, rc.requestID, throttled(1, time.Duration(rc.fault.retryAfter)*time.Second,
				s.policyOr(fmt.Sprintf("1;w=%d", rc.fault.retryAfter))))
			return
		case fault500:
			log.Info("injected fault", zap.String("fault", "500"))
			writeError(w, rc.requestID, internalError("Injected fault: internal server error"))
			return
		case faultDrop:
			log.Info("injected fault", zap.String("fault", "drop"))
			dropConnection(w)
			return
		}
		res, aerr := h(r, rc)
		if aerr != nil {
			log.Debug("request failed", zap.String("error", aerr.Name), zap.Int("status", aerr.Status))
			writeError(w, rc.requestID, aerr)
			return
		}
		if rc.fault.lost {
			log.Info("injected fault", zap.String("fault", "broadcastLostResponse"))
			if rc.fault.lostDrop {
				dropConnection(w)
				return
			}
			writeError(w, rc.requestID, internalError("Injected fault: broadcast response lost"))
			return
		}
		writeSuccess(w, res)
	})
}

// wrapPlain answers with the envelope and a request id but no auth.
func (s *server) wrapPlain(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := &reqContext{requestID: newRequestID()}
		w.Header().Set("x-request-id", rc.requestID)
		res, aerr := h(r, rc)
		if aerr != nil {
			writeError(w, rc.requestID, aerr)
			return
		}
		writeSuccess(w, res)
	})
}

// methodNotAllowed answers 405 for a known path called with another method.
func methodNotAllowed(allowed string) handlerFunc {
	return func(r *http.Request, _ *reqContext) (any, *apiError) {
		h := http.Header{}
		h.Set("Allow", allowed)
		return nil, &apiError{Status: http.StatusMethodNotAllowed, Name: nameMethodNotAllowed, Code: codeMethodNotAllowed,
			Type: typeClient, Message: "Cannot " + r.Method + " " + r.URL.Path + "; allowed: " + allowed, Header: h}
	}
}

// policyOr is the configured RateLimit-Policy, or def when none is set.
func (s *server) policyOr(def string) string {
	if s.limiter != nil && s.limiter.policy != "" {
		return s.limiter.policy
	}
	return def
}

// bearerKey is the rate-limit key of r: its bearer token.
func bearerKey(r *http.Request) string {
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.TrimSpace(tok)
}

// dropConnection breaks the connection mid-response: it writes the start
// of a status line and closes. Some bytes go out on purpose: a connection
// closed before any byte would let HTTP clients replay an idempotent request
// on their own, hiding the fault.
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_, _ = buf.WriteString("HTTP/1.1 ")
	_ = buf.Flush()
	_ = conn.Close()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
