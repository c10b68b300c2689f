package solanart

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/childproc"
	"github.com/stakeflow/stakeflow/harness/sandbox/npmcache"
)

// Options configure a Runtime. The zero value is valid: every field has a default.
type Options struct {
	// Addr is the listen address; default "127.0.0.1:0" (a free port, see URL).
	Addr string
	// SlotDuration is the wall time of one slot; default 400ms.
	SlotDuration time.Duration
	// ManualClock stops the chain following wall time: slots move only when asked (AdvanceSlots,
	// WarpEpochs, ExpireBlockhashes). For tests whose windows in slots (blockhash validity,
	// finality) must not run out, or pass, while they work, however slow the machine.
	ManualClock bool
	// SlotsPerEpoch is the epoch length in slots; default 432000.
	SlotsPerEpoch uint64
	// BlockhashValidity is how many blocks a blockhash stays usable; default 150.
	BlockhashValidity uint64
	// FinalizationDepth is how many slots deep a transaction must be to be finalized; default 32.
	FinalizationDepth uint64
	// VoteAccounts is the number of healthy vote accounts; default 3.
	VoteAccounts int
	// DelinquentVoteAccounts is the number of vote accounts listed as delinquent; default 1.
	DelinquentVoteAccounts int
	// GenesisSeed picks the network: runtimes with the same seed serve the same genesis hash
	// (getGenesisHash) and the same blockhash for a slot; another seed makes another network,
	// whose blockhashes this one does not know. Default "" (DefaultGenesisHash).
	GenesisSeed string
	// CacheDir is where the Node project is unpacked and installed, in a subdirectory keyed
	// by a hash of its files; default $XDG_CACHE_HOME/stakeflow (or ~/.cache/stakeflow).
	CacheDir string
	// Logger receives node's stdout and stderr lines; default no-op.
	Logger *zap.Logger
}

// Defaults used for zero Options fields.
const (
	DefaultAddr                   = "127.0.0.1:0"
	DefaultSlotDuration           = 400 * time.Millisecond
	DefaultSlotsPerEpoch          = 432000
	DefaultBlockhashValidity      = 150
	DefaultFinalizationDepth      = 32
	DefaultVoteAccounts           = 3
	DefaultDelinquentVoteAccounts = 1
)

// DefaultGenesisHash is the genesis hash of a runtime started without Options.GenesisSeed.
const DefaultGenesisHash = "FXkZD5UcSvKXD133js5N3gJZxhMxDktM749GQ3yrXfGz"

// readyPrefix starts the line node prints once it listens.
const readyPrefix = "SOLANART_READY "

// closeGrace is how long Close waits for node to exit after closing its stdin.
const closeGrace = 5 * time.Second

