package evm

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"

	"github.com/stakeflow/stakeflow/signer/keys"
)

// EigenLayer checkpoints: the owner's startCheckpoint, built locally, and the proofs transactions
// the staking service builds (endpoint 5), both verified by exact expectation before a key signs.

// CheckpointABIJSON is the EigenPod and EigenPodManager subset a checkpoint calls and reads, as
// a JSON ABI, written from EigenLayer's published interfaces (github.com/Layr-Labs/eigenlayer-contracts
// src/contracts/interfaces/IEigenPod.sol and IEigenPodManager.sol at commit
// f84a5151080cdf0b77b9b6e46506cde723d06c28; checked in TestCheckpointABIIsEigenLayers).
// Selectors: startCheckpoint 0x88676cad, verifyCheckpointProofs 0xf074ba62, getPod 0xa38406a3.
const CheckpointABIJSON = `[
{"type":"function","name":"startCheckpoint","stateMutability":"nonpayable",
 "inputs":[{"name":"revertIfNoBalance","type":"bool"}],"outputs":[]},
{"type":"function","name":"verifyCheckpointProofs","stateMutability":"nonpayable",
 "inputs":[
  {"name":"balanceContainerProof","type":"tuple","components":[
    {"name":"balanceContainerRoot","type":"bytes32"},{"name":"proof","type":"bytes"}]},
  {"name":"proofs","type":"tuple[]","components":[
    {"name":"pubkeyHash","type":"bytes32"},{"name":"balanceRoot","type":"bytes32"},{"name":"proof","type":"bytes"}]}],
 "outputs":[]},
{"type":"function","name":"getPod","stateMutability":"view",
 "inputs":[{"name":"podOwner","type":"address"}],"outputs":[{"name":"","type":"address"}]},
{"type":"function","name":"currentCheckpoint","stateMutability":"view","inputs":[],
 "outputs":[{"name":"","type":"tuple","components":[
   {"name":"beaconBlockRoot","type":"bytes32"},{"name":"proofsRemaining","type":"uint24"},
   {"name":"podBalanceGwei","type":"uint64"},{"name":"balanceDeltasGwei","type":"int64"},
   {"name":"prevBeaconBalanceGwei","type":"uint64"}]}]},
{"type":"function","name":"currentCheckpointTimestamp","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint64"}]},
{"type":"function","name":"lastCheckpointTimestamp","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint64"}]},
{"type":"function","name":"validatorPubkeyHashToInfo","stateMutability":"view",
 "inputs":[{"name":"validatorPubkeyHash","type":"bytes32"}],
 "outputs":[{"name":"","type":"tuple","components":[
   {"name":"validatorIndex","type":"uint64"},{"name":"restakedBalanceGwei","type":"uint64"},
   {"name":"lastCheckpointedAt","type":"uint64"},{"name":"status","type":"uint8"}]}]},
{"type":"function","name":"pectraForkTimestamp","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint64"}]},
{"type":"function","name":"activeValidatorCount","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint256"}]},
{"type":"event","name":"CheckpointCreated","anonymous":false,"inputs":[
  {"name":"checkpointTimestamp","type":"uint64","indexed":true},
  {"name":"beaconBlockRoot","type":"bytes32","indexed":true},
  {"name":"validatorCount","type":"uint256","indexed":false}]}
]`

// Method names in CheckpointABIJSON.
const (
	MethodStartCheckpoint        = "startCheckpoint"
	MethodVerifyCheckpointProofs = "verifyCheckpointProofs"
	MethodGetPod                 = "getPod"
	// MethodValidatorInfo is the EigenPod's validatorPubkeyHashToInfo; MethodPectraForkTimestamp
	// the EigenPodManager's pectraForkTimestamp.
	MethodValidatorInfo       = "validatorPubkeyHashToInfo"
	MethodPectraForkTimestamp = "pectraForkTimestamp"
)

