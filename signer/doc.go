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
//     the same input gives the same answer. A context cancelled while Sign runs gives the
//     context's error instead, whatever the verification found.
//   - Key bytes never leave the package. Keyrings and signers have no exported key fields, format
//     themselves redacted under every fmt verb and JSON, and never put key material in errors. A
//     key file the group or others may access (mode & 0o077 != 0) is refused at load.
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
//   - Verification is by exact expectation. From the intent and the few values the service may
//     choose (the recent blockhash; a compute budget of at most one SetComputeUnitLimit and one
//     SetComputeUnitPrice, each under its policy cap, before the staking instructions; for a
//     stake, the new account's seed of at most 32 bytes and, when the intent names none, a vote
//     account on the policy's allow-list), the signer builds the transaction it expects with
//     solana-go's builders: stake = CreateAccountWithSeed (funding, new and base account = the
//     staker, owner the stake program, exact lamports, 200 bytes) + Initialize (staker and
//     withdrawer = the staker, no lockup at all) + DelegateStake; unstake = Deactivate of the
//     named stake account; withdraw = Withdraw of exact lamports from the named stake account to
//     the staker, five accounts, no custodian. It signs only if the service's message equals
//     that transaction: header, blockhash, every account key with its signer and writable role
//     (keys may be ordered differently within one role class), and every instruction's
//     program, account keys in order and data bytes. Named checks run first to say what differs
//     in the operator's terms; the first difference is reported.
//   - The most the transaction pays if it lands, 5,000 lamports per signature plus the unit
//     price times the unit limit (the runtime's default limit when none is set), must be under
//     the policy's fee cap; it is reported as FeeLamports.
//   - The signature covers the exact message bytes received; only the staker's slot is written,
//     and ed25519 is deterministic, so signing the same transaction again gives the same bytes.
package signer
