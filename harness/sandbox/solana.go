package sandbox

import (
	"github.com/stakeflow/stakeflow/chain/networks"

	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"
	"github.com/mr-tron/base58"
	"go.uber.org/zap"
)

// defaultMinDelegation is used when the stake program's minimum delegation
// cannot be read from the runtime (1 SOL, the value with every feature on).
const defaultMinDelegation uint64 = 1_000_000_000

// hostileExtraLamports is what other-amount adds to a stake or takes off a
// withdrawal, and what lamports-to-stranger sends away.
const hostileExtraLamports uint64 = 1_000_000

// solanaNetworks are the network values of the unified Solana endpoints.
var solanaNetworks = networks.Solana.Names()

// unifiedCommon is the part of every unified request body.
type unifiedCommon struct {
	Chain   string
	Network string
	Staker  solana.PublicKey
}

// readUnified checks chain, network and stakerAddress; more adds the
// endpoint's own field checks. Field errors are reported together, then
// the chain, then the network, then the staker address.
func readUnified(r *http.Request, more func(b jsonBody, errs *[]fieldError)) (jsonBody, unifiedCommon, *apiError) {
	var uc unifiedCommon
	b, aerr := readBody(r)
	if aerr != nil {
		return b, uc, aerr
	}
	var errs []fieldError
	chain, _ := b.str("chain", true, &errs)
	network, _ := b.str("network", true, &errs)
	staker, _ := b.str("stakerAddress", true, &errs)
	if more != nil {
		more(b, &errs)
	}
	if len(errs) > 0 {
		return b, uc, validation(errs...)
	}
	if aerr := checkChain(chain); aerr != nil {
		return b, uc, aerr
	}
	if !contains(solanaNetworks, network) {
		return b, uc, invalidField("network", "isIn", "network must be one of the following values: %s", strings.Join(solanaNetworks, ", "))
	}
	pk, err := solana.PublicKeyFromBase58(staker)
	if err != nil {
		return b, uc, invalidDelegator("stakerAddress", staker, "solana")
	}
	return b, unifiedCommon{Chain: chain, Network: network, Staker: pk}, nil
}

// checkChain accepts "solana" only: other chains of the supported list have
// no unified transaction building in the sandbox.
func checkChain(chain string) *apiError {
	if chain == "solana" {
		return nil
	}
	if !contains(supportedNetworks, chain) {
		return networkNotInList(chain)
	}
	return invalidField("chain", "isIn", "chain must be one of the following values: solana (the unified interface of this service builds Solana transactions only)")
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// unsignedTxResult is the unified unsigned-transaction result.
type unsignedTxResult struct {
	Amount                  *uint64 `json:"amount,omitempty"`
	StakerAddress           string  `json:"stakerAddress"`
	UnsignedTransactionData string  `json:"unsignedTransactionData"`
	CreatedAt               string  `json:"createdAt"`
	ExtraData               any     `json:"extraData"`
}

// stakeExtraData is the extraData of a stake result.
type stakeExtraData struct {
	Network           string `json:"network"`
	FeePayer          string `json:"feePayer"`
	FromPublicKey     string `json:"fromPublicKey"`
	StakeAuthority    string `json:"stakeAuthority"`
	WithdrawAuthority string `json:"withdrawAuthority"`
	VoteAccount       string `json:"voteAccount"`
}

// unstakeExtraData is the extraData of an unstake result.
type unstakeExtraData struct {
	Network        string `json:"network"`
	FeePayer       string `json:"feePayer"`
	StakeAuthority string `json:"stakeAuthority"`
}

// withdrawExtraData is the extraData of a withdraw result.
type withdrawExtraData struct {
	Network           string `json:"network"`
	FeePayer          string `json:"feePayer"`
	WithdrawAuthority string `json:"withdrawAuthority"`
	Recipient         string `json:"recipient"`
	Amount            uint64 `json:"amount"`
}

// broadcastExtraData is the extraData of a unified broadcast result.
type broadcastExtraData struct {
	TransactionID  string   `json:"transactionId"`
	Slot           uint64   `json:"slot"`
	SignerAccounts []string `json:"signerAccounts"`
	CreatedAt      string   `json:"createdAt"`
}

func runtimeError(what string, err error) *apiError {
	return internalError(fmt.Sprintf("Solana runtime: %s: %v", what, err))
}

// stranger returns a fresh address nobody asked for.
func stranger() solana.PublicKey { return solana.NewWallet().PublicKey() }

// newSeed returns a fresh stake-account seed of 24 characters.
func newSeed() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "sandbox-" + hex.EncodeToString(b[:])
}

