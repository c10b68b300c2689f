package solchain

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
	"github.com/gagliardetto/solana-go/rpc/jsonrpc"

	"github.com/stakeflow/stakeflow/chain/endpoint"
)

// RPC is the part of solana-go's *rpc.Client this package uses.
type RPC interface {
	GetSignatureStatuses(ctx context.Context, searchTransactionHistory bool, transactionSignatures ...solana.Signature) (*rpc.GetSignatureStatusesResult, error)
	GetBlockHeight(ctx context.Context, commitment rpc.CommitmentType) (uint64, error)
	IsBlockhashValid(ctx context.Context, blockHash solana.Hash, commitment rpc.CommitmentType) (*rpc.IsValidBlockhashResult, error)
	GetEpochInfo(ctx context.Context, commitment rpc.CommitmentType) (*rpc.GetEpochInfoResult, error)
	GetAccountInfoWithOpts(ctx context.Context, account solana.PublicKey, opts *rpc.GetAccountInfoOpts) (*rpc.GetAccountInfoResult, error)
	GetBalance(ctx context.Context, account solana.PublicKey, commitment rpc.CommitmentType) (*rpc.GetBalanceResult, error)
	GetGenesisHash(ctx context.Context) (solana.Hash, error)
	GetVoteAccounts(ctx context.Context, opts *rpc.GetVoteAccountsOpts) (*rpc.GetVoteAccountsResult, error)
	GetTransaction(ctx context.Context, txSig solana.Signature, opts *rpc.GetTransactionOpts) (*rpc.GetTransactionResult, error)
	GetMinimumBalanceForRentExemption(ctx context.Context, dataSize uint64, commitment rpc.CommitmentType) (uint64, error)
	// RPCCallForInto makes a call solana-go has no method for (getStakeMinimumDelegation).
	RPCCallForInto(ctx context.Context, out interface{}, method string, params []interface{}) error
}

var _ RPC = (*rpc.Client)(nil)

// Commitments used by the Client; see the package documentation for why.
const (
	// BlockHeightCommitment is used by BlockHeight.
	BlockHeightCommitment = rpc.CommitmentFinalized
	// BlockhashCommitment is used by IsBlockhashValid.
	BlockhashCommitment = rpc.CommitmentProcessed
	// ReadCommitment is used for epoch, account and balance reads.
	ReadCommitment = rpc.CommitmentConfirmed
)

// Client reads Solana state over JSON-RPC.
type Client struct {
	rpc      RPC
	endpoint string
}

