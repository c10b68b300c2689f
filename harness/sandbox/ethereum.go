package sandbox

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rlp"
	"go.uber.org/zap"
	"golang.org/x/crypto/sha3"

	"github.com/stakeflow/stakeflow/harness/sandbox/evmchain"
)

// ssvRequest is one validator set-up request of endpoint 8.
type ssvRequest struct {
	ID                        string           `json:"id"`
	Status                    string           `json:"status"`
	ValidatorsCount           int              `json:"validatorsCount"`
	AmountPerValidator        string           `json:"amountPerValidator"`
	WithdrawalCredentialsType string           `json:"withdrawalCredentialsType"`
	WithdrawalAddress         string           `json:"withdrawalAddress"`
	FeeRecipientAddress       string           `json:"feeRecipientAddress"`
	SSVOwnerAddress           string           `json:"ssvOwnerAddress"`
	Type                      string           `json:"type"`
	OperationPeriodInDays     int              `json:"operationPeriodInDays"`
	LiquidationPeriodInDays   int              `json:"liquidationPeriodInDays"`
	EncryptedShares           []encryptedShare `json:"encryptedShares"`
	Clusters                  []ssvCluster     `json:"clusters"`
	ECDHPublicKey             any              `json:"ecdhPublicKey"`
	ValidatorRegistrationTxs  any              `json:"validatorRegistrationTxs"`
	FeeRecipientTx            any              `json:"feeRecipientTx"`
	ApproveTx                 any              `json:"approveTx"`
}

// encryptedShare is one encrypted key share of a set-up request.
type encryptedShare struct {
	PublicKey               string `json:"publicKey"`
	Nonce                   string `json:"nonce"`
	SharesData              string `json:"sharesData"`
	ECDHEncryptedPrivateKey string `json:"ecdhEncryptedPrivateKey"`
}

// ssvCluster is one operator cluster of a set-up request.
type ssvCluster struct {
	Operators []int `json:"operators"`
}

// ssvRequestsPerSubject is how many set-up requests each token subject has.
const ssvRequestsPerSubject = 3

// ssvSeed returns the deterministic set-up requests of subject.
func ssvSeed(subject string) []ssvRequest {
	out := make([]ssvRequest, 0, ssvRequestsPerSubject)
	for i := 0; i < ssvRequestsPerSubject; i++ {
		k := strconv.Itoa(i)
		var id [16]byte
		b, _ := hex.DecodeString(hexDigest(16, "ssv-id", subject, k))
		copy(id[:], b)
		count := 1 + int(unitFloat("ssv-count", subject, k)*4)
		owner := "0x" + hexDigest(20, "ssv-owner", subject)
		shares := make([]encryptedShare, count)
		for v := range shares {
			vk := strconv.Itoa(v)
			shares[v] = encryptedShare{
				PublicKey:               "0x" + hexDigest(48, "ssv-pk", subject, k, vk),
				Nonce:                   strconv.Itoa(i*10 + v),
				SharesData:              "0x" + hexDigest(256, "ssv-shares", subject, k, vk),
				ECDHEncryptedPrivateKey: hexDigest(64, "ssv-ecdh", subject, k, vk),
			}
		}
		ops := make([]int, 4)
		for o := range ops {
			ops[o] = 1 + int(unitFloat("ssv-op", subject, k, strconv.Itoa(o))*1000)
		}
		out = append(out, ssvRequest{
			ID: formatUUID(id), Status: "processing", ValidatorsCount: count, AmountPerValidator: "32",
			WithdrawalCredentialsType: "0x02", WithdrawalAddress: owner, FeeRecipientAddress: owner, SSVOwnerAddress: owner,
			Type: "without-encrypt-key", OperationPeriodInDays: 30 * (1 + i), LiquidationPeriodInDays: 30,
			EncryptedShares: shares, Clusters: []ssvCluster{{Operators: ops}},
		})
	}
	return out
}

// ssvPage is the result of endpoint 8.
type ssvPage struct {
	Limit      int64        `json:"limit"`
	Offset     int64        `json:"offset"`
	TotalCount int          `json:"totalCount"`
	List       []ssvRequest `json:"list"`
}

// ssvRequests answers endpoint 8 with the token subject's requests.
func (s *server) ssvRequests(r *http.Request, rc *reqContext) (any, *apiError) {
	var errs []fieldError
	q := r.URL.Query()
	limit := intQuery(q, "limit", 1, maxLimit, defaultLimit, &errs)
	offset := intQuery(q, "offset", 0, maxOffsetSSV, 0, &errs)
	if len(errs) > 0 {
		return nil, validation(errs...)
	}
	all := ssvSeed(rc.subject)
	s.ssv.apply(all)
	page := []ssvRequest{}
	for i := offset; i < int64(len(all)) && int64(len(page)) < limit; i++ {
		page = append(page, all[i])
	}
	return ssvPage{Limit: limit, Offset: offset, TotalCount: len(all), List: page}, nil
}

