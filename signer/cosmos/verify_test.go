package cosmos

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
)

// Validator operator addresses: the faucet's and a second account's bytes under the valoper prefix.
func valopers(t *testing.T) (string, string) {
	t.Helper()
	acc, err := tx.DecodeAddress("cosmos", faucetCosmos)
	require.NoError(t, err)
	a, err := tx.EncodeAddress(ValoperPrefix, acc)
	require.NoError(t, err)
	acc[0] ^= 0xff
	b, err := tx.EncodeAddress(ValoperPrefix, acc)
	require.NoError(t, err)
	return a, b
}

func testSigner(t *testing.T) (*Signer, Intent, []byte) {
	t.Helper()
	k, err := keyFromMnemonic(faucetMnemonic)
	require.NoError(t, err)
	addr, err := tx.Address(AccountPrefix, k.PubKey().SerializeCompressed())
	require.NoError(t, err)
	v1, v2 := valopers(t)
	kr := &Keyring{keys: map[string]*secp256k1.PrivateKey{addr: k}}
	s := NewSigner(kr, Policy{Validators: []string{v1, v2}, MaxFee: 10_000, MaxGas: 400_000, Memo: "stakeflow"})
	in := Intent{Operation: OpDelegate, Network: NetworkMocha, Delegator: addr, Validator: v1, Amount: "1000000", TimeoutHeight: 1000}
	return s, in, k.PubKey().SerializeCompressed()
}

func TestSignBuildsVerifiesAndSigns(t *testing.T) {
	s, in, pub := testSigner(t)
	_, v2 := valopers(t)
	acct := Account{AccountNumber: 7, Sequence: 3}
	fee := FeeParams{GasLimit: 200_000, Fee: 400}
	for _, op := range []Intent{
		in,
		{Operation: OpUndelegate, Network: in.Network, Delegator: in.Delegator, Validator: in.Validator, Amount: "5", TimeoutHeight: 7},
		{Operation: OpRedelegate, Network: in.Network, Delegator: in.Delegator, Validator: in.Validator, DstValidator: v2, Amount: "5", TimeoutHeight: 1 << 40},
		{Operation: OpWithdrawRewards, Network: in.Network, Delegator: in.Delegator, Validator: in.Validator, TimeoutHeight: 50},
	} {
		t.Run(op.Operation, func(t *testing.T) {
			u, err := Build(op, pub, acct, fee, "stakeflow")
			require.NoError(t, err)
			signed, err := s.Sign(context.Background(), u, op, acct)
			require.NoError(t, err)
			b, err := base64.StdEncoding.DecodeString(signed.TxBase64)
			require.NoError(t, err)
			assert.Equal(t, TxHash(b), signed.Hash)
			raw, err := tx.UnmarshalTxRaw(b)
			require.NoError(t, err)
			require.Len(t, raw.Signatures, 1)
			assert.True(t, VerifySignature(pub, raw.SignDoc("mocha-4", 7).Marshal(), raw.Signatures[0]))
			assert.False(t, VerifySignature(pub, raw.SignDoc("celestia", 7).Marshal(), raw.Signatures[0]))
			body, err := tx.UnmarshalTxBody(raw.BodyBytes)
			require.NoError(t, err)
			m, err := tx.DecodeMsg(body.Messages[0])
			require.NoError(t, err)
			assert.Equal(t, op.Delegator, m.Delegator)
			assert.Equal(t, op.TimeoutHeight, body.TimeoutHeight, "signed with the build's timeout height")
		})
	}
}

