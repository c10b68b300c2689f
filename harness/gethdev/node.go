package gethdev

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"go.uber.org/zap"

	"github.com/stakeflow/stakeflow/harness/childproc"
)

// ChainID is the chain id of every geth --dev chain.
const ChainID = 1337

// devKeyHex is the key geth imports as the developer account into an empty dev keystore
// (go-ethereum cmd/utils.DeveloperKey). It is public and funds only local development chains.
const devKeyHex = "b71c71a67e1177ad4e901695e1b4b9ee17ae16c6668d313eac2f96dbcda3f291"

// Defaults of Options.
const (
	// DefaultPeriod makes finality (32 blocks) at most 3.2 s away.
	DefaultPeriod = 100 * time.Millisecond
	// DefaultIdlePeriod is the block interval while no transaction waits: an idle node seals
	// a block a second instead of ten (a node at 100 ms takes about an eighth of a core).
	DefaultIdlePeriod = time.Second
	DefaultGasLimit   = 30_000_000
	// DefaultStartTimeout bounds start-up when the caller's context has no deadline.
	DefaultStartTimeout = 2 * time.Minute
)

// MinPeriod is the shortest Options.Period: a block every 10 ms already keeps geth busy.
const MinPeriod = 10 * time.Millisecond

// closeGrace is how long Close waits for geth to stop on SIGTERM before it kills it.
const closeGrace = 10 * time.Second

// Options tune Start. Zero fields take the defaults.
type Options struct {
	// Binary is the geth executable; default $GETH, else the pinned geth from scripts/tools.sh.
	Binary string
	// DataDir holds the chain and keystore; default a fresh temporary directory removed by
	// Close. A given directory is kept, and a chain in it is resumed.
	DataDir string
	// Period is the interval of the blocks the node seals without transactions while a
	// transaction waits: one is in the pool, or one is mined above the finalized block (at
	// least MinPeriod); default DefaultPeriod. A transaction is sealed into a block of its own
	// as soon as it arrives.
	Period time.Duration
	// IdlePeriod is the interval of those blocks while no transaction waits (at least
	// Period); default DefaultIdlePeriod, or Period when Period is longer. Tests that wait
	// for heights with nothing sent set it to Period.
	IdlePeriod time.Duration
	// GasLimit is the block gas limit (--dev.gaslimit); default DefaultGasLimit.
	GasLimit uint64
	// Logger receives geth's log lines at debug level; default a no-op logger.
	Logger *zap.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.Period == 0 {
		o.Period = DefaultPeriod
	}
	if o.Period < MinPeriod {
		return o, fmt.Errorf("gethdev: Period %s is below the minimum %s", o.Period, MinPeriod)
	}
	if o.IdlePeriod == 0 {
		o.IdlePeriod = max(DefaultIdlePeriod, o.Period)
	}
	if o.IdlePeriod < o.Period {
		return o, fmt.Errorf("gethdev: IdlePeriod %s is below Period %s", o.IdlePeriod, o.Period)
	}
	if o.GasLimit == 0 {
		o.GasLimit = DefaultGasLimit
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Binary == "" {
		bin, err := DefaultBinary()
		if err != nil {
			return o, err
		}
		o.Binary = bin
	}
	return o, nil
}

// DefaultBinary returns $GETH when set, else the path scripts/tools.sh geth prints (installing
// the pinned geth into the per-user cache first if needed; a few minutes, once).
func DefaultBinary() (string, error) {
	if bin := os.Getenv("GETH"); bin != "" {
		return bin, nil
	}
	script, err := findToolsScript()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("bash", script, "geth")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("gethdev: %s geth: %w: %s", script, err, strings.TrimSpace(stderr.String()))
	}
	bin := strings.TrimSpace(string(out))
	if bin == "" {
		return "", fmt.Errorf("gethdev: %s geth printed no path", script)
	}
	return bin, nil
}

// findToolsScript walks up from the working directory to the first scripts/tools.sh.
func findToolsScript() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("gethdev: working directory: %w", err)
	}
	for dir := wd; ; {
		p := filepath.Join(dir, "scripts", "tools.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("gethdev: no geth binary: set Options.Binary or $GETH, or run from inside the stakeflow tree (no scripts/tools.sh above %s)", wd)
		}
		dir = parent
	}
}

