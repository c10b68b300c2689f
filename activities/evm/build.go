package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/stakeflow/stakeflow/activities"
	"github.com/stakeflow/stakeflow/amount"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// stakingABI is signer/evm's ABI of the calls that move funds: the builder packs with the very
// ABI the verifier expects.
var stakingABI = signerevm.ABI()

// FeeCaps are the policy's caps on a transaction's fees, in wei.
type FeeCaps struct {
	// MaxFeePerGas caps maxFeePerGas; MaxTotalFee caps maxFeePerGas × gas limit.
	MaxFeePerGas *big.Int
	MaxTotalFee  *big.Int
}

// Fees are the fee caps of a transaction, in wei.
type Fees struct {
	MaxFeePerGas         *big.Int
	MaxPriorityFeePerGas *big.Int
}

// Bump is the least a replacement must offer over prev: prev × 9/8, rounded up (12.5%).
func Bump(prev *big.Int) *big.Int {
	v := new(big.Int).Mul(prev, big.NewInt(FeeBumpNumerator))
	v.Add(v, big.NewInt(FeeBumpDenominator-1))
	return v.Div(v, big.NewInt(FeeBumpDenominator))
}

// ChooseFees picks the fee caps of a transaction of gas gas from the chain's base fee and
// suggested tip: maxPriorityFeePerGas = tip, maxFeePerGas = 2 × base fee + tip. A replacement
// (prev non-nil) raises both over prev's by at least 12.5% (Bump). The caps are never exceeded: a
// first transaction's maxFeePerGas is lowered to them (no lower than the base fee), and a
// replacement whose required bump does not fit them is refused, the error naming the cap.
func ChooseFees(baseFee, tip *big.Int, gas uint64, prev *Fees, caps FeeCaps) (Fees, error) {
	tipCap := new(big.Int).Set(tip)
	feeCap := new(big.Int).Mul(baseFee, big.NewInt(2))
	feeCap.Add(feeCap, tipCap)
	// The most maxFeePerGas may be under both caps.
	limit := new(big.Int).Set(caps.MaxFeePerGas)
	if gas > 0 {
		perGas := new(big.Int).Div(caps.MaxTotalFee, new(big.Int).SetUint64(gas))
		if perGas.Cmp(limit) < 0 {
			limit = perGas
		}
	}
	capName := func() string {
		if limit.Cmp(caps.MaxFeePerGas) < 0 {
			return fmt.Sprintf("the policy's max total fee %s wei over gas %d (%s wei per gas)", caps.MaxTotalFee, gas, limit)
		}
		return fmt.Sprintf("the policy's maxFeePerGas cap %s wei", caps.MaxFeePerGas)
	}
	if prev != nil {
		minTip, minFee := Bump(prev.MaxPriorityFeePerGas), Bump(prev.MaxFeePerGas)
		if tipCap.Cmp(minTip) < 0 {
			tipCap = minTip
		}
		if feeCap.Cmp(minFee) < 0 {
			feeCap = minFee
		}
		floor := new(big.Int).Add(baseFee, tipCap)
		if feeCap.Cmp(floor) < 0 {
			feeCap = floor
		}
		if minFee.Cmp(limit) > 0 {
			return Fees{}, fmt.Errorf("replacing the transaction needs maxFeePerGas of at least %s wei (12.5%% over %s wei), above %s",
				minFee, prev.MaxFeePerGas, capName())
		}
		if feeCap.Cmp(limit) > 0 {
			feeCap = new(big.Int).Set(limit)
		}
		if tipCap.Cmp(feeCap) > 0 {
			return Fees{}, fmt.Errorf("replacing the transaction needs maxPriorityFeePerGas of at least %s wei (12.5%% over %s wei), above %s",
				tipCap, prev.MaxPriorityFeePerGas, capName())
		}
		return Fees{MaxFeePerGas: feeCap, MaxPriorityFeePerGas: tipCap}, nil
	}
	if feeCap.Cmp(limit) > 0 {
		feeCap = new(big.Int).Set(limit)
	}
	if feeCap.Cmp(baseFee) < 0 {
		return Fees{}, fmt.Errorf("the base fee is %s wei, above %s: the transaction could not be mined", baseFee, capName())
	}
	if tipCap.Cmp(feeCap) > 0 {
		tipCap = new(big.Int).Set(feeCap)
	}
	return Fees{MaxFeePerGas: feeCap, MaxPriorityFeePerGas: tipCap}, nil
}

