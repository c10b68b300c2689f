// Package evm verifies and signs Polygon staking transactions on Ethereum (EIP-1559), but only
// after proving that the transaction does exactly what the caller intended.
//
// Contract:
//
//   - [Signer.Sign] decodes the unsigned transaction, verifies it against an [Intent] and the
//     [Policy], and only then signs it with the staker's key under the London signer of the
//     policy's chain. Any mismatch fails closed with a [*VerificationError] (wrapping
//     [ErrVerification]) that names the field, what was expected and what the transaction
//     contained, for example "to: want 0x.. (validator share of validator 7), got 0x.. (not on
//     the allow-list)"; nothing is signed in that case. Undecodable input wraps [ErrDecode]; an
//     intent that cannot be checked wraps [ErrIntent]; a staker without a loaded key wraps
//     [ErrUnknownKey]. All are permanent: retrying the same input gives the same answer.
//   - The unsigned transaction is the binary encoding of a type-2 (EIP-1559) transaction, either
//     the 9-field signing payload (as ethers, viem and web3.js serialize an unsigned transaction)
//     or the 12-field transaction with v, r and s all 0 (as go-ethereum encodes one).
//   - Verification is by exact expectation. From the intent and the values a builder may choose
//     (gas limit, maxFeePerGas, maxPriorityFeePerGas, and a delegate's minSharesToMint or an
//     unstake's maximumSharesToBurn), each checked against the policy and, when the intent names
//     it, equal to the intent's, the signer builds the transaction it expects: to = the POL token
//     (approve) or the intent's validator share (on the allow-list), value 0, data = the
//     operation's call packed by go-ethereum's abi with exactly the intent's arguments (approve
//     names the StakeManager and exactly the amount asked, never an unlimited allowance), the
//     policy's chain id, the lease's nonce, no access list. It signs only if the received
//     bytes are that transaction's bytes. Named checks run first (type, signature absent,
//     chainId, to, value, access list, nonce, selector, each argument decoded with
//     accounts/abi, shares within slippage, no extra calldata, gas and fee caps); the gate then
//     names the first RLP field that still differs.
//   - Key bytes never leave the package. Keyrings and signers have no exported key fields, format
//     themselves redacted under every fmt verb and JSON, and never put key material or the
//     passphrase in errors. A key or passphrase file the group or others may access
//     (mode & 0o077 != 0) is refused at load.
//   - [ABI] and [ABIJSON] are the ValidatorShare and ERC-20 method subset the signer accepts,
//     for builders to pack calls with.
package evm
