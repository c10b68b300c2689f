package evm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realProof is a real beacon chain proof published by EigenLayer: the fields this test needs of
// github.com/Layr-Labs/eigenlayer-contracts src/test/test-data/withdrawal_credential_proof_510257.json
// at commit f84a5151080cdf0b77b9b6e46506cde723d06c28 (copied unchanged into
// testdata/eigenlayer/). ValidatorBalanceProof proves validator 510257's balance chunk up to the
// beacon state root: its first 39 siblings climb the balances list (BALANCE_TREE_HEIGHT 38 and the
// length mixed in) to the balance container root, its last 5 the Deneb state tree from field 12;
// StateRootAgainstLatestBlockHeaderProof climbs from the state root (header field 3) to the block
// root. A checkpoint's balance container proof is those 5 siblings followed by these 3 (what
// EigenLayer's proof generator sends for a Deneb checkpoint), its balance proof the first 39.
type realProof struct {
	ValidatorIndex        uint64   `json:"validatorIndex"`
	BeaconStateRoot       string   `json:"beaconStateRoot"`
	BalanceRoot           string   `json:"balanceRoot"`
	LatestBlockHeaderRoot string   `json:"latestBlockHeaderRoot"`
	ValidatorBalanceProof []string `json:"ValidatorBalanceProof"`
	StateRootProof        []string `json:"StateRootAgainstLatestBlockHeaderProof"`
}

