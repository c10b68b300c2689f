package evmchain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
)

// POL is one POL token in wei (18 decimals).
var POL = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// DefaultWithdrawalDelay is the checkpoints an unbond waits, by default.
const DefaultWithdrawalDelay = 4

// DefaultValidatorIDs are the validators Deploy registers by default: one of Polygon's
// "foundation" validators (id below 8, exchange-rate precision 100) and the first validator of
// the high precision (10**29), as ValidatorShare._getRatePrecision divides them.
var DefaultValidatorIDs = []uint64{1, 8}

// DefaultCheckpointReward is the POL each validator's delegators share per checkpoint (10 POL).
var DefaultCheckpointReward = new(big.Int).Mul(big.NewInt(10), POL)

// DefaultRewardReserve is the POL minted to the StakeManager to pay rewards (1,000,000 POL).
var DefaultRewardReserve = new(big.Int).Mul(big.NewInt(1_000_000), POL)

// deployGas is the gas limit of each contract creation: they are sent together, before any is
// mined, so none can be estimated (the StakeManager's constructor takes the token's address).
// Later calls are estimated.
const deployGas = 5_000_000

// pollInterval is how often receipts are polled.
const pollInterval = 100 * time.Millisecond

// Option tunes Deploy.
type Option func(*deployConfig)

type deployConfig struct {
	validatorIDs     []uint64
	withdrawalDelay  uint64
	checkpointReward *big.Int
	rewardReserve    *big.Int
	stakers          []mint
}

type mint struct {
	to     common.Address
	amount *big.Int
}

// WithValidatorIDs deploys one share per validator id, in this order; default
// DefaultValidatorIDs.
func WithValidatorIDs(ids ...uint64) Option {
	return func(c *deployConfig) { c.validatorIDs = append([]uint64(nil), ids...) }
}

// WithWithdrawalDelay sets the checkpoints an unbond waits; default DefaultWithdrawalDelay.
func WithWithdrawalDelay(n uint64) Option { return func(c *deployConfig) { c.withdrawalDelay = n } }

// WithCheckpointReward sets the wei each validator's delegators share per checkpoint.
func WithCheckpointReward(wei *big.Int) Option {
	return func(c *deployConfig) { c.checkpointReward = new(big.Int).Set(wei) }
}

// WithRewardReserve sets the wei minted to the StakeManager to pay rewards.
func WithRewardReserve(wei *big.Int) Option {
	return func(c *deployConfig) { c.rewardReserve = new(big.Int).Set(wei) }
}

// WithStaker mints wei POL to staker; repeatable.
func WithStaker(staker common.Address, wei *big.Int) Option {
	return func(c *deployConfig) { c.stakers = append(c.stakers, mint{staker, new(big.Int).Set(wei)}) }
}

// Validator is one validator and its share contract.
type Validator struct {
	// ID is the validator id in the StakeManager.
	ID uint64
	// Share is its ValidatorShare contract, where delegators send their calls.
	Share common.Address
}

// Deployment is a deployed set of contracts and the controls of their owner.
type Deployment struct {
	// ChainID is the chain they live on.
	ChainID *big.Int
	// Token is the POL ERC-20 token.
	Token common.Address
	// StakeManager holds delegated POL; delegators approve it as spender.
	StakeManager common.Address
	// StakingInfo emits the shares' ShareMinted, StakeUpdate, DelegatorClaimedRewards and
	// DelegatorRestaked; EventsHub their ShareBurnedWithId and DelegatorUnstakeWithId (as
	// Polygon's StakingInfo and EventsHub proxy do on mainnet).
	StakingInfo common.Address
	EventsHub   common.Address
	// Validators are the registered validators in id order.
	Validators []Validator

	client *ethclient.Client
	key    *ecdsa.PrivateKey
	owner  common.Address
	abis   map[string]abi.ABI
}

// Deploy deploys the contracts on the chain at rpcURL with deployerKey, which pays for it and
// owns the token and the StakeManager. ctx bounds the deployment; the Deployment keeps its RPC
// connection until Close.
func Deploy(ctx context.Context, rpcURL string, deployerKey *ecdsa.PrivateKey, opts ...Option) (*Deployment, error) {
	cfg := deployConfig{
		validatorIDs:     DefaultValidatorIDs,
		withdrawalDelay:  DefaultWithdrawalDelay,
		checkpointReward: DefaultCheckpointReward,
		rewardReserve:    DefaultRewardReserve,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.validatorIDs) < 1 {
		return nil, errors.New("evmchain: no validator: deploy at least one")
	}
	seen := map[uint64]bool{}
	for _, id := range cfg.validatorIDs {
		if id == 0 || seen[id] {
			return nil, fmt.Errorf("evmchain: validator ids %v: each must be positive and distinct", cfg.validatorIDs)
		}
		seen[id] = true
	}
	if deployerKey == nil {
		return nil, errors.New("evmchain: no deployer key")
	}
	d, code, err := dial(ctx, rpcURL, deployerKey, ContractToken, ContractStakeManager, ContractValidatorShare,
		ContractStakingInfo, ContractEventsHub)
	if err != nil {
		return nil, err
	}
	if err := d.deploy(ctx, cfg, code); err != nil {
		d.client.Close()
		return nil, err
	}
	return d, nil
}