// ValidatorInfo is IEigenPod.ValidatorInfo as go-ethereum's abi unpacks it; Status is
// VALIDATOR_STATUS (0 INACTIVE, 1 ACTIVE, 2 WITHDRAWN).
type ValidatorInfo struct {
	ValidatorIndex      uint64
	RestakedBalanceGwei uint64
	LastCheckpointedAt  uint64
	Status              uint8
}

// ValidatorActive is VALIDATOR_STATUS.ACTIVE.
const ValidatorActive = 1

// SkippedBy reports whether an EigenPod skips (without reverting) a checkpoint proof of this
// validator in the checkpoint of checkpointTimestamp: it is not ACTIVE, or was already
// checkpointed at or after that timestamp (EigenPod.verifyCheckpointProofs).
func (v ValidatorInfo) SkippedBy(checkpointTimestamp uint64) bool {
	return v.Status != ValidatorActive || v.LastCheckpointedAt >= checkpointTimestamp
}

// CheckpointABI returns CheckpointABIJSON parsed; each call returns a new value.
func CheckpointABI() abi.ABI {
	a, err := abi.JSON(strings.NewReader(CheckpointABIJSON))
	if err != nil {
		panic("signer/evm: CheckpointABIJSON does not parse: " + err.Error())
	}
	return a
}

var checkpointABI = CheckpointABI()

// BalanceContainerProof and BalanceProof are verifyCheckpointProofs' tuples as go-ethereum's abi
// packs them.
type BalanceContainerProof struct {
	BalanceContainerRoot [32]byte
	Proof                []byte
}

// BalanceProof is one validator's balance proof.
type BalanceProof struct {
	PubkeyHash  [32]byte
	BalanceRoot [32]byte
	Proof       []byte
}

// Defaults of CheckpointPolicy.
var (
	// DefaultCheckpointMaxGasLimit caps a checkpoint transaction's gas. A batch of 80 balance
	// proofs (EigenLayer's proof tool's batch, eigenpod-proofs-generation cli/utils
	// DEFAULT_BATCH_CHECKPOINT) of 39 siblings each is about 110 KB of calldata: about 4.3 million
	// gas at EIP-7623's calldata floor, which the execution stays under; with the worker's 25%
	// gas margin it fits.
	DefaultCheckpointMaxGasLimit uint64 = 6_000_000
	// DefaultCheckpointMaxTotalFee caps maxFeePerGas × gas: 0.2 ether.
	DefaultCheckpointMaxTotalFee = new(big.Int).Mul(big.NewInt(2), big.NewInt(params.Ether/10))
)

// DefaultMaxProofsPerBatch is the most proofs one verifyCheckpointProofs may carry.
const DefaultMaxProofsPerBatch = 80

// CheckpointPolicy is what the operator allows for checkpoint transactions.
type CheckpointPolicy struct {
	// ChainID is the chain every transaction must be for. Required.
	ChainID uint64
	// MaxGasLimit caps the gas limit (0: DefaultCheckpointMaxGasLimit).
	MaxGasLimit uint64
	// MaxFeePerGas caps maxFeePerGas in wei (nil or 0: DefaultMaxFeePerGas); MaxTotalFee caps
	// maxFeePerGas × gas (nil or 0: DefaultCheckpointMaxTotalFee).
	MaxFeePerGas, MaxTotalFee *big.Int
	// MaxProofsPerBatch caps the proofs of one batch (0: DefaultMaxProofsPerBatch).
	MaxProofsPerBatch int
}

func (p CheckpointPolicy) withDefaults() (CheckpointPolicy, error) {
	if p.ChainID == 0 {
		return p, fmt.Errorf("%w: chain id is not set", ErrPolicy)
	}
	if p.MaxGasLimit == 0 {
		p.MaxGasLimit = DefaultCheckpointMaxGasLimit
	}
	if p.MaxFeePerGas == nil || p.MaxFeePerGas.Sign() == 0 {
		p.MaxFeePerGas = DefaultMaxFeePerGas
	}
	if p.MaxTotalFee == nil || p.MaxTotalFee.Sign() == 0 {
		p.MaxTotalFee = DefaultCheckpointMaxTotalFee
	}
	if p.MaxFeePerGas.Sign() < 0 || p.MaxTotalFee.Sign() < 0 {
		return p, fmt.Errorf("%w: negative fee cap", ErrPolicy)
	}
	if p.MaxProofsPerBatch <= 0 {
		p.MaxProofsPerBatch = DefaultMaxProofsPerBatch
	}
	p.MaxFeePerGas, p.MaxTotalFee = new(big.Int).Set(p.MaxFeePerGas), new(big.Int).Set(p.MaxTotalFee)
	return p, nil
}

