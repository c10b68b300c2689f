package evmchain

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

//go:embed artifacts/*.json
var artifactFiles embed.FS

// Contract names of the artifacts.
const (
	ContractToken          = "POLToken"
	ContractStakeManager   = "StakeManager"
	ContractValidatorShare = "ValidatorShare"
	ContractStakingInfo    = "StakingInfo"
	ContractEventsHub      = "EventsHub"
)

// ContractArtifact is one compiled contract.
type ContractArtifact struct {
	// Name is the contract's name, SourceName its file under contracts/.
	Name, SourceName string
	// Compiler is the solc version that compiled it.
	Compiler string
	// ABI is the contract's interface.
	ABI abi.ABI
	// Bytecode is the creation code.
	Bytecode []byte
}

type artifactJSON struct {
	ContractName string          `json:"contractName"`
	SourceName   string          `json:"sourceName"`
	Compiler     string          `json:"compiler"`
	ABI          json.RawMessage `json:"abi"`
	Bytecode     string          `json:"bytecode"`
}

var (
	artifactsOnce sync.Once
	artifacts     map[string]*ContractArtifact
	artifactsErr  error
)

// Artifact returns the compiled contract called name (ContractToken, ContractStakeManager,
// ContractValidatorShare).
func Artifact(name string) (*ContractArtifact, error) {
	artifactsOnce.Do(func() { artifacts, artifactsErr = loadArtifacts() })
	if artifactsErr != nil {
		return nil, artifactsErr
	}
	a, ok := artifacts[name]
	if !ok {
		return nil, fmt.Errorf("evmchain: no artifact %q", name)
	}
	return a, nil
}

func loadArtifacts() (map[string]*ContractArtifact, error) {
	entries, err := artifactFiles.ReadDir("artifacts")
	if err != nil {
		return nil, fmt.Errorf("evmchain: embedded artifacts: %w", err)
	}
	out := make(map[string]*ContractArtifact, len(entries))
	for _, e := range entries {
		b, err := artifactFiles.ReadFile("artifacts/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("evmchain: artifact %s: %w", e.Name(), err)
		}
		var j artifactJSON
		if err := json.Unmarshal(b, &j); err != nil {
			return nil, fmt.Errorf("evmchain: artifact %s: %w", e.Name(), err)
		}
		parsed, err := abi.JSON(strings.NewReader(string(j.ABI)))
		if err != nil {
			return nil, fmt.Errorf("evmchain: artifact %s: ABI: %w", e.Name(), err)
		}
		code, err := hexutil.Decode(j.Bytecode)
		if err != nil || len(code) == 0 {
			return nil, fmt.Errorf("evmchain: artifact %s: bytecode is not 0x-hex code: %v", e.Name(), err)
		}
		out[j.ContractName] = &ContractArtifact{Name: j.ContractName, SourceName: j.SourceName, Compiler: j.Compiler, ABI: parsed, Bytecode: code}
	}
	for _, name := range []string{ContractToken, ContractStakeManager, ContractValidatorShare,
		ContractBeaconRootOracle, ContractEigenPodManager, ContractEigenPod} {
		if out[name] == nil {
			return nil, fmt.Errorf("evmchain: embedded artifacts lack %s", name)
		}
	}
	return out, nil
}
