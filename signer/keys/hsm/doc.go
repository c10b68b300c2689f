// Package hsm is the key backend for keys held in a hardware security module (or any token)
// through PKCS#11, the interface every HSM speaks (Thales Luna, AWS CloudHSM, YubiHSM, SoftHSM2).
//
// Open loads the vendor's PKCS#11 library (Config.Module), finds the token by its label and logs
// in with the user PIN read from Config.PINFile, a file the group and others may not read (0600
// or stricter; a looser file is refused naming it and its mode). A refused PIN is a *LoginError
// (ErrLogin) naming the token; no error, log or String ever holds the PIN.
//
// Token.Generate makes a key pair inside the token: the private key is a token object with
// CKA_PRIVATE, CKA_SENSITIVE, CKA_SIGN true and CKA_EXTRACTABLE false (it never leaves the token;
// it cannot decrypt, derive or unwrap), both halves labelled and given a random 16-byte CKA_ID.
// Token.List returns the public halves. Token.Backend is a keys.Backend over the keys named by
// label or "id:<hex>", with the chain's address made from each public key (SolanaAddress,
// EVMAddress, CosmosAddress).
//
// Signing maps each keys.Scheme to one single-part C_Sign: keys.Ed25519 to CKM_EDDSA over the
// message (Solana); keys.Secp256k1Recoverable and keys.Secp256k1 to CKM_ECDSA over the 32-byte
// digest, whose raw r || s is normalised to low S and, for the recoverable scheme, given the
// recovery id under which it recovers the account's public key. The result is byte-identical in
// form to the file keyrings' signatures. Every signature is checked against the account's public
// key before it is returned. The chain signers stay in front: they verify a transaction against
// its intent by exact expectation before anything reaches the token.
//
// PKCS#11 sessions are not safe for concurrent use: a Token keeps a small pool of sessions and
// gives each call one to itself. When the token reports that the user is no longer logged in, it
// logs in again; when a session is closed or unknown, it opens another; then it retries once.
//
// PKCS#11 modules are C libraries, loaded with dlopen: the package needs cgo. Built without cgo,
// Open returns ErrUnavailable ("built without cgo: PKCS#11 unavailable").
//
// Tests run against SoftHSM2 (package hsmtest; build tag integration).
package hsm