// CheckpointSigner verifies EigenLayer checkpoint transactions and has a key backend sign the
// verified ones.
type CheckpointSigner struct {
	keys   keys.Backend
	policy CheckpointPolicy
}

// NewCheckpointSigner returns a CheckpointSigner signing with the file keyring kr under policy
// (defaults applied).
func NewCheckpointSigner(kr *Keyring, policy CheckpointPolicy) (*CheckpointSigner, error) {
	return NewCheckpointSignerBackend(kr, policy)
}

// NewCheckpointSignerBackend returns a CheckpointSigner signing through backend (the file keyring
// or another key backend) under policy (defaults applied).
func NewCheckpointSignerBackend(backend keys.Backend, policy CheckpointPolicy) (*CheckpointSigner, error) {
	p, err := policy.withDefaults()
	if err != nil {
		return nil, err
	}
	return &CheckpointSigner{keys: backend, policy: p}, nil
}

// Policy returns the effective policy.
func (s *CheckpointSigner) Policy() CheckpointPolicy {
	p := s.policy
	p.MaxFeePerGas, p.MaxTotalFee = new(big.Int).Set(p.MaxFeePerGas), new(big.Int).Set(p.MaxTotalFee)
	return p
}

// String describes the signer without key material.
func (s CheckpointSigner) String() string {
	return fmt.Sprintf("evm.CheckpointSigner{keys: %v, chainId: %d, maxGasLimit: %d, maxFeePerGas: %s, maxTotalFee: %s, maxProofsPerBatch: %d}",
		s.keys, s.policy.ChainID, s.policy.MaxGasLimit, s.policy.MaxFeePerGas, s.policy.MaxTotalFee, s.policy.MaxProofsPerBatch)
}

// Format prints String under every verb.
func (s CheckpointSigner) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// TxChoices are the values stakeflow chose for a checkpoint transaction: the lease's nonce,
// the gas limit and the fees. All are required and checked against the policy.
type TxChoices struct {
	Nonce                uint64   `json:"nonce"`
	GasLimit             uint64   `json:"gasLimit"`
	MaxFeePerGas         *big.Int `json:"maxFeePerGas"`
	MaxPriorityFeePerGas *big.Int `json:"maxPriorityFeePerGas"`
}

// StartIntent is the pod owner's startCheckpoint(revertIfNoBalance), to their pod.
type StartIntent struct {
	ChainID uint64         `json:"chainId"`
	Owner   common.Address `json:"owner"`
	// Pod is the owner's pod as the EigenPodManager's getPod answers it.
	Pod               common.Address `json:"pod"`
	RevertIfNoBalance bool           `json:"revertIfNoBalance"`
	TxChoices
}

// ProofsIntent is what a proofs transaction must do: prove balances of Pod's active checkpoint,
// whose beacon block root and proofs remaining were read from the chain, sent by Submitter with
// stakeflow's choices.
type ProofsIntent struct {
	ChainID   uint64         `json:"chainId"`
	Submitter common.Address `json:"submitter"`
	Pod       common.Address `json:"pod"`
	// CheckpointRoot is currentCheckpoint().beaconBlockRoot; ProofsRemaining its proofsRemaining.
	CheckpointRoot  common.Hash `json:"checkpointRoot"`
	ProofsRemaining uint64      `json:"proofsRemaining"`
	// CheckpointTimestamp is currentCheckpointTimestamp(); PectraForkTimestamp the EigenPodManager's
	// pectraForkTimestamp(). Together they choose the proof geometry (ProofVersionAt).
	CheckpointTimestamp uint64 `json:"checkpointTimestamp,omitempty"`
	PectraForkTimestamp uint64 `json:"pectraForkTimestamp,omitempty"`
	TxChoices
}