// otherVoteAccount is a vote account other than v.
func (s *server) otherVoteAccount(v solana.PublicKey) solana.PublicKey {
	for _, list := range [][]solana.PublicKey{s.rt.VoteAccounts(), s.rt.DelinquentVoteAccounts()} {
		for _, o := range list {
			if !o.Equals(v) {
				return o
			}
		}
	}
	return stranger()
}

// minimumStake is the rent-exempt reserve of a stake account plus the stake
// program's minimum delegation.
func (s *server) minimumStake(ctx context.Context) (uint64, error) {
	rent, err := s.rpc.GetMinimumBalanceForRentExemption(ctx, stakeStateSize, rpc.CommitmentConfirmed)
	if err != nil {
		return 0, err
	}
	return rent + s.minimumDelegation(ctx), nil
}

// minimumDelegation reads the stake program's minimum delegation once by
// simulating GetMinimumDelegation; it falls back to defaultMinDelegation.
func (s *server) minimumDelegation(ctx context.Context) uint64 {
	s.mu.Lock()
	v := s.minDelegation
	s.mu.Unlock()
	if v != 0 {
		return v
	}
	v = defaultMinDelegation
	if got, err := s.queryMinimumDelegation(ctx); err == nil && got > 0 {
		v = got
	} else {
		s.log.Info("stake minimum delegation not readable from the runtime; using the default",
			zap.Uint64("lamports", v), zap.Error(err))
	}
	s.mu.Lock()
	s.minDelegation = v
	s.mu.Unlock()
	return v
}

func (s *server) queryMinimumDelegation(ctx context.Context) (uint64, error) {
	bh, err := s.rpc.GetLatestBlockhash(ctx, rpc.CommitmentFinalized)
	if err != nil {
		return 0, err
	}
	payer := stranger()
	_, raw, err := unsignedTx(payer, bh.Value.Blockhash, getMinimumDelegationIx())
	if err != nil {
		return 0, err
	}
	var out struct {
		Value struct {
			Err        any `json:"err"`
			ReturnData *struct {
				Data []string `json:"data"`
			} `json:"returnData"`
		} `json:"value"`
	}
	err = s.rpc.RPCCallForInto(ctx, &out, "simulateTransaction", []any{
		base64.StdEncoding.EncodeToString(raw),
		map[string]any{"encoding": "base64", "sigVerify": false, "replaceRecentBlockhash": true},
	})
	if err != nil {
		return 0, err
	}
	if out.Value.ReturnData == nil || len(out.Value.ReturnData.Data) == 0 {
		return 0, errors.New("simulation returned no return data")
	}
	b, err := base64.StdEncoding.DecodeString(out.Value.ReturnData.Data[0])
	if err != nil || len(b) < 8 {
		return 0, errors.New("simulation return data is not a u64")
	}
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, nil
}

// blockhash is the runtime's latest blockhash.
func (s *server) blockhash(ctx context.Context) (solana.Hash, *apiError) {
	bh, err := s.rpc.GetLatestBlockhash(ctx, rpc.CommitmentFinalized)
	if err != nil {
		return solana.Hash{}, runtimeError("getLatestBlockhash", err)
	}
	return bh.Value.Blockhash, nil
}

