package solana

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/stakeflow/stakeflow/signer"
)

func TestSignerCheck(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"verification check", &signer.VerificationError{Check: "fee payer"}, "fee_payer"},
		{"numbered instruction", fmt.Errorf("sign: %w", &signer.VerificationError{Check: "instruction #2 program"}), "instruction_program"},
		{"allow-list", &signer.VerificationError{Check: "vote account allow-list"}, "vote_account_allow_list"},
		{"unknown key", &signer.UnknownKeyError{Address: "x"}, "unknown_key"},
		{"decode", fmt.Errorf("%w: bad base64", signer.ErrDecode), "decode"},
		{"intent", fmt.Errorf("%w: no staker", signer.ErrIntent), "intent"},
		{"other", errors.New("boom"), "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, signerCheck(tt.err)) })
	}
}