func loadRealProof(t *testing.T) (p realProof, blockRoot, containerRoot, balanceRoot [32]byte, containerProof, balanceProof []byte) {
	t.Helper()
	raw, err := os.ReadFile("testdata/eigenlayer/withdrawal_credential_proof_510257.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &p))
	require.Len(t, p.ValidatorBalanceProof, 44)
	require.Len(t, p.StateRootProof, 3)
	cat := func(hs []string) []byte {
		var out []byte
		for _, h := range hs {
			out = append(out, common.HexToHash(h).Bytes()...)
		}
		return out
	}
	balanceProof = cat(p.ValidatorBalanceProof[:39])
	containerProof = append(cat(p.ValidatorBalanceProof[39:]), cat(p.StateRootProof)...)
	blockRoot, balanceRoot = common.HexToHash(p.LatestBlockHeaderRoot), common.HexToHash(p.BalanceRoot)
	// The container root, and the fixture's own state root, climbed with crypto/sha256 alone.
	containerRoot = climb(balanceRoot, balanceProof, p.ValidatorIndex/4)
	require.Equal(t, common.HexToHash(p.BeaconStateRoot), common.Hash(climb(containerRoot, cat(p.ValidatorBalanceProof[39:]), 12)),
		"the fixture's balance proof climbs from field 12 to its beacon state root")
	return p, blockRoot, containerRoot, balanceRoot, containerProof, balanceProof
}

func climb(leaf [32]byte, proof []byte, index uint64) [32]byte {
	node := leaf
	for i := 0; i < len(proof); i += 32 {
		if index%2 == 0 {
			node = sha256.Sum256(append(append([]byte{}, node[:]...), proof[i:i+32]...))
		} else {
			node = sha256.Sum256(append(append([]byte{}, proof[i:i+32]...), node[:]...))
		}
		index /= 2
	}
	return node
}

// TestRealCheckpointProofAcceptedAndEveryChangeRefused: EigenLayer's published Deneb proof is
// accepted by the product's checker (VerifyBalanceContainer, VerifyBalance, and VerifyProofs on a
// served transaction carrying it) as is; a change of any byte of the container proof, of the
// container root or of the balance proof, of the validator's chunk, or a checkpoint timestamp
// after the fork (Pectra's deeper state tree) is refused. No Pectra proof is published in
// EigenLayer's test data; Pectra's geometry is checked by the sandbox's stand-in pod and by
// TestSignProofsHostile.
func TestRealCheckpointProofAcceptedAndEveryChangeRefused(t *testing.T) {
	p, blockRoot, containerRoot, balanceRoot, containerProof, balanceProof := loadRealProof(t)
	require.Len(t, containerProof, 8*32)
	require.True(t, VerifyBalanceContainer(ProofDeneb, blockRoot, containerRoot, containerProof))
	gwei, ok := VerifyBalance(containerRoot, p.ValidatorIndex, balanceRoot, balanceProof)
	require.True(t, ok)
	// Bytes 8..15 of the balance root (validator 510257 is position 1 of its chunk), little-endian.
	assert.EqualValues(t, 32_000_115_173, gwei)

	assert.False(t, VerifyBalanceContainer(ProofPectra, blockRoot, containerRoot, containerProof), "Pectra's state tree is one level deeper")
	for i := range containerProof {
		bad := append([]byte{}, containerProof...)
		bad[i] ^= 0x01
		if VerifyBalanceContainer(ProofDeneb, blockRoot, containerRoot, bad) {
			t.Fatalf("container proof with byte %d changed accepted", i)
		}
	}
	for i := range containerRoot {
		bad := containerRoot
		bad[i] ^= 0x80
		if VerifyBalanceContainer(ProofDeneb, blockRoot, bad, containerProof) {
			t.Fatalf("container root with byte %d changed accepted", i)
		}
	}
	for i := range balanceProof {
		bad := append([]byte{}, balanceProof...)
		bad[i] ^= 0x01
		if _, ok := VerifyBalance(containerRoot, p.ValidatorIndex, balanceRoot, bad); ok {
			t.Fatalf("balance proof with byte %d changed accepted", i)
		}
	}
	for _, idx := range []uint64{p.ValidatorIndex + 4, p.ValidatorIndex - 4, p.ValidatorIndex ^ 1<<20} {
		_, ok := VerifyBalance(containerRoot, idx, balanceRoot, balanceProof)
		assert.False(t, ok, "validator index %d", idx)
	}

	// Through the signer: a served verifyCheckpointProofs carrying the real proofs, for a
	// checkpoint at the fork's timestamp (Deneb, EigenPod's `<=`).
	s, submitter := checkpointSigner(t)
	pubkeyHash := sha256.Sum256([]byte("validator 510257"))
	serve := func(cproof []byte, croot [32]byte) []byte {
		data, err := CheckpointABI().Pack("verifyCheckpointProofs", BalanceContainerProof{croot, cproof},
			[]BalanceProof{{PubkeyHash: pubkeyHash, BalanceRoot: balanceRoot, Proof: balanceProof}})
		require.NoError(t, err)
		to := testPod
		return servedTx{chainID: testChain, to: &to, value: new(big.Int), gas: 1_500_000, fee: big.NewInt(3 * params.GWei), data: data}.bytes(t)
	}
	in := ProofsIntent{ChainID: testChain, Submitter: submitter, Pod: testPod, CheckpointRoot: blockRoot, ProofsRemaining: 1,
		CheckpointTimestamp: testFork, PectraForkTimestamp: testFork}
	v, err := s.VerifyProofs(in, serve(containerProof, containerRoot))
	require.NoError(t, err)
	assert.Equal(t, 1, v.Proofs)
	for i := range containerProof {
		bad := append([]byte{}, containerProof...)
		bad[i] ^= 0x01
		if _, err := s.VerifyProofs(in, serve(bad, containerRoot)); !isMismatch(err, "checkpoint root") {
			t.Fatalf("container proof with byte %d changed: %v", i, err)
		}
	}
	bad := containerRoot
	bad[31] ^= 1
	_, err = s.VerifyProofs(in, serve(containerProof, bad))
	assert.True(t, isMismatch(err, "checkpoint root"), "%v", err)
	after := in
	after.CheckpointTimestamp = testFork + 1
	_, err = s.VerifyProofs(after, serve(containerProof, containerRoot))
	assert.True(t, isMismatch(err, "checkpoint root"), "a checkpoint after the fork is checked with Pectra's geometry: %v", err)
	for name, in := range map[string]ProofsIntent{
		"no checkpoint timestamp": func() ProofsIntent { c := in; c.CheckpointTimestamp = 0; return c }(),
		"no fork timestamp":       func() ProofsIntent { c := in; c.PectraForkTimestamp = 0; return c }(),
	} {
		_, err := s.VerifyProofs(in, serve(containerProof, containerRoot))
		assert.ErrorIs(t, err, ErrIntent, name)
	}
}

func isMismatch(err error, field string) bool {
	var ve *VerificationError
	return errors.As(err, &ve) && ve.Field == field
}

// TestProofVersionByForkTimestamp: EigenPod._getProofVersion's comparison, `proofTimestamp <=
// pectraForkTimestamp` is Deneb, and its refusal of a zero fork timestamp; each version's
// geometry as BeaconChainProofs.verifyBalanceContainer composes it (written out here: height
// 3 + 5 or 3 + 6, index (3 << height) | 12).
func TestProofVersionByForkTimestamp(t *testing.T) {
	for _, c := range []struct {
		ts, fork uint64
		want     ProofVersion
	}{{999, 1000, ProofDeneb}, {1000, 1000, ProofDeneb}, {1001, 1000, ProofPectra}} {
		v, err := ProofVersionAt(c.ts, c.fork)
		require.NoError(t, err)
		assert.Equal(t, c.want, v, "checkpoint %d, fork %d", c.ts, c.fork)
	}
	_, err := ProofVersionAt(5, 0)
	assert.Error(t, err)
	assert.Equal(t, 8*32, ProofDeneb.BalanceContainerProofLength())
	assert.Equal(t, 9*32, ProofPectra.BalanceContainerProofLength())
	assert.EqualValues(t, 108, ProofDeneb.BalanceContainerGIndex())  // 3<<5 | 12
	assert.EqualValues(t, 204, ProofPectra.BalanceContainerGIndex()) // 3<<6 | 12
	assert.Equal(t, 39*32, BalanceProofLength)
}

// TestPectraForkCatalogue: the catalogue is go-ethereum's chain specs' Prague (Pectra) times
// (go-ethereum@v1.17.10 params/chainspecs) and mainnet's is consensus-specs' ELECTRA_FORK_EPOCH
// 364032 after mainnet's genesis (1606824023) at 32 slots of 12 s; an EigenPodManager answering
// another value on a known network, or zero, is refused, naming both values.
func TestPectraForkCatalogue(t *testing.T) {
	for _, c := range []*params.ChainConfig{params.MainnetChainConfig, params.SepoliaChainConfig, params.HoodiChainConfig} {
		require.NotNil(t, c.PragueTime)
		assert.Equal(t, *c.PragueTime, PectraForkTimestamps[c.ChainID.Uint64()], "chain %s", c.ChainID)
	}
	assert.Len(t, PectraForkTimestamps, 3)
	assert.EqualValues(t, 1606824023+364032*32*12, PectraForkTimestamps[1])

	assert.NoError(t, CheckPectraForkTimestamp(1, 1746612311))
	assert.NoError(t, CheckPectraForkTimestamp(1, 1746612311+12), "the first slot missed")
	assert.NoError(t, CheckPectraForkTimestamp(1337, 42), "a network outside the catalogue: the chain's value")
	for _, bad := range []uint64{0, 1746612311 - 12, 1746612311 + 385, 1741159776} {
		err := CheckPectraForkTimestamp(1, bad)
		if assert.Error(t, err, "%d", bad) && bad != 0 {
			assert.Contains(t, err.Error(), "1746612311")
		}
	}
	assert.Error(t, CheckPectraForkTimestamp(1337, 0))
}

// eigenLayerInterface are the EigenPod and EigenPodManager functions and the event the product's
// CheckpointABI uses, as EigenLayer publishes them: signatures copied from
// github.com/Layr-Labs/eigenlayer-contracts src/contracts/interfaces/IEigenPod.sol and
// IEigenPodManager.sol at commit f84a5151080cdf0b77b9b6e46506cde723d06c28 (structs flattened to
// their ABI tuples: BeaconChainProofs.BalanceContainerProof (bytes32,bytes), BalanceProof
// (bytes32,bytes32,bytes), IEigenPod.Checkpoint (bytes32,uint24,uint64,int64,uint64),
// ValidatorInfo (uint64,uint64,uint64,VALIDATOR_STATUS as uint8), getPod's IEigenPod as address).
var eigenLayerInterface = []struct {
	signature string
	outputs   string
	selector  string // where a published selector is known (DESIGN.md); else computed only
}{
	{"startCheckpoint(bool)", "()", "88676cad"},
	{"verifyCheckpointProofs((bytes32,bytes),(bytes32,bytes32,bytes)[])", "()", "f074ba62"},
	{"getPod(address)", "(address)", "a38406a3"},
	{"pectraForkTimestamp()", "(uint64)", ""},
	{"currentCheckpoint()", "((bytes32,uint24,uint64,int64,uint64))", ""},
	{"currentCheckpointTimestamp()", "(uint64)", ""},
	{"lastCheckpointTimestamp()", "(uint64)", ""},
	{"activeValidatorCount()", "(uint256)", ""},
	{"validatorPubkeyHashToInfo(bytes32)", "((uint64,uint64,uint64,uint8))", ""},
}

// TestCheckpointABIIsEigenLayers: every function of the product's CheckpointABI is one of
// EigenLayer's published functions with its arguments and outputs, its selector the Keccak-256 of
// the published signature; the CheckpointCreated event is IEigenPod's (uint64 indexed, bytes32
// indexed, uint256), its topic the Keccak-256 of its signature.
func TestCheckpointABIIsEigenLayers(t *testing.T) {
	a := CheckpointABI()
	seen := map[string]bool{}
	for _, f := range eigenLayerInterface {
		sel := crypto.Keccak256([]byte(f.signature))[:4]
		if f.selector != "" {
			assert.Equal(t, f.selector, hex.EncodeToString(sel), f.signature)
		}
		m, err := a.MethodById(sel)
		if !assert.NoError(t, err, "%s", f.signature) {
			continue
		}
		seen[m.Name] = true
		assert.Equal(t, f.signature, m.Sig)
		outs := "("
		for i, o := range m.Outputs {
			if i > 0 {
				outs += ","
			}
			outs += o.Type.String()
		}
		assert.Equal(t, f.outputs, outs+")", f.signature)
	}
	for name := range a.Methods {
		assert.True(t, seen[name], "CheckpointABI's %s is not in EigenLayer's published interface as listed", name)
	}
	require.Len(t, a.Events, 1)
	ev := a.Events["CheckpointCreated"]
	assert.Equal(t, "CheckpointCreated(uint64,bytes32,uint256)", ev.Sig)
	assert.Equal(t, common.BytesToHash(crypto.Keccak256([]byte("CheckpointCreated(uint64,bytes32,uint256)"))), ev.ID)
	assert.Equal(t, []bool{true, true, false}, []bool{ev.Inputs[0].Indexed, ev.Inputs[1].Indexed, ev.Inputs[2].Indexed})
}
