package evm

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// CancelGas is the gas limit of a cancel transaction: a plain transfer's intrinsic gas.
const CancelGas = params.TxGas

// PriceBumpPercent is the least a same-nonce replacement must raise both fee caps over the
// transaction it replaces for a node's pool to take it (go-ethereum legacypool.PriceBump).
const PriceBumpPercent = 10

// CancelIntent is the transaction that takes a sent nonce back when its operation is cancelled:
// a zero-value transfer from the staker to itself, without data, under the step's nonce, with
// fees raised over every build it replaces. Nothing moves but its fee.
type CancelIntent struct {
	// ChainID is the chain the transaction is for; it must be the policy's.
	ChainID uint64 `json:"chainId"`
	// Staker is the sender and the recipient.
	Staker common.Address `json:"staker"`
	// Nonce is the nonce of the step it cancels.
	Nonce uint64 `json:"nonce"`
	// MaxFeePerGas and MaxPriorityFeePerGas are the exact fee caps the transaction carries, in wei.
	MaxFeePerGas         *big.Int `json:"maxFeePerGas"`
	MaxPriorityFeePerGas *big.Int `json:"maxPriorityFeePerGas"`
	// PrevMaxFeePerGas and PrevMaxPriorityFeePerGas are the highest fee caps among the builds it
	// replaces: both caps must be at least PriceBumpPercent over them.
	PrevMaxFeePerGas         *big.Int `json:"prevMaxFeePerGas"`
	PrevMaxPriorityFeePerGas *big.Int `json:"prevMaxPriorityFeePerGas"`
}

// VerifyCancel decodes unsigned and holds it to the cancel transaction in asks for, exactly: to and
// from the staker, value 0, no data, the intent's nonce, the policy's chain id, gas CancelGas,
// the intent's fees, each at least PriceBumpPercent over the replaced build's and under the
// policy's caps. Only then is it a transaction the signer may sign.
func (s *Signer) VerifyCancel(in CancelIntent, unsigned []byte) (*Verified, error) {
	if err := s.checkCancel(&in); err != nil {
		return nil, err
	}
	d, err := decodeUnsigned(unsigned)
	if err != nil {
		return nil, err
	}
	c := &choices{gas: CancelGas, feeCap: in.MaxFeePerGas, tip: in.MaxPriorityFeePerGas}
	total, err := s.checkFees(&Intent{GasLimit: CancelGas, MaxFeePerGas: in.MaxFeePerGas, MaxPriorityFeePerGas: in.MaxPriorityFeePerGas}, c)
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name      string
		got, prev *big.Int
	}{{"maxFeePerGas", in.MaxFeePerGas, in.PrevMaxFeePerGas}, {"maxPriorityFeePerGas", in.MaxPriorityFeePerGas, in.PrevMaxPriorityFeePerGas}} {
		if min := bumped(f.prev); f.got.Cmp(min) < 0 {
			return nil, mismatch(f.name, fmt.Sprintf("at least %s (%d%% over the replaced build's %s)", gwei(min), PriceBumpPercent, gwei(f.prev)), gwei(f.got))
		}
	}
	want := cancelTx(s.policy.ChainID, in)
	if err := s.gate(want, d); err != nil {
		return nil, err
	}
	return &Verified{Operation: "cancel", Sender: in.Staker, To: in.Staker, Nonce: in.Nonce, GasLimit: CancelGas,
		MaxFeePerGas: new(big.Int).Set(in.MaxFeePerGas), MaxPriorityFeePerGas: new(big.Int).Set(in.MaxPriorityFeePerGas),
		MaxFee: total, tx: want}, nil
}

// SignCancel verifies unsigned as VerifyCancel does and only then signs it with the staker's key.
func (s *Signer) SignCancel(ctx context.Context, in CancelIntent, unsigned []byte) (*Signed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	acct, err := account(s.backend, in.Staker)
	if err != nil {
		return nil, err
	}
	v, err := s.VerifyCancel(in, unsigned)
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	return signTx(ctx, s.backend, acct, v.Sender, v.tx)
}

// CancelTx is the unsigned cancel transaction in asks for on chain chainID.
func CancelTx(chainID uint64, in CancelIntent) *types.Transaction { return cancelTx(chainID, in) }

func cancelTx(chainID uint64, in CancelIntent) *types.Transaction {
	to := in.Staker
	return types.NewTx(&types.DynamicFeeTx{
		ChainID:    new(big.Int).SetUint64(chainID),
		Nonce:      in.Nonce,
		GasTipCap:  new(big.Int).Set(in.MaxPriorityFeePerGas),
		GasFeeCap:  new(big.Int).Set(in.MaxFeePerGas),
		Gas:        CancelGas,
		To:         &to,
		Value:      new(big.Int),
		Data:       []byte{},
		AccessList: types.AccessList{},
	})
}

// bumped is prev raised by PriceBumpPercent, rounded up.
func bumped(prev *big.Int) *big.Int {
	v := new(big.Int).Mul(prev, big.NewInt(100+PriceBumpPercent))
	v.Add(v, big.NewInt(99))
	return v.Div(v, big.NewInt(100))
}

// checkCancel refuses a cancel intent that is incomplete or for another chain.
func (s *Signer) checkCancel(in *CancelIntent) error {
	if in.ChainID != s.policy.ChainID {
		return intentErr("chain id %d is not the policy's chain id %d", in.ChainID, s.policy.ChainID)
	}
	if in.Staker == (common.Address{}) {
		return intentErr("no staker")
	}
	for name, v := range map[string]*big.Int{
		"maxFeePerGas": in.MaxFeePerGas, "maxPriorityFeePerGas": in.MaxPriorityFeePerGas,
		"prevMaxFeePerGas": in.PrevMaxFeePerGas, "prevMaxPriorityFeePerGas": in.PrevMaxPriorityFeePerGas,
	} {
		if v == nil || v.Sign() < 0 {
			return intentErr("a cancel needs %s (got %v)", name, v)
		}
	}
	return nil
}

// account is backend's account for addr: an *UnknownKeyError when it holds none.
func account(backend keys.Backend, addr common.Address) (keys.Account, error) {
	acct, ok := keys.Find(backend, addr.Hex())
	if !ok {
		return keys.Account{}, &UnknownKeyError{Address: addr.Hex()}
	}
	return acct, nil
}

// signTx does what types.SignTx does with the key in a backend: it has the backend sign the
// London signing hash of tx (the exact digest go-ethereum signs), places the signature and checks
// that it recovers to from. Nothing is returned signed when any step fails.
func signTx(ctx context.Context, backend keys.Backend, acct keys.Account, from common.Address, tx *types.Transaction) (*Signed, error) {
	signer := types.NewLondonSigner(tx.ChainId())
	h := signer.Hash(tx)
	sig, err := keys.Sign(ctx, backend, acct, keys.Secp256k1Recoverable, h[:])
	if err != nil {
		return nil, err
	}
	signed, err := tx.WithSignature(signer, sig)
	if err != nil {
		return nil, fmt.Errorf("%w: signing: %v", ErrVerification, err)
	}
	sender, err := types.Sender(signer, signed)
	if err != nil || sender != from {
		return nil, mismatch("sender", from.Hex(), fmt.Sprintf("%s (%v)", sender.Hex(), err))
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("%w: encoding the signed transaction: %v", ErrVerification, err)
	}
	return &Signed{Transaction: hexutil.Encode(raw), Hash: signed.Hash(), Sender: sender, Nonce: tx.Nonce(),
		MaxFee: new(big.Int).Mul(tx.GasFeeCap(), new(big.Int).SetUint64(tx.Gas()))}, nil
}
