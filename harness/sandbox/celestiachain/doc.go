// Package celestiachain is an in-memory Celestia ledger for the sandbox, strict where the chain is
// strict: it decodes a broadcast TxRaw (with its own protobuf reader, independent of stakeflow's
// encoder), checks the SIGN_MODE_DIRECT signature against the account's public key over the
// SignDoc, the chain id, the account number and the sequence (which it increments), the fee
// against the minimum gas price of 0.002 utia and the balance; then applies MsgDelegate,
// MsgUndelegate (into an unbonding queue that matures with the ledger's clock, moved on by Warp),
// MsgBeginRedelegate and MsgWithdrawDelegatorReward to balances.
//
// A transaction refused by the ante checks is not included (no hash recorded, sequence
// unchanged), as CheckTx refuses it; one whose message fails is included with a non-zero code,
// its fee paid and its sequence consumed, as DeliverTx records it. A transaction already included
// is refused as "tx already exists in cache" (code 19).
//
// Handler serves the Cosmos SDK REST (gRPC-gateway) paths the worker reads, and the broadcast
// path POST /cosmos/tx/v1beta1/txs, plus controls under /sandbox/ (fund, rewards, warp, state).
package celestiachain
