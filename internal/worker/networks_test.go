package worker

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/stakeflow/stakeflow/activities"
	solchain "github.com/stakeflow/stakeflow/chain/solana"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/metrics"
	"github.com/stakeflow/stakeflow/internal/metrics/prom"
	"github.com/stakeflow/stakeflow/internal/module"
	solanamod "github.com/stakeflow/stakeflow/modules/solana"
)

const (
	testnetGenesis = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"
	localGenesis   = "8Eho6VL9bgsUHbKGpZV4RR6c3RGGN2EGR5BN9CG1A4kS"
)

// rpcNode is a Solana RPC whose genesis hash and availability a test changes: getGenesisHash
// answers the current genesis, every other method 7; while down, every request gets HTTP 502.
type rpcNode struct {
	mu       sync.Mutex
	genesis  string
	down     bool
	genesisN int
}

func newRPCNode(t *testing.T, genesis string) (*rpcNode, string) {
	t.Helper()
	n := &rpcNode{genesis: genesis}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if !assert.NoError(t, json.Unmarshal(body, &req)) {
			return
		}
		n.mu.Lock()
		down, genesis := n.down, n.genesis
		if req.Method == "getGenesisHash" {
			n.genesisN++
		}
		n.mu.Unlock()
		if down {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		result := `7`
		if req.Method == "getGenesisHash" {
			result = `"` + genesis + `"`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","result":`+result+`,"id":`+string(req.ID)+`}`)
	}))
	t.Cleanup(srv.Close)
	return n, srv.URL
}

func (n *rpcNode) set(genesis string, down bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.genesis, n.down = genesis, down
}

func (n *rpcNode) genesisChecks() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.genesisN
}

func readyz(t require.TestingT, mux http.Handler) (int, string) {
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec.Code, rec.Body.String()
}

func gauge(t require.TestingT, mux http.Handler, name string, labels map[string]string) float64 {
	m := sample(scrape(t, mux), name, labels)
	if m == nil {
		return -1
	}
	return m.GetGauge().GetValue()
}

// TestReadinessFollowsTheNetworkProof runs the worker's network checks against an RPC that first
// serves another network, then the right one, then fails and comes back, and follows /readyz,
// stakeflow_rpc_verified and the logs.
func TestReadinessFollowsTheNetworkProof(t *testing.T) {
	node, url := newRPCNode(t, localGenesis)
	sol := solanamod.New()
	sol.RPC = cli.StringMap{"testnet": url}
	sol.NetworkOptions = solchain.NetworkOptions{Recheck: time.Hour, Retry: 5 * time.Millisecond}
	exp := prom.New(prom.Options{FlushInterval: 5 * time.Millisecond})
	t.Cleanup(func() { _ = exp.Close() })
	core, logs := observer.New(zapcore.InfoLevel)
	networks := sol.Networks(zap.New(core), exp.Handler())
	require.Len(t, networks, 1)
	chains := map[string]*solchain.Network{"testnet": networks[0]}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	started := make(chan struct{})
	close(started)
	wg.Add(1)
	go func() { defer wg.Done(); networks[0].Run(ctx) }()
	mux := newHealthMux(healthChecks{ready: started, temporal: fakeTemporal{}, modules: []served{{name: "solana", queue: "stakeflow-solana",
		keys: func() int { return 1 }, networks: []module.Network{networks[0]}}}}, exp.HTTPHandler())
	testnet := map[string]string{activities.LabelChain: "solana", activities.LabelNetwork: "testnet"}
	const wait, tick = 10 * time.Second, 5 * time.Millisecond

	// Another network at start: unready, saying which and why; logged as an error; not crashed.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body := readyz(c, mux)
		assert.Equal(c, http.StatusServiceUnavailable, code)
		assert.Contains(c, body, "solana network testnet")
		assert.Contains(c, body, "expected genesis hash "+testnetGenesis)
		assert.Contains(c, body, "served "+localGenesis)
		assert.Contains(c, body, solchain.ReasonMismatch)
		assert.Equal(c, 0.0, gauge(c, mux, metrics.RPCVerified, testnet))
		// The status is stored before the change is logged: wait for the log too.
		assert.NotEmpty(c, logs.FilterMessageSnippet("serves another network").All())
	}, wait, tick)
	mismatch := logs.FilterMessageSnippet("serves another network").All()
	require.NotEmpty(t, mismatch)
	assert.Equal(t, zapcore.ErrorLevel, mismatch[0].Level)
	assert.Equal(t, localGenesis, mismatch[0].ContextMap()["servedGenesis"])
	_, err := chains["testnet"].BlockHeight(ctx)
	require.ErrorIs(t, err, solchain.ErrNetworkUnverified, "no activity trusts it")

	// The RPC is fixed: proven, ready.
	node.set(testnetGenesis, false)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body := readyz(c, mux)
		assert.Equal(c, http.StatusOK, code, body)
		assert.Equal(c, 1.0, gauge(c, mux, metrics.RPCVerified, testnet))
	}, wait, tick)
	_, err = chains["testnet"].BlockHeight(ctx)
	require.NoError(t, err)

	// An outage: a read fails, the proof is withdrawn, the worker is unready until the RPC that
	// comes back has served the genesis hash again.
	node.set(testnetGenesis, true)
	_, err = chains["testnet"].BlockHeight(ctx)
	require.Error(t, err)
	code, body := readyz(t, mux)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, solchain.ReasonRPCFailed)
	checks := node.genesisChecks()
	node.set(testnetGenesis, false)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body := readyz(c, mux)
		assert.Equal(c, http.StatusOK, code, body)
	}, wait, tick)
	assert.Greater(t, node.genesisChecks(), checks, "re-verified after the outage")
	_, err = chains["testnet"].BlockHeight(ctx)
	require.NoError(t, err)
}

