package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/stakeflow/stakeflow/internal/cli"
)

const usage = `usage: devstack <command> [flags]

Commands:
  demo   start the local stack, stake 2 SOL, unstake and withdraw it (printing each step), stop
  up     start the local stack and keep it running until Ctrl-C
  warp   move the running stack's chain forward: warp [--epochs N] [--rpc URL | --stack-dir DIR]

Flags of demo and up:
  --stack-dir DIR        where keys, token, logs and Temporal's database live (default .stack)
  --temporal-port N      Temporal frontend port on 127.0.0.1 (default 7233)
  --ui-port N            Temporal Web UI port on 127.0.0.1 (default 8233)
  --sandbox-addr ADDR    staking-service sandbox listen address (default 127.0.0.1:0, a free port)
  --rpc-addr ADDR        Solana JSON-RPC listen address (default 127.0.0.1:0, a free port)
  --slot-duration D      wall time of one slot (default 100ms)
  --slots-per-epoch N    epoch length in slots (default 256)
  --stakers N            funded staker keys to create (default 3)
  --staker-sol N         SOL given to each staker (default 100)
  --epoch-recheck D      longest wait before a deactivating stake account is read again (default 1s)
  --persist              keep Temporal's database across runs (default true)
  --temporal-cli PATH    Temporal CLI binary (default: $TEMPORAL_CLI, else scripts/tools.sh temporal)
  --timeout D            demo only: give up after this long (default 5m)
  --hsm                  every chain's keys in a SoftHSM2 token the stack creates in its
                         directory (the worker signs through PKCS#11; default false)
  --payload-keyset FILE  keyset (JSON, 0600) every payload written to Temporal is encrypted with
                         (default: <stack-dir>/payload-keyset.json, generated on the first run);
                         a codec server beside the Web UI shows them decoded
  --no-encrypt           write payloads to Temporal in clear, with no codec server: to look at
                         what the server stores without a key in the way, or to reopen a stack
                         directory whose open operations were written in clear (an encrypting
                         worker refuses clear payloads)

Every flag has an environment twin: STAKEFLOW_ plus the flag name in upper snake case.
`

// keysetFile, in the stack directory, is the payload keyset devstack generates when none is given.
const keysetFile = "payload-keyset.json"

// usageError is a command line that cannot be run; the text says what is wrong.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// errInterrupted reports that a signal stopped the command before it finished.
var errInterrupted = errors.New("interrupted; everything started was stopped")

// config is the parsed command line of demo and up.
type config struct {
	StackDir      string
	TemporalCLI   string
	TemporalPort  int
	UIPort        int
	SandboxAddr   string
	RPCAddr       string
	SlotDuration  time.Duration
	SlotsPerEpoch uint64
	Stakers       int
	StakerSOL     uint64
	EpochRecheck  time.Duration
	Persist       bool
	Timeout       time.Duration
	HSM           bool
	PayloadKeyset string
	NoEncrypt     bool
}

// register adds the flags of demo and up to fs.
func (c *config) register(fs *flag.FlagSet) {
	fs.StringVar(&c.StackDir, "stack-dir", ".stack", "directory of keys, token, logs and Temporal's database")
	fs.StringVar(&c.TemporalCLI, "temporal-cli", "", "Temporal CLI binary")
	fs.IntVar(&c.TemporalPort, "temporal-port", 7233, "Temporal frontend port")
	fs.IntVar(&c.UIPort, "ui-port", 8233, "Temporal Web UI port")
	fs.StringVar(&c.SandboxAddr, "sandbox-addr", "127.0.0.1:0", "sandbox listen address")
	fs.StringVar(&c.RPCAddr, "rpc-addr", "127.0.0.1:0", "Solana JSON-RPC listen address")
	fs.DurationVar(&c.SlotDuration, "slot-duration", 100*time.Millisecond, "wall time of one slot")
	fs.Uint64Var(&c.SlotsPerEpoch, "slots-per-epoch", 256, "epoch length in slots")
	fs.IntVar(&c.Stakers, "stakers", 3, "funded staker keys to create")
	fs.Uint64Var(&c.StakerSOL, "staker-sol", 100, "SOL given to each staker")
	fs.DurationVar(&c.EpochRecheck, "epoch-recheck", time.Second, "longest wait before a deactivating stake account is read again")
	fs.BoolVar(&c.Persist, "persist", true, "keep Temporal's database across runs")
	fs.DurationVar(&c.Timeout, "timeout", 5*time.Minute, "demo only: give up after this long")
	fs.BoolVar(&c.HSM, "hsm", false, "every chain's keys in a SoftHSM2 token (the worker signs through PKCS#11)")
	fs.StringVar(&c.PayloadKeyset, "payload-keyset", "", "keyset file (JSON, 0600) of the payload codec (default: <stack-dir>/"+keysetFile+", generated on the first run)")
	fs.BoolVar(&c.NoEncrypt, "no-encrypt", false, "write payloads to Temporal in clear, with no codec server")
}

