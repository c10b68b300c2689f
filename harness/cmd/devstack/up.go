package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stakeflow/stakeflow/harness/stack"
)

// runUp starts the stack and keeps it running until ctx ends (Ctrl-C) or the worker stops.
func runUp(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	ls, err := startStack(ctx, cfg, stdout, stderr)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(stdout, "stopping the local stack")
		ls.close()
		fmt.Fprintln(stdout, "stopped")
	}()
	if err := ls.settleLeftovers(ctx, stdout, demoPrefix); err != nil && ctx.Err() == nil {
		return err
	}
	fmt.Fprint(stdout, ls.instructions())
	uctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go ls.watchWorker(uctx, cancel)
	if ls.EVM != nil {
		go ls.checkpoints(uctx, stdout, checkpointEvery)
	}
	<-uctx.Done()
	if cause := context.Cause(uctx); errors.Is(cause, errWorkerStopped) {
		return cause
	}
	return nil
}

// instructions tells how to use the running stack: stakers and copy-paste commands.
func (ls *localStack) instructions() string {
	var b strings.Builder
	if h := ls.HSM; h != nil {
		fmt.Fprintf(&b, "  stakers (keys in the SoftHSM2 token %q, labels %s; %d SOL each):\n", h.Token.Label, strings.Join(h.SolanaLabels, ","), ls.cfg.StakerSOL)
	} else {
		fmt.Fprintf(&b, "  stakers (keys in %s, %d SOL each):\n", ls.KeyDir, ls.cfg.StakerSOL)
	}
	for _, pk := range ls.solanaStakers() {
		fmt.Fprintf(&b, "    %s\n", pk)
	}
	staker := ls.solanaStakers()[0].String()
	env := ls.starterEnv()
	fmt.Fprintf(&b, "\nTry it (in another terminal, from this directory):\n")
	fmt.Fprintf(&b, "  # stake 2 SOL, printing each step; the result names the stake account\n")
	fmt.Fprintf(&b, "  %s go run ./cmd/starter stake --network testnet --staker %s --sol 2 --wait\n", env, staker)
	fmt.Fprintf(&b, "  # unstake it: deactivate, wait for the epoch to end, withdraw\n")
	fmt.Fprintf(&b, "  %s go run ./cmd/starter unstake --network testnet --staker %s --stake-account STAKE_ACCOUNT --wait\n", env, staker)
	fmt.Fprintf(&b, "  # where an operation stands, and every operation\n")
	fmt.Fprintf(&b, "  %s go run ./cmd/starter status --id OPERATION_ID\n", env)
	fmt.Fprintf(&b, "  %s go run ./cmd/starter list\n", env)
	fmt.Fprintf(&b, "  # end the current epoch now instead of waiting for it (the same as the JSON-RPC call below)\n")
	fmt.Fprintf(&b, "  go run ./harness/cmd/devstack warp --epochs 1 --rpc %s\n", ls.Sandbox.Runtime().URL())
	fmt.Fprintf(&b, "  curl -s %s -H 'Content-Type: application/json' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox_warpEpochs\",\"params\":[{\"n\":1}]}'\n",
		ls.Sandbox.Runtime().URL())
	if e := ls.EVM; e != nil {
		fmt.Fprintf(&b, "\nPolygon on the local EVM chain (geth --dev at %s, chain id 1337, network %q; stand-in staking contracts):\n", e.Node.RPCURL(), stack.EVMNetwork)
		if h := ls.HSM; h != nil {
			fmt.Fprintf(&b, "  stakers (keys in the SoftHSM2 token %q, labels %s):\n", h.Token.Label, strings.Join(h.EVMLabels, ","))
		} else {
			fmt.Fprintf(&b, "  stakers (keystore files in %s, passphrase in %s):\n", e.KeyDir, e.PassphraseFile)
		}
		for _, a := range ls.evmStakers() {
			fmt.Fprintf(&b, "    %s\n", a.Hex())
		}
		fmt.Fprintf(&b, "  POL token %s, StakeManager %s, EventsHub %s\n  validator shares:", e.Deployment.Token.Hex(), e.Deployment.StakeManager.Hex(), e.Deployment.EventsHub.Hex())
		for _, v := range e.Deployment.Validators {
			fmt.Fprintf(&b, " %s (validator %d)", v.Share.Hex(), v.ID)
		}
		evmStaker, share := ls.evmStakers()[0].Hex(), e.Deployment.Validators[0].Share.Hex()
		fmt.Fprintf(&b, "\n  # delegate 100 POL (approve exactly that, then buyVoucherPOL)\n")
		fmt.Fprintf(&b, "  %s go run ./cmd/starter polygon delegate --network %s --staker %s --validator-share %s --pol 100 --wait\n", env, stack.EVMNetwork, evmStaker, share)
		fmt.Fprintf(&b, "  # unstake 40 POL: it waits for the withdrawal delay (checkpoints come every %s here), then claims\n", checkpointEvery)
		fmt.Fprintf(&b, "  %s go run ./cmd/starter polygon unstake --network %s --staker %s --validator-share %s --pol 40 --wait\n", env, stack.EVMNetwork, evmStaker, share)
		fmt.Fprintf(&b, "  # withdraw or restake the rewards each checkpoint pays\n")
		fmt.Fprintf(&b, "  %s go run ./cmd/starter polygon withdraw-rewards --network %s --staker %s --validator-share %s --wait\n", env, stack.EVMNetwork, evmStaker, share)
	}
	fmt.Fprintf(&b, "  # watch them in the Web UI\n  %s/namespaces/default/workflows\n", ls.UIURL)
	if ls.keyset != "" {
		fmt.Fprintf(&b, "  # read an operation's history with the Temporal CLI, its payloads decoded by the codec server\n")
		fmt.Fprintf(&b, "  %s\n", ls.showCommand("OPERATION_ID"))
	}
	fmt.Fprintf(&b, "\nRunning; Ctrl-C stops everything.\n")
	return b.String()
}

// showCommand is the Temporal CLI command that prints an operation's history decoded.
func (ls *localStack) showCommand(operationID string) string {
	return fmt.Sprintf("%s workflow show --address %s -w %s --codec-endpoint %s --codec-auth \"Bearer $(cat %s)\"",
		ls.temporalCLI, ls.TemporalAddress(), operationID, ls.CodecURL, ls.CodecTokenFile)
}

// checkpointEvery is how often the local StakeManager's checkpoint advances while the stack runs
// (about every 30 minutes on Polygon): rewards accrue and withdrawal delays pass.
const checkpointEvery = 30 * time.Second

// checkpoints advances the local StakeManager one checkpoint every interval until ctx ends.
func (ls *localStack) checkpoints(ctx context.Context, out io.Writer, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := ls.EVM.Deployment.AdvanceEpochs(ctx, 1); err != nil && ctx.Err() == nil {
				fmt.Fprintf(out, "  (devstack) advancing the Polygon checkpoint failed: %v\n", err)
			}
		}
	}
}