// Node is a running geth --dev node. Its methods are safe for concurrent use.
type Node struct {
	url     string
	client  *ethclient.Client
	key     *ecdsa.PrivateKey
	addr    common.Address
	signer  types.Signer
	cmd     *exec.Cmd
	done    chan struct{} // closed once geth has exited and been reaped
	tmpDir  string        // removed by Close when Start created it
	tail    *childproc.Tail
	fundMu  sync.Mutex // one Fund send at a time, so nonces are taken in order
	closeMu sync.Once
	closeE  error
	// stopTicks stops the block ticker; ticking is closed once it has returned (nil until it
	// runs).
	stopTicks chan struct{}
	ticking   chan struct{}
}

var (
	endpointRe  = regexp.MustCompile(`HTTP server started.*\bendpoint=(\S+)`)
	developerRe = regexp.MustCompile(`Using developer account.*\baddress=(0x[0-9a-fA-F]{40})`)
)

// Start spawns geth --dev and waits until its JSON-RPC answers eth_chainId with ChainID and the
// developer account is the known, funded one. ctx bounds start-up only (DefaultStartTimeout
// when it has no deadline); the node lives until Close.
func Start(ctx context.Context, opts Options) (*Node, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	key, err := crypto.HexToECDSA(devKeyHex)
	if err != nil {
		return nil, fmt.Errorf("gethdev: developer key: %w", err)
	}
	n := &Node{
		key:       key,
		addr:      crypto.PubkeyToAddress(key.PublicKey),
		signer:    types.LatestSignerForChainID(big.NewInt(ChainID)),
		done:      make(chan struct{}),
		tail:      childproc.NewTail(30, " | "),
		stopTicks: make(chan struct{}),
	}
	dataDir := opts.DataDir
	if dataDir == "" {
		if dataDir, err = os.MkdirTemp("", "gethdev-"); err != nil {
			return nil, fmt.Errorf("gethdev: data directory: %w", err)
		}
		n.tmpDir = dataDir
	}

	cmd := exec.Command(opts.Binary,
		"--dev",
		// Sealing on demand: a block for each arriving transaction, and one each Period from
		// the ticker (see tick).
		"--dev.period", "0",
		"--dev.gaslimit", strconv.FormatUint(opts.GasLimit, 10),
		"--datadir", dataDir,
		"--ipcdisable",
		"--http", "--http.addr", "127.0.0.1", "--http.port", "0",
		"--http.api", "eth,net,web3,txpool,debug,dev,miner",
		"--log.format", "logfmt",
		"--verbosity", "3",
	)
	childproc.DieWithParent(cmd, true)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		n.removeTmp()
		return nil, fmt.Errorf("gethdev: geth stderr: %w", err)
	}
	if err := cmd.Start(); err != nil {
		n.removeTmp()
		return nil, fmt.Errorf("gethdev: start %s: %w", opts.Binary, err)
	}
	n.cmd = cmd

	endpoint := make(chan string, 1)
	developer := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			n.tail.Add(line)
			opts.Logger.Debug("geth", zap.String("line", line))
			if m := developerRe.FindStringSubmatch(line); m != nil {
				select {
				case developer <- m[1]:
				default:
				}
			}
			if m := endpointRe.FindStringSubmatch(line); m != nil {
				select {
				case endpoint <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
		close(n.done)
	}()

	fail := func(err error) (*Node, error) {
		_ = n.Close()
		return nil, err
	}
	var hostPort string
	select {
	case hostPort = <-endpoint:
	case <-n.done:
		return fail(fmt.Errorf("gethdev: geth exited before serving HTTP (%s): %s", cmd.ProcessState, n.said()))
	case <-ctx.Done():
		return fail(fmt.Errorf("gethdev: waiting for geth's HTTP endpoint: %w; geth said: %s", ctx.Err(), n.said()))
	}
	select {
	case got := <-developer:
		if !strings.EqualFold(got, n.addr.Hex()) {
			return fail(fmt.Errorf("gethdev: geth uses developer account %s, not the known development key's %s (the data directory %s holds another keystore)", got, n.addr.Hex(), dataDir))
		}
	default:
		// geth logs the developer account before it opens HTTP.
		return fail(fmt.Errorf("gethdev: geth did not name its developer account before serving HTTP: %s", n.said()))
	}
	n.url = "http://" + hostPort
	if n.client, err = ethclient.DialContext(ctx, n.url); err != nil {
		return fail(fmt.Errorf("gethdev: dial %s: %w", n.url, err))
	}
	if err := n.waitReady(ctx); err != nil {
		return fail(err)
	}
	n.ticking = make(chan struct{})
	go n.tick(opts.Period, opts.IdlePeriod, opts.Logger)
	return n, nil
}

