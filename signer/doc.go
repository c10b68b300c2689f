// Package signer turns an unsigned transaction built by the staking service into a signed one,
// but only after proving that the transaction does exactly what the caller intended.
//
// Contract:
//
//   - [Signer.Sign] decodes the unsigned transaction, verifies it against an [Intent] and the
//     signer's policy, and only then adds the staker's signature. Any mismatch fails closed with
//     an error that wraps [ErrVerification] and names the check that failed, what was expected and
//     what the transaction contained; nothing is signed in that case.
//   - Undecodable input wraps [ErrDecode]; an intent that cannot be checked wraps [ErrIntent];
//     a staker without a loaded key wraps [ErrUnknownKey]. All of these are permanent: retrying
//     the same input gives the same answer.
//   - Key bytes never leave the package. Keyrings and signers have no exported key fields, format
//     themselves redacted under every fmt verb and JSON, and never put key material in errors.
//
// Solana specifics ([Solana]):
//
//   - The unsigned transaction may be base64 (the primary form), base58 or hex (optionally
//     0x-prefixed). The encoding is the one under which the string decodes to a well-formed
//     transaction; a string that does so under more than one encoding is refused as ambiguous.
//   - Only legacy messages are accepted. Versioned (v0) messages are refused, with or without
//     address lookup tables.
//   - The staker is the fee payer and the only required signer. A transaction that needs any other
//     signature (for example a stake account created with CreateAccount, or marked as a signer) is
//     refused, because it could never land with only our signature.
//   - Only the System, Stake and Compute Budget programs may be invoked, and only in the exact
//     shape of the operation: stake = CreateAccountWithSeed (base and funder = staker, owner = stake
//     program, exact lamports, 200 bytes, address re-derived from the seed) + Initialize (staker
//     and withdrawer = staker, no lockup unless the custodian is the staker) + DelegateStake (to the
//     intended or allow-listed vote account); unstake = one Deactivate of the named stake account;
//     withdraw = one Withdraw of exact lamports from the named stake account to the staker.
//     Compute Budget may only set the unit price and unit limit, each at most once and under the
//     policy caps. Durable-nonce transactions are refused (AdvanceNonceAccount is not allowed).
//   - The signature covers the exact message bytes received; only the staker's slot is written,
//     and ed25519 is deterministic, so signing the same transaction again gives the same bytes.
package signer
