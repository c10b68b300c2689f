// Package solanart runs a real Solana runtime for local development and tests.
//
// Start unpacks an embedded Node project (a JSON-RPC 2.0 server over LiteSVM, which
// executes the real system, stake and vote programs), installs its pinned npm
// dependencies once per content hash into a cache directory, spawns it on loopback and
// waits until it answers getHealth. The server answers the Solana RPC calls that
// solana-go's rpc.Client makes, so production chain code can point at URL unchanged:
// getHealth, getVersion, getGenesisHash, getSlot, getBlockHeight, getLatestBlockhash,
// isBlockhashValid, getEpochInfo, getEpochSchedule, getMinimumBalanceForRentExemption,
// getAccountInfo, getMultipleAccounts, getBalance, requestAirdrop (a real transfer from a
// faucet account, listed in the ledger), sendTransaction (base64 or base58),
// simulateTransaction (with return data), getSignatureStatuses, getTransaction (encodings
// json, the default, base64, base58 and jsonParsed; meta with the fee charged and the
// balances before and after, no inner instructions; jsonParsed parses no instruction: each is
// partially decoded, {programId, accounts, data}), getVoteAccounts, getFeeForMessage,
// getRecentPrioritizationFees and getStakeMinimumDelegation. Versioned transactions are
// accepted without address lookup tables.
//
// A websocket upgrade on the same port serves Solana's PubSub API, as @solana/web3.js's
// confirmTransaction uses it: signatureSubscribe (params [signature, {commitment,
// enableReceivedNotification}]; one signatureNotification {context:{slot}, value:{err}} when
// the signature reaches the commitment, as getSignatureStatuses reports it, then the
// subscription is gone), signatureUnsubscribe, slotSubscribe (a slotNotification {parent,
// root, slot} each time the slot moves; slots crossed at once are not notified one by one) and
// slotUnsubscribe. While subscriptions exist a timer moves the clock at each slot boundary,
// so they are served with no request arriving. No other subscription exists (account,
// program, logs, root, block).
//
// Chain semantics the runtime guarantees:
//   - slots advance with wall time (Options.SlotDuration), read when a request arrives (or,
//     while websocket subscriptions exist, at each slot boundary), so an idle runtime uses
//     no CPU; block height equals the slot;
//     every slot has a new blockhash;
//   - a transaction is accepted only when its recent blockhash was produced within the
//     last Options.BlockhashValidity blocks; lastValidBlockHeight is issue height plus
//     that validity;
//   - a transaction lands at most once: resending a landed transaction fails with
//     JSON-RPC code -32002 "Transaction simulation failed: This transaction has already
//     been processed"; an expired or unknown blockhash fails with -32002 "Transaction
//     simulation failed: Blockhash not found"; a bad signature fails with -32003
//     "Transaction signature verification failure"; an execution failure fails with
//     -32002, the instruction error text in the message and the logs in the error data,
//     and changes nothing;
//   - getSignatureStatuses reports a landed transaction as "confirmed" with
//     confirmations = current slot - landing slot until it is Options.FinalizationDepth
//     slots deep, then "finalized" with null confirmations; unknown signatures are null;
//   - the Clock sysvar follows the slot (epoch = slot / Options.SlotsPerEpoch), so stake
//     activation and deactivation take effect at epoch boundaries (fully, at the next
//     epoch: the stake-history sysvar is not updated, so there is no warm-up or
//     cool-down);
//   - Options.VoteAccounts real vote accounts, plus Options.DelinquentVoteAccounts that
//     getVoteAccounts lists as delinquent, exist from start-up at addresses derived from
//     fixed seeds, identical on every run, with commission 10%; CreateVoteAccount adds a
//     current one later (not among VoteAccounts);
//   - the fee charged to the fee payer is Agave's: 5000 lamports per required signature plus
//     the prioritization fee, the compute-unit price of SetComputeUnitPrice (micro-lamports)
//     times the compute-unit limit, rounded up to a lamport; the limit is SetComputeUnitLimit's
//     (at most 1,400,000), else 3000 units per instruction of a native builtin program
//     (system, vote, compute budget, loaders, precompiles) and 200,000 per other instruction
//     (the stake program included). getFeeForMessage quotes exactly this for a message whose
//     blockhash is still valid (null otherwise) and getTransaction's meta.fee reports it;
//   - getRecentPrioritizationFees lists the last 150 slots, each with the least compute-unit
//     price that landed in it, raised to the least price paid by a transaction write-locking
//     each account asked about (0 where none landed; at most 128 accounts);
//   - getStakeMinimumDelegation answers the stake program's own minimum (its
//     GetMinimumDelegation return data: 1 SOL, every feature being on);
//   - getGenesisHash is stable: DefaultGenesisHash, or another hash for another
//     Options.GenesisSeed, whose blockhashes differ too, so a transaction made on one network
//     is refused by the other as "Blockhash not found" (GenesisHash returns it in Go);
//   - getVoteAccounts reports as activatedStake of a vote account the sum of the stake
//     delegated to it by delegations that count in the current epoch: from the epoch after
//     the activation epoch through the deactivation epoch. The runtime keeps these sums as
//     transactions land (re-reading the accounts each one names) and as epochs pass, so
//     getVoteAccounts, getSignatureStatuses and getTransaction cost the same however many
//     accounts and transactions exist; only sandbox_ledger grows with the ledger.
//
// Test controls are JSON-RPC methods on the same endpoint (sandbox_advanceSlots,
// sandbox_warpEpochs, sandbox_expireBlockhashes, sandbox_ledger, sandbox_voteAccounts,
// sandbox_createVoteAccount, sandbox_config, sandbox_stats) and have typed wrappers on Runtime. The diagnostic
// sandbox_scanActivatedStake recomputes activated stake per vote account from every stake
// account, to check the kept sums against.
//
// The node process ends when Close is called, when the Go process dies (parent-death
// signal on Linux) and when its standard input closes. Node.js and npm must be on PATH;
// the first Start on a machine needs the npm registry (or a warm npm cache).
package solanart
