// Package hyperliquid verifies and signs Hyperliquid's staking-to-spot withdrawal, the
// user-signed action cWithdraw, but only after proving that the request does exactly what the
// caller intended.
//
// Contract:
//
//   - [Decode] reads the unsigned request the staking service returns (endpoint 6): the JSON text
//     of the action, or of {"action": ..., "nonce": ...}, or the base64 of either. Anything else
//     (another encoding, unknown fields, duplicate keys, a number that is not a whole uint64) is
//     refused with [ErrDecode].
//   - [Signer.Sign] verifies the decoded action against an [Intent] and the [Policy] by exact
//     expectation, failing closed with a [*VerificationError] (wrapping [ErrVerification]) that
//     names the field, what was expected and what the request held: type cWithdraw only; an
//     answer that contradicts itself (its echoed amount, Intent.EchoedAmount, against its
//     action's wei) refused whole with a [*ContradictionError] naming both values, whichever of
//     the two matches the intent;
//     hyperliquidChain Mainnet or Testnet as the intent's network; wei exactly the intent's amount
//     × 10^8, the amount read as an exact decimal (an amount with more than 8 decimals, or one
//     past uint64, is refused, never rounded); signatureChainId on the policy's list (0x66eee by
//     default); the envelope's nonce, if any, equal to the action's; the nonce a millisecond
//     timestamp no older than MaxNonceAge (a day) and no further ahead than MaxNonceAhead (a
//     minute) of the signer's clock, and not signed before by this key for another action. Only
//     then does it sign.
//   - The signature is EIP-712 over go-ethereum's signer/core/apitypes typed data: domain
//     {name "HyperliquidSignTransaction", version "1", chainId = signatureChainId,
//     verifyingContract 0x0}, primary type HyperliquidTransaction:CWithdraw {hyperliquidChain
//     string, wei uint64, nonce uint64}; r, s as 0x hex and v 27 or 28, as the exchange takes it.
//     Signing the same action again gives the same signature (RFC 6979): a resubmission is the
//     same request.
//   - Keys stay in the EVM keyring (signer/evm); this package only hands it the digest it built.
package hyperliquid