// evmTransaction is the serialized EVM transaction of endpoint 5.
type evmTransaction struct {
	SerializeTx          string `json:"serializeTx"`
	To                   string `json:"to"`
	GasLimit             string `json:"gasLimit"`
	Data                 string `json:"data"`
	Value                string `json:"value"`
	ChainID              string `json:"chainId"`
	Type                 string `json:"type"`
	MaxFeePerGas         string `json:"maxFeePerGas"`
	MaxPriorityFeePerGas string `json:"maxPriorityFeePerGas"`
}

// keccak256 hashes b.
func keccak256(b ...[]byte) []byte {
	h := sha3.NewLegacyKeccak256()
	for _, x := range b {
		h.Write(x)
	}
	return h.Sum(nil)
}

// verifyCheckpointProofsSelector is the EigenPod function selector.
var verifyCheckpointProofsSelector = keccak256([]byte("verifyCheckpointProofs((bytes32,bytes),(bytes32,bytes32,bytes)[])"))[:4]

// eigenBackends maps each server started with Config.EigenLayer to it.
var eigenBackends sync.Map // *server -> *evmchain.EigenLayer

// eigenLayerProofs builds an unsigned EIP-1559 call to the owner's EigenPod
// (endpoint 5). With Config.EigenLayer it is the next batch of real balance
// proofs for the pod's active checkpoint (eigenLayerChainProofs); without, the
// pod address and the call data are derived deterministically from the
// request and no EVM chain backs them.
func (s *server) eigenLayerProofs(r *http.Request, rc *reqContext) (any, *apiError) {
	b, aerr := readBody(r)
	if aerr != nil {
		return nil, aerr
	}
	var errs []fieldError
	owner, ok := b.str("eigenPodOwnerAddress", true, &errs)
	if ok && !isEVMAddress(owner) {
		errs = append(errs, fieldErr("eigenPodOwnerAddress", "isEthereumAddress", "eigenPodOwnerAddress must be a 0x-prefixed 20-byte hex address"))
	}
	activate, _ := b.str("activateTx", true, &errs)
	if len(errs) > 0 {
		return nil, validation(errs...)
	}
	if el, ok := eigenBackends.Load(s); ok {
		return s.eigenLayerChainProofs(r.Context(), el.(*evmchain.EigenLayer), common.HexToAddress(owner), activate)
	}
	ownerBytes, _ := hex.DecodeString(owner[2:])
	pod := keccak256([]byte("eigenpod"), ownerBytes)[12:]
	data := append([]byte{}, verifyCheckpointProofsSelector...)
	data = append(data, keccak256([]byte(activate))...)
	var nonce [8]byte
	copy(nonce[:], keccak256([]byte("nonce"), ownerBytes)[:8])
	const (
		chainID  = 1
		gasLimit = 500_000
		maxFee   = 30_000_000_000
		tip      = 1_000_000_000
	)
	payload, err := rlp.EncodeToBytes([]any{
		big.NewInt(chainID), binary.BigEndian.Uint64(nonce[:]) % 1000, big.NewInt(tip), big.NewInt(maxFee),
		uint64(gasLimit), pod, big.NewInt(0), data, []any{},
	})
	if err != nil {
		return nil, internalError("encode EVM transaction: " + err.Error())
	}
	return evmTransaction{
		SerializeTx: "0x02" + hex.EncodeToString(payload), To: "0x" + hex.EncodeToString(pod),
		GasLimit: strconv.Itoa(gasLimit), Data: "0x" + hex.EncodeToString(data), Value: "0",
		ChainID: strconv.Itoa(chainID), Type: "2", MaxFeePerGas: strconv.Itoa(maxFee), MaxPriorityFeePerGas: strconv.Itoa(tip),
	}, nil
}

