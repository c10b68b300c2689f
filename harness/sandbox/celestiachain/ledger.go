package celestiachain

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/btcsuite/btcd/btcutil/bech32"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/decred/dcrd/dcrec/secp256k1/v4/ecdsa"
	//lint:ignore SA1019 Cosmos account addresses are defined with RIPEMD-160.
	"golang.org/x/crypto/ripemd160"
	"google.golang.org/protobuf/encoding/protowire"
)

// Denom is the staking and fee denomination.
const Denom = "utia"

// AccountPrefix is the bech32 prefix of account addresses: celestia-app app/params/config.go
// Bech32PrefixAccAddr (commit 74614c2e4df0b409deb7e31320ce9ce3790efb78).
const AccountPrefix = "celestia"

// DefaultMinGasPriceMilli is the minimum gas price a celestia-app node enforces in CheckTx when
// its app.toml sets none, in thousandths of a utia: pkg/appconsts/initial_consts.go
// DefaultMinGasPrice = 0.004 (utia), applied by app/ante/fee.go ValidateTxFee (celestia-app
// commit 74614c2e4df0b409deb7e31320ce9ce3790efb78).
const DefaultMinGasPriceMilli = 4

// minGasPriceMilli is the minimum gas price the node enforces.
func (l *Ledger) minGasPriceMilli() uint64 {
	if l.opts.MinGasPriceMilli > 0 {
		return l.opts.MinGasPriceMilli
	}
	return DefaultMinGasPriceMilli
}

// GasPerMsg is the gas a message uses on this ledger.
const GasPerMsg = 100_000

// Cosmos SDK error codes (codespace sdk) the ledger answers.
const (
	CodeOK                = 0
	CodeTxDecode          = 2
	CodeUnauthorized      = 4
	CodeInsufficientFunds = 5
	CodeInvalidAddress    = 7
	CodeUnknownAddress    = 9
	CodeOutOfGas          = 11
	CodeInsufficientFee   = 13
	CodeTxInCache         = 19
	CodeInvalidChainID    = 28
	CodeTxTimeoutHeight   = 30
	CodeWrongSequence     = 32
	CodeInvalidRequest    = 18
	CodeNotFound          = 38
)

// Options configure a ledger.
type Options struct {
	// ChainID is the chain's id ("celestia", "mocha-4").
	ChainID string
	// UnbondingTime is the staking params' unbonding time (Celestia: 21 days).
	UnbondingTime time.Duration
	// Validators are the celestiavaloper1... operators of the validator set.
	Validators []string
	// MinGasPriceMilli is the node's local minimum gas price (app.toml minimum-gas-prices), in
	// thousandths of a utia; 0: none set, and CheckTx enforces celestia-app's default,
	// DefaultMinGasPriceMilli, as the real node does (app/ante/fee.go ValidateTxFee).
	MinGasPriceMilli uint64
	// Now is the clock; default time.Now.
	Now func() time.Time
	// BlockTime, when set, makes the chain produce a block every BlockTime of the clock (not of
	// warps), as a chain does with or without transactions: the height moves on by itself, so a
	// transaction's timeout height passes. Zero: the height moves only with inclusions and
	// AdvanceBlocks.
	BlockTime time.Duration
}

// Result is the outcome of a broadcast (CheckTx) or of an included transaction (DeliverTx).
type Result struct {
	Hash      string    `json:"txhash"`
	Height    int64     `json:"height"`
	Code      uint32    `json:"code"`
	Codespace string    `json:"codespace"`
	Log       string    `json:"raw_log"`
	GasWanted uint64    `json:"gas_wanted"`
	GasUsed   uint64    `json:"gas_used"`
	Time      time.Time `json:"timestamp"`
	// Raw is the transaction's bytes and Signer the account that signed it (included
	// transactions only).
	Raw    []byte `json:"-"`
	Signer string `json:"-"`
}