// deploy sends the contract creations with consecutive nonces (addresses of created contracts
// follow from the nonce) and waits for them, then the registrations and mints, and waits again.
func (d *Deployment) deploy(ctx context.Context, cfg deployConfig, code map[string][]byte) error {
	nonce, err := d.client.PendingNonceAt(ctx, d.owner)
	if err != nil {
		return fmt.Errorf("evmchain: nonce of deployer %s: %w", d.owner.Hex(), err)
	}
	type step struct {
		what string
		tx   *types.Transaction
	}
	var steps []step
	send := func(what string, to *common.Address, data []byte, gas uint64) (common.Address, error) {
		tx, err := d.signed(ctx, d.key, nonce, to, data, gas)
		if err != nil {
			return common.Address{}, fmt.Errorf("evmchain: %s: %w", what, err)
		}
		if err := d.client.SendTransaction(ctx, tx); err != nil {
			return common.Address{}, fmt.Errorf("evmchain: %s: send: %w", what, err)
		}
		created := crypto.CreateAddress(d.owner, nonce)
		nonce++
		steps = append(steps, step{what, tx})
		return created, nil
	}
	deployData := func(name string, args ...any) ([]byte, error) {
		packed, err := d.abis[name].Pack("", args...)
		if err != nil {
			return nil, fmt.Errorf("evmchain: %s constructor arguments: %w", name, err)
		}
		return append(append([]byte{}, code[name]...), packed...), nil
	}

	wait := func() error {
		for _, s := range steps {
			rcpt, err := d.WaitMined(ctx, s.tx.Hash())
			if err != nil {
				return fmt.Errorf("evmchain: %s: %w", s.what, err)
			}
			if rcpt.Status != types.ReceiptStatusSuccessful {
				return fmt.Errorf("evmchain: %s: transaction %s failed on chain", s.what, s.tx.Hash().Hex())
			}
		}
		steps = nil
		return nil
	}

	data, _ := deployData(ContractToken)
	if d.Token, err = send("deploy POLToken", nil, data, deployGas); err != nil {
		return err
	}
	data, err = deployData(ContractStakeManager, d.Token, new(big.Int).SetUint64(cfg.withdrawalDelay), cfg.checkpointReward)
	if err != nil {
		return err
	}
	if d.StakeManager, err = send("deploy StakeManager", nil, data, deployGas); err != nil {
		return err
	}
	// The StakingInfo and the EventsHub come after the shares (whose addresses stay those of
	// before they existed); the shares' constructors take their addresses, known from the nonces.
	n := uint64(len(cfg.validatorIDs))
	stakingInfo, eventsHub := crypto.CreateAddress(d.owner, nonce+n), crypto.CreateAddress(d.owner, nonce+n+1)
	for _, id := range cfg.validatorIDs {
		data, err := deployData(ContractValidatorShare, new(big.Int).SetUint64(id), d.StakeManager, stakingInfo, eventsHub)
		if err != nil {
			return err
		}
		share, err := send(fmt.Sprintf("deploy ValidatorShare %d", id), nil, data, deployGas)
		if err != nil {
			return err
		}
		d.Validators = append(d.Validators, Validator{ID: id, Share: share})
	}
	if data, err = deployData(ContractStakingInfo, d.StakeManager); err != nil {
		return err
	}
	if d.StakingInfo, err = send("deploy StakingInfo", nil, data, deployGas); err != nil {
		return err
	}
	if data, err = deployData(ContractEventsHub, d.StakeManager); err != nil {
		return err
	}
	if d.EventsHub, err = send("deploy EventsHub", nil, data, deployGas); err != nil {
		return err
	}
	if d.StakingInfo != stakingInfo || d.EventsHub != eventsHub {
		return fmt.Errorf("evmchain: StakingInfo and EventsHub at %s and %s, not where the shares expect them (%s, %s)",
			d.StakingInfo.Hex(), d.EventsHub.Hex(), stakingInfo.Hex(), eventsHub.Hex())
	}
	// The contracts exist from here on: later calls are estimated.
	if err := wait(); err != nil {
		return err
	}
	for _, v := range d.Validators {
		data, err := d.abis[ContractStakeManager].Pack("registerValidator", new(big.Int).SetUint64(v.ID), v.Share)
		if err != nil {
			return fmt.Errorf("evmchain: registerValidator: %w", err)
		}
		if _, err := send(fmt.Sprintf("register validator %d", v.ID), &d.StakeManager, data, 0); err != nil {
			return err
		}
	}
	mints := append([]mint{{d.StakeManager, cfg.rewardReserve}}, cfg.stakers...)
	for _, m := range mints {
		if m.amount.Sign() == 0 {
			continue
		}
		data, err := d.abis[ContractToken].Pack("mint", m.to, m.amount)
		if err != nil {
			return fmt.Errorf("evmchain: mint: %w", err)
		}
		if _, err := send("mint POL to "+m.to.Hex(), &d.Token, data, 0); err != nil {
			return err
		}
	}
	return wait()
}

