package sandbox

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
	"go.uber.org/zap"
)

// polygonSendResult is the sandbox's answer to endpoint 4 (the spec does not
// show the 200 payload).
type polygonSendResult struct {
	TransactionHash string `json:"transactionHash"`
}

// evmBackend is the EVM chain endpoint 4 forwards to.
type evmBackend struct {
	rpc     *rpc.Client
	chainID *big.Int
	signer  types.Signer
}

// evmBackends maps each server started with Config.EVMRPC to its chain.
var evmBackends sync.Map // *server -> *evmBackend

// dialEVM connects to the EVM JSON-RPC at url and reads its chain id.
func dialEVM(ctx context.Context, url string) (*evmBackend, error) {
	c, err := rpc.DialContext(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("sandbox: dial EVM RPC %s: %w", url, err)
	}
	var id hexutil.Big
	if err := c.CallContext(ctx, &id, "eth_chainId"); err != nil {
		c.Close()
		return nil, fmt.Errorf("sandbox: eth_chainId of EVM RPC %s: %w", url, err)
	}
	chainID := (*big.Int)(&id)
	return &evmBackend{rpc: c, chainID: chainID, signer: types.LatestSignerForChainID(chainID)}, nil
}

func (s *server) evm() *evmBackend {
	b, _ := evmBackends.Load(s)
	be, _ := b.(*evmBackend)
	return be
}

// polygonSend is endpoint 4. Without an EVM chain it checks the shape of the
// signed transaction and answers the Keccak-256 of its bytes. With one
// (Config.EVMRPC) it decodes the transaction, requires its sender to be
// stakerAddress and its chain id the chain's, forwards it with
// eth_sendRawTransaction and answers the chain's hash; a re-send of a
// transaction the chain already knows is answered with its hash. Under
// PolygonSendForwardThenRefuse it forwards the transaction, then answers 400.
func (s *server) polygonSend(r *http.Request, rc *reqContext) (any, *apiError) {
	b, aerr := readBody(r)
	if aerr != nil {
		return nil, aerr
	}
	var errs []fieldError
	signed, ok := b.str("signedTransaction", true, &errs)
	var raw []byte
	if ok {
		h, hasPrefix := strings.CutPrefix(signed, "0x")
		var err error
		raw, err = hex.DecodeString(h)
		if !hasPrefix || err != nil || len(raw) == 0 {
			errs = append(errs, fieldErr("signedTransaction", "isHexadecimal", "signedTransaction must be 0x-prefixed hexadecimal"))
		}
	}
	staker, _ := b.str("stakerAddress", true, &errs)
	if len(errs) > 0 {
		return nil, validation(errs...)
	}
	if !isEVMAddress(staker) {
		return nil, invalidDelegator("stakerAddress", staker, "polygon")
	}
	evm := s.evm()
	if evm == nil {
		return polygonSendResult{TransactionHash: "0x" + hex.EncodeToString(keccak256(raw))}, nil
	}
	return s.polygonForward(r.Context(), rc, evm, raw, common.HexToAddress(staker))
}

// polygonForward checks and forwards one signed transaction to the chain.
func (s *server) polygonForward(ctx context.Context, rc *reqContext, evm *evmBackend, raw []byte, staker common.Address) (any, *apiError) {
	var tx types.Transaction
	if err := tx.UnmarshalBinary(raw); err != nil {
		return nil, invalidField("signedTransaction", "isSignedTransaction", "signedTransaction is not an EVM transaction: %v", err)
	}
	if tx.ChainId().Cmp(evm.chainID) != 0 {
		return nil, invalidField("signedTransaction", "chainId", "signedTransaction is for chain id %s, the chain here is %s", tx.ChainId(), evm.chainID)
	}
	from, err := types.Sender(evm.signer, &tx)
	if err != nil {
		return nil, invalidField("signedTransaction", "isSigned", "signedTransaction carries no valid signature: %v", err)
	}
	if from != staker {
		return nil, invalidField("stakerAddress", "isSigner", "signedTransaction is signed by %s, not by stakerAddress %s", from.Hex(), staker.Hex())
	}
	hash := tx.Hash()
	log := s.log.With(zap.String("txHash", hash.Hex()), zap.String("staker", staker.Hex()))
	if s.faults.polygonDropped() {
		log.Info("injected fault", zap.String("fault", "polygonSendDropped"))
		return polygonSendResult{TransactionHash: hash.Hex()}, nil
	}
	var got common.Hash
	if err := evm.rpc.CallContext(ctx, &got, "eth_sendRawTransaction", hexutil.Encode(raw)); err != nil {
		var rpcErr rpc.Error
		if !errors.As(err, &rpcErr) {
			return nil, internalError(fmt.Sprintf("EVM RPC: eth_sendRawTransaction: %v", err))
		}
		known, kerr := evm.known(ctx, hash)
		if kerr != nil {
			return nil, internalError(fmt.Sprintf("EVM RPC: eth_getTransactionByHash: %v", kerr))
		}
		if !known {
			log.Info("transaction refused by the chain", zap.String("error", rpcErr.Error()))
			return nil, txRejected("Rejected", rpcErr.Error())
		}
		log.Info("transaction already known to the chain")
		got = hash
	}
	log.Info("transaction forwarded")
	if refuse, _ := s.faults.take(&s.faults.cfg.PolygonSendForwardThenRefuse); refuse {
		log.Info("injected fault", zap.String("fault", "polygonSendForwardThenRefuse"))
		return nil, txRejected("Rejected", forwardThenRefuseMessage)
	}
	rc.fault.lost, rc.fault.lostDrop = s.faults.polygonLost()
	if s.faults.polygonWrongHash() {
		wrong := common.BytesToHash(crypto.Keccak256(got.Bytes()))
		log.Info("injected fault", zap.String("fault", "polygonSendWrongHash"), zap.String("answered", wrong.Hex()))
		return polygonSendResult{TransactionHash: wrong.Hex()}, nil
	}
	return polygonSendResult{TransactionHash: got.Hex()}, nil
}

// known reports whether the chain has hash in its pool or its blocks.
func (e *evmBackend) known(ctx context.Context, hash common.Hash) (bool, error) {
	var tx map[string]any
	if err := e.rpc.CallContext(ctx, &tx, "eth_getTransactionByHash", hash); err != nil {
		return false, err
	}
	return tx != nil, nil
}