// New returns a Client for the JSON-RPC endpoint URL. An HTTP 401 or 403 answer is an
// [*RPCError] that is not transient whatever its body says: a provider that refuses the
// endpoint's credentials does not change its mind when asked again.
func New(endpoint string) *Client {
	hc := refusalHTTP{&http.Client{Timeout: httpTimeout, Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	c := NewWithRPC(rpc.NewWithCustomRPCClient(jsonrpc.NewClientWithOpts(endpoint, &jsonrpc.RPCClientOpts{HTTPClient: hc})))
	c.endpoint = endpoint
	return c
}

// httpTimeout bounds one JSON-RPC exchange; callers' contexts usually end it sooner.
const httpTimeout = 2 * time.Minute

// refusalHTTP turns HTTP 401 and 403 answers into a *jsonrpc.HTTPError before solana-go reads
// the body: providers send a JSON-RPC error object with them, which would otherwise hide the
// status behind an error code of the provider's choosing.
type refusalHTTP struct{ *http.Client }

// Do implements jsonrpc.HTTPClient.
func (h refusalHTTP) Do(req *http.Request) (*http.Response, error) {
	resp, err := h.Client.Do(req)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return nil, jsonrpc.NewHTTPError(resp.StatusCode, fmt.Errorf("HTTP %s: the RPC provider refuses this endpoint's credentials", resp.Status))
}

// NewWithRPC returns a Client over r.
func NewWithRPC(r RPC) *Client {
	return &Client{rpc: r}
}

// Errors callers can test for with errors.Is.
var (
	// ErrAccountNotFound means the account does not exist (no lamports, no data).
	ErrAccountNotFound = errors.New("account not found")
	// ErrNotStakeAccount means the account is not owned by the stake program.
	ErrNotStakeAccount = errors.New("not a stake account")
	// ErrMalformedStakeAccount means stake account (or stake history) data does not decode.
	ErrMalformedStakeAccount = errors.New("malformed stake account data")
	// ErrInvalidArgument means an address, signature or blockhash argument does not parse.
	ErrInvalidArgument = errors.New("invalid argument")
)

// RPCError is a failed JSON-RPC call.
type RPCError struct {
	// Method is the JSON-RPC method called.
	Method string
	// Transient tells whether the same call may succeed later.
	Transient bool
	// Err is the underlying error.
	Err error

	endpoint string
}

// Error implements error, with any endpoint URL reduced to scheme and host.
func (e *RPCError) Error() string {
	kind := "permanent"
	if e.Transient {
		kind = "transient"
	}
	return fmt.Sprintf("solana rpc %s (%s): %s", e.Method, kind, endpoint.Redact(e.Err.Error(), e.endpoint))
}

// Unwrap returns the underlying error.
func (e *RPCError) Unwrap() error { return e.Err }

// IsTransient reports whether err is an RPC failure that may succeed when retried.
func IsTransient(err error) bool {
	var re *RPCError
	return errors.As(err, &re) && re.Transient
}

func (c *Client) wrap(method string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &RPCError{Method: method, Transient: errors.Is(err, context.DeadlineExceeded), Err: err, endpoint: c.endpoint}
	}
	return &RPCError{Method: method, Transient: transient(err), Err: err, endpoint: c.endpoint}
}

// transient classifies an error from solana-go's JSON-RPC client.
func transient(err error) bool {
	var he *jsonrpc.HTTPError
	if errors.As(err, &he) {
		return he.Code == http.StatusRequestTimeout || he.Code == http.StatusTooManyRequests || he.Code >= 500
	}
	var re *jsonrpc.RPCError
	if errors.As(err, &re) {
		// -32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid params.
		return !(re.Code <= -32600 && re.Code >= -32700)
	}
	// Network failures, truncated bodies and anything unknown: a read can safely be retried.
	return true
}

// SignatureStatus is the cluster's view of one transaction signature.
type SignatureStatus struct {
	// Found is false when the cluster has no record of the signature.
	Found bool
	// Slot is the slot the transaction was processed in.
	Slot uint64
	// Confirmations is the number of blocks since confirmation; nil once rooted (finalized).
	Confirmations *uint64
	// ConfirmationStatus is "processed", "confirmed" or "finalized".
	ConfirmationStatus string
	// Err is the transaction's error rendered as JSON, empty if it succeeded.
	Err string
}

// Finalized reports whether the transaction is finalized.
func (s *SignatureStatus) Finalized() bool {
	return s.Found && s.ConfirmationStatus == string(rpc.ConfirmationStatusFinalized)
}

// SignatureStatus looks the signature up, searching the whole transaction history.
func (c *Client) SignatureStatus(ctx context.Context, sig string) (*SignatureStatus, error) {
	s, err := solana.SignatureFromBase58(sig)
	if err != nil {
		return nil, fmt.Errorf("%w: signature %q is not base58 of 64 bytes", ErrInvalidArgument, sig)
	}
	res, err := c.rpc.GetSignatureStatuses(ctx, true, s)
	if errors.Is(err, rpc.ErrNotFound) {
		return &SignatureStatus{}, nil
	}
	if err != nil {
		return nil, c.wrap("getSignatureStatuses", err)
	}
	if len(res.Value) == 0 || res.Value[0] == nil {
		return &SignatureStatus{}, nil
	}
	v := res.Value[0]
	out := &SignatureStatus{Found: true, Slot: v.Slot, Confirmations: v.Confirmations, ConfirmationStatus: string(v.ConfirmationStatus)}
	if v.Err != nil {
		out.Err = renderErr(v.Err)
	}
	return out, nil
}

// BlockHeight returns the finalized block height.
func (c *Client) BlockHeight(ctx context.Context) (uint64, error) {
	h, err := c.rpc.GetBlockHeight(ctx, BlockHeightCommitment)
	if err != nil {
		return 0, c.wrap("getBlockHeight", err)
	}
	return h, nil
}

// IsBlockhashValid reports whether the base58 blockhash is still valid at processed commitment.
func (c *Client) IsBlockhashValid(ctx context.Context, blockhash string) (bool, error) {
	h, err := solana.HashFromBase58(blockhash)
	if err != nil {
		return false, fmt.Errorf("%w: blockhash %q is not base58 of 32 bytes", ErrInvalidArgument, blockhash)
	}
	res, err := c.rpc.IsBlockhashValid(ctx, h, BlockhashCommitment)
	if err != nil {
		return false, c.wrap("isBlockhashValid", err)
	}
	if res == nil {
		return false, c.wrap("isBlockhashValid", errors.New("empty result"))
	}
	return res.Value, nil
}

// EpochInfo is the cluster's current epoch position.
type EpochInfo struct {
	// Epoch is the current epoch.
	Epoch uint64
	// SlotIndex is the current slot relative to the start of the epoch.
	SlotIndex uint64
	// SlotsInEpoch is the number of slots in the epoch.
	SlotsInEpoch uint64
	// AbsoluteSlot is the current slot.
	AbsoluteSlot uint64
	// BlockHeight is the current block height.
	BlockHeight uint64
}

// SlotsRemaining returns the slots left until the next epoch starts.
func (e *EpochInfo) SlotsRemaining() uint64 {
	if e.SlotIndex >= e.SlotsInEpoch {
		return 0
	}
	return e.SlotsInEpoch - e.SlotIndex
}

// EpochInfo returns the current epoch at confirmed commitment.
func (c *Client) EpochInfo(ctx context.Context) (*EpochInfo, error) {
	res, err := c.rpc.GetEpochInfo(ctx, ReadCommitment)
	if err != nil {
		return nil, c.wrap("getEpochInfo", err)
	}
	if res == nil {
		return nil, c.wrap("getEpochInfo", errors.New("empty result"))
	}
	return &EpochInfo{Epoch: res.Epoch, SlotIndex: res.SlotIndex, SlotsInEpoch: res.SlotsInEpoch, AbsoluteSlot: res.AbsoluteSlot, BlockHeight: res.BlockHeight}, nil
}

// Balance returns the lamports held by the base58 address; a missing account holds 0.
func (c *Client) Balance(ctx context.Context, addr string) (uint64, error) {
	pk, err := parseAddress(addr)
	if err != nil {
		return 0, err
	}
	res, err := c.rpc.GetBalance(ctx, pk, ReadCommitment)
	if err != nil {
		return 0, c.wrap("getBalance", err)
	}
	if res == nil {
		return 0, c.wrap("getBalance", errors.New("empty result"))
	}
	return res.Value, nil
}

// RentExemptMinimum returns the lamports an account of size bytes must hold to be rent exempt.
func (c *Client) RentExemptMinimum(ctx context.Context, size uint64) (uint64, error) {
	v, err := c.rpc.GetMinimumBalanceForRentExemption(ctx, size, ReadCommitment)
	if err != nil {
		return 0, c.wrap("getMinimumBalanceForRentExemption", err)
	}
	return v, nil
}

// MinimumDelegation returns the least a stake account may delegate, in lamports, as the chain's
// stake program defines it today (getStakeMinimumDelegation: an RpcResponse {context, value}
// whose value is the stake program's GetMinimumDelegation, 1 lamport until the feature
// stake_raise_minimum_delegation_to_1_sol is active, 1 SOL after; the Solana RPC documentation,
// solana.com/docs/rpc/http/getstakeminimumdelegation).
func (c *Client) MinimumDelegation(ctx context.Context) (uint64, error) {
	var out struct {
		Value *uint64 `json:"value"`
	}
	err := c.rpc.RPCCallForInto(ctx, &out, "getStakeMinimumDelegation", []interface{}{map[string]interface{}{"commitment": ReadCommitment}})
	if err != nil {
		return 0, c.wrap("getStakeMinimumDelegation", err)
	}
	if out.Value == nil {
		return 0, c.wrap("getStakeMinimumDelegation", errors.New("empty result"))
	}
	return *out.Value, nil
}

func parseAddress(addr string) (solana.PublicKey, error) {
	pk, err := solana.PublicKeyFromBase58(addr)
	if err != nil {
		return solana.PublicKey{}, fmt.Errorf("%w: address %q is not base58 of 32 bytes", ErrInvalidArgument, addr)
	}
	return pk, nil
}

// account fetches an account's owner, lamports and raw data.
func (c *Client) account(ctx context.Context, pk solana.PublicKey) (*rpc.Account, []byte, error) {
	res, err := c.rpc.GetAccountInfoWithOpts(ctx, pk, &rpc.GetAccountInfoOpts{Encoding: solana.EncodingBase64, Commitment: ReadCommitment})
	if errors.Is(err, rpc.ErrNotFound) || (err == nil && (res == nil || res.Value == nil)) {
		return nil, nil, fmt.Errorf("%w: %s", ErrAccountNotFound, pk)
	}
	if err != nil {
		return nil, nil, c.wrap("getAccountInfo", err)
	}
	return res.Value, res.GetBinary(), nil
}

// ErrTransactionNotFound means the RPC has no finalized record of the transaction (it may not be
// finalized yet, or the node keeps no history that far back).
var ErrTransactionNotFound = errors.New("transaction not found")

// AccountInfo is the owner and balance of an account.
type AccountInfo struct {
	// Address is the base58 account address.
	Address string
	// Owner is the base58 program that owns the account.
	Owner string
	// Lamports is the account balance.
	Lamports uint64
	// DataLen is the size of the account's data.
	DataLen int
}

// AccountInfo reads the account at the base58 address at confirmed commitment; a missing account
// is [ErrAccountNotFound].
func (c *Client) AccountInfo(ctx context.Context, addr string) (*AccountInfo, error) {
	pk, err := parseAddress(addr)
	if err != nil {
		return nil, err
	}
	acct, data, err := c.account(ctx, pk)
	if err != nil {
		return nil, err
	}
	return &AccountInfo{Address: pk.String(), Owner: acct.Owner.String(), Lamports: acct.Lamports, DataLen: len(data)}, nil
}

// UnixTime returns the cluster's clock: the Clock sysvar's unix_timestamp, at confirmed
// commitment. Lockups are measured against it, not against the worker's clock.
func (c *Client) UnixTime(ctx context.Context) (int64, error) {
	_, data, err := c.account(ctx, solana.SysVarClockPubkey)
	if err != nil {
		return 0, err
	}
	// Clock: slot, epoch_start_timestamp, epoch, leader_schedule_epoch (8 bytes each), then
	// unix_timestamp (i64).
	if len(data) < 40 {
		return 0, fmt.Errorf("%w: clock sysvar of %d bytes", ErrMalformedStakeAccount, len(data))
	}
	return int64(binary.LittleEndian.Uint64(data[32:40])), nil
}

// VoteAccountStatus is the cluster's view of one vote account, as getVoteAccounts reports it.
type VoteAccountStatus struct {
	// VoteAccount is the base58 vote account asked about.
	VoteAccount string
	// Found is false when the cluster lists no such vote account, current or delinquent.
	Found bool
	// Delinquent is true when the validator has stopped voting (listed as delinquent).
	Delinquent bool
	// Commission is the percentage (0-100) of rewards the validator keeps.
	Commission uint8
	// ActivatedStake is the stake, in lamports, active on the vote account this epoch.
	ActivatedStake uint64
	// LastVote is the most recent slot the vote account voted on.
	LastVote uint64
	// Node is the base58 validator identity.
	Node string
}

// Current reports whether the vote account is listed and not delinquent.
func (v *VoteAccountStatus) Current() bool { return v.Found && !v.Delinquent }

// VoteAccount looks one vote account up with getVoteAccounts (filtered to it, delinquent
// validators without stake kept) at confirmed commitment. A vote account listed both as current
// and as delinquent counts as delinquent.
func (c *Client) VoteAccount(ctx context.Context, vote string) (*VoteAccountStatus, error) {
	pk, err := parseAddress(vote)
	if err != nil {
		return nil, err
	}
	keep := true
	res, err := c.rpc.GetVoteAccounts(ctx, &rpc.GetVoteAccountsOpts{Commitment: ReadCommitment, VotePubkey: &pk, KeepUnstakedDelinquents: &keep})
	if err != nil {
		return nil, c.wrap("getVoteAccounts", err)
	}
	out := &VoteAccountStatus{VoteAccount: pk.String()}
	if res == nil {
		return out, nil
	}
	fill := func(list []rpc.VoteAccountsResult, delinquent bool) {
		for _, v := range list {
			if !v.VotePubkey.Equals(pk) || (out.Found && !delinquent) {
				continue
			}
			out.Found, out.Delinquent = true, delinquent
			out.Commission, out.ActivatedStake, out.LastVote, out.Node = v.Commission, v.ActivatedStake, v.LastVote, v.NodePubkey.String()
		}
	}
	fill(res.Current, false)
	fill(res.Delinquent, true)
	return out, nil
}

// TransactionFee returns the fee, in lamports, that the transaction with the base58 signature
// paid, read with getTransaction at finalized commitment. A transaction the node has no
// finalized record of is [ErrTransactionNotFound].
func (c *Client) TransactionFee(ctx context.Context, sig string) (uint64, error) {
	res, err := c.transaction(ctx, sig)
	if err != nil {
		return 0, err
	}
	if res.Meta == nil {
		return 0, c.wrap("getTransaction", fmt.Errorf("transaction %s has no status metadata", sig))
	}
	return res.Meta.Fee, nil
}

// InstructionPrograms returns the program ids of the instructions of the finalized transaction
// with the base58 signature, in order: what [DecodeTxError] needs to name a landed transaction's
// custom program error. A transaction the node has no finalized record of is
// [ErrTransactionNotFound].
func (c *Client) InstructionPrograms(ctx context.Context, sig string) ([]string, error) {
	res, err := c.transaction(ctx, sig)
	if err != nil {
		return nil, err
	}
	if res.Transaction == nil {
		return nil, c.wrap("getTransaction", fmt.Errorf("transaction %s came without its bytes", sig))
	}
	tx, err := res.Transaction.GetTransaction()
	if err != nil {
		return nil, c.wrap("getTransaction", fmt.Errorf("transaction %s does not decode: %w", sig, err))
	}
	progs, err := instructionPrograms(tx)
	if err != nil {
		return nil, c.wrap("getTransaction", fmt.Errorf("transaction %s: %w", sig, err))
	}
	return progs, nil
}

// transaction reads the finalized transaction with the base58 signature, its bytes in base64.
func (c *Client) transaction(ctx context.Context, sig string) (*rpc.GetTransactionResult, error) {
	s, err := solana.SignatureFromBase58(sig)
	if err != nil {
		return nil, fmt.Errorf("%w: signature %q is not base58 of 64 bytes", ErrInvalidArgument, sig)
	}
	version := uint64(0)
	res, err := c.rpc.GetTransaction(ctx, s, &rpc.GetTransactionOpts{
		Encoding: solana.EncodingBase64, Commitment: rpc.CommitmentFinalized, MaxSupportedTransactionVersion: &version,
	})
	if errors.Is(err, rpc.ErrNotFound) || (err == nil && res == nil) {
		return nil, fmt.Errorf("%w: %s", ErrTransactionNotFound, sig)
	}
	if err != nil {
		return nil, c.wrap("getTransaction", err)
	}
	return res, nil
}