// tick seals a block each Period while a transaction waits and each IdlePeriod otherwise,
// until Close: geth --dev.period counts whole seconds, which puts finality (32 blocks) up to
// 32 s away. With --dev.period 0 the simulated beacon seals a block whenever a transaction or a
// withdrawal arrives (go-ethereum eth/catalyst, simulatedBeaconAPI.loop), so each tick queues a
// withdrawal of 0 gwei to tickAddress (dev_addWithdrawal), which credits nothing. The node is
// looked at every Period, so a transaction sent to an idle node is carried to finality as fast
// as one sent to a busy node.
func (n *Node) tick(period, idle time.Duration, log *zap.Logger) {
	defer close(n.ticking)
	t := time.NewTicker(period)
	defer t.Stop()
	var w waiting
	var last time.Time
	for index := uint64(0); ; {
		select {
		case <-n.stopTicks:
			return
		case <-n.done:
			return
		case now := <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 5*period+time.Second)
			busy, err := w.update(ctx, n.client.Client())
			if err != nil {
				log.Debug("gethdev: reading the node", zap.Error(err))
				busy = true
			}
			if busy || now.Sub(last) >= idle-period/2 {
				wd := map[string]any{"index": hexutil.Uint64(index), "validatorIndex": hexutil.Uint64(0), "address": tickAddress, "amount": hexutil.Uint64(0)}
				if err := n.client.Client().CallContext(ctx, nil, "dev_addWithdrawal", wd); err != nil {
					log.Debug("gethdev: block tick", zap.Error(err))
				}
				index++
				last = now
			}
			cancel()
		}
	}
}

// waiting tracks whether a transaction waits for finality: one is in the pool, or the
// highest block holding transactions is above the finalized block.
type waiting struct {
	scanned uint64 // the blocks up to scanned are looked at
	lastTx  uint64 // the highest block seen holding a transaction
}

// maxScan bounds the blocks update reads one by one; past it the head is taken to hold a
// transaction.
const maxScan = 64

// update reads the node's pool, head and finalized block and reports whether a transaction
// waits.
func (w *waiting) update(ctx context.Context, c *rpc.Client) (bool, error) {
	var pool struct{ Pending, Queued hexutil.Uint64 }
	var head, fin *struct{ Number hexutil.Uint64 }
	batch := []rpc.BatchElem{
		{Method: "txpool_status", Result: &pool},
		{Method: "eth_getBlockByNumber", Args: []any{"latest", false}, Result: &head},
		{Method: "eth_getBlockByNumber", Args: []any{"finalized", false}, Result: &fin},
	}
	if err := c.BatchCallContext(ctx, batch); err != nil {
		return false, err
	}
	for _, b := range batch {
		if b.Error != nil {
			return false, fmt.Errorf("%s: %w", b.Method, b.Error)
		}
	}
	if head == nil {
		return false, errors.New("no head block")
	}
	h := uint64(head.Number)
	switch {
	case h <= w.scanned:
		w.scanned = h // a node whose chain was reset
	case h-w.scanned > maxScan:
		w.lastTx, w.scanned = h, h
	default:
		for b := w.scanned + 1; b <= h; b++ {
			var count hexutil.Uint64
			if err := c.CallContext(ctx, &count, "eth_getBlockTransactionCountByNumber", hexutil.Uint64(b)); err != nil {
				return false, err
			}
			if count > 0 {
				w.lastTx = b
			}
			w.scanned = b
		}
	}
	var finalized uint64
	if fin != nil {
		finalized = uint64(fin.Number)
	}
	return pool.Pending+pool.Queued > 0 || w.lastTx > finalized, nil
}