// stake builds a CreateAccountWithSeed + Initialize + DelegateStake
// transaction (endpoint 10).
func (s *server) stake(r *http.Request, _ *reqContext) (any, *apiError) {
	var amountStr string
	_, uc, aerr := readUnified(r, func(b jsonBody, errs *[]fieldError) {
		amountStr, _ = b.str("amount", true, errs)
	})
	if aerr != nil {
		return nil, aerr
	}
	var errs []fieldError
	amount, ok := lamportsField("amount", amountStr, &errs)
	if !ok {
		return nil, validation(errs...)
	}
	mode := s.hostile.get()
	if res, ok := s.replayed(mode, uc.Staker, EndpointStake); ok {
		return res, nil
	}
	ctx := r.Context()
	minimum, err := s.minimumStake(ctx)
	if err != nil {
		return nil, runtimeError("getMinimumBalanceForRentExemption", err)
	}
	if amount < minimum {
		return nil, invalidField("amount", "min",
			"amount must be at least %d lamports (rent-exempt reserve of a stake account plus the minimum delegation)", minimum)
	}
	vote, aerr := s.stakeVoteAccount(ctx, mode)
	if aerr != nil {
		return nil, aerr
	}
	seed := newSeed()
	stakeAcc, err := solana.CreateWithSeed(uc.Staker, seed, solana.StakeProgramID)
	if err != nil {
		return nil, internalError("derive stake account: " + err.Error())
	}
	bh, aerr := s.blockhash(ctx)
	if aerr != nil {
		return nil, aerr
	}

	feePayer, fund, delegateTo, lockup := uc.Staker, amount, vote, stakeLockup{}
	switch mode {
	case HostileOtherFeePayer:
		feePayer = stranger()
	case HostileOtherAmount:
		fund = amount + hostileExtraLamports
	case HostileOtherVoteAccount:
		delegateTo = s.otherVoteAccount(vote)
	case HostileLockup:
		lockup = stakeLockup{UnixTimestamp: hostileLockupUnix, Epoch: hostileLockupEpoch, Custodian: uc.Staker}
	}
	ixs := make([]solana.Instruction, 0, 4)
	for _, build := range []func() (solana.Instruction, error){
		func() (solana.Instruction, error) { return createStakeAccountIx(uc.Staker, stakeAcc, seed, fund) },
		func() (solana.Instruction, error) { return initializeIx(stakeAcc, uc.Staker, uc.Staker, lockup) },
		func() (solana.Instruction, error) { return delegateIx(stakeAcc, delegateTo, uc.Staker) },
	} {
		ix, err := build()
		if err != nil {
			return nil, internalError(err.Error())
		}
		ixs = append(ixs, ix)
	}
	data, apiErr := hostileUnsigned(mode, feePayer, uc.Staker, stakeAcc, bh, ixs...)
	if apiErr != nil {
		return nil, apiErr
	}
	now := s.now()
	s.mu.Lock()
	s.stakes = append(s.stakes, &builtStake{Address: stakeAcc, Staker: uc.Staker, Seed: seed, Vote: vote, Lamports: amount, CreatedAt: now})
	s.mu.Unlock()
	s.log.Info("stake transaction built", zap.String("staker", uc.Staker.String()),
		zap.String("stakeAccount", stakeAcc.String()), zap.Uint64("lamports", amount), zap.String("hostile", string(mode)))
	return s.remember(uc.Staker, EndpointStake, unsignedTxResult{
		Amount:                  &amount,
		StakerAddress:           uc.Staker.String(),
		UnsignedTransactionData: data,
		CreatedAt:               formatTime(now),
		ExtraData: stakeExtraData{
			Network: uc.Network, FeePayer: uc.Staker.String(), FromPublicKey: uc.Staker.String(),
			StakeAuthority: uc.Staker.String(), WithdrawAuthority: uc.Staker.String(), VoteAccount: vote.String(),
		},
	}), nil
}

