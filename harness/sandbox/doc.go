// Package sandbox is a faithful local implementation of the staking service
// described in spec/staking-api.md, backed by a real Solana runtime
// (package solanart). It is the default target of the local stack and of the
// integration tests: code that works against it must work against the real
// service, so it follows the interface to the letter and makes every point
// the interface leaves open explicit below.
//
// # Service API
//
// All 13 endpoints answer at both published address forms, /api/v1/... and
// /api/api/v1/.... Bodies are JSON. Success is {"error": null, "result": ...};
// failure is {"error": {type, code, message, name, errors?}, "result": null,
// "requestId", "timestamp"}. Every response carries an x-request-id header
// equal to requestId. Timestamps are ISO 8601 UTC with milliseconds.
//
// Authentication: "Authorization: Bearer <JWT>", HS256 with
// Config.TokenSecret (see MintToken); the token's subject ("sub") is required
// and scopes endpoint 8. A missing header, another scheme or an empty bearer
// is 401 NoTokenException 101111; a malformed, foreign, expired or
// subject-less token is 401 WrongTokenException 101109 (type
// authentication). Tokens never appear in logs or messages.
//
// Errors (HTTP 400, type client unless noted):
//   - ValidationException 100101 with errors[] of {property, constraints}, one
//     entry per bad field; nested fields are named "extra.amount",
//     "extra.stakeAccount". Constraint names follow class-validator
//     (isNotEmpty, isString, isNumberString, isIn, min, max, ...) plus the
//     sandbox's own for on-chain checks (exists, isStakeAccount, isDelegated,
//     stakeAuthority, notDeactivating, equals, inactiveStakeAccount).
//   - DataNetworkIsNotIncludedInListException 115101 (the schema's code) for a
//     network (endpoints 1, 2) or chain (endpoints 10-13) outside the
//     endpoint's list; the message lists the spec's supported networks.
//     Path values of endpoints 3, 6, 7 and 9 (celestia-mocha-testnet,
//     mainnet, mainnet-beta, ...) are cluster names, not networks of that
//     list: a bad one is a ValidationException on "network". A chain of the
//     list other than solana sent to endpoints 10-13 is a ValidationException
//     on "chain" (the sandbox builds unified transactions for Solana only).
//   - InvalidDelegatorAddressException 115400 (the schema's code) for a
//     malformed address of the delegator: address (1), delegatorAddress (6),
//     stakerAddress (4, 10-13).
//   - ThrottlerException, HTTP 429, code 429 (the interface gives only a
//     placeholder), type client; name and message are both
//     "ThrottlerException"; headers Retry-After, RateLimit-Limit,
//     RateLimit-Reset and RateLimit-Policy.
//   - TransactionRejectedException 100400 (sandbox-defined) for a broadcast
//     the chain refuses; the message starts with a stable reason token:
//     "AlreadyProcessed:", "BlockhashNotFound:", "SignatureFailure:",
//     "InstructionError:" or "InvalidTransaction:", then the detail.
//   - InternalServerErrorException 100500 (HTTP 500, type server) for runtime
//     failures and injected faults; NotFoundException 100404 (HTTP 404) for
//     unknown paths; MethodNotAllowedException 100405 (HTTP 405, with Allow)
//     for a known path called with another method.
//
// Limits: limit 1..1000, default 50 (endpoints 1, 2, 8); offset 0..10000000
// (1, 2) and 0..100000 (8); startAt defaults to one month before finishAt,
// finishAt to now. Request bodies are capped at 1 MiB.
//
// Rate limiting (Config.RateLimit, RateLimit-Policy form, several windows
// allowed) counts requests per bearer token in fixed windows that start at
// the token's first request; a refused request is not counted.
// RateLimit-Limit is the quota of the window that refused (the one resetting
// last), RateLimit-Reset and Retry-After its remaining seconds (rounded up).
//
// # Solana (endpoints 7, 10-13) on the real runtime
//
// network testnet and mainnet-beta both map to the one runtime. Amounts are
// lamports: strings holding integers in requests, integer "amount" in
// responses (present in stake and withdraw results, absent in unstake).
//
// Stake (10) builds an unsigned legacy transaction paid by the staker:
// CreateAccountWithSeed (base = staker, a fresh 24-character seed per call,
// 200 bytes, owner the stake program, lamports = amount), stake Initialize
// (staker and withdrawer = staker, no lockup) and DelegateStake to
// Config.DefaultVoteAccount or, when none is configured, the first of the
// runtime's start-up vote accounts that getVoteAccounts lists as current with
// a commission of at most 10%. The
// seed-derived stake account is writable, never a signer. An amount below
// the rent-exempt reserve plus the stake program's minimum delegation is a
// ValidationException on amount; the minimum delegation is read once by
// simulating GetMinimumDelegation and falls back to 1 SOL when the runtime
// returns no return data. extraData holds exactly network, feePayer,
// fromPublicKey, stakeAuthority, withdrawAuthority, voteAccount. The stake
// account address is not in the result: it is the second account of the
// first instruction.
//
// unsignedTransactionData is base64 of the wire transaction with one zeroed
// signature slot per required signer; the recent blockhash is the runtime's
// latest (finalized commitment).
//
// Unstake (11) deactivates extra.stakeAccount, which must exist, be owned by
// the stake program, be delegated with the staker as stake authority and not
// already be deactivating; extra.amount must equal its lamports (partial
// unstake is not offered). extraData: network, feePayer, stakeAuthority.
//
// Withdraw (12): the interface's body names no stake account, so the sandbox
// picks, oldest first, a stake account it built for this staker that is
// fully inactive on chain (never delegated, or deactivated in an earlier
// epoch) and holds exactly extra.amount lamports, and withdraws all of it to
// the staker. None is a ValidationException on extra.amount. The list of
// built stake accounts lives in memory: it does not survive a restart.
// extraData: network, feePayer, withdrawAuthority, recipient, amount.
//
// Broadcast (13) accepts signedTransaction as base64 or base58, verifies
// every required signature locally, submits the bytes to the runtime and
// answers result.extraData {transactionId (base58 first signature), slot,
// signerAccounts (the required signers in message order), createdAt}. The
// stakerAddress is checked for shape only.
//
// Authentication checks tokens against the current secret: Config.TokenSecret
// until a rotation (POST /sandbox/token/rotate, Sandbox.RotateToken) replaces
// it with a random one; tokens of the old secret are then answered 401
// WrongTokenException.
//
// Validator status (7) reads getVoteAccounts. The interface does not name
// the query parameter: the sandbox uses "voteAccounts" (comma-separated).
// The interface types result.statuses as a string: the sandbox answers a
// string holding a JSON object {"<vote account>": "active" | "delinquent" |
// "unknown"} (in hostile mode delinquent-validator, delinquent vote accounts
// are answered "active").
//
// # Other chains (no chain backing)
//
// Answers are deterministic, derived from the request (and, for endpoint 8,
// the token subject), and consistent across calls and pages. Per-chain code
// sits in its own file so that a chain runtime can replace it later.
//   - APY (2) and APR (1): one record per staking period (solana 2 days,
//     kusama 6 hours, others 1 day; period 0 starts 2020-01-01T00:00:00Z),
//     ascending, filtered by startAt/finishAt overlap and by
//     startNumber/finishNumber, then paged. APR records carry a consensus and
//     an execution reward in ETH; notFinalized is true for a period not yet
//     over. stakingPeriod is the period number as text.
//   - SSV (8): three set-up requests per token subject; totalCount 3. Each is
//     "processing" until the control below moves it to another status.
//   - TON (9): transactionHash must be 32 bytes in hex or base64. The answer
//     comes from the transactions recorded with POST /sandbox/ton/transactions
//     (found by hash in either form, transactionHash answered in base64);
//     a hash not recorded, or recorded with a delay not yet over, is a 404
//     NotFoundException.
//   - Hyperliquid (6): amount is a JSON number > 0 with at most 8 decimals;
//     unsignedTransaction is the JSON text of {"action", "nonce", "delegator"},
//     the action a cWithdraw (wei = amount x 10^8 exactly, signatureChainId
//     0x66eee, nonce the time in ms). A delegator's hostile mode
//     (HyperliquidHostileMode: other-chain, other-wei, old-nonce, withdraw3,
//     usd-send) makes it answer something else.
//   - Hyperliquid L1: POST /hyperliquid/{network}/exchange takes a signed
//     cWithdraw ({action, nonce, signature {r, s, v}}) and answers as
//     Hyperliquid does ({"status": "ok"|"err", "response"}): the signer is
//     recovered over the EIP-712 typed data, the nonce must equal the action's,
//     lie within a day of the sandbox's clock and be new for that user; at most
//     5 withdrawals pending; the staking balance (funded by the control below)
//     is debited. A withdrawal reaches spot after HyperliquidQueue (7 days on
//     mainnet, 5 minutes on testnet) on the L1's clock, which the warp control
//     moves. POST /hyperliquid/{network}/info answers delegatorSummary,
//     delegatorHistory and spotClearinghouseState in the public API's shapes
//     (any other type is a 422): the history names a withdrawal by an L1 hash
//     of the sandbox's (not the digest) and the time the exchange took it,
//     never by its nonce; the finalized entry follows after the queue.
//   - EigenLayer (5): an unsigned EIP-1559 transaction (chainId 1) calling
//     verifyCheckpointProofs on a pod address derived from the owner. With
//     Config.EigenLayer it is the next batch (at most 80) of real balance
//     proofs of the owner's pod's unproven validators against its active
//     checkpoint's root, from harness/sandbox/evmchain's beacon-state model; activateTx
//     (undefined by the spec) must then be a 32-byte 0x hash: the start
//     transaction's, as stakeflow reads it.
//   - Polygon (4): signedTransaction must be 0x hex; the interface does not
//     show the 200 payload: the sandbox answers {"transactionHash": "0x..."}.
//     With Config.EVMRPC (--evm-rpc) the transaction is decoded, its signer
//     must be stakerAddress and its chain id the chain's, and it is forwarded
//     with eth_sendRawTransaction: the answer is the chain's hash. Without it
//     the answer is keccak256 of the bytes and nothing is sent. Faults
//     polygonSendLostResponse, polygonSendDropped (a hash answered, nothing
//     forwarded: a transaction that never mines), polygonSendWrongHash (a
//     lie) and polygonSendForwardThenRefuse (forwarded, then answered 400 as
//     if it never reached the chain) apply (docs/evm-sandbox.md).
//   - Celestia (3): signedTransaction may be base64 or hex. With
//     Config.Celestia (harness/cmd/sandbox always) it is broadcast into the network's
//     Celestia ledger (harness/sandbox/celestiachain), strict as the chain: a refusal
//     is a 400 TransactionRejectedException with the chain's log, an included
//     transaction a success with its height and hash (upper-case hex SHA-256),
//     a re-send of an included one the same success. The ledger's Cosmos REST
//     paths and controls are served under /chains/{network}/ (docs/celestia.md).
//     Faults celestiaSendLostResponse, celestiaSendDropped (success, never
//     broadcast) and celestiaSendWrongHash (the hash of other bytes) apply.
//     Without it the answer is a success whose transactionHash is SHA-256 of
//     the bytes and nothing is sent.
//
// # Control API for tests (no authentication, outside /api/v1)
//
//	GET  /sandbox/ledger              landed transactions (runtime ledger), stake accounts
//	                                  the sandbox built with on-chain lamports and state,
//	                                  broadcasts received per signature (count)
//	GET  /sandbox/faults              current FaultConfig
//	POST /sandbox/faults              replace it (body: FaultConfig JSON)
//	GET  /sandbox/hostile             current mode
//	POST /sandbox/hostile             {"mode": "<HostileMode>"} ("" for honest)
//	POST /sandbox/airdrop             {"address", "lamports"}
//	POST /sandbox/warp                {"epochs"}
//	POST /sandbox/expire-blockhashes
//	POST /sandbox/token/rotate        {"subject", "ttl"?} (ttl a Go duration or milliseconds;
//	                                  absent or 0: no expiry): a fresh secret; answers
//	                                  {"token", "subject"}, a token of the new secret
//	GET  /sandbox/ssv/status          the statuses set-up requests were moved to, by ID
//	POST /sandbox/ssv/status          {"id", "status"}: endpoint 8 answers the request with
//	                                  that status from now on (e.g. completed, failed)
//	POST /sandbox/hyperliquid/fund    {"network", "user", "wei"}: staking balance to withdraw
//	POST /sandbox/hyperliquid/warp    {"network", "by": "168h"}: the L1's clock moves forward
//	POST /sandbox/hyperliquid/hostile {"delegator", "mode"}: endpoint 6's mode for one delegator
//	GET  /sandbox/hyperliquid/account ?network=&user=: balances, pending, accepted count
//	POST /sandbox/ton/transactions    a TONTransaction ({"network", "hash"?, "delay"?, ...}):
//	                                  endpoint 9 finds it once delay is over; answers it
//	                                  with its defaults filled in
//
// The same controls exist in Go: Sandbox.SetFaults, Sandbox.Faults,
// Sandbox.SetHostile, Sandbox.Hostile, Sandbox.Ledger, Sandbox.RotateToken,
// Sandbox.MintToken (a token of the current secret), Sandbox.SetSSVStatus,
// Sandbox.AddTONTransaction, and Sandbox.Runtime for
// the runtime's own controls (GenesisHash, CreateVoteAccount, WarpEpochs,
// ...). Answers use the same envelopes. Faults (FaultConfig) apply per endpoint
// name (EndpointNames, or "*"), after authentication and rate limiting:
// counts fail exactly the next N requests (429 first, then 500, then a
// dropped connection); rates are drawn from an RNG seeded with Seed; latency
// is added first. A dropped connection writes the start of a status line and
// closes, so HTTP clients cannot silently replay the request.
// broadcastLostResponse submits the broadcast to the chain, then answers 500
// or drops the connection. broadcastLoseThenRefuse does the same to the first
// broadcast of a signature that lands, then answers every later broadcast of
// that signature 400 TransactionRejectedException "InstructionError:
// Transaction simulation failed: Error processing Instruction 0: custom
// program error: 0x0" (never "already processed") without sending it; new
// faults forget those signatures.
//
// Hostile modes (HostileMode) make endpoints 10-12 build transactions that
// differ from the request while extraData stays honest: lamports-to-stranger,
// other-vote-account, other-fee-payer, other-amount, extra-instruction,
// other-stake-account, other-recipient, fee-heavy (a 1,400,000-lamport
// priority fee), readonly-writable (the stake account read-only in the
// header: fails on chain), lockup (a lockup until 2100, custodian the
// staker) and replay (the last result for the same staker and operation,
// byte for byte). delinquent-validator and unlisted-validator make the
// service choose a validator it should not, named in extraData: one the
// chain lists as delinquent while endpoint 7 answers "active", or a current
// one that is none of the sandbox's own.
//
// Logs go to Config.Logger (no-op by default) with stable camelCase keys;
// signed transactions and tokens are never logged.
package sandbox