// SharesBounds are a delegate's minSharesToMint and an unstake's maximumSharesToBurn around
// expected shares, with slippageBps basis points, as signer/evm checks them (the slippage rounded
// down).
func SharesBounds(expected *big.Int, slippageBps uint32) (minToMint, maxToBurn *big.Int) {
	slip := new(big.Int).Mul(expected, big.NewInt(int64(slippageBps)))
	slip.Div(slip, big.NewInt(10_000))
	return new(big.Int).Sub(expected, slip), new(big.Int).Add(expected, slip)
}

// EVMBuild builds the unsigned type-2 transaction of one step locally: calldata packed with
// signer/evm's ABI, to the POL token (approve) or the validator share, value 0, the network's chain
// id and the intent's nonce; gas from eth_estimateGas with a margin, under the policy's cap; fees
// from the chain (ChooseFees), a rebuild raising both caps over the transaction it replaces. The
// intent comes back with every chosen value set.
func (a *Activities) EVMBuild(ctx context.Context, in BuildInput) (BuildResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return BuildResult{}, err
	}
	p := n.Signer.Policy()
	intent := in.Intent
	if intent.ChainID != p.ChainID {
		return BuildResult{}, invalid(fmt.Sprintf("the intent is for chain id %d, network %s is chain id %d", intent.ChainID, in.Network, p.ChainID))
	}
	if intent.Staker == (common.Address{}) {
		return BuildResult{}, invalid("the intent names no staker")
	}
	var prev *Fees
	if in.Build > 1 {
		if prev, err = prevFees(in); err != nil {
			return BuildResult{}, err
		}
	}
	to := intent.ValidatorShare
	if intent.Operation == signerevm.OpApprove {
		to = p.POLToken
	}
	if intent.Operation != signerevm.OpApprove && !allowed(p, to) {
		return BuildResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("validator share %s is not on the worker's allow-list %s", to.Hex(), allowList(p)), activities.ErrPolicy, nil)
	}
	intent.MinSharesToMint, intent.MaximumSharesToBurn = nil, nil
	var args []any
	switch intent.Operation {
	case signerevm.OpApprove:
		args = []any{p.StakeManager, intent.Amount}
	case signerevm.OpDelegate, signerevm.OpUnstake:
		if intent.Amount == nil || intent.ExpectedShares == nil || intent.ExpectedShares.Sign() <= 0 {
			return BuildResult{}, invalid(fmt.Sprintf("%s needs an amount and the shares it is expected to be worth", intent.Operation))
		}
		lo, hi := SharesBounds(intent.ExpectedShares, p.SlippageBps)
		if intent.Operation == signerevm.OpDelegate {
			intent.MinSharesToMint = lo
			args = []any{intent.Amount, lo}
		} else {
			intent.MaximumSharesToBurn = hi
			args = []any{intent.Amount, hi}
		}
	case signerevm.OpClaim:
		args = []any{intent.UnbondNonce}
	case signerevm.OpWithdrawRewards, signerevm.OpRestake:
	default:
		return BuildResult{}, invalid(fmt.Sprintf("unknown EVM operation %q", intent.Operation))
	}
	data, err := stakingABI.Pack(intent.Operation.Method(), args...)
	if err != nil {
		return BuildResult{}, invalid(fmt.Sprintf("packing %s: %v", intent.Operation.Method(), err))
	}

	estimate, err := n.Chain.EstimateGas(ctx, ethereum.CallMsg{From: intent.Staker, To: &to, Data: data})
	if err != nil {
		return BuildResult{}, chainErr(fmt.Sprintf("estimating the gas of %s (nonce %d)", intent.Operation, intent.Nonce), err)
	}
	gas, err := GasLimit(estimate, a.gasMargin(), a.gasHeadroom(), p.MaxGasLimit)
	if err != nil {
		return BuildResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v", intent.Operation, err), ErrFeeCap, nil)
	}
	chainFees, err := n.Chain.Fees(ctx)
	if err != nil {
		return BuildResult{}, chainErr("fees", err)
	}
	fees, err := ChooseFees(chainFees.BaseFee, chainFees.Tip, gas, prev, FeeCaps{MaxFeePerGas: p.MaxFeePerGas, MaxTotalFee: p.MaxTotalFee})
	if err != nil {
		return BuildResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s, build %d under nonce %d: %v; nothing new was signed", intent.Operation, in.Build, intent.Nonce, err), ErrFeeCap, nil)
	}
	intent.GasLimit, intent.MaxFeePerGas, intent.MaxPriorityFeePerGas = gas, fees.MaxFeePerGas, fees.MaxPriorityFeePerGas
	if in.Build <= 1 {
		// Pre-flight: the staker must be able to pay the most this transaction may cost. (A
		// replacement is not refused here: the transaction it replaces may still land.)
		if err := checkGasFunds(ctx, n.Chain, intent, gas, fees.MaxFeePerGas); err != nil {
			return BuildResult{}, err
		}
	}
	tx := types.NewTx(&types.DynamicFeeTx{
		ChainID:    new(big.Int).SetUint64(p.ChainID),
		Nonce:      intent.Nonce,
		GasTipCap:  fees.MaxPriorityFeePerGas,
		GasFeeCap:  fees.MaxFeePerGas,
		Gas:        gas,
		To:         &to,
		Value:      new(big.Int),
		Data:       data,
		AccessList: types.AccessList{},
	})
	raw, err := tx.MarshalBinary()
	if err != nil {
		return BuildResult{}, invalid(fmt.Sprintf("encoding the transaction: %v", err))
	}
	activity.GetLogger(ctx).Info("Built", "operation", string(intent.Operation), "nonce", intent.Nonce, "build", in.Build,
		"gas", gas, "maxFeePerGas", fees.MaxFeePerGas.String(), "maxPriorityFeePerGas", fees.MaxPriorityFeePerGas.String())
	return BuildResult{UnsignedTransaction: hexutil.Encode(raw), Intent: intent}, nil
}