// unstake builds a Deactivate transaction for extra.stakeAccount (endpoint 11).
func (s *server) unstake(r *http.Request, _ *reqContext) (any, *apiError) {
	var amountStr, accStr string
	_, uc, aerr := readUnified(r, func(b jsonBody, errs *[]fieldError) {
		if extra, ok := b.object("extra", true, errs); ok {
			amountStr, _ = extra.str("amount", true, errs)
			accStr, _ = extra.str("stakeAccount", true, errs)
		}
	})
	if aerr != nil {
		return nil, aerr
	}
	var errs []fieldError
	amount, amountOK := lamportsField("extra.amount", amountStr, &errs)
	stakeAcc, err := solana.PublicKeyFromBase58(accStr)
	if err != nil {
		errs = append(errs, fieldErr("extra.stakeAccount", "isSolanaAddress", "extra.stakeAccount must be a base58 Solana address"))
	}
	if len(errs) > 0 || !amountOK {
		return nil, validation(errs...)
	}
	mode := s.hostile.get()
	if res, ok := s.replayed(mode, uc.Staker, EndpointUnstake); ok {
		return res, nil
	}
	ctx := r.Context()
	info, err := s.rpc.GetAccountInfoWithOpts(ctx, stakeAcc, &rpc.GetAccountInfoOpts{Commitment: rpc.CommitmentConfirmed})
	if errors.Is(err, rpc.ErrNotFound) || (err == nil && (info == nil || info.Value == nil)) {
		return nil, invalidField("extra.stakeAccount", "exists", "stake account %s does not exist", stakeAcc)
	}
	if err != nil {
		return nil, runtimeError("getAccountInfo", err)
	}
	if !info.Value.Owner.Equals(solana.StakeProgramID) {
		return nil, invalidField("extra.stakeAccount", "isStakeAccount", "%s is not a stake account (owner %s)", stakeAcc, info.Value.Owner)
	}
	st, err := decodeStakeState(info.Value.Data.GetBinary())
	if err != nil {
		return nil, invalidField("extra.stakeAccount", "isStakeAccount", "%s is not a readable stake account: %v", stakeAcc, err)
	}
	if st.State != stakeStateStake {
		return nil, invalidField("extra.stakeAccount", "isDelegated", "stake account %s is not delegated", stakeAcc)
	}
	if !st.Staker.Equals(uc.Staker) {
		return nil, invalidField("extra.stakeAccount", "stakeAuthority", "the stake authority of %s is not stakerAddress", stakeAcc)
	}
	if !st.delegated() {
		return nil, invalidField("extra.stakeAccount", "notDeactivating", "stake account %s is already deactivating (epoch %d)", stakeAcc, st.DeactivationEpoch)
	}
	if amount != info.Value.Lamports {
		return nil, invalidField("extra.amount", "equals",
			"extra.amount must equal the %d lamports of stake account %s: partial unstake is not offered", info.Value.Lamports, stakeAcc)
	}
	bh, aerr := s.blockhash(ctx)
	if aerr != nil {
		return nil, aerr
	}
	feePayer, target := uc.Staker, stakeAcc
	switch mode {
	case HostileOtherFeePayer:
		feePayer = stranger()
	case HostileOtherStakeAccount:
		target = s.otherStakeAccount(uc.Staker, stakeAcc)
	}
	ix, err := deactivateIx(target, uc.Staker)
	if err != nil {
		return nil, internalError(err.Error())
	}
	data, apiErr := hostileUnsigned(mode, feePayer, uc.Staker, stakeAcc, bh, ix)
	if apiErr != nil {
		return nil, apiErr
	}
	s.log.Info("unstake transaction built", zap.String("staker", uc.Staker.String()),
		zap.String("stakeAccount", stakeAcc.String()), zap.String("hostile", string(mode)))
	return s.remember(uc.Staker, EndpointUnstake, unsignedTxResult{
		StakerAddress:           uc.Staker.String(),
		UnsignedTransactionData: data,
		CreatedAt:               formatTime(s.now()),
		ExtraData:               unstakeExtraData{Network: uc.Network, FeePayer: uc.Staker.String(), StakeAuthority: uc.Staker.String()},
	}), nil
}