func (o Options) withDefaults() (Options, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.SlotDuration == 0 {
		o.SlotDuration = DefaultSlotDuration
	}
	if o.SlotDuration < time.Millisecond {
		return o, fmt.Errorf("solanart: SlotDuration %s is below 1ms", o.SlotDuration)
	}
	if o.SlotsPerEpoch == 0 {
		o.SlotsPerEpoch = DefaultSlotsPerEpoch
	}
	if o.BlockhashValidity == 0 {
		o.BlockhashValidity = DefaultBlockhashValidity
	}
	if o.FinalizationDepth == 0 {
		o.FinalizationDepth = DefaultFinalizationDepth
	}
	if o.VoteAccounts == 0 {
		o.VoteAccounts = DefaultVoteAccounts
	}
	if o.DelinquentVoteAccounts == 0 {
		o.DelinquentVoteAccounts = DefaultDelinquentVoteAccounts
	}
	if o.VoteAccounts < 0 || o.DelinquentVoteAccounts < 0 {
		return o, fmt.Errorf("solanart: negative vote account count (%d healthy, %d delinquent)", o.VoteAccounts, o.DelinquentVoteAccounts)
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.CacheDir == "" {
		dir, err := npmcache.DefaultCacheDir()
		if err != nil {
			return o, fmt.Errorf("solanart: %w (set Options.CacheDir)", err)
		}
		o.CacheDir = dir
	}
	return o, nil
}

// serverOptions is the JSON handed to server.mjs.
type serverOptions struct {
	Host                   string `json:"host"`
	Port                   int    `json:"port"`
	SlotDurationMs         int64  `json:"slotDurationMs"`
	ManualClock            bool   `json:"manualClock"`
	SlotsPerEpoch          uint64 `json:"slotsPerEpoch"`
	BlockhashValidity      uint64 `json:"blockhashValidity"`
	FinalizationDepth      uint64 `json:"finalizationDepth"`
	VoteAccounts           int    `json:"voteAccounts"`
	DelinquentVoteAccounts int    `json:"delinquentVoteAccounts"`
	GenesisSeed            string `json:"genesisSeed"`
}

// Runtime is a running Solana runtime. Its methods are safe for concurrent use.
type Runtime struct {
	url        string
	rpc        *rpc.Client
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	done       chan struct{} // closed once node has exited and been reaped
	logger     *zap.Logger
	genesis    solana.Hash
	healthy    []solana.PublicKey
	delinquent []solana.PublicKey
	closeOnce  sync.Once
	closeErr   error
}

// LedgerEntry is one transaction that landed, as listed by Ledger.
type LedgerEntry struct {
	// Signature is the transaction's first signature.
	Signature solana.Signature `json:"signature"`
	// Slot is the slot the transaction landed in.
	Slot uint64 `json:"slot"`
	// FeePayer is the first account key.
	FeePayer solana.PublicKey `json:"feePayer"`
	// Accounts are the message's account keys in order.
	Accounts []solana.PublicKey `json:"accounts"`
	// Airdrop is true for transfers made by requestAirdrop.
	Airdrop bool `json:"airdrop"`
}

// Start installs the Node project if needed, spawns the server and waits until it
// answers getHealth. ctx bounds start-up only; the runtime lives until Close.
func Start(ctx context.Context, opts Options) (*Runtime, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	host, portStr, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("solanart: bad Addr %q: %w", opts.Addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("solanart: bad port in Addr %q", opts.Addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	dir, err := install(ctx, opts.CacheDir)
	if err != nil {
		return nil, err
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("solanart: node not found on PATH: %w", err)
	}
	cfg, err := json.Marshal(serverOptions{
		Host:                   host,
		Port:                   port,
		SlotDurationMs:         opts.SlotDuration.Milliseconds(),
		ManualClock:            opts.ManualClock,
		SlotsPerEpoch:          opts.SlotsPerEpoch,
		BlockhashValidity:      opts.BlockhashValidity,
		FinalizationDepth:      opts.FinalizationDepth,
		VoteAccounts:           opts.VoteAccounts,
		DelinquentVoteAccounts: opts.DelinquentVoteAccounts,
		GenesisSeed:            opts.GenesisSeed,
	})
	if err != nil {
		return nil, fmt.Errorf("solanart: encode server options: %w", err)
	}

	cmd := exec.Command(nodeBin, "server.mjs", string(cfg))
	cmd.Dir = dir
	childproc.DieWithParent(cmd, false)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("solanart: node stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("solanart: node stdout: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("solanart: node stderr: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("solanart: start node: %w", err)
	}

	r := &Runtime{cmd: cmd, stdin: stdin, done: make(chan struct{}), logger: opts.Logger}
	ready := make(chan int, 1)
	errTail := childproc.NewTail(20, "\n")
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		announced := false
		for sc.Scan() {
			line := sc.Text()
			if !announced && strings.HasPrefix(line, readyPrefix) {
				if p, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, readyPrefix))); err == nil {
					announced = true
					ready <- p
					continue
				}
			}
			r.logger.Info("solana runtime output", zap.String("line", line))
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			errTail.Add(sc.Text())
			r.logger.Warn("solana runtime error output", zap.String("line", sc.Text()))
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() {
		readers.Wait()
		_ = cmd.Wait()
		close(r.done)
	}()

	select {
	case p := <-ready:
		r.url = "http://" + net.JoinHostPort(host, strconv.Itoa(p))
	case <-r.done:
		return nil, fmt.Errorf("solanart: node exited before it was ready (%s): %s", cmd.ProcessState, errTail.String())
	case <-ctx.Done():
		_ = r.Close()
		return nil, fmt.Errorf("solanart: waiting for node to listen: %w", ctx.Err())
	}
	r.rpc = rpc.New(r.url)
	if err := r.waitHealthy(ctx); err != nil {
		_ = r.Close()
		return nil, err
	}
	if err := r.loadVoteAccounts(ctx); err != nil {
		_ = r.Close()
		return nil, err
	}
	if r.genesis, err = r.rpc.GetGenesisHash(ctx); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("solanart: getGenesisHash: %w", err)
	}
	return r, nil
}

func (r *Runtime) waitHealthy(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		health, err := r.rpc.GetHealth(ctx)
		if err == nil && health == rpc.HealthOk {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("solanart: waiting for getHealth ok (last error: %v): %w", err, ctx.Err())
		case <-r.done:
			return errors.New("solanart: node exited while starting")
		case <-t.C:
		}
	}
}