// ProofsVerified is a served proofs transaction that matched its intent.
type ProofsVerified struct {
	// Proofs is how many validators the batch proves.
	Proofs int
	// Data is the call, re-encoded from the decoded proofs.
	Data []byte
	// Version is the fork geometry the balance container proof was checked with; PubkeyHashes
	// are the batch's validators, in order.
	Version      ProofVersion
	PubkeyHashes []common.Hash
}

func (s *CheckpointSigner) checkChoices(c TxChoices) error {
	p := s.policy
	if c.MaxFeePerGas == nil || c.MaxPriorityFeePerGas == nil {
		return intentErr("no fees chosen")
	}
	if c.GasLimit < params.TxGas || c.GasLimit > p.MaxGasLimit {
		return mismatch("gas limit", fmt.Sprintf("from %d to %d (the policy's cap)", params.TxGas, p.MaxGasLimit), fmt.Sprint(c.GasLimit))
	}
	if c.MaxFeePerGas.Cmp(p.MaxFeePerGas) > 0 {
		return mismatch("maxFeePerGas", "at most "+gwei(p.MaxFeePerGas)+" (the policy's cap)", gwei(c.MaxFeePerGas))
	}
	if c.MaxPriorityFeePerGas.Sign() < 0 || c.MaxPriorityFeePerGas.Cmp(c.MaxFeePerGas) > 0 {
		return mismatch("maxPriorityFeePerGas", "from 0 to maxFeePerGas "+gwei(c.MaxFeePerGas), gwei(c.MaxPriorityFeePerGas))
	}
	if total := new(big.Int).Mul(c.MaxFeePerGas, new(big.Int).SetUint64(c.GasLimit)); total.Cmp(p.MaxTotalFee) > 0 {
		return mismatch("max total fee", "at most "+wei(p.MaxTotalFee)+" (the policy's cap)", wei(total))
	}
	return nil
}

func (s *CheckpointSigner) build(chainID uint64, c TxChoices, to common.Address, data []byte) (*types.Transaction, error) {
	if chainID != s.policy.ChainID {
		return nil, intentErr("chain id %d is not the policy's chain id %d", chainID, s.policy.ChainID)
	}
	if to == (common.Address{}) {
		return nil, intentErr("no pod")
	}
	if err := s.checkChoices(c); err != nil {
		return nil, err
	}
	return types.NewTx(&types.DynamicFeeTx{
		ChainID: new(big.Int).SetUint64(chainID), Nonce: c.Nonce, GasTipCap: new(big.Int).Set(c.MaxPriorityFeePerGas),
		GasFeeCap: new(big.Int).Set(c.MaxFeePerGas), Gas: c.GasLimit, To: &to, Value: new(big.Int), Data: data,
		AccessList: types.AccessList{},
	}), nil
}

// SignStart verifies that unsigned (a type-2 unsigned transaction, either form) is exactly the
// intent's startCheckpoint and signs it with the owner's key.
func (s *CheckpointSigner) SignStart(ctx context.Context, in StartIntent, unsigned []byte) (*Signed, error) {
	data, err := checkpointABI.Pack(MethodStartCheckpoint, in.RevertIfNoBalance)
	if err != nil {
		return nil, intentErr("startCheckpoint: %v", err)
	}
	want, err := s.build(in.ChainID, in.TxChoices, in.Pod, data)
	if err != nil {
		return nil, err
	}
	d, err := decodeUnsigned(unsigned)
	if err != nil {
		return nil, err
	}
	if err := s.gate(want, d); err != nil {
		return nil, err
	}
	return s.sign(ctx, in.Owner, want)
}

