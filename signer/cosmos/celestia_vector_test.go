package cosmos

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stakeflow/stakeflow/signer/cosmos/tx"
)

// TestVerifierOnARealCelestiaDelegation runs the verifier over a real Celestia mainnet MsgDelegate
// (tx/testdata/celestia_mainnet_delegate.json, its source cited there): for the intent it carries
// out, everything the verifier reads matches (message, delegator key, validator on the allow-list,
// sequence, fee in utia) until the timeout height, which that transaction, like every wallet's
// of its time, does not set: the verifier refuses it for that reason alone, since a transaction
// without one has no proof of "cannot land". An intent it does not carry out is refused on the
// message.
func TestVerifierOnARealCelestiaDelegation(t *testing.T) {
	b, err := os.ReadFile("tx/testdata/celestia_mainnet_delegate.json")
	require.NoError(t, err)
	var v struct {
		TxBase64 string `json:"txBase64"`
	}
	require.NoError(t, json.Unmarshal(b, &v))
	raw, err := base64.StdEncoding.DecodeString(v.TxBase64)
	require.NoError(t, err)
	txr, err := tx.UnmarshalTxRaw(raw)
	require.NoError(t, err)
	u := Unsigned{BodyBytes: txr.BodyBytes, AuthInfoBytes: txr.AuthInfoBytes}
	pub, err := hex.DecodeString("027a99c76845f352cbdc047b88675ef158e949683903aab4236c2e7180ccd74bd8")
	require.NoError(t, err)
	const validator = "celestiavaloper1pnzrk7yzx0nr9xrcjyswj7ram4qxlrfz28xvn6"
	policy := Policy{Validators: []string{validator}, MaxFee: 50_000, MaxGas: 300_000}
	in := Intent{Operation: OpDelegate, Network: NetworkMainnet, Delegator: "celestia1gz6y8kg22crcg7d3va3q936llmufjvhp2g7deq",
		Validator: validator, Amount: "250000000", TimeoutHeight: 500}

	_, err = Verify(u, in, pub, Account{Sequence: 0}, policy)
	require.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), "timeout height 0, the build chose 500")

	for name, mod := range map[string]func(*Intent){
		"another amount":    func(in *Intent) { in.Amount = "250000001" },
		"an undelegation":   func(in *Intent) { in.Operation = OpUndelegate },
		"another validator": func(in *Intent) { in.Validator = "celestiavaloper1r5xt7twqmh39ky72f4txxjrhlt2z0qwwmdal8c" },
	} {
		t.Run(name, func(t *testing.T) {
			other := in
			mod(&other)
			p := policy
			p.Validators = append(p.Validators, other.Validator)
			_, err := Verify(u, other, pub, Account{Sequence: 0}, p)
			require.ErrorIs(t, err, ErrMismatch)
			assert.Contains(t, err.Error(), "message")
		})
	}
}