type voteAccountEntry struct {
	VotePubkey solana.PublicKey `json:"votePubkey"`
	Delinquent bool             `json:"delinquent"`
}

func (r *Runtime) loadVoteAccounts(ctx context.Context) error {
	var list []voteAccountEntry
	if err := r.call(ctx, &list, "sandbox_voteAccounts"); err != nil {
		return err
	}
	for _, v := range list {
		if v.Delinquent {
			r.delinquent = append(r.delinquent, v.VotePubkey)
		} else {
			r.healthy = append(r.healthy, v.VotePubkey)
		}
	}
	return nil
}

// URL returns the JSON-RPC endpoint, http://127.0.0.1:PORT.
func (r *Runtime) URL() string { return r.url }

// RPC returns a solana-go client for URL.
func (r *Runtime) RPC() *rpc.Client { return rpc.New(r.url) }

// Close stops node and reaps it. It is idempotent.
func (r *Runtime) Close() error {
	r.closeOnce.Do(func() {
		_ = r.stdin.Close()
		timer := time.NewTimer(closeGrace)
		defer timer.Stop()
		select {
		case <-r.done:
		case <-timer.C:
			if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				r.closeErr = fmt.Errorf("solanart: kill node: %w", err)
			}
			<-r.done
		}
		if r.rpc != nil {
			_ = r.rpc.Close()
		}
	})
	return r.closeErr
}

// GenesisHash returns the genesis hash the runtime serves (getGenesisHash): DefaultGenesisHash
// unless Options.GenesisSeed names another network.
func (r *Runtime) GenesisHash() solana.Hash { return r.genesis }

// VoteAccounts returns the healthy vote accounts created at start-up, in a stable order
// (vote accounts made later by CreateVoteAccount are not among them).
func (r *Runtime) VoteAccounts() []solana.PublicKey {
	return append([]solana.PublicKey(nil), r.healthy...)
}

// DelinquentVoteAccounts returns the vote accounts that getVoteAccounts lists as delinquent.
func (r *Runtime) DelinquentVoteAccounts() []solana.PublicKey {
	return append([]solana.PublicKey(nil), r.delinquent...)
}

