// Package keys is the seam between verifying and signing. Each chain's signer (signer for
// Solana, signer/evm, signer/cosmos, signer/hyperliquid) decodes an unsigned transaction,
// verifies it against the intent by exact expectation and computes what must be signed: the
// message bytes (Scheme Ed25519) or a 32-byte digest (Secp256k1Recoverable, Secp256k1). Only
// then does it hand those exact bytes to a Backend, which holds keys and signs but verifies
// nothing, in the shape of go-ethereum's accounts.Wallet: it lists its Accounts and signs for
// one. The file keyrings (signer.SolanaKeyring, evm.Keyring, cosmos.Keyring) are the first
// backends; each keeps its one loader and its refusals (files the group or others may read,
// mismatched addresses). Keys in an HSM reached through PKCS#11 (package signer/keys/hsm)
// plug in by implementing Backend: Accounts reads the token's public keys and derives each
// chain's address, Handle carries the key's label or object id, and Sign maps each Scheme to a
// mechanism (CKM_EDDSA over the message; CKM_ECDSA over the digest, then normalising to low S and,
// for Secp256k1Recoverable, finding the recovery id against the public key). The chain signers
// are built over it with their *Backend constructors; verification does not change. Errors name
// the account (a *SignError wrapping ErrSign), never key bytes.
package keys
