package worker

import (
	"errors"
	"flag"
	"fmt"
	"math/big"

	"github.com/stakeflow/stakeflow/activities/eigenlayer"
	evmchain "github.com/stakeflow/stakeflow/chain/evm"
	signerevm "github.com/stakeflow/stakeflow/signer/evm"
)

// registerEigenLayer adds the EigenLayer checkpoint flags to fs.
func (c *EVMConfig) registerEigenLayer(fs *flag.FlagSet) {
	fs.Var(&c.EigenPodManager, "eigenlayer-pod-manager", "comma-separated network=0x... EigenPodManager contracts (EigenLayer checkpoints; empty: none)")
	fs.Uint64Var(&c.EigenMaxGasLimit, "eigenlayer-max-gas-limit", 0, "highest gas limit of a checkpoint transaction to sign (0: the signer's default, 6,000,000)")
	fs.StringVar(&c.EigenMaxTransactionFee, "eigenlayer-max-fee-wei", "", "most a checkpoint transaction may pay, maxFeePerGas x gas, wei (empty: the signer's default, 0.2 ether)")
}

// validateEigenLayer checks the checkpoint settings.
func (c *EVMConfig) validateEigenLayer() error {
	var errs []error
	for _, n := range sortedKeys(c.EigenPodManager) {
		if _, ok := c.RPC[n]; !ok {
			errs = append(errs, fmt.Errorf("--eigenlayer-pod-manager names network %q, which has no --evm-rpc", n))
		}
		if _, err := hexAddress(c.EigenPodManager[n]); err != nil {
			errs = append(errs, fmt.Errorf("--eigenlayer-pod-manager %s: %v", n, err))
		}
	}
	if _, err := optionalWei(c.EigenMaxTransactionFee); err != nil {
		errs = append(errs, fmt.Errorf("--eigenlayer-max-fee-wei: %v", err))
	}
	return errors.Join(errs...)
}

// CheckpointPolicy is the checkpoint signer's policy for network, from the settings.
func (c *EVMConfig) CheckpointPolicy(network string) (signerevm.CheckpointPolicy, error) {
	p := signerevm.CheckpointPolicy{ChainID: evmChainID(network), MaxGasLimit: c.EigenMaxGasLimit}
	if c.MaxFeePerGasGwei > 0 {
		p.MaxFeePerGas = new(big.Int).Mul(new(big.Int).SetUint64(c.MaxFeePerGasGwei), big.NewInt(1_000_000_000))
	}
	var err error
	if p.MaxTotalFee, err = optionalWei(c.EigenMaxTransactionFee); err != nil {
		return p, fmt.Errorf("--eigenlayer-max-fee-wei: %v", err)
	}
	return p, nil
}

// newEigenLayerActivities builds the checkpoint activities on the EVM networks that name an
// EigenPodManager, with the EVM keys and readers; svc is endpoint 5. Networks without one serve
// no checkpoint: the operation fails at once, naming the network.
func newEigenLayerActivities(cfg Config, keys *signerevm.Keyring, networks map[string]*evmchain.Network, svc eigenlayer.Service) (*eigenlayer.Activities, error) {
	acts := &eigenlayer.Activities{Networks: map[string]eigenlayer.Network{}, Service: svc}
	for _, network := range sortedKeys(cfg.EVM.EigenPodManager) {
		n, ok := networks[network]
		if !ok {
			continue
		}
		manager, err := hexAddress(cfg.EVM.EigenPodManager[network])
		if err != nil {
			return nil, fmt.Errorf("--eigenlayer-pod-manager %s: %v", network, err)
		}
		policy, err := cfg.EVM.CheckpointPolicy(network)
		if err != nil {
			return nil, err
		}
		s, err := signerevm.NewCheckpointSigner(keys, policy)
		if err != nil {
			return nil, fmt.Errorf("checkpoint signer for %s: %w", network, err)
		}
		acts.Networks[network] = eigenlayer.Network{Chain: n, Signer: s, PodManager: manager}
	}
	return acts, nil
}