// CreateVoteAccount creates a real vote account with commission (percent, 0..100), listed
// by getVoteAccounts as current from then on, and returns its address. It is not added to
// VoteAccounts: it is a validator nobody configured.
func (r *Runtime) CreateVoteAccount(ctx context.Context, commission uint8) (solana.PublicKey, error) {
	var v voteAccountEntry
	if err := r.call(ctx, &v, "sandbox_createVoteAccount", map[string]uint8{"commission": commission}); err != nil {
		return solana.PublicKey{}, err
	}
	return v.VotePubkey, nil
}

// Airdrop credits lamports to `to` with a real transfer and waits until it has landed.
func (r *Runtime) Airdrop(ctx context.Context, to solana.PublicKey, lamports uint64) error {
	sig, err := r.rpc.RequestAirdrop(ctx, to, lamports, rpc.CommitmentConfirmed)
	if err != nil {
		return fmt.Errorf("solanart: airdrop %d lamports to %s: %w", lamports, to, err)
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		st, err := r.rpc.GetSignatureStatuses(ctx, true, sig)
		if err == nil && len(st.Value) == 1 && st.Value[0] != nil {
			if st.Value[0].Err != nil {
				return fmt.Errorf("solanart: airdrop %s failed: %v", sig, st.Value[0].Err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("solanart: waiting for airdrop %s: %w", sig, ctx.Err())
		case <-t.C:
		}
	}
}

// AdvanceSlots moves the chain n slots forward at once.
func (r *Runtime) AdvanceSlots(ctx context.Context, n uint64) error {
	return r.call(ctx, nil, "sandbox_advanceSlots", map[string]uint64{"n": n})
}

// WarpEpochs moves the chain to the first slot of epoch current+n, Clock sysvar included.
func (r *Runtime) WarpEpochs(ctx context.Context, n uint64) error {
	return r.call(ctx, nil, "sandbox_warpEpochs", map[string]uint64{"n": n})
}

// ExpireBlockhashes advances past the blockhash validity window, so every blockhash
// handed out so far is no longer accepted.
func (r *Runtime) ExpireBlockhashes(ctx context.Context) error {
	return r.call(ctx, nil, "sandbox_expireBlockhashes")
}

// Ledger lists every transaction that landed, in order, airdrops and start-up
// transactions included.
func (r *Runtime) Ledger(ctx context.Context) ([]LedgerEntry, error) {
	var out []LedgerEntry
	if err := r.call(ctx, &out, "sandbox_ledger"); err != nil {
		return nil, err
	}
	return out, nil
}

// Stats are the runtime's bookkeeping counters, as returned by Stats.
type Stats struct {
	// AccountsScanned counts the accounts the runtime has read for its own bookkeeping
	// since start: one per account key of each landed transaction (to keep activated stake
	// per vote account), plus every stake account of each full scan made by the
	// sandbox_scanActivatedStake diagnostic. getVoteAccounts reads none.
	AccountsScanned uint64 `json:"accountsScanned"`
	// StakeAccountsIndexed is the number of stake accounts that hold a delegation.
	StakeAccountsIndexed uint64 `json:"stakeAccountsIndexed"`
	// EpochChangesApplied counts the epochs whose scheduled activations and deactivations
	// have been folded into the activated stake.
	EpochChangesApplied uint64 `json:"epochChangesApplied"`
	// EpochChangesPending is the number of later epochs with scheduled changes.
	EpochChangesPending uint64 `json:"epochChangesPending"`
	// Transactions is the number of landed transactions, start-up and airdrops included.
	Transactions uint64 `json:"transactions"`
}

// Stats returns the runtime's bookkeeping counters.
func (r *Runtime) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	if err := r.call(ctx, &s, "sandbox_stats"); err != nil {
		return Stats{}, err
	}
	return s, nil
}

func (r *Runtime) call(ctx context.Context, out any, method string, params ...any) error {
	if out == nil {
		out = new(json.RawMessage)
	}
	if err := r.rpc.RPCCallForInto(ctx, out, method, params); err != nil {
		return fmt.Errorf("solanart: %s: %w", method, err)
	}
	return nil
}