// tickAddress receives the ticker's withdrawals of 0 gwei.
var tickAddress = common.HexToAddress("0x000000000000000000000000000000000000b10c")

// waitReady polls until eth_chainId answers ChainID and the developer account holds ether.
func (n *Node) waitReady(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	var last error
	for {
		id, err := n.client.ChainID(ctx)
		switch {
		case err != nil:
			last = err
		case id.Cmp(big.NewInt(ChainID)) != 0:
			return fmt.Errorf("gethdev: geth at %s serves chain id %s, expected %d", n.url, id, ChainID)
		default:
			bal, err := n.client.BalanceAt(ctx, n.addr, nil)
			if err == nil && bal.Sign() > 0 {
				return nil
			}
			last = fmt.Errorf("developer account %s balance %v: %v", n.addr.Hex(), bal, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gethdev: waiting for geth at %s to answer eth_chainId (last: %v): %w", n.url, last, ctx.Err())
		case <-n.done:
			return fmt.Errorf("gethdev: geth exited while starting: %s", n.said())
		case <-t.C:
		}
	}
}

// RPCURL returns the HTTP JSON-RPC endpoint, http://127.0.0.1:PORT.
func (n *Node) RPCURL() string { return n.url }

// ChainID returns the chain id the node serves (ChainID).
func (n *Node) ChainID() *big.Int { return big.NewInt(ChainID) }

// Client returns a go-ethereum client connected to RPCURL. Close closes it.
func (n *Node) Client() *ethclient.Client { return n.client }

// DevKey returns the developer account's private key (geth's public development key; funded on
// this chain only). Sending from it concurrently with Fund may race Fund for nonces.
func (n *Node) DevKey() *ecdsa.PrivateKey { return n.key }

// DevAddress returns the developer account's address.
func (n *Node) DevAddress() common.Address { return n.addr }

// Done is closed once geth has exited.
func (n *Node) Done() <-chan struct{} { return n.done }

// Pid returns geth's process id.
func (n *Node) Pid() int { return n.cmd.Process.Pid }

// Fund sends wei from the developer account to addr and waits until the transfer is mined with
// status 1; it returns the receipt.
func (n *Node) Fund(ctx context.Context, addr common.Address, wei *big.Int) (*types.Receipt, error) {
	if wei == nil || wei.Sign() <= 0 {
		return nil, fmt.Errorf("gethdev: fund %s: amount %v is not positive", addr.Hex(), wei)
	}
	tx, err := n.sendFunding(ctx, addr, wei)
	if err != nil {
		return nil, err
	}
	rcpt, err := n.WaitMined(ctx, tx.Hash())
	if err != nil {
		return nil, fmt.Errorf("gethdev: fund %s: %w", addr.Hex(), err)
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		return rcpt, fmt.Errorf("gethdev: fund %s: transfer %s failed on chain (status %d)", addr.Hex(), tx.Hash().Hex(), rcpt.Status)
	}
	return rcpt, nil
}

func (n *Node) sendFunding(ctx context.Context, to common.Address, wei *big.Int) (*types.Transaction, error) {
	n.fundMu.Lock()
	defer n.fundMu.Unlock()
	nonce, err := n.client.PendingNonceAt(ctx, n.addr)
	if err != nil {
		return nil, fmt.Errorf("gethdev: fund %s: pending nonce of %s: %w", to.Hex(), n.addr.Hex(), err)
	}
	tip, err := n.client.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, fmt.Errorf("gethdev: fund %s: tip: %w", to.Hex(), err)
	}
	head, err := n.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("gethdev: fund %s: head: %w", to.Hex(), err)
	}
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	gas, err := n.client.EstimateGas(ctx, ethereum.CallMsg{From: n.addr, To: &to, Value: wei})
	if err != nil {
		return nil, fmt.Errorf("gethdev: fund %s: estimate gas: %w", to.Hex(), err)
	}
	tx, err := types.SignNewTx(n.key, n.signer, &types.DynamicFeeTx{
		ChainID: n.ChainID(), Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: &to, Value: wei,
	})
	if err != nil {
		return nil, fmt.Errorf("gethdev: fund %s: sign: %w", to.Hex(), err)
	}
	if err := n.client.SendTransaction(ctx, tx); err != nil {
		return nil, fmt.Errorf("gethdev: fund %s: send: %w", to.Hex(), err)
	}
	return tx, nil
}