type account struct {
	number   uint64
	sequence uint64
	pubKey   []byte
	balance  *big.Int
}

type pair struct{ delegator, validator string }

// Unbonding is one entry of the unbonding queue.
type Unbonding struct {
	Delegator      string    `json:"delegator"`
	Validator      string    `json:"validator"`
	Amount         string    `json:"amount"`
	CreationHeight int64     `json:"creationHeight"`
	CompletionTime time.Time `json:"completionTime"`
	ID             uint64    `json:"id"`
}

// Redelegation is one redelegation entry.
type Redelegation struct {
	Delegator      string    `json:"delegator"`
	Src            string    `json:"src"`
	Dst            string    `json:"dst"`
	Amount         string    `json:"amount"`
	CompletionTime time.Time `json:"completionTime"`
}

// Ledger is an in-memory Celestia chain.
type Ledger struct {
	opts Options

	mu           sync.Mutex
	warp         time.Duration
	height       int64
	nextAccount  uint64
	nextUnbond   uint64
	accounts     map[string]*account
	delegations  map[pair]*big.Int
	rewards      map[pair]*big.Int
	unbonding    []Unbonding
	redelegation []Redelegation
	txs          map[string]*Result
	order        []string
	// lastBlock is the clock's time of the latest block (BlockTime).
	lastBlock time.Time
	// byHeight holds the hashes of the transactions of each block.
	byHeight map[int64][]string
	// indexLag is how many REST lookups of each included transaction answer "not found" before
	// the index knows it; lookups counts them.
	indexLag int
	lookups  map[string]int
}

// New returns a ledger at height 1 with no accounts.
func New(o Options) *Ledger {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Ledger{
		opts: o, height: 1, nextAccount: 1, nextUnbond: 1,
		accounts: map[string]*account{}, delegations: map[pair]*big.Int{}, rewards: map[pair]*big.Int{},
		txs: map[string]*Result{}, lastBlock: o.Now(), byHeight: map[int64][]string{}, lookups: map[string]int{},
	}
}

// tick produces the empty blocks the clock has passed since the latest block (BlockTime).
// Callers hold mu.
func (l *Ledger) tick() {
	if l.opts.BlockTime <= 0 {
		return
	}
	if n := l.opts.Now().Sub(l.lastBlock) / l.opts.BlockTime; n > 0 {
		l.height += int64(n)
		l.lastBlock = l.lastBlock.Add(n * l.opts.BlockTime)
	}
}

// AdvanceBlocks produces n empty blocks and returns the new height.
func (l *Ledger) AdvanceBlocks(n int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tick()
	if n > 0 {
		l.height += n
	}
	return l.height
}

// Height is the latest block's height.
func (l *Ledger) Height() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tick()
	return l.height
}

// Block returns the transactions' bytes of the block at height, in order; ok is false for a
// height the chain has not reached (or below 1).
func (l *Ledger) Block(height int64) (txs [][]byte, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tick()
	if height < 1 || height > l.height {
		return nil, false
	}
	txs = [][]byte{}
	for _, h := range l.byHeight[height] {
		txs = append(txs, slices.Clone(l.txs[h].Raw))
	}
	return txs, true
}

// SetIndexLag makes the REST transaction index lag: from now on, the first polls lookups of each
// included transaction (GET /cosmos/tx/v1beta1/txs/{hash}) answer "not found", as a node whose
// indexer is behind, or one of load-balanced nodes that has not indexed it, does. Its blocks
// hold it meanwhile. 0 turns the lag off.
func (l *Ledger) SetIndexLag(polls int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.indexLag = max(polls, 0)
	l.lookups = map[string]int{}
}

// IndexMisses is how many lookups of hash the lagging index answered "not found".
func (l *Ledger) IndexMisses(hash string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lookups[strings.ToUpper(hash)]
}