// validate checks the settings; the error names each one that is wrong.
func (c *config) validate() error {
	var errs []string
	if c.StackDir == "" {
		errs = append(errs, "--stack-dir is required")
	}
	for _, p := range []struct {
		name string
		port int
	}{{"temporal-port", c.TemporalPort}, {"ui-port", c.UIPort}} {
		if p.port <= 0 || p.port > 65535 {
			errs = append(errs, fmt.Sprintf("--%s %d: want a port between 1 and 65535", p.name, p.port))
		}
	}
	if c.TemporalPort == c.UIPort {
		errs = append(errs, fmt.Sprintf("--temporal-port and --ui-port are both %d", c.UIPort))
	}
	if c.SlotDuration < time.Millisecond {
		errs = append(errs, fmt.Sprintf("--slot-duration %s: want at least 1ms", c.SlotDuration))
	}
	if c.SlotsPerEpoch < 1 {
		errs = append(errs, "--slots-per-epoch 0: want at least 1")
	}
	if c.Stakers < 1 {
		errs = append(errs, fmt.Sprintf("--stakers %d: want at least 1", c.Stakers))
	}
	if c.StakerSOL < 3 {
		errs = append(errs, fmt.Sprintf("--staker-sol %d: want at least 3 (the demo stakes 2 SOL and pays fees)", c.StakerSOL))
	}
	if c.EpochRecheck <= 0 {
		errs = append(errs, fmt.Sprintf("--epoch-recheck %s: want a positive duration", c.EpochRecheck))
	}
	if c.NoEncrypt && c.PayloadKeyset != "" {
		errs = append(errs, "--payload-keyset and --no-encrypt together: encrypt with the keyset, or not at all")
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Sprintf("--timeout %s: want a positive duration", c.Timeout))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// parseConfig parses the flags of demo or up.
func parseConfig(cmd string, args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("devstack "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.register(fs)
	if err := cli.Parse(fs, args, ""); err != nil {
		return c, &usageError{msg: fmt.Sprintf("%s: %v (see devstack --help)", cmd, err)}
	}
	if fs.NArg() > 0 {
		return c, &usageError{msg: fmt.Sprintf("%s: unexpected argument %q", cmd, fs.Arg(0))}
	}
	if err := c.validate(); err != nil {
		return c, &usageError{msg: cmd + ": " + err.Error()}
	}
	return c, nil
}

// temporalCLI finds the Temporal CLI: the flag, then $TEMPORAL_CLI, then scripts/tools.sh
// (which installs the pinned version once), found in the working directory or above it.
func temporalCLI(flagValue string, stderr io.Writer) (string, error) {
	path := flagValue
	if path == "" {
		path = os.Getenv("TEMPORAL_CLI")
	}
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("temporal CLI %s: %w", path, err)
		}
		return path, nil
	}
	script, err := findUp(filepath.Join("scripts", "tools.sh"))
	if err != nil {
		return "", fmt.Errorf("no --temporal-cli given and %w", err)
	}
	cmd := exec.Command("bash", script, "temporal")
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("installing the Temporal CLI with %s: %w", script, err)
	}
	path = strings.TrimSpace(string(out))
	if path == "" {
		return "", fmt.Errorf("%s temporal printed no path", script)
	}
	return path, nil
}

// findUp looks for rel in the working directory and each directory above it.
func findUp(rel string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s was not found in the working directory or above it (run from the stakeflow checkout)", rel)
		}
		dir = parent
	}
}