// hostileUnsigned assembles the unsigned transaction of ixs paid by feePayer, with what the
// hostile mode puts before and after them and does to the message, and returns it
// base64-encoded. stakeAcc is the stake account the transaction is about.
func hostileUnsigned(mode HostileMode, feePayer, staker, stakeAcc solana.PublicKey, bh solana.Hash, ixs ...solana.Instruction) (string, *apiError) {
	head, err := hostileHead(mode)
	if err != nil {
		return "", internalError(err.Error())
	}
	tail, err := hostileTail(mode, staker, stakeAcc)
	if err != nil {
		return "", internalError(err.Error())
	}
	all := append(append(head, ixs...), tail...)
	tx, raw, err := unsignedTx(feePayer, bh, all...)
	if err != nil {
		return "", internalError(err.Error())
	}
	if mode == HostileReadonlyWritable {
		if err := demoteToReadonly(&tx.Message, stakeAcc); err != nil {
			return "", internalError(err.Error())
		}
		if raw, err = tx.MarshalBinary(); err != nil {
			return "", internalError("sandbox: encode transaction: " + err.Error())
		}
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}

// hostileHead is what a hostile mode puts before the staking instructions:
// a compute budget that makes the fee heavy.
func hostileHead(mode HostileMode) ([]solana.Instruction, error) {
	if mode != HostileFeeHeavy {
		return nil, nil
	}
	limit, err := computeUnitLimitIx(hostileComputeUnitLimit)
	if err != nil {
		return nil, err
	}
	price, err := computeUnitPriceIx(hostileComputeUnitPrice)
	if err != nil {
		return nil, err
	}
	return []solana.Instruction{limit, price}, nil
}

// hostileTail is what a hostile mode appends to a transaction: a transfer to
// a stranger, or a stake Authorize handing stakeAcc's stake authority to one.
func hostileTail(mode HostileMode, staker, stakeAcc solana.PublicKey) ([]solana.Instruction, error) {
	switch mode {
	case HostileLamportsToStranger:
		ix, err := transferIx(staker, stranger(), hostileExtraLamports)
		if err != nil {
			return nil, err
		}
		return []solana.Instruction{ix}, nil
	case HostileExtraInstruction:
		return []solana.Instruction{authorizeIx(stakeAcc, staker, stranger(), stakeAuthorizeStaker)}, nil
	}
	return nil, nil
}

// otherStakeAccount is another stake account of staker than not, or a
// stranger's address.
func (s *server) otherStakeAccount(staker, not solana.PublicKey) solana.PublicKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.stakes {
		if b.Staker.Equals(staker) && !b.Address.Equals(not) {
			return b.Address
		}
	}
	return stranger()
}