// eigenLayerChainProofs answers endpoint 5 from the EigenLayer stand-ins: the
// unsigned transaction proving the next batch (at most
// evmchain.MaxProofsPerBatch) of the owner's pod's unproven validators against
// the active checkpoint's beacon block root, as the pod's hostile mode shapes
// it. The spec leaves activateTx undefined; the sandbox reads it as the hash of
// the transaction that started the checkpoint and only checks its form.
func (s *server) eigenLayerChainProofs(ctx context.Context, el *evmchain.EigenLayer, owner common.Address, activate string) (any, *apiError) {
	if h, ok := strings.CutPrefix(activate, "0x"); !ok || len(h) != 64 || !isHex(h) {
		return nil, invalidField("activateTx", "isTransactionHash", "activateTx must be the 0x-prefixed 32-byte hash of the transaction that started the checkpoint")
	}
	tx, err := el.ProofsTransaction(ctx, owner)
	if err != nil {
		return nil, invalidField("eigenPodOwnerAddress", "hasActiveCheckpoint", "%v", err)
	}
	payload, err := rlp.EncodeToBytes([]any{
		tx.ChainId(), tx.Nonce(), tx.GasTipCap(), tx.GasFeeCap(), tx.Gas(), tx.To(), tx.Value(), tx.Data(), []any{},
	})
	if err != nil {
		return nil, internalError("encode EVM transaction: " + err.Error())
	}
	s.log.Info("checkpoint proofs built", zap.String("owner", owner.Hex()), zap.String("to", tx.To().Hex()), zap.Int("calldataBytes", len(tx.Data())))
	return evmTransaction{
		SerializeTx: "0x02" + hex.EncodeToString(payload), To: tx.To().Hex(),
		GasLimit: strconv.FormatUint(tx.Gas(), 10), Data: "0x" + hex.EncodeToString(tx.Data()), Value: tx.Value().String(),
		ChainID: tx.ChainId().String(), Type: "2", MaxFeePerGas: tx.GasFeeCap().String(), MaxPriorityFeePerGas: tx.GasTipCap().String(),
	}, nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// eigenControlRoutes adds the EigenLayer controls (with Config.EigenLayer):
//
//	POST /sandbox/eigenlayer/pods      {"owner","validators","balanceGwei"} creates the owner's pod
//	POST /sandbox/eigenlayer/reward    {"pod","gwei"} pays each validator gwei and posts the state
//	POST /sandbox/eigenlayer/front-run {"pod","batches"} another party proves each of the next
//	                                   batches endpoint 5 answers for the pod, before it answers
//	POST /sandbox/eigenlayer/hostile   {"pod","mode"} the pod's hostile mode (evmchain.EigenHostile)
func (s *server) eigenControlRoutes(mux *http.ServeMux) {
	type body struct {
		Owner       string `json:"owner"`
		Pod         string `json:"pod"`
		Validators  int    `json:"validators"`
		BalanceGwei uint64 `json:"balanceGwei"`
		Gwei        uint64 `json:"gwei"`
		Batches     int    `json:"batches"`
		Mode        string `json:"mode"`
	}
	handle := func(path string, f func(context.Context, *evmchain.EigenLayer, body) (any, error)) {
		mux.Handle("POST /sandbox/eigenlayer/"+path, s.wrapPlain(func(r *http.Request, _ *reqContext) (any, *apiError) {
			el, ok := eigenBackends.Load(s)
			if !ok {
				return nil, invalidField("path", "hasEigenLayer", "the sandbox runs without the EigenLayer stand-ins")
			}
			var b body
			if err := decodeStrict(r, &b); err != nil {
				return nil, invalidField("body", "isJSON", "%v", err)
			}
			out, err := f(r.Context(), el.(*evmchain.EigenLayer), b)
			if err != nil {
				return nil, invalidField("body", "applies", "%v", err)
			}
			s.log.Info("eigenlayer control", zap.String("control", path))
			return out, nil
		}))
	}
	handle("pods", func(ctx context.Context, el *evmchain.EigenLayer, b body) (any, error) {
		if !isEVMAddress(b.Owner) {
			return nil, fmt.Errorf("owner %q is not a 0x address", b.Owner)
		}
		pod, err := el.CreatePod(ctx, common.HexToAddress(b.Owner), b.Validators, b.BalanceGwei)
		return map[string]string{"pod": pod.Hex()}, err
	})
	handle("reward", func(ctx context.Context, el *evmchain.EigenLayer, b body) (any, error) {
		return map[string]string{"pod": b.Pod}, el.Reward(ctx, common.HexToAddress(b.Pod), b.Gwei)
	})
	handle("front-run", func(_ context.Context, el *evmchain.EigenLayer, b body) (any, error) {
		el.FrontRun(common.HexToAddress(b.Pod), b.Batches)
		return map[string]any{"pod": b.Pod, "batches": b.Batches}, nil
	})
	handle("hostile", func(_ context.Context, el *evmchain.EigenLayer, b body) (any, error) {
		mode := evmchain.EigenHostile(b.Mode)
		if !slices.Contains(append([]evmchain.EigenHostile{evmchain.EigenHonest}, evmchain.EigenHostileModes...), mode) {
			return nil, fmt.Errorf("unknown mode %q (want one of %v or empty)", b.Mode, evmchain.EigenHostileModes)
		}
		el.SetHostile(common.HexToAddress(b.Pod), mode)
		return map[string]string{"pod": b.Pod, "mode": b.Mode}, nil
	})
}