func (a *Activities) gasMargin() uint64 {
	if a.GasMarginPercent == 0 {
		return DefaultGasMarginPercent
	}
	return a.GasMarginPercent
}

func (a *Activities) gasHeadroom() uint64 {
	if a.GasHeadroom == 0 {
		return DefaultGasHeadroom
	}
	return a.GasHeadroom
}

// GasLimit is estimate plus marginPercent of it or headroom, whichever is more, no more than
// maxGas (and no less than a transfer's 21,000); an estimate above maxGas is an error naming the
// cap.
func GasLimit(estimate, marginPercent, headroom, maxGas uint64) (uint64, error) {
	if estimate > maxGas {
		return 0, fmt.Errorf("the node estimates %d gas, above the policy's gas limit cap %d", estimate, maxGas)
	}
	gas := estimate + max(estimate*marginPercent/100, headroom)
	if gas > maxGas || gas < estimate {
		gas = maxGas
	}
	return max(gas, params.TxGas), nil
}

// prevFees reads the fees of the transaction a rebuild replaces.
func prevFees(in BuildInput) (*Fees, error) {
	fee, ok1 := new(big.Int).SetString(in.PrevMaxFeePerGas, 10)
	tip, ok2 := new(big.Int).SetString(in.PrevMaxPriorityFeePerGas, 10)
	if !ok1 || !ok2 || fee.Sign() <= 0 || tip.Sign() < 0 {
		return nil, invalid(fmt.Sprintf("build %d replaces a transaction whose fees are not known (maxFeePerGas %q, maxPriorityFeePerGas %q)",
			in.Build, in.PrevMaxFeePerGas, in.PrevMaxPriorityFeePerGas))
	}
	return &Fees{MaxFeePerGas: fee, MaxPriorityFeePerGas: tip}, nil
}

// EVMSign verifies the unsigned transaction against the intent, exactly, and signs it. Local
// activity. A transaction that does not match is ErrVerificationFailed, a staker without a key
// ErrUnknownKey; both non-retryable, nothing signed.
func (a *Activities) EVMSign(ctx context.Context, in SignInput) (SignResult, error) {
	n, err := a.network(in.Network)
	if err != nil {
		return SignResult{}, err
	}
	signed, err := verifyAndSign(ctx, "transaction", string(in.Intent.Operation), in.UnsignedTransaction,
		func(raw []byte) (*signerevm.Signed, error) { return n.Signer.Sign(ctx, in.Intent, raw) })
	if err != nil {
		return SignResult{}, err
	}
	res := SignResult{
		Hash: signed.Hash.Hex(), SignedTransaction: signed.Transaction, Nonce: signed.Nonce, MaxFee: signed.MaxFee.String(),
	}
	if in.Intent.MaxFeePerGas != nil && in.Intent.MaxPriorityFeePerGas != nil {
		// The signer signs only the intent's exact fees.
		res.MaxFeePerGas, res.MaxPriorityFeePerGas = in.Intent.MaxFeePerGas.String(), in.Intent.MaxPriorityFeePerGas.String()
	} else {
		var tx types.Transaction
		if err := tx.UnmarshalBinary(mustDecode(signed.Transaction)); err == nil {
			res.MaxFeePerGas, res.MaxPriorityFeePerGas = tx.GasFeeCap().String(), tx.GasTipCap().String()
		}
	}
	return res, nil
}