// IndexedTx is Tx as the REST transaction index answers it, lagging as SetIndexLag says.
func (l *Ledger) IndexedTx(hash string) (Result, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	hash = strings.ToUpper(hash)
	r, ok := l.txs[hash]
	if !ok {
		return Result{}, false
	}
	if l.lookups[hash] < l.indexLag {
		l.lookups[hash]++
		return Result{}, false
	}
	return *r, true
}

// ChainID is the ledger's chain id.
func (l *Ledger) ChainID() string { return l.opts.ChainID }

// Validators lists the validator set.
func (l *Ledger) Validators() []string { return slices.Clone(l.opts.Validators) }

// UnbondingTime is the unbonding period.
func (l *Ledger) UnbondingTime() time.Duration { return l.opts.UnbondingTime }

// now is the chain time: the clock plus every warp. Callers hold mu.
func (l *Ledger) now() time.Time { return l.opts.Now().Add(l.warp).UTC() }

// Fund credits amount utia to addr, creating the account (account number assigned, no public key
// until its first transaction).
func (l *Ledger) Fund(addr string, amount *big.Int) error {
	if _, err := accountBytes("celestia", addr); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.account(addr)
	a.balance.Add(a.balance, amount)
	return nil
}

// AddRewards credits amount utia of rewards to a delegation, which must exist.
func (l *Ledger) AddRewards(delegator, validator string, amount *big.Int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := pair{delegator, validator}
	if l.delegations[k] == nil {
		return fmt.Errorf("no delegation from %s to %s", delegator, validator)
	}
	l.reward(k).Add(l.reward(k), amount)
	return nil
}

// Warp moves the chain's clock forward by d and matures the unbonding entries it passes.
func (l *Ledger) Warp(d time.Duration) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.warp += d
	l.mature()
	return l.now()
}

func (l *Ledger) account(addr string) *account {
	a := l.accounts[addr]
	if a == nil {
		a = &account{number: l.nextAccount, balance: new(big.Int)}
		l.nextAccount++
		l.accounts[addr] = a
	}
	return a
}

func (l *Ledger) reward(k pair) *big.Int {
	r := l.rewards[k]
	if r == nil {
		r = new(big.Int)
		l.rewards[k] = r
	}
	return r
}

// mature pays out the unbonding entries whose completion time has passed. Callers hold mu.
func (l *Ledger) mature() {
	now := l.now()
	kept := l.unbonding[:0]
	for _, u := range l.unbonding {
		if !u.CompletionTime.After(now) {
			v, _ := new(big.Int).SetString(u.Amount, 10)
			a := l.account(u.Delegator)
			a.balance.Add(a.balance, v)
			continue
		}
		kept = append(kept, u)
	}
	l.unbonding = kept
	keptR := l.redelegation[:0]
	for _, r := range l.redelegation {
		if r.CompletionTime.After(now) {
			keptR = append(keptR, r)
		}
	}
	l.redelegation = keptR
}

// TxHash is the chain's name of raw: upper-case hex SHA-256.
func TxHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

func refused(hash string, code uint32, format string, args ...any) Result {
	return Result{Hash: hash, Code: code, Codespace: "sdk", Log: fmt.Sprintf(format, args...)}
}