// withdraw builds a stake Withdraw of a fully inactive stake account of the
// staker holding exactly extra.amount (endpoint 12).
func (s *server) withdraw(r *http.Request, _ *reqContext) (any, *apiError) {
	var amountStr string
	_, uc, aerr := readUnified(r, func(b jsonBody, errs *[]fieldError) {
		if extra, ok := b.object("extra", true, errs); ok {
			amountStr, _ = extra.str("amount", true, errs)
		}
	})
	if aerr != nil {
		return nil, aerr
	}
	var errs []fieldError
	amount, ok := lamportsField("extra.amount", amountStr, &errs)
	if !ok {
		return nil, validation(errs...)
	}
	mode := s.hostile.get()
	if res, ok := s.replayed(mode, uc.Staker, EndpointWithdraw); ok {
		return res, nil
	}
	ctx := r.Context()
	stakeAcc, aerr := s.findInactive(ctx, uc.Staker, amount)
	if aerr != nil {
		return nil, aerr
	}
	bh, aerr := s.blockhash(ctx)
	if aerr != nil {
		return nil, aerr
	}
	feePayer, target, recipient, lamports := uc.Staker, stakeAcc, uc.Staker, amount
	switch mode {
	case HostileOtherFeePayer:
		feePayer = stranger()
	case HostileOtherStakeAccount:
		target = s.otherStakeAccount(uc.Staker, stakeAcc)
	case HostileOtherRecipient:
		recipient = stranger()
	case HostileOtherAmount:
		if lamports > hostileExtraLamports {
			lamports -= hostileExtraLamports
		} else {
			lamports--
		}
	}
	ix, err := withdrawIx(target, recipient, uc.Staker, lamports)
	if err != nil {
		return nil, internalError(err.Error())
	}
	data, apiErr := hostileUnsigned(mode, feePayer, uc.Staker, stakeAcc, bh, ix)
	if apiErr != nil {
		return nil, apiErr
	}
	s.log.Info("withdraw transaction built", zap.String("staker", uc.Staker.String()),
		zap.String("stakeAccount", stakeAcc.String()), zap.Uint64("lamports", amount), zap.String("hostile", string(mode)))
	return s.remember(uc.Staker, EndpointWithdraw, unsignedTxResult{
		Amount:                  &amount,
		StakerAddress:           uc.Staker.String(),
		UnsignedTransactionData: data,
		CreatedAt:               formatTime(s.now()),
		ExtraData: withdrawExtraData{Network: uc.Network, FeePayer: uc.Staker.String(),
			WithdrawAuthority: uc.Staker.String(), Recipient: uc.Staker.String(), Amount: amount},
	}), nil
}

