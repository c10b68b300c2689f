// Package solchain is read-only access to a Solana cluster for following transactions and stake
// accounts: signature status, block height, blockhash validity, epoch, stake account state and
// activation, balances and accounts, vote accounts, transaction fees and the cluster's genesis
// hash. It never signs, builds or sends transactions.
//
// Contract:
//
//   - [Client] wraps solana-go's JSON-RPC client behind the narrow [RPC] interface; tests and
//     other callers can supply their own implementation with [NewWithRPC].
//   - [Network] is a Client trusted only while its RPC is proven to serve one network: its
//     genesis hash must be the network's ([KnownGenesisHash] holds the public clusters'; others
//     are configured). Until proven, after a mismatch, and after a read failed as a lost or
//     replaced RPC fails (network error, HTTP 5xx), every read returns an [*rpcproof.UnverifiedError]
//     naming the network, the expected and the served hash, until the hash is read again.
//   - Every RPC failure is returned as an [*RPCError] naming the method, wrapping the cause with
//     %w, and telling whether retrying can help ([IsTransient]): network errors, HTTP 408, 429 and
//     5xx, and server-side JSON-RPC errors are transient; malformed requests (JSON-RPC
//     -32600..-32700: parse error, invalid request, method not found, invalid params) and other
//     HTTP 4xx, among them a provider's 401 and 403 whatever their body, are permanent. Endpoint
//     URLs in errors are reduced to scheme and host, because paths and queries of hosted RPC
//     endpoints often carry access tokens.
//   - A missing account is [ErrAccountNotFound]; an account not owned by the stake program is
//     [ErrNotStakeAccount]; stake data that does not decode is [ErrMalformedStakeAccount].
//   - Commitments: signature statuses search the whole ledger history (no commitment parameter;
//     the result carries its own confirmation status); BlockHeight is finalized, so a height past
//     a transaction's last valid block height proves it can no longer land; IsBlockhashValid is
//     processed, the freshest view, so that a recent blockhash is not wrongly reported as
//     expired (a lagging node still answers false for a blockhash it has not seen, so callers
//     should treat false as expiry only together with other evidence, such as the build having
//     been long enough ago); epoch, accounts, stake history, balances and vote accounts are
//     confirmed; a transaction's fee is read at finalized.
//   - [DecodeTxError] names a transaction error, in the text of a refused send or the JSON of a
//     landed transaction's meta.err: System and Stake program codes, the runtime's instruction
//     and transaction errors, with the program of the failing instruction taken from the
//     transaction ([TransactionPrograms], [Client.InstructionPrograms]).
//   - Stake activation is computed locally from the stake account and the StakeHistory sysvar
//     with the stake program's warm-up/cool-down algorithm (see [ComputeActivation]).
package solchain