// Broadcast checks raw as CheckTx does and, when it passes, includes it in a new block and
// applies it. The result of a refused transaction has Height 0.
func (l *Ledger) Broadcast(raw []byte) Result {
	hash := TxHash(raw)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tick()
	l.mature()
	if _, ok := l.txs[hash]; ok {
		return refused(hash, CodeTxInCache, "tx already exists in cache")
	}
	t, err := decodeTx(raw)
	if err != nil {
		return refused(hash, CodeTxDecode, "tx parse error: %v", err)
	}
	if t.signMode != 1 {
		return refused(hash, CodeUnauthorized, "signature verification failed; sign mode %d is not SIGN_MODE_DIRECT", t.signMode)
	}
	if len(t.pubKey) != 33 {
		return refused(hash, CodeUnauthorized, "pubKey does not match signer address or is missing")
	}
	signer, err := addressOf(t.pubKey)
	if err != nil {
		return refused(hash, CodeInvalidAddress, "%v", err)
	}
	acc, ok := l.accounts[signer]
	if !ok {
		return refused(hash, CodeUnknownAddress, "account %s not found", signer)
	}
	if acc.pubKey != nil && string(acc.pubKey) != string(t.pubKey) {
		return refused(hash, CodeUnauthorized, "pubKey does not match signer address %s", signer)
	}
	if t.sequence != acc.sequence {
		return refused(hash, CodeWrongSequence, "account sequence mismatch, expected %d, got %d: incorrect account sequence", acc.sequence, t.sequence)
	}
	// The ante handler's TxTimeoutHeightDecorator: a block past the timeout height refuses it.
	if t.timeoutHeight != 0 && uint64(l.height+1) > t.timeoutHeight {
		return refused(hash, CodeTxTimeoutHeight, "block height: %d, timeout height: %d: tx timeout height", l.height+1, t.timeoutHeight)
	}
	doc := signDoc(t.body, t.authInfo, l.opts.ChainID, acc.number)
	if !verify(t.pubKey, doc, t.signature) {
		return refused(hash, CodeUnauthorized, "signature verification failed; please verify account number (%d) and chain-id (%s): unauthorized", acc.number, l.opts.ChainID)
	}
	fee := new(big.Int)
	for _, c := range t.fee {
		if c.denom != Denom {
			return refused(hash, CodeInsufficientFee, "insufficient fees; fee denom %q is not %s", c.denom, Denom)
		}
		v, ok := new(big.Int).SetString(c.amount, 10)
		if !ok || v.Sign() < 0 {
			return refused(hash, CodeInsufficientFee, "invalid fee amount %q", c.amount)
		}
		fee.Add(fee, v)
	}
	// The node's minimum gas price (milli-utia per gas): fee * 1000 >= gas * price.
	need := new(big.Int).SetUint64(t.gasLimit)
	need.Mul(need, new(big.Int).SetUint64(l.minGasPriceMilli()))
	if new(big.Int).Mul(fee, big.NewInt(1000)).Cmp(need) < 0 {
		minFee := new(big.Int).Add(need, big.NewInt(999))
		minFee.Div(minFee, big.NewInt(1000))
		return refused(hash, CodeInsufficientFee, "insufficient minimum gas price for this node; got: %sutia required: %sutia: insufficient fee", fee, minFee)
	}
	if acc.balance.Cmp(fee) < 0 {
		return refused(hash, CodeInsufficientFunds, "%sutia is smaller than %sutia: insufficient funds", acc.balance, fee)
	}
	// Passed the ante handler: included, fee paid, sequence consumed.
	acc.pubKey = t.pubKey
	acc.balance.Sub(acc.balance, fee)
	acc.sequence++
	l.height++
	l.lastBlock = l.opts.Now()
	l.byHeight[l.height] = append(l.byHeight[l.height], hash)
	res := &Result{Hash: hash, Height: l.height, GasWanted: t.gasLimit, Time: l.now(), Raw: slices.Clone(raw), Signer: signer}
	gas := uint64(len(t.msgs)) * GasPerMsg
	switch {
	case gas > t.gasLimit:
		res.GasUsed = t.gasLimit
		res.Code, res.Codespace, res.Log = CodeOutOfGas, "sdk", fmt.Sprintf("out of gas; gasWanted: %d, gasUsed: %d: out of gas", t.gasLimit, gas)
	default:
		res.GasUsed = gas
		if err := l.apply(signer, t.msgs); err != nil {
			res.Code, res.Codespace, res.Log = err.code, err.codespace, err.msg
		}
	}
	l.txs[hash] = res
	l.order = append(l.order, hash)
	return *res
}

type msgError struct {
	code      uint32
	codespace string
	msg       string
}