// WaitMined polls until hash has a receipt and returns it. A receipt lookup that geth answers
// with "transaction indexing is in progress" counts as not mined yet.
func (n *Node) WaitMined(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		rcpt, err := n.client.TransactionReceipt(ctx, hash)
		if err == nil {
			return rcpt, nil
		}
		if !errors.Is(err, ethereum.NotFound) && !strings.Contains(err.Error(), "transaction indexing is in progress") {
			return nil, fmt.Errorf("receipt of %s: %w", hash.Hex(), err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s to be mined: %w", hash.Hex(), ctx.Err())
		case <-n.done:
			return nil, fmt.Errorf("waiting for %s to be mined: geth exited: %s", hash.Hex(), n.said())
		case <-t.C:
		}
	}
}

// Logs are the logs q matches (eth_getLogs). A query geth answers while its log index has not yet
// caught up with the newest block ("failed to retrieve log value pointer ...: not found") is asked
// again, as WaitMined asks again while transactions are being indexed.
func (n *Node) Logs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		logs, err := n.client.FilterLogs(ctx, q)
		if err == nil {
			return logs, nil
		}
		if !strings.Contains(err.Error(), "failed to retrieve log value pointer") {
			return nil, fmt.Errorf("logs: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("logs (the node's log index behind: %v): %w", err, ctx.Err())
		case <-n.done:
			return nil, fmt.Errorf("logs: geth exited: %s", n.said())
		case <-t.C:
		}
	}
}

// WaitFinalized polls until the finalized block is at height or above and returns its header.
func (n *Node) WaitFinalized(ctx context.Context, height uint64) (*types.Header, error) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		h, err := n.client.HeaderByNumber(ctx, big.NewInt(int64(rpc.FinalizedBlockNumber)))
		if err == nil && h.Number.Uint64() >= height {
			return h, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for block %d to be finalized (last: %v): %w", height, err, ctx.Err())
		case <-n.done:
			return nil, fmt.Errorf("waiting for block %d to be finalized: geth exited: %s", height, n.said())
		case <-t.C:
		}
	}
}

// Close stops geth (SIGTERM to its process group, SIGKILL after a grace period), reaps it and
// removes the data directory Start created. It is idempotent.
func (n *Node) Close() error {
	n.closeMu.Do(func() {
		close(n.stopTicks)
		if n.ticking != nil {
			<-n.ticking
		}
		if n.client != nil {
			n.client.Close()
		}
		if n.cmd != nil && n.cmd.Process != nil {
			_ = signalGroup(n.cmd.Process, syscall.SIGTERM)
			timer := time.NewTimer(closeGrace)
			select {
			case <-n.done:
			case <-timer.C:
				if err := signalGroup(n.cmd.Process, syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
					n.closeE = fmt.Errorf("gethdev: kill geth: %w", err)
				}
				<-n.done
			}
			timer.Stop()
		}
		n.removeTmp()
	})
	return n.closeE
}

func (n *Node) removeTmp() {
	if n.tmpDir != "" {
		if err := os.RemoveAll(n.tmpDir); err != nil && n.closeE == nil {
			n.closeE = fmt.Errorf("gethdev: remove data directory: %w", err)
		}
	}
}

// said is the last lines geth logged, for error messages.
func (n *Node) said() string {
	if s := n.tail.String(); s != "" {
		return s
	}
	return "(no output)"
}