// VerifyProofs checks a proofs transaction the staking service built (served: a type-2 unsigned
// transaction, either form) against the intent and the policy, and returns the call re-encoded
// from the proofs it carries: type 2, the policy's chain id, to the intent's pod, value 0, no
// access list, verifyCheckpointProofs decoded with go-ethereum's abi and nothing after its
// arguments, a balance container proof that leads to the checkpoint's beacon block root under
// EigenLayer's geometry for the checkpoint's fork (VerifyBalanceContainer, ProofVersionAt: the
// checkpoint timestamp against the EigenPodManager's Pectra fork timestamp, which must agree with
// PectraForkTimestamps for a known chain), 1 to min(proofs remaining, the policy's cap) proofs of
// distinct validators, each of BalanceProofLength bytes, the service's gas and
// fees under the policy's caps. The intent's choices (nonce, gas, fees) are not checked here:
// SignProofs does, and signs them, not the service's.
func (s *CheckpointSigner) VerifyProofs(in ProofsIntent, served []byte) (*ProofsVerified, error) {
	d, err := decodeUnsigned(served)
	if err != nil {
		return nil, err
	}
	tx := d.tx
	if want := new(big.Int).SetUint64(s.policy.ChainID); tx.ChainId().Cmp(want) != 0 {
		return nil, mismatch("chainId", want.String()+" (the policy's chain)", tx.ChainId().String())
	}
	if tx.To() == nil {
		return nil, mismatch("to", in.Pod.Hex()+" (the owner's pod)", "none (contract creation)")
	}
	if *tx.To() != in.Pod {
		return nil, mismatch("to", in.Pod.Hex()+" (the owner's pod)", tx.To().Hex())
	}
	if tx.Value().Sign() != 0 {
		return nil, mismatch("value", "0 wei", wei(tx.Value()))
	}
	if n := len(tx.AccessList()); n != 0 {
		return nil, mismatch("access list", "empty", fmt.Sprintf("%d entries", n))
	}
	if tx.Gas() > s.policy.MaxGasLimit {
		return nil, mismatch("gas limit", fmt.Sprintf("at most %d (the policy's cap)", s.policy.MaxGasLimit), fmt.Sprint(tx.Gas()))
	}
	if tx.GasFeeCap().Cmp(s.policy.MaxFeePerGas) > 0 {
		return nil, mismatch("maxFeePerGas", "at most "+gwei(s.policy.MaxFeePerGas)+" (the policy's cap)", gwei(tx.GasFeeCap()))
	}
	method := checkpointABI.Methods[MethodVerifyCheckpointProofs]
	data := tx.Data()
	if len(data) < 4 || !bytes.Equal(data[:4], method.ID) {
		got := fmt.Sprintf("%d bytes of calldata", len(data))
		if len(data) >= 4 {
			got = hexutil.Encode(data[:4])
		}
		return nil, mismatch("selector", fmt.Sprintf("%s (%s)", method.Name, hexutil.Encode(method.ID)), got)
	}
	args, err := method.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, mismatch("arguments of "+method.Name, method.Sig, fmt.Sprintf("%d bytes that do not decode: %v", len(data)-4, err))
	}
	container := *abi.ConvertType(args[0], new(BalanceContainerProof)).(*BalanceContainerProof)
	proofs := *abi.ConvertType(args[1], new([]BalanceProof)).(*[]BalanceProof)
	version, err := s.proofVersion(in)
	if err != nil {
		return nil, err
	}
	if !VerifyBalanceContainer(version, in.CheckpointRoot, container.BalanceContainerRoot, container.Proof) {
		return nil, mismatch("checkpoint root", fmt.Sprintf("%s (the pod's current checkpoint's beacon block root), by a %s balance container proof of %d bytes",
			in.CheckpointRoot.Hex(), version, version.BalanceContainerProofLength()),
			fmt.Sprintf("a balance container proof of %s (%d bytes) that does not lead to it", common.Hash(container.BalanceContainerRoot).Hex(), len(container.Proof)))
	}
	limit := min(in.ProofsRemaining, uint64(s.policy.MaxProofsPerBatch))
	if n := uint64(len(proofs)); n == 0 || n > limit {
		return nil, mismatch("proofs", fmt.Sprintf("1 to %d (proofs remaining %d, the policy's cap %d)", limit, in.ProofsRemaining, s.policy.MaxProofsPerBatch), fmt.Sprint(n))
	}
	seen := map[[32]byte]bool{}
	for i, p := range proofs {
		if seen[p.PubkeyHash] {
			return nil, mismatch("proofs", "one per validator", fmt.Sprintf("validator %s twice (proof %d)", common.Hash(p.PubkeyHash).Hex(), i))
		}
		seen[p.PubkeyHash] = true
		if len(p.Proof) != BalanceProofLength {
			return nil, mismatch("balance proof", fmt.Sprintf("%d bytes (BALANCE_TREE_HEIGHT %d + 1 siblings)", BalanceProofLength, BalanceTreeHeight),
				fmt.Sprintf("%d bytes (proof %d)", len(p.Proof), i))
		}
	}
	// The expected call, re-encoded from what was decoded: the received calldata must be it.
	expected, err := checkpointABI.Pack(MethodVerifyCheckpointProofs, container, proofs)
	if err != nil {
		return nil, mismatch("arguments of "+method.Name, "re-encodable", err.Error())
	}
	if !bytes.Equal(expected, data) {
		return nil, mismatch("calldata", fmt.Sprintf("%d bytes (the canonical encoding of %s)", len(expected), method.Sig), fmt.Sprintf("%d bytes that differ", len(data)))
	}
	hashes := make([]common.Hash, len(proofs))
	for i, p := range proofs {
		hashes[i] = p.PubkeyHash
	}
	return &ProofsVerified{Proofs: len(proofs), Data: expected, Version: version, PubkeyHashes: hashes}, nil
}