// findInactive returns the oldest stake account built for staker that is
// fully inactive on chain and holds exactly amount lamports.
func (s *server) findInactive(ctx context.Context, staker solana.PublicKey, amount uint64) (solana.PublicKey, *apiError) {
	s.mu.Lock()
	var candidates []solana.PublicKey
	for _, b := range s.stakes {
		if b.Staker.Equals(staker) {
			candidates = append(candidates, b.Address)
		}
	}
	s.mu.Unlock()
	none := invalidField("extra.amount", "inactiveStakeAccount",
		"no inactive stake account of stakerAddress holds exactly %d lamports", amount)
	if len(candidates) == 0 {
		return solana.PublicKey{}, none
	}
	epoch, err := s.rpc.GetEpochInfo(ctx, rpc.CommitmentConfirmed)
	if err != nil {
		return solana.PublicKey{}, runtimeError("getEpochInfo", err)
	}
	accs, err := s.rpc.GetMultipleAccountsWithOpts(ctx, candidates, &rpc.GetMultipleAccountsOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil {
		return solana.PublicKey{}, runtimeError("getMultipleAccounts", err)
	}
	for i, acc := range accs.Value {
		if acc == nil || acc.Lamports != amount || !acc.Owner.Equals(solana.StakeProgramID) {
			continue
		}
		st, err := decodeStakeState(acc.Data.GetBinary())
		if err != nil || !st.Withdrawer.Equals(staker) || !st.inactiveAt(epoch.Epoch) {
			continue
		}
		return candidates[i], nil
	}
	return solana.PublicKey{}, none
}

// broadcast submits a signed transaction to the runtime (endpoint 13).
func (s *server) broadcast(r *http.Request, rc *reqContext) (any, *apiError) {
	var signed string
	_, _, aerr := readUnified(r, func(b jsonBody, errs *[]fieldError) {
		signed, _ = b.str("signedTransaction", true, errs)
	})
	if aerr != nil {
		return nil, aerr
	}
	raw, tx, err := decodeSolanaTx(signed)
	if err != nil {
		return nil, txRejected("InvalidTransaction", "signedTransaction: "+err.Error())
	}
	sig := tx.Signatures[0]
	s.mu.Lock()
	if s.broadcasts[sig.String()] == 0 {
		s.broadcastOrder = append(s.broadcastOrder, sig.String())
	}
	s.broadcasts[sig.String()]++
	s.mu.Unlock()
	if aerr := checkSignatures(tx); aerr != nil {
		return nil, aerr
	}
	if s.faults.refused(sig.String()) {
		s.log.Info("injected fault", zap.String("fault", "broadcastLoseThenRefuse"), zap.String("txSig", sig.String()))
		return nil, txRejected("InstructionError", loseThenRefuseMessage)
	}
	ctx := r.Context()
	if s.faults.dropped() {
		s.log.Info("injected fault", zap.String("fault", "broadcastDropped"), zap.String("txSig", sig.String()))
		slot, err := s.rpc.GetSlot(ctx, rpc.CommitmentProcessed)
		if err != nil {
			return nil, runtimeError("getSlot", err)
		}
		return map[string]any{"extraData": broadcastExtraData{
			TransactionID: sig.String(), Slot: slot, SignerAccounts: []string{tx.Message.AccountKeys[0].String()}, CreatedAt: formatTime(s.now()),
		}}, nil
	}
	got, err := s.rpc.SendRawTransactionWithOpts(ctx, raw, rpc.TransactionOpts{PreflightCommitment: rpc.CommitmentConfirmed})
	if err != nil {
		return nil, classifySendError(err)
	}
	if !rc.fault.lost {
		rc.fault.lost, rc.fault.lostDrop = s.faults.loseThenRefuse(sig.String())
	}
	slot, err := s.landedSlot(ctx, got)
	if err != nil {
		return nil, runtimeError("getSignatureStatuses", err)
	}
	signers := make([]string, 0, tx.Message.Header.NumRequiredSignatures)
	for i := 0; i < int(tx.Message.Header.NumRequiredSignatures) && i < len(tx.Message.AccountKeys); i++ {
		signers = append(signers, tx.Message.AccountKeys[i].String())
	}
	s.log.Info("transaction broadcast", zap.String("txSig", got.String()), zap.Uint64("slot", slot))
	return map[string]any{"extraData": broadcastExtraData{
		TransactionID: got.String(), Slot: slot, SignerAccounts: signers, CreatedAt: formatTime(s.now()),
	}}, nil
}

// landedSlot is the slot of a just-submitted signature (the current slot
// while the status is not yet visible).
func (s *server) landedSlot(ctx context.Context, sig solana.Signature) (uint64, error) {
	st, err := s.rpc.GetSignatureStatuses(ctx, true, sig)
	if err != nil {
		return 0, err
	}
	if len(st.Value) > 0 && st.Value[0] != nil {
		return st.Value[0].Slot, nil
	}
	return s.rpc.GetSlot(ctx, rpc.CommitmentProcessed)
}

// decodeSolanaTx reads a base64 (preferred) or base58 wire transaction.
func decodeSolanaTx(s string) ([]byte, *solana.Transaction, error) {
	s = strings.TrimSpace(s)
	var cands [][]byte
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		cands = append(cands, b)
	}
	if b, err := base58.Decode(s); err == nil && len(b) > 0 {
		cands = append(cands, b)
	}
	if len(cands) == 0 {
		return nil, nil, errUnknownEncoding
	}
	var lastErr error
	for _, b := range cands {
		tx, err := solana.TransactionFromBytes(b)
		if err != nil {
			lastErr = err
			continue
		}
		if len(tx.Signatures) == 0 || len(tx.Message.AccountKeys) == 0 {
			lastErr = errors.New("transaction has no signatures or no accounts")
			continue
		}
		return b, tx, nil
	}
	return nil, nil, fmt.Errorf("not a Solana wire transaction: %v", lastErr)
}

// checkSignatures verifies every required signature locally.
func checkSignatures(tx *solana.Transaction) *apiError {
	n := int(tx.Message.Header.NumRequiredSignatures)
	if len(tx.Signatures) != n {
		return txRejected("SignatureFailure", fmt.Sprintf("transaction carries %d signatures, %d are required", len(tx.Signatures), n))
	}
	msg, err := tx.Message.MarshalBinary()
	if err != nil {
		return txRejected("InvalidTransaction", "message cannot be encoded: "+err.Error())
	}
	for i := 0; i < n; i++ {
		key := tx.Message.AccountKeys[i]
		if tx.Signatures[i].IsZero() {
			return txRejected("SignatureFailure", "missing signature of "+key.String())
		}
		if !tx.Signatures[i].Verify(key, msg) {
			return txRejected("SignatureFailure", "invalid signature of "+key.String())
		}
	}
	return nil
}