func failf(code uint32, codespace, format string, args ...any) *msgError {
	return &msgError{code, codespace, fmt.Sprintf(format, args...)}
}

// apply runs msgs atomically: on an error nothing they did stays.
func (l *Ledger) apply(signer string, msgs []anyMsg) *msgError {
	snapshot := l.save()
	for i, m := range msgs {
		if err := l.applyOne(signer, m); err != nil {
			l.restore(snapshot)
			err.msg = fmt.Sprintf("failed to execute message; message index: %d: %s", i, err.msg)
			return err
		}
	}
	return nil
}

type state struct {
	balances     map[string]*big.Int
	delegations  map[pair]*big.Int
	rewards      map[pair]*big.Int
	unbonding    []Unbonding
	redelegation []Redelegation
	nextUnbond   uint64
}

func cloneMap[K comparable](m map[K]*big.Int) map[K]*big.Int {
	out := make(map[K]*big.Int, len(m))
	for k, v := range m {
		out[k] = new(big.Int).Set(v)
	}
	return out
}

func (l *Ledger) save() state {
	bal := map[string]*big.Int{}
	for a, acc := range l.accounts {
		bal[a] = new(big.Int).Set(acc.balance)
	}
	return state{bal, cloneMap(l.delegations), cloneMap(l.rewards), slices.Clone(l.unbonding), slices.Clone(l.redelegation), l.nextUnbond}
}

func (l *Ledger) restore(s state) {
	for a, b := range s.balances {
		l.accounts[a].balance = b
	}
	l.delegations, l.rewards, l.unbonding, l.redelegation, l.nextUnbond = s.delegations, s.rewards, s.unbonding, s.redelegation, s.nextUnbond
}

func (l *Ledger) isValidator(v string) bool { return slices.Contains(l.opts.Validators, v) }

// withdraw pays a delegation's rewards to the delegator (as the SDK does on every delegation change).
func (l *Ledger) withdraw(k pair) *big.Int {
	r := l.reward(k)
	paid := new(big.Int).Set(r)
	l.account(k.delegator).balance.Add(l.account(k.delegator).balance, r)
	r.SetInt64(0)
	return paid
}