// SignProofs verifies served (VerifyProofs) and signs, with the submitter's key, the transaction
// stakeflow expects: the re-encoded call to the pod under the intent's nonce, gas and fees.
func (s *CheckpointSigner) SignProofs(ctx context.Context, in ProofsIntent, served []byte) (*Signed, error) {
	v, err := s.VerifyProofs(in, served)
	if err != nil {
		return nil, err
	}
	want, err := s.build(in.ChainID, in.TxChoices, in.Pod, v.Data)
	if err != nil {
		return nil, err
	}
	return s.sign(ctx, in.Submitter, want)
}

// proofVersion is the geometry the pod checks the intent's checkpoint with: its timestamp against
// the EigenPodManager's Pectra fork timestamp, which must agree with the catalogue for a known
// chain.
func (s *CheckpointSigner) proofVersion(in ProofsIntent) (ProofVersion, error) {
	if in.CheckpointTimestamp == 0 {
		return 0, intentErr("no checkpoint timestamp")
	}
	if err := CheckPectraForkTimestamp(s.policy.ChainID, in.PectraForkTimestamp); err != nil {
		return 0, intentErr("%v", err)
	}
	return ProofVersionAt(in.CheckpointTimestamp, in.PectraForkTimestamp)
}

func (s *CheckpointSigner) gate(want *types.Transaction, d *decoded) error {
	return (&Signer{}).gate(want, d)
}

func (s *CheckpointSigner) sign(ctx context.Context, from common.Address, tx *types.Transaction) (*Signed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	acct, err := account(s.keys, from)
	if err != nil {
		return nil, err
	}
	return signTx(ctx, s.keys, acct, from, tx)
}

// ServedFields are the fields endpoint 5 answers beside serializeTx, as the spec lists them
// ("Serialized EVM transaction": every field a string). Numbers may be decimal or 0x hex.
type ServedFields struct {
	To                   string
	GasLimit             string
	Data                 string
	Value                string
	ChainID              string
	Type                 string
	MaxFeePerGas         string
	MaxPriorityFeePerGas string
}

// ContradictionError reports an answer of the service that contradicts itself: one of its
// separate fields says another thing than its serializeTx. It wraps ErrVerification: such an
// answer is refused whole, never trusted in part.
type ContradictionError struct {
	// Field is the field's name in the answer ("to", "gasLimit", ...).
	Field string
	// Said is the field's value as answered; Serialized is the same field in serializeTx.
	Said, Serialized string
}