// Client is the RPC connection of the deployment.
func (d *Deployment) Client() *ethclient.Client { return d.client }

// Owner is the deployer's address, owner of the token and the StakeManager.
func (d *Deployment) Owner() common.Address { return d.owner }

// Close closes the RPC connection.
func (d *Deployment) Close() { d.client.Close() }

// signed builds and signs an EIP-1559 transaction from key with the given nonce; gas 0 means
// estimate it (which fails, with the revert reason, for a call that would revert).
func (d *Deployment) signed(ctx context.Context, key *ecdsa.PrivateKey, nonce uint64, to *common.Address, data []byte, gas uint64) (*types.Transaction, error) {
	from := crypto.PubkeyToAddress(key.PublicKey)
	tip, err := d.client.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, fmt.Errorf("eth_maxPriorityFeePerGas: %w", err)
	}
	head, err := d.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("latest header: %w", err)
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	if gas == 0 {
		gas, err = d.client.EstimateGas(ctx, ethereum.CallMsg{From: from, To: to, Data: data, GasTipCap: tip, GasFeeCap: feeCap})
		if err != nil {
			return nil, fmt.Errorf("estimate gas: %w", err)
		}
	}
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: d.ChainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas, To: to, Data: data})
	return types.SignTx(tx, types.LatestSignerForChainID(d.ChainID), key)
}

// SignTx builds and signs, without sending, a call from key to the contract to with
// calldata: the next pending nonce, estimated gas, fee cap twice the base fee plus the tip. The
// estimate fails with the revert reason ("execution reverted: ...") for a call that would
// revert.
func (d *Deployment) SignTx(ctx context.Context, key *ecdsa.PrivateKey, to common.Address, data []byte) (*types.Transaction, error) {
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce, err := d.client.PendingNonceAt(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("evmchain: nonce of %s: %w", from.Hex(), err)
	}
	tx, err := d.signed(ctx, key, nonce, &to, data, 0)
	if err != nil {
		return nil, fmt.Errorf("evmchain: call %s from %s: %w", to.Hex(), from.Hex(), err)
	}
	return tx, nil
}

// Send signs (as SignTx), sends and waits for a call from key, and returns its receipt; a
// receipt whose status is failed is an error.
func (d *Deployment) Send(ctx context.Context, key *ecdsa.PrivateKey, to common.Address, data []byte) (*types.Receipt, error) {
	tx, err := d.SignTx(ctx, key, to, data)
	if err != nil {
		return nil, err
	}
	if err := d.client.SendTransaction(ctx, tx); err != nil {
		return nil, fmt.Errorf("evmchain: send %s: %w", tx.Hash().Hex(), err)
	}
	rcpt, err := d.WaitMined(ctx, tx.Hash())
	if err != nil {
		return nil, err
	}
	if rcpt.Status != types.ReceiptStatusSuccessful {
		return rcpt, fmt.Errorf("evmchain: transaction %s failed on chain", tx.Hash().Hex())
	}
	return rcpt, nil
}

// WaitMined polls until hash has a receipt. A lookup answered "transaction indexing is in
// progress" counts as not mined yet.
func (d *Deployment) WaitMined(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		rcpt, err := d.client.TransactionReceipt(ctx, hash)
		if err == nil {
			return rcpt, nil
		}
		if !errors.Is(err, ethereum.NotFound) && !strings.Contains(err.Error(), "transaction indexing is in progress") {
			return nil, fmt.Errorf("evmchain: receipt of %s: %w", hash.Hex(), err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("evmchain: waiting for %s to be mined: %w", hash.Hex(), ctx.Err())
		case <-t.C:
		}
	}
}

// dial connects to the node at rpcURL and returns a Deployment signing with key, holding the ABIs
// of the named contracts, and their creation bytecode by name.
func dial(ctx context.Context, rpcURL string, key *ecdsa.PrivateKey, names ...string) (*Deployment, map[string][]byte, error) {
	abis := map[string]abi.ABI{}
	code := map[string][]byte{}
	for _, name := range names {
		a, err := Artifact(name)
		if err != nil {
			return nil, nil, err
		}
		abis[name], code[name] = a.ABI, a.Bytecode
	}
	client, err := ethclient.DialContext(ctx, rpcURL)
	if err != nil {
		return nil, nil, fmt.Errorf("evmchain: dial %s: %w", rpcURL, err)
	}
	chainID, err := client.ChainID(ctx)
	if err != nil {
		client.Close()
		return nil, nil, fmt.Errorf("evmchain: eth_chainId of %s: %w", rpcURL, err)
	}
	return &Deployment{ChainID: chainID, client: client, key: key, owner: crypto.PubkeyToAddress(key.PublicKey), abis: abis}, code, nil
}