func TestVerifyRefuses(t *testing.T) {
	s, in, pub := testSigner(t)
	_, v2 := valopers(t)
	acct := Account{AccountNumber: 7, Sequence: 3}
	fee := FeeParams{GasLimit: 200_000, Fee: 400}
	build := func(in Intent, acct Account, fee FeeParams, memo string) Unsigned {
		u, err := Build(in, pub, acct, fee, memo)
		require.NoError(t, err)
		return u
	}
	good := build(in, acct, fee, "stakeflow")
	withBody := func(body tx.TxBody) Unsigned {
		return Unsigned{BodyBytes: body.Marshal(), AuthInfoBytes: good.AuthInfoBytes}
	}
	msg := func(in Intent) tx.Any { return message(in) }
	other := in
	other.Amount = "1000001"
	noTimeout := in
	noTimeout.TimeoutHeight = 0
	laterTimeout := in
	laterTimeout.TimeoutHeight = in.TimeoutHeight + 1
	otherVal := in
	otherVal.Validator = v2
	notListed := in
	notListed.Validator, _ = tx.EncodeAddress(ValoperPrefix, make([]byte, 20))
	cases := map[string]struct {
		u  Unsigned
		in Intent
	}{
		"amount differs":          {build(other, acct, fee, "stakeflow"), in},
		"validator differs":       {build(otherVal, acct, fee, "stakeflow"), in},
		"validator not allowed":   {build(notListed, acct, fee, "stakeflow"), notListed},
		"undelegate for delegate": {build(Intent{Operation: OpUndelegate, Network: in.Network, Delegator: in.Delegator, Validator: in.Validator, Amount: in.Amount}, acct, fee, "stakeflow"), in},
		"sequence stale":          {build(in, Account{AccountNumber: 7, Sequence: 2}, fee, "stakeflow"), in},
		"memo":                    {build(in, acct, fee, "other"), in},
		"fee above cap":           {build(in, acct, FeeParams{GasLimit: 200_000, Fee: 10_001}, "stakeflow"), in},
		"fee under minimum":       {build(in, acct, FeeParams{GasLimit: 200_000, Fee: 399}, "stakeflow"), in},
		"gas above cap":           {build(in, acct, FeeParams{GasLimit: 400_001, Fee: 1000}, "stakeflow"), in},
		"two messages":            {withBody(tx.TxBody{Messages: []tx.Any{msg(in), msg(in)}, Memo: "stakeflow"}), in},
		"extension option":        {withBody(tx.TxBody{Messages: []tx.Any{msg(in)}, Memo: "stakeflow", ExtensionOptions: []tx.Any{{TypeURL: "/x"}}}), in},
		"timeout height other":    {withBody(tx.TxBody{Messages: []tx.Any{msg(in)}, Memo: "stakeflow", TimeoutHeight: in.TimeoutHeight - 1}), in},
		"timeout height later":    {build(laterTimeout, acct, fee, "stakeflow"), in},
		"no timeout height":       {build(noTimeout, acct, fee, "stakeflow"), in},
		"intent names no timeout": {build(noTimeout, acct, fee, "stakeflow"), noTimeout},
		"explicit default field":  {Unsigned{BodyBytes: protowire.AppendVarint(protowire.AppendTag(append([]byte{}, good.BodyBytes...), 3, protowire.VarintType), 0), AuthInfoBytes: good.AuthInfoBytes}, in},
		"other delegator":         {build(in, acct, fee, "stakeflow"), Intent{Operation: in.Operation, Network: in.Network, Delegator: faucetCelestiaOther(t), Validator: in.Validator, Amount: in.Amount}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Verify(tc.u, tc.in, pub, acct, s.Policy())
			require.Error(t, err)
			_, err = s.Sign(context.Background(), tc.u, tc.in, acct)
			require.Error(t, err)
		})
	}
	_, err := Verify(good, in, pub, acct, s.Policy())
	require.NoError(t, err)
}

func faucetCelestiaOther(t *testing.T) string {
	acc, err := tx.DecodeAddress(AccountPrefix, faucetCelestia(t))
	require.NoError(t, err)
	acc[19] ^= 1
	a, err := tx.EncodeAddress(AccountPrefix, acc)
	require.NoError(t, err)
	return a
}

func TestIntentValidate(t *testing.T) {
	_, in, _ := testSigner(t)
	cosmosAddr := faucetCosmos
	for name, mod := range map[string]func(*Intent){
		"unknown network":    func(i *Intent) { i.Network = "celestia" },
		"zero amount":        func(i *Intent) { i.Amount = "0" },
		"negative amount":    func(i *Intent) { i.Amount = "-1" },
		"decimal amount":     func(i *Intent) { i.Amount = "1.5" },
		"leading zero":       func(i *Intent) { i.Amount = "01" },
		"wrong prefix":       func(i *Intent) { i.Delegator = cosmosAddr },
		"bad bech32":         func(i *Intent) { i.Delegator = i.Delegator[:len(i.Delegator)-1] + "x" },
		"validator as acct":  func(i *Intent) { i.Validator = i.Delegator },
		"unknown operation":  func(i *Intent) { i.Operation = "stake" },
		"destination on dlg": func(i *Intent) { i.DstValidator = i.Validator },
	} {
		t.Run(name, func(t *testing.T) {
			bad := in
			mod(&bad)
			assert.ErrorIs(t, bad.Validate(), ErrIntent)
		})
	}
	require.NoError(t, in.Validate())
}

// The signer signs only the timeout height the build chose: another one (earlier or later), or
// none, is refused naming both.
func TestVerifyWantsExactlyTheBuildsTimeoutHeight(t *testing.T) {
	s, in, pub := testSigner(t)
	acct := Account{AccountNumber: 7, Sequence: 3}
	fee := FeeParams{GasLimit: 200_000, Fee: 400}
	later := in
	later.TimeoutHeight = 1001
	u, err := Build(later, pub, acct, fee, "stakeflow")
	require.NoError(t, err)
	_, err = s.Sign(context.Background(), u, in, acct)
	require.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), "timeout height 1001, the build chose 1000")

	none := in
	none.TimeoutHeight = 0
	u, err = Build(none, pub, acct, fee, "stakeflow")
	require.NoError(t, err)
	_, err = s.Sign(context.Background(), u, none, acct)
	require.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), "no timeout height")

	u, err = Build(in, pub, acct, fee, "stakeflow")
	require.NoError(t, err)
	_, err = s.Sign(context.Background(), u, in, acct)
	require.NoError(t, err)
}