// Error names the field and both values.
func (e *ContradictionError) Error() string {
	return fmt.Sprintf("%s: the answer contradicts itself: its field %s is %s while its serializeTx's %s is %s",
		ErrVerification.Error(), e.Field, e.Said, e.Field, e.Serialized)
}

// Is reports whether target is ErrVerification.
func (e *ContradictionError) Is(target error) bool { return target == ErrVerification }

// CheckServedFields checks that every separate field of an endpoint 5 answer says what its
// serializeTx (served, a type-2 unsigned transaction, either form) says: to, gasLimit, data,
// value, chainId, type, maxFeePerGas and maxPriorityFeePerGas. A field absent or unreadable, or
// another value than serializeTx's, is a *ContradictionError naming the field and both values:
// the whole answer is refused, whichever part of it would pass verification.
func CheckServedFields(served []byte, f ServedFields) error {
	d, err := decodeUnsigned(served)
	if err != nil {
		return err
	}
	tx := d.tx
	to := "none (contract creation)"
	if tx.To() != nil {
		to = tx.To().Hex()
	}
	if a, ok := fieldAddress(f.To); !ok || tx.To() == nil || a != *tx.To() {
		return contradiction("to", f.To, to)
	}
	if b, ok := fieldBytes(f.Data); !ok || !bytes.Equal(b, tx.Data()) {
		return &ContradictionError{Field: "data", Said: describeData(f.Data, b, ok), Serialized: describeData("", tx.Data(), true)}
	}
	for _, c := range []struct {
		name, said string
		want       *big.Int
	}{
		{"value", f.Value, tx.Value()},
		{"chainId", f.ChainID, tx.ChainId()},
		{"gasLimit", f.GasLimit, new(big.Int).SetUint64(tx.Gas())},
		{"type", f.Type, big.NewInt(int64(tx.Type()))},
		{"maxFeePerGas", f.MaxFeePerGas, tx.GasFeeCap()},
		{"maxPriorityFeePerGas", f.MaxPriorityFeePerGas, tx.GasTipCap()},
	} {
		if v, ok := fieldNumber(c.said); !ok || v.Cmp(c.want) != 0 {
			return contradiction(c.name, c.said, c.want.String())
		}
	}
	return nil
}

func contradiction(field, said, serialized string) error {
	if strings.TrimSpace(said) == "" {
		said = "absent"
	} else {
		said = fmt.Sprintf("%q", said)
	}
	return &ContradictionError{Field: field, Said: said, Serialized: serialized}
}

// fieldAddress reads a 0x-hex address.
func fieldAddress(s string) (common.Address, bool) {
	if !common.IsHexAddress(s) || !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
		return common.Address{}, false
	}
	return common.HexToAddress(s), true
}

// fieldBytes reads 0x-hex bytes ("0x" is none).
func fieldBytes(s string) ([]byte, bool) {
	b, err := hexutil.Decode(s)
	if err != nil && s != "0x" {
		return nil, false
	}
	return b, true
}

// fieldNumber reads a non-negative integer, decimal or 0x hex.
func fieldNumber(s string) (*big.Int, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	base := 10
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		s, base = h, 16
	}
	v, ok := new(big.Int).SetString(s, base)
	if !ok || v.Sign() < 0 || strings.HasPrefix(s, "+") {
		return nil, false
	}
	return v, true
}

// describeData names calldata by its size, selector and Keccak-256 (it may be kilobytes long);
// raw is the field as answered when it does not read (ok false).
func describeData(raw string, b []byte, ok bool) string {
	switch {
	case !ok && strings.TrimSpace(raw) == "":
		return "absent"
	case !ok:
		if len(raw) > 20 {
			raw = raw[:20] + "..."
		}
		return fmt.Sprintf("%q (not 0x hex)", raw)
	case len(b) == 0:
		return "empty (0 bytes)"
	}
	sel := b
	if len(sel) > 4 {
		sel = sel[:4]
	}
	return fmt.Sprintf("%d bytes starting %s (keccak256 %s)", len(b), hexutil.Encode(sel), crypto.Keccak256Hash(b).Hex())
}
