package evm

import (
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// ethersVectors is testdata/ethers/vectors.json, written by vectors.mjs with ethers.
type ethersVectors struct {
	Generator string `json:"generator"`
	Key       struct {
		PrivateKey string `json:"privateKey"`
		Address    string `json:"address"`
	} `json:"key"`
	Keystore struct {
		JSON       string `json:"json"`
		Passphrase string `json:"passphrase"`
		Address    string `json:"address"`
	} `json:"keystore"`
	POLToken       string            `json:"polToken"`
	StakeManager   string            `json:"stakeManager"`
	ValidatorShare string            `json:"validatorShare"`
	Selectors      map[string]string `json:"selectors"`
	Unlimited      string            `json:"unlimited"`
	Vectors        []ethersVector    `json:"vectors"`
}

type ethersVector struct {
	Name      string   `json:"name"`
	Operation string   `json:"operation"`
	Method    string   `json:"method"`
	Args      []string `json:"args"`
	Tx        struct {
		ChainID              string `json:"chainId"`
		Nonce                string `json:"nonce"`
		To                   string `json:"to"`
		GasLimit             string `json:"gasLimit"`
		MaxFeePerGas         string `json:"maxFeePerGas"`
		MaxPriorityFeePerGas string `json:"maxPriorityFeePerGas"`
		Value                string `json:"value"`
	} `json:"tx"`
	Calldata     string `json:"calldata"`
	Unsigned     string `json:"unsigned"`
	UnsignedHash string `json:"unsignedHash"`
	Signed       string `json:"signed"`
	Hash         string `json:"hash"`
	From         string `json:"from"`
}

func loadVectors(tb testing.TB) *ethersVectors {
	tb.Helper()
	raw, err := os.ReadFile("testdata/ethers/vectors.json")
	if err != nil {
		tb.Fatal(err)
	}
	var v ethersVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatal(err)
	}
	if len(v.Vectors) == 0 {
		tb.Fatal("no vectors")
	}
	return &v
}

func (v *ethersVectors) vector(tb testing.TB, name string) ethersVector {
	tb.Helper()
	for _, x := range v.Vectors {
		if x.Name == name {
			return x
		}
	}
	tb.Fatalf("no vector %q", name)
	return ethersVector{}
}

func bigOf(tb testing.TB, s string) *big.Int {
	tb.Helper()
	b, ok := new(big.Int).SetString(s, 10)
	if !ok {
		tb.Fatalf("not a decimal integer: %q", s)
	}
	return b
}

func mustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hexutil.Decode(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// Addresses of the test policy other than the vectors'.
var (
	otherShare = common.HexToAddress("0x9999999999999999999999999999999999999999") // validator 9, allowed
	stranger   = common.HexToAddress("0x1234567890123456789012345678901234567890") // on no list
)

// testPolicy is the policy the vectors are built under: Ethereum mainnet, validator 7's share
// (the vectors') and validator 9's allowed, 50 bps of slippage, default caps.
func testPolicy(v *ethersVectors) Policy {
	return Policy{
		ChainID:      1,
		POLToken:     common.HexToAddress(v.POLToken),
		StakeManager: common.HexToAddress(v.StakeManager),
		ValidatorShares: []ValidatorShare{
			{ValidatorID: 7, Address: common.HexToAddress(v.ValidatorShare)},
			{ValidatorID: 9, Address: otherShare},
		},
		SlippageBps: 50,
	}
}

// testSigner is a Signer holding the vectors' test key under testPolicy.
func testSigner(tb testing.TB, v *ethersVectors) *Signer {
	tb.Helper()
	key, err := crypto.HexToECDSA(v.Key.PrivateKey[2:])
	if err != nil {
		tb.Fatal(err)
	}
	kr := &Keyring{keys: map[common.Address]*ecdsa.PrivateKey{crypto.PubkeyToAddress(key.PublicKey): key}}
	s, err := New(kr, testPolicy(v))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// intentFor is the intent a vector fulfils. Builder-chosen values are left to the transaction
// unless pinned.
func intentFor(tb testing.TB, v *ethersVectors, x ethersVector, pinned bool) Intent {
	tb.Helper()
	in := Intent{
		Operation: Operation(x.Operation),
		ChainID:   bigOf(tb, x.Tx.ChainID).Uint64(),
		Staker:    common.HexToAddress(v.Key.Address),
		Nonce:     bigOf(tb, x.Tx.Nonce).Uint64(),
	}
	if in.Operation != OpApprove {
		in.ValidatorShare = common.HexToAddress(v.ValidatorShare)
	}
	switch in.Operation {
	case OpApprove:
		in.Amount = bigOf(tb, x.Args[1])
	case OpDelegate, OpUnstake:
		in.Amount = bigOf(tb, x.Args[0])
		// The vectors' bounds sit at the edge of 50 bps around these quotes.
		in.ExpectedShares = bigOf(tb, x.Args[0])
		if x.Name == "delegate-large" {
			in.ExpectedShares = big.NewInt(1)
		}
	case OpClaim:
		in.UnbondNonce = bigOf(tb, x.Args[0])
	}
	if pinned {
		in.GasLimit = bigOf(tb, x.Tx.GasLimit).Uint64()
		in.MaxFeePerGas = bigOf(tb, x.Tx.MaxFeePerGas)
		in.MaxPriorityFeePerGas = bigOf(tb, x.Tx.MaxPriorityFeePerGas)
		switch in.Operation {
		case OpDelegate:
			in.MinSharesToMint = bigOf(tb, x.Args[1])
		case OpUnstake:
			in.MaximumSharesToBurn = bigOf(tb, x.Args[1])
		}
	}
	return in
}

// asVerification returns err as a *VerificationError, failing the test when it is not one.
func asVerification(tb testing.TB, err error) *VerificationError {
	tb.Helper()
	var ve *VerificationError
	if !errors.As(err, &ve) || !errors.Is(err, ErrVerification) {
		tb.Fatalf("want a *VerificationError wrapping ErrVerification, got %T: %v", err, err)
	}
	return ve
}

// dynamicOf decodes a vector's unsigned transaction with go-ethereum into a DynamicFeeTx that a
// test may change.
func dynamicOf(tb testing.TB, raw []byte) *types.DynamicFeeTx {
	tb.Helper()
	d, err := decodeUnsigned(raw)
	if err != nil {
		tb.Fatal(err)
	}
	p := payloadOf(d.tx)
	return &types.DynamicFeeTx{ChainID: p.ChainID, Nonce: p.Nonce, GasTipCap: p.GasTipCap, GasFeeCap: p.GasFeeCap,
		Gas: p.Gas, To: p.To, Value: p.Value, Data: p.Data, AccessList: p.AccessList}
}

// payloadBytes encodes a DynamicFeeTx as its 9-field signing payload.
func payloadBytes(tb testing.TB, dt *types.DynamicFeeTx) []byte {
	tb.Helper()
	b, err := encodeIn(types.NewTx(dt), formPayload)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
