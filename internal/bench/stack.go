package bench

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gagliardetto/solana-go"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/internal/worker"
	"github.com/stakeflow/stakeflow/sandbox"
	"github.com/stakeflow/stakeflow/sandbox/solanart"
	"github.com/stakeflow/stakeflow/workflows"
)

// BaseServerFlags are the dev-server settings internal/stack starts the server with.
var BaseServerFlags = []string{"history.transferProcessorMaxPollRPS=1000"}

// localStack is the local stack as internal/stack assembles it (dev server with the search
// attributes, sandbox on a Solana runtime, funded staker keys), with the dev-server flags open
// to tuning. The worker is the benchmark's own.
type localStack struct {
	dev       *testsuite.DevServer
	client    client.Client
	sandbox   *sandbox.Sandbox
	keyDir    string
	tokenFile string
	stakers   []solana.PublicKey
	slot      time.Duration
}

func startLocalStack(ctx context.Context, cfg Config, mode, dir string, lamportsPerStaker uint64) (_ *localStack, err error) {
	s := &localStack{keyDir: filepath.Join(dir, "keys"), tokenFile: filepath.Join(dir, "service-token"), slot: cfg.SlotDuration}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if err := os.MkdirAll(s.keyDir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var args []string
	for _, kv := range append(append([]string{}, BaseServerFlags...), cfg.ServerDynamicConfig...) {
		args = append(args, "--dynamic-config-value", kv)
	}
	for _, kv := range workflows.SearchAttributeTypes() {
		args = append(args, "--search-attribute", kv[0]+"="+kv[1])
	}
	dbFile := ""
	if mode == ModeFile {
		dbFile = filepath.Join(dir, "temporal.db")
		args = append(args, "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal")
	}
	s.dev, err = testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath:  cfg.TemporalCLI,
		ClientOptions: &client.Options{HostPort: "127.0.0.1:" + strconv.Itoa(port), Logger: cli.TemporalLogger(cfg.SDKLogger)},
		DBFilename:    dbFile,
		LogLevel:      "error",
		ExtraArgs:     args,
		Stdout:        discard{}, Stderr: discard{},
	})
	if err != nil {
		return nil, fmt.Errorf("starting Temporal dev server: %w", err)
	}
	s.client = s.dev.Client()

	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	s.sandbox, err = sandbox.Start(ctx, sandbox.Config{TokenSecret: secret, Runtime: solanart.Options{
		SlotDuration: cfg.SlotDuration, FinalizationDepth: cfg.FinalizationDepth, BlockhashValidity: cfg.BlockhashValidity,
		// Epochs turn only when the benchmark warps them.
		SlotsPerEpoch: 100_000_000,
	}})
	if err != nil {
		return nil, fmt.Errorf("starting sandbox: %w", err)
	}
	token, err := sandbox.MintToken(secret, "stakeflow-bench", 24*time.Hour)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(s.tokenFile, []byte(token), 0o600); err != nil {
		return nil, err
	}
	for range cfg.Stakers {
		pk, err := s.newStaker(ctx, lamportsPerStaker)
		if err != nil {
			return nil, err
		}
		s.stakers = append(s.stakers, pk)
	}
	return s, nil
}

// workerConfig is the worker configuration internal/stack runs its worker with.
func (s *localStack) workerConfig() worker.Config {
	rpcURL := s.sandbox.Runtime().URL()
	return worker.Config{
		Temporal:           cli.Temporal{Address: s.dev.FrontendHostPort(), Namespace: "default"},
		TaskQueue:          workflows.TaskQueue,
		ServiceURL:         s.sandbox.URL(),
		ServiceTokenFile:   s.tokenFile,
		SolanaKeys:         cli.StringList{s.keyDir},
		SolanaRPC:          cli.StringMap{"testnet": rpcURL, "mainnet-beta": rpcURL},
		SolanaSlotDuration: s.slot,
	}
}

func (s *localStack) newStaker(ctx context.Context, lamports uint64) (solana.PublicKey, error) {
	key, err := solana.NewRandomPrivateKey()
	if err != nil {
		return solana.PublicKey{}, err
	}
	ints := make([]int, len(key))
	for i, b := range key {
		ints[i] = int(b)
	}
	raw, err := json.Marshal(ints)
	if err != nil {
		return solana.PublicKey{}, err
	}
	pk := key.PublicKey()
	if err := os.WriteFile(filepath.Join(s.keyDir, pk.String()+".json"), raw, 0o600); err != nil {
		return solana.PublicKey{}, err
	}
	if err := s.sandbox.Runtime().Airdrop(ctx, pk, lamports); err != nil {
		return solana.PublicKey{}, fmt.Errorf("funding staker %s: %w", pk, err)
	}
	return pk, nil
}

func (s *localStack) close() {
	if s.sandbox != nil {
		_ = s.sandbox.Close()
	}
	if s.dev != nil {
		_ = s.dev.Stop()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