// classifySendError maps a sendTransaction error to a rejection with a
// stable reason token.
func classifySendError(err error) *apiError {
	var rpcErr *jsonrpc.RPCError
	if !errors.As(err, &rpcErr) {
		return runtimeError("sendTransaction", err)
	}
	msg := rpcErr.Message
	if rpcErr.Data != nil {
		if b, err := json.Marshal(rpcErr.Data); err == nil && strings.Contains(string(b), "InstructionError") && !strings.Contains(msg, "nstruction") {
			msg += " " + string(b)
		}
	}
	lower := strings.ToLower(msg)
	switch {
	case rpcErr.Code == -32003 || strings.Contains(lower, "signature verification") || strings.Contains(lower, "signaturefailure"):
		return txRejected("SignatureFailure", msg)
	case strings.Contains(lower, "already been processed") || strings.Contains(lower, "alreadyprocessed"):
		return txRejected("AlreadyProcessed", msg)
	case strings.Contains(lower, "blockhash not found") || strings.Contains(lower, "blockhashnotfound"):
		return txRejected("BlockhashNotFound", msg)
	case strings.Contains(lower, "instruction"):
		return txRejected("InstructionError", msg)
	default:
		return txRejected("InvalidTransaction", msg)
	}
}

// validatorStatus answers the status of the queried vote accounts
// (endpoint 7).
func (s *server) validatorStatus(r *http.Request, _ *reqContext) (any, *apiError) {
	network := r.PathValue("network")
	if !contains(solanaNetworks, network) {
		return nil, invalidField("network", "isIn", "network must be one of the following values: %s", strings.Join(solanaNetworks, ", "))
	}
	param := r.URL.Query().Get("voteAccounts")
	if strings.TrimSpace(param) == "" {
		return nil, invalidField("voteAccounts", "isNotEmpty", "voteAccounts should not be empty (comma-separated vote account addresses)")
	}
	var keys []solana.PublicKey
	for _, part := range strings.Split(param, ",") {
		part = strings.TrimSpace(part)
		pk, err := solana.PublicKeyFromBase58(part)
		if err != nil {
			return nil, invalidField("voteAccounts", "isSolanaAddress", "voteAccounts holds %s, which is not a base58 Solana address", describe(part))
		}
		keys = append(keys, pk)
	}
	res, err := s.rpc.GetVoteAccounts(r.Context(), &rpc.GetVoteAccountsOpts{Commitment: rpc.CommitmentConfirmed})
	if err != nil {
		return nil, runtimeError("getVoteAccounts", err)
	}
	statuses := make(map[string]string, len(keys))
	for _, k := range keys {
		statuses[k.String()] = "unknown"
	}
	// In delinquent-validator mode the service covers for the validators it
	// hands out: a delinquent vote account is answered active.
	delinquent := "delinquent"
	if s.hostile.get() == HostileDelinquentValidator {
		delinquent = "active"
	}
	for _, v := range res.Delinquent {
		if _, ok := statuses[v.VotePubkey.String()]; ok {
			statuses[v.VotePubkey.String()] = delinquent
		}
	}
	for _, v := range res.Current {
		if _, ok := statuses[v.VotePubkey.String()]; ok {
			statuses[v.VotePubkey.String()] = "active"
		}
	}
	b, err := json.Marshal(statuses)
	if err != nil {
		return nil, internalError(err.Error())
	}
	return map[string]string{"statuses": string(b)}, nil
}

// nowFunc is the default clock.
func nowFunc() time.Time { return time.Now() }
