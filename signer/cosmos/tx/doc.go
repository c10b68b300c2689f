// Package tx is the Cosmos SDK transaction wire format used by SIGN_MODE_DIRECT signing: TxRaw,
// TxBody, AuthInfo, SignDoc, Any, Coin, Fee, the secp256k1 PubKey and the staking and distribution
// messages stakeflow sends (MsgDelegate, MsgUndelegate, MsgBeginRedelegate,
// MsgWithdrawDelegatorReward), plus bech32 account addresses derived from a public key.
//
// Encoding follows the Cosmos SDK's protobuf definitions (cosmos/tx/v1beta1/tx.proto,
// cosmos/staking/v1beta1/tx.proto, cosmos/distribution/v1beta1/tx.proto,
// cosmos/base/v1beta1/coin.proto, cosmos/crypto/secp256k1/keys.proto) field by field with
// google.golang.org/protobuf/encoding/protowire, and emits what the Go SDK emits: fields in
// field-number order, scalar defaults omitted, embedded messages always written. Decoding accepts
// any valid protobuf encoding of the known fields and refuses unknown fields, groups and wrong
// wire types, so that nothing in a decoded transaction goes unseen. Golden vectors from public
// sources (cosmjs's SIGN_MODE_DIRECT test vectors and a published Cosmos Hub delegation) pin
// both directions.
package tx
