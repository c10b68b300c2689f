// Package cosmos builds, verifies and signs Cosmos SDK staking transactions for Celestia in
// SIGN_MODE_DIRECT: delegate (MsgDelegate), undelegate (MsgUndelegate), redelegate
// (MsgBeginRedelegate) and reward withdrawal (MsgWithdrawDelegatorReward).
//
// Keys are secp256k1 keys in Ethereum keystore v3 files (the format of signer/evm); the account
// address of a key is derived per chain, bech32 of RIPEMD-160(SHA-256(compressed public key)).
// ImportMnemonic writes such a file from a BIP-39 mnemonic on the Cosmos path m/44'/118'/0'/0/0.
//
// Build makes the transaction stakeflow expects for an intent and the account number and
// sequence the chain reports; Sign decodes what it is given, verifies it against the same
// expectation (Verify), and only then signs SHA-256 of the SignDoc with a low-S 64-byte r||s
// signature. Key bytes never leave the package: the keyring prints its addresses only.
package cosmos