func (l *Ledger) applyOne(signer string, m anyMsg) *msgError {
	var fields []int
	switch m.typeURL {
	case "/cosmos.staking.v1beta1.MsgDelegate", "/cosmos.staking.v1beta1.MsgUndelegate":
		fields = []int{1, 2, 3}
	case "/cosmos.staking.v1beta1.MsgBeginRedelegate":
		fields = []int{1, 2, 3, 4}
	case "/cosmos.distribution.v1beta1.MsgWithdrawDelegatorReward":
		fields = []int{1, 2}
	default:
		return failf(6, "sdk", "unrecognized message type %q: unknown request", m.typeURL)
	}
	nums := make([]protowire.Number, len(fields))
	for i, f := range fields {
		nums[i] = protowire.Number(f)
	}
	p, err := parse(m.value, nums...)
	if err != nil {
		return failf(CodeTxDecode, "sdk", "%s: %v", m.typeURL, err)
	}
	delegator := p.str(1)
	if delegator != signer {
		return failf(CodeUnauthorized, "sdk", "pubKey does not match signer address %s with signer index: 0: invalid pubkey", delegator)
	}
	amountOf := func(n protowire.Number) (*big.Int, *msgError) {
		c, err := parseCoin(p.one(n))
		if err != nil {
			return nil, failf(CodeTxDecode, "sdk", "%v", err)
		}
		v, ok := new(big.Int).SetString(c.amount, 10)
		if c.denom != Denom || !ok || v.Sign() <= 0 {
			return nil, failf(CodeInvalidRequest, "sdk", "invalid delegation amount %s%s", c.amount, c.denom)
		}
		return v, nil
	}
	acc := l.account(delegator)
	switch m.typeURL {
	case "/cosmos.staking.v1beta1.MsgDelegate":
		val := p.str(2)
		if !l.isValidator(val) {
			return failf(3, "staking", "validator does not exist")
		}
		amt, e := amountOf(3)
		if e != nil {
			return e
		}
		if acc.balance.Cmp(amt) < 0 {
			return failf(CodeInsufficientFunds, "sdk", "spendable balance %sutia is smaller than %sutia: insufficient funds", acc.balance, amt)
		}
		k := pair{delegator, val}
		l.withdraw(k)
		acc.balance.Sub(acc.balance, amt)
		if l.delegations[k] == nil {
			l.delegations[k] = new(big.Int)
		}
		l.delegations[k].Add(l.delegations[k], amt)
	case "/cosmos.staking.v1beta1.MsgUndelegate":
		k := pair{delegator, p.str(2)}
		amt, e := amountOf(3)
		if e != nil {
			return e
		}
		d := l.delegations[k]
		if d == nil {
			return failf(19, "staking", "no delegation for (address, validator) tuple")
		}
		if d.Cmp(amt) < 0 {
			return failf(CodeInvalidRequest, "sdk", "invalid shares amount: invalid request")
		}
		l.withdraw(k)
		d.Sub(d, amt)
		if d.Sign() == 0 {
			delete(l.delegations, k)
		}
		l.unbonding = append(l.unbonding, Unbonding{Delegator: delegator, Validator: k.validator, Amount: amt.String(),
			CreationHeight: l.height, CompletionTime: l.now().Add(l.opts.UnbondingTime), ID: l.nextUnbond})
		l.nextUnbond++
	case "/cosmos.staking.v1beta1.MsgBeginRedelegate":
		src, dst := p.str(2), p.str(3)
		if src == dst {
			return failf(26, "staking", "cannot redelegate to the same validator")
		}
		if !l.isValidator(dst) {
			return failf(3, "staking", "validator does not exist")
		}
		amt, e := amountOf(4)
		if e != nil {
			return e
		}
		ks, kd := pair{delegator, src}, pair{delegator, dst}
		d := l.delegations[ks]
		if d == nil {
			return failf(19, "staking", "no delegation for (address, validator) tuple")
		}
		if d.Cmp(amt) < 0 {
			return failf(CodeInvalidRequest, "sdk", "invalid shares amount: invalid request")
		}
		l.withdraw(ks)
		l.withdraw(kd)
		d.Sub(d, amt)
		if d.Sign() == 0 {
			delete(l.delegations, ks)
		}
		if l.delegations[kd] == nil {
			l.delegations[kd] = new(big.Int)
		}
		l.delegations[kd].Add(l.delegations[kd], amt)
		l.redelegation = append(l.redelegation, Redelegation{Delegator: delegator, Src: src, Dst: dst, Amount: amt.String(),
			CompletionTime: l.now().Add(l.opts.UnbondingTime)})
	case "/cosmos.distribution.v1beta1.MsgWithdrawDelegatorReward":
		k := pair{delegator, p.str(2)}
		if l.delegations[k] == nil {
			return failf(CodeNotFound, "distribution", "delegation does not exist")
		}
		l.withdraw(k)
	}
	return nil
}

// Tx returns an included transaction by hash.
func (l *Ledger) Tx(hash string) (Result, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.txs[strings.ToUpper(hash)]
	if !ok {
		return Result{}, false
	}
	return *r, true
}

// AccountInfo is an account's number, sequence and public key.
type AccountInfo struct {
	Number   uint64
	Sequence uint64
	PubKey   []byte
}

// Account returns addr's account; ok is false for an unknown account.
func (l *Ledger) Account(addr string) (AccountInfo, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.accounts[addr]
	if !ok {
		return AccountInfo{}, false
	}
	return AccountInfo{a.number, a.sequence, slices.Clone(a.pubKey)}, true
}