func TestReadyzServiceAuth(t *testing.T) {
	started := make(chan struct{})
	close(started)
	ok := false
	checks := healthChecks{ready: started, temporal: fakeTemporal{}, modules: withKeys(1), serviceAuth: func() bool { return ok }}
	code, body := readyz(t, newHealthMux(checks, nil))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "refuses the worker's token")
	ok = true
	code, _ = readyz(t, newHealthMux(checks, nil))
	assert.Equal(t, http.StatusOK, code)
}

type authState struct {
	mu sync.Mutex
	ok bool
}

func (a *authState) AuthHealthy() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ok
}

func (a *authState) set(ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ok = ok
}

func TestServiceAuthGauge(t *testing.T) {
	exp := prom.New(prom.Options{FlushInterval: 5 * time.Millisecond})
	t.Cleanup(func() { _ = exp.Close() })
	st := &authState{ok: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); recordAuth(ctx, exp.Handler(), st.AuthHealthy, time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
	mux := newHealthMux(healthChecks{}, exp.HTTPHandler())
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, 1.0, gauge(c, mux, metrics.ServiceAuthOK, nil)) }, 10*time.Second, time.Millisecond)
	st.set(false)
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, 0.0, gauge(c, mux, metrics.ServiceAuthOK, nil)) }, 10*time.Second, time.Millisecond)
}

// validConfig is a valid configuration of a worker serving Solana only.
func validConfig(t *testing.T) Config {
	sol := solanamod.New()
	sol.Keys = cli.StringList{"keys"}
	sol.RPC = cli.StringMap{"testnet": "http://127.0.0.1:8899"}
	return Config{ServiceURL: "http://127.0.0.1:1", ServiceTokenFile: "token", Pollers: 1, DataDir: "data", Modules: []module.Module{sol}}
}

func TestConfigValidateTrustSettings(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *solanamod.Module)
		want   string // "" = valid
	}{
		{"known network, no genesis given", func(c *solanamod.Module) {}, ""},
		{"genesis override", func(c *solanamod.Module) { c.Genesis = cli.StringMap{"testnet": localGenesis} }, ""},
		{"genesis of a network without RPC", func(c *solanamod.Module) { c.Genesis = cli.StringMap{"mainnet-beta": localGenesis} },
			`--solana-genesis names network "mainnet-beta", which has no --solana-rpc`},
		{"genesis not a hash", func(c *solanamod.Module) { c.Genesis = cli.StringMap{"testnet": "nope"} }, `--solana-genesis testnet: "nope" is not a base58 hash`},
		{"commission over 100", func(c *solanamod.Module) { c.MaxCommission = 101 }, "--max-commission 101"},
		{"dual approval below single", func(c *solanamod.Module) { c.ApprovalThreshold, c.DualApprovalThreshold = 10, 5 }, "--dual-approval-threshold-lamports 5 is below"},
		{"dual approval alone", func(c *solanamod.Module) { c.DualApprovalThreshold = 5 }, ""},
		{"compute-unit limit over u32", func(c *solanamod.Module) { c.MaxComputeUnitLimit = 1 << 32 }, "--max-compute-unit-limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := validConfig(t)
			tt.change(solanaOf(t, cfg))
			err := cfg.Validate()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
	sol := solanaOf(t, validConfig(t))
	h, ok := sol.ExpectedGenesis("testnet")
	assert.True(t, ok)
	assert.Equal(t, testnetGenesis, h)
	sol.Genesis = cli.StringMap{"testnet": localGenesis}
	h, _ = sol.ExpectedGenesis("testnet")
	assert.Equal(t, localGenesis, h, "the configured hash overrides the known one")
}

// TestKeyErrorsNameTheFile: a key the worker cannot use stops it at start with an error that
// names the file.
func TestKeyErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "operator.json")
	require.NoError(t, os.WriteFile(bad, []byte(`[1,2,3]`), 0o600))
	sol := solanaOf(t, validConfig(t))
	sol.Keys = cli.StringList{dir}
	_, _, err := sol.Activities(module.Env{Logger: zap.NewNop()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), bad)
	assert.True(t, strings.HasPrefix(err.Error(), "loading Solana keys"), err.Error())
}
