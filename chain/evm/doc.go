// Package evmchain is access to an EVM chain for following transactions: the chain id, an
// account's nonces at pending, latest and finalized depth, fees (base fee, suggested tip, gas
// estimates), transaction lookup (absent, pending, mined at block and index), receipts at
// finalized depth with revert reasons, the proof that a nonce is consumed and by which
// transaction, and contract reads through an ABI. It never signs or builds transactions; its one
// write, [Client.SendRawTransaction], sends signed bytes as they are, where the staking service
// has no broadcast endpoint for them.
//
// Contract:
//
//   - [Client] goes through go-ethereum's rpc and ethclient packages ([Dial], or [NewWithRPC]
//     over any *rpc.Client, in-process servers included).
//   - [Network] is a Client trusted only while its RPC is proven to serve one chain: eth_chainId
//     must equal the configured chain id. Until proven, after a mismatch, and after a read
//     failed as a lost or replaced RPC fails (network error, HTTP error other than 429), every
//     read returns an [*UnverifiedError] naming the network, the expected and the served chain
//     id, until the chain id is read again.
//   - Every RPC failure is an [*RPCError] naming the method, wrapping the cause with %w, and
//     telling whether retrying can help ([IsTransient]): network errors, HTTP 408, 429 and 5xx,
//     and server-side JSON-RPC errors are transient; malformed requests (-32600..-32700), other
//     HTTP 4xx and reverts are permanent. Endpoint URLs in errors are reduced to scheme and host.
//   - A receipt counts only at finalized depth: [Client.ReceiptFinal] returns it when its block
//     is at or below the finalized block ("finalized" tag) and is still the canonical block at
//     its height; otherwise a [*NotFinalError] (errors.Is [ErrNotFinal]) says why. A receipt
//     whose block was reorged out is not found: callers keep confirming, or re-send, the same
//     signed bytes. For a reverted transaction the reason is found by replaying its call with
//     eth_call at the receipt's block and decoding the revert data with [DecodeRevert]
//     ([RevertError]): Error(string), Panic(uint256) with its code named, and the custom errors
//     of the contracts stakeflow calls, rendered ErrorName(arg=value, ...).
//   - [Client.NonceConsumedBy] is the EVM proof that a transaction cannot land: judged at the
//     finalized block, an account's nonce is not consumed yet, consumed by the transaction asked
//     about (with its final receipt), or consumed by another transaction (named when the node
//     still holds the state to find it). Only the last allows building anew on a new nonce.
//   - [Network.SendRawTransaction] sends only through the proven RPC, like the reads. The node's
//     answer must be the bytes' own hash (keccak256 of the encoding); another is an [*RPCError]
//     wrapping [ErrHashMismatch]. A node's refusal is a JSON-RPC error, which [IsTransient]
//     calls transient as it does every server-side answer: callers sending read the refusal
//     (an rpc.Error) themselves.
//   - A node answering "transaction indexing is in progress" does not know yet whether it has
//     a transaction. geth answers so between each new head and the indexing of its block, so
//     lookups ask again for up to two seconds; past that, ReceiptFinal reports it as not final,
//     Transaction and NonceConsumedBy as a transient error.
package evmchain