// verifyAndSign decodes an unsigned transaction (what names it in errors, kind in the refusal
// metric) and has sign verify it by exact expectation and sign it. A transaction that does not
// match is ErrVerificationFailed, a staker without a key ErrUnknownKey; both non-retryable,
// nothing signed.
func verifyAndSign(ctx context.Context, what, kind, unsigned string, sign func(raw []byte) (*signerevm.Signed, error)) (*signerevm.Signed, error) {
	raw, err := decodeHex(unsigned)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the unsigned %s is not 0x hex: %v; nothing was signed", what, err), activities.ErrVerificationFailed, nil)
	}
	signed, err := sign(raw)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		recordSignerRefusal(ctx, kind, err)
		if errors.Is(err, signerevm.ErrUnknownKey) {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrUnknownKey, nil)
		}
		return nil, temporal.NewNonRetryableApplicationError(err.Error()+"; nothing was signed", activities.ErrVerificationFailed, nil)
	}
	return signed, nil
}

func decodeHex(s string) ([]byte, error) {
	if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
		return nil, errors.New("no 0x prefix")
	}
	return hexutil.Decode("0x" + s[2:])
}

func mustDecode(s string) []byte {
	b, _ := decodeHex(s)
	return b
}

// recordSignerRefusal counts a transaction the signer refused, labelled by what it refused.
func recordSignerRefusal(ctx context.Context, operation string, err error) {
	h := activity.GetMetricsHandler(ctx)
	if h == nil {
		return
	}
	check := "other"
	var v *signerevm.VerificationError
	switch {
	case errors.As(err, &v):
		check = snake(v.Field)
	case errors.Is(err, signerevm.ErrUnknownKey):
		check = "unknown_key"
	case errors.Is(err, signerevm.ErrDecode):
		check = "decode"
	case errors.Is(err, signerevm.ErrIntent):
		check = "intent"
	}
	h.WithTags(map[string]string{
		activities.LabelChain: ChainPolygon, activities.LabelOperation: activities.LabelValue(operation), activities.LabelCheck: check,
	}).Counter(activities.MetricSignerRefusals).Inc(1)
}

// snake lower-cases s and joins its words with underscores ("approve amount" -> approve_amount).
func snake(s string) string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') })
	if len(words) == 0 {
		return "other"
	}
	out := strings.Join(words, "_")
	if len(out) > 48 {
		out = out[:48]
	}
	return out
}

// checkGasFunds refuses, as activities.ErrInsufficientFunds, a transaction whose staker holds less
// ether than gas × maxFeePerGas, the most it may pay: the node would refuse it once signed.
func checkGasFunds(ctx context.Context, c Chain, intent Intent, gas uint64, maxFeePerGas *big.Int) error {
	bal, err := c.Balance(ctx, intent.Staker)
	if err != nil {
		return chainErr("balance of "+intent.Staker.Hex(), err)
	}
	need := new(big.Int).Mul(new(big.Int).SetUint64(gas), maxFeePerGas)
	if bal.Cmp(need) >= 0 {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("insufficient funds: staker %s holds %s ETH, the %s may pay up to %s ETH for gas (%d gas at %s gwei at most); nothing was signed",
			intent.Staker.Hex(), FormatUnits(bal, 18), intent.Operation, FormatUnits(need, 18), gas, FormatUnits(maxFeePerGas, 9)),
		activities.ErrInsufficientFunds, nil)
}

// FormatUnits renders an amount of the smallest unit as whole units of decimals places (wei as
// ether with 18, as gwei with 9), exactly, without trailing zeros.
func FormatUnits(v *big.Int, decimals int) string {
	if v.Sign() < 0 {
		return "-" + FormatUnits(new(big.Int).Neg(v), decimals)
	}
	a, _ := amount.FromBig(v)
	return a.Format(decimals)
}