// Snapshot is the ledger's state, for tests and the control API.
type Snapshot struct {
	ChainID       string            `json:"chainId"`
	Height        int64             `json:"height"`
	Time          time.Time         `json:"time"`
	Balances      map[string]string `json:"balances"`
	Delegations   []Delegation      `json:"delegations"`
	Rewards       []Delegation      `json:"rewards"`
	Unbonding     []Unbonding       `json:"unbonding"`
	Redelegations []Redelegation    `json:"redelegations"`
	// Transactions are the included transactions' hashes, in order.
	Transactions []string `json:"transactions"`
}

// Delegation is an amount held by a delegator with a validator.
type Delegation struct {
	Delegator string `json:"delegator"`
	Validator string `json:"validator"`
	Amount    string `json:"amount"`
}

// Snapshot returns the ledger's state, maturing due unbonding entries first.
func (l *Ledger) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tick()
	l.mature()
	s := Snapshot{ChainID: l.opts.ChainID, Height: l.height, Time: l.now(), Balances: map[string]string{},
		Delegations: []Delegation{}, Rewards: []Delegation{}, Unbonding: slices.Clone(l.unbonding),
		Redelegations: slices.Clone(l.redelegation), Transactions: slices.Clone(l.order)}
	if s.Unbonding == nil {
		s.Unbonding = []Unbonding{}
	}
	if s.Redelegations == nil {
		s.Redelegations = []Redelegation{}
	}
	for a, acc := range l.accounts {
		s.Balances[a] = acc.balance.String()
	}
	s.Delegations = sortedPairs(l.delegations)
	s.Rewards = sortedPairs(l.rewards)
	return s
}

func sortedPairs(m map[pair]*big.Int) []Delegation {
	out := []Delegation{}
	for k, v := range m {
		if v.Sign() > 0 {
			out = append(out, Delegation{k.delegator, k.validator, v.String()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Delegator != out[j].Delegator {
			return out[i].Delegator < out[j].Delegator
		}
		return out[i].Validator < out[j].Validator
	})
	return out
}

// verify checks a 64-byte low-S r||s signature over SHA-256(doc).
func verify(pub, doc, sig []byte) bool {
	if len(sig) != 64 {
		return false
	}
	pk, err := secp256k1.ParsePubKey(pub)
	if err != nil {
		return false
	}
	var r, s secp256k1.ModNScalar
	if r.SetByteSlice(sig[:32]) || s.SetByteSlice(sig[32:]) || r.IsZero() || s.IsZero() || s.IsOverHalfOrder() {
		return false
	}
	sum := sha256.Sum256(doc)
	return ecdsa.NewSignature(&r, &s).Verify(sum[:], pk)
}

// addressOf is the celestia1... address of a compressed public key.
func addressOf(pub []byte) (string, error) {
	s := sha256.Sum256(pub)
	h := ripemd160.New()
	h.Write(s[:])
	return encode("celestia", h.Sum(nil))
}

func encode(hrp string, b []byte) (string, error) {
	conv, err := bech32.ConvertBits(b, 8, 5, true)
	if err != nil {
		return "", err
	}
	return bech32.Encode(hrp, conv)
}

// accountBytes decodes a bech32 address with prefix hrp.
func accountBytes(hrp, addr string) ([]byte, error) {
	got, data, err := bech32.Decode(addr)
	if err != nil {
		return nil, fmt.Errorf("decoding bech32 failed: %w", err)
	}
	if got != hrp {
		return nil, fmt.Errorf("invalid Bech32 prefix; expected %s, got %s", hrp, got)
	}
	b, err := bech32.ConvertBits(data, 5, 8, false)
	if err != nil || len(b) != 20 {
		return nil, errors.New("invalid address length")
	}
	return b, nil
}

// ValidatorAddress returns a deterministic celestiavaloper1... address for a sandbox validator.
func ValidatorAddress(name string) string {
	sum := sha256.Sum256([]byte("stakeflow sandbox celestia validator " + name))
	a, _ := encode("celestiavaloper", sum[:20])
	return a
}
