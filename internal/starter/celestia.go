package starter

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.temporal.io/sdk/client"
	"golang.org/x/term"

	"github.com/stakeflow/stakeflow/chain/networks"
	signercosmos "github.com/stakeflow/stakeflow/signer/cosmos"
	"github.com/stakeflow/stakeflow/workflows"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
)

var errNoCelestiaVerb = errors.New("celestia: give a command: delegate, undelegate, redelegate, withdraw-rewards")

// celestiaCmd is the Celestia command group: delegate, undelegate (then wait the unbonding
// period), redelegate, withdraw rewards.
func (r *runner) celestiaCmd(fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	types := map[string]string{
		wfcelestia.OpDelegate: wfcelestia.DelegateWorkflowType, wfcelestia.OpUndelegate: wfcelestia.UndelegateWorkflowType,
		wfcelestia.OpRedelegate: wfcelestia.RedelegateWorkflowType, wfcelestia.OpWithdrawRewards: wfcelestia.WithdrawRewardsWorkflowType,
	}
	wfType, ok := types[verb]
	if !ok {
		return nil, &UsageError{Msg: fmt.Sprintf("celestia: unknown command %q (delegate, undelegate, redelegate, withdraw-rewards)", verb)}
	}
	var in wfcelestia.Input
	var id, tia string
	var wait bool
	fs.StringVar(&in.Network, "network", "", strings.Join(networks.Celestia.Names(), " or "))
	fs.StringVar(&in.Delegator, "delegator", "", "delegator address (celestia1..., the key that signs)")
	fs.StringVar(&in.Validator, "validator", "", "validator (celestiavaloper1...), on the worker's allow-list; the source of a redelegation")
	fs.StringVar(&in.RequestedBy, "requested-by", currentUser(), "who starts the operation (cannot approve it)")
	fs.StringVar(&id, "id", "", "operation ID (default: generated and printed)")
	fs.BoolVar(&wait, "wait", false, "follow the operation until it ends, printing each step")
	if verb == wfcelestia.OpRedelegate {
		fs.StringVar(&in.DstValidator, "to-validator", "", "destination validator (celestiavaloper1...)")
	}
	withAmount := verb != wfcelestia.OpWithdrawRewards
	if withAmount {
		fs.StringVar(&in.Amount, "utia", "", "amount in utia")
		fs.StringVar(&tia, "tia", "", "amount in TIA (at most 6 decimals)")
	}
	return func(ctx context.Context) error {
		fail := func(err error) error { return &UsageError{Msg: "celestia " + verb + ": " + err.Error()} }
		if withAmount {
			amount, err := parseUtia(in.Amount, tia)
			if err != nil {
				return fail(err)
			}
			in.Amount = amount
		}
		if err := in.ValidateFor(verb); err != nil {
			return fail(err)
		}
		if id == "" {
			id = newOperationID("celestia-" + verb)
		}
		if err := workflows.ValidateOperationID(id); err != nil {
			return fail(err)
		}
		c, err := r.client()
		if err != nil {
			return err
		}
		defer c.Close()
		run, err := r.start(ctx, c, wfcelestia.Module, id, wfcelestia.Summary(verb, in), wfType, in, wfcelestia.Attributes(verb, in.Network, in.Delegator)...)
		if err != nil {
			return err
		}
		return r.afterStartOf(ctx, c, run, wfType, wfcelestia.Summary(verb, in), wait, celestiaResult)
	}, nil
}

func celestiaResult(run client.WorkflowRun, ctx context.Context) (any, string, error) {
	var res wfcelestia.Result
	err := run.Get(ctx, &res)
	var b strings.Builder
	fmt.Fprintf(&b, "done: celestia %s", res.Operation)
	if res.Amount != "" {
		fmt.Fprintf(&b, " %s", wfcelestia.FormatTIA(res.Amount))
	}
	fmt.Fprintf(&b, "\n  validator: %s", res.Validator)
	if res.DstValidator != "" {
		fmt.Fprintf(&b, "\n  to:        %s", res.DstValidator)
	}
	if res.UnbondedAt != "" {
		fmt.Fprintf(&b, "\n  unbonded:  %s (tokens back)", res.UnbondedAt)
	}
	for _, t := range res.Transactions {
		fmt.Fprintf(&b, "\n  %-16s tx %s (height %d, builds %d, fee %s utia)", t.Kind, t.TxID, t.Block, t.Builds, orDash(t.Fee))
	}
	return res, b.String(), err
}

// keysCmd imports a key: keys import --chain celestia --dir DIR --passphrase-file FILE reads a
// BIP-39 mnemonic from the terminal (or standard input) and writes the key at m/44'/118'/0'/0/0
// as a keystore v3 file. The mnemonic is never stored, logged or echoed.
func (r *runner) keysCmd(fs *flag.FlagSet, verb string, stdin io.Reader) (func(context.Context) error, error) {
	if verb != "import" {
		return nil, &UsageError{Msg: fmt.Sprintf("keys: unknown command %q (import)", verb)}
	}
	var chain, dir, passFile string
	fs.StringVar(&chain, "chain", "", "chain of the key: celestia")
	fs.StringVar(&dir, "dir", "", "directory of the keystore files (the worker's --celestia-keys)")
	fs.StringVar(&passFile, "passphrase-file", "", "file holding the keystore passphrase (the worker's --celestia-passphrase-file)")
	return func(context.Context) error {
		fail := func(msg string) error { return &UsageError{Msg: "keys import: " + msg} }
		if chain != "celestia" {
			return fail(fmt.Sprintf("--chain %q: want celestia", chain))
		}
		if dir == "" || passFile == "" {
			return fail("--dir and --passphrase-file are required")
		}
		pass, err := os.ReadFile(passFile)
		if err != nil {
			return fail(fmt.Sprintf("--passphrase-file: %v", err))
		}
		passphrase := strings.TrimRight(string(pass), "\r\n")
		clear(pass)
		mnemonic, err := readMnemonic(r.out, stdin)
		if err != nil {
			return fail(err.Error())
		}
		addr, path, err := signercosmos.ImportMnemonic(mnemonic, passphrase, dir)
		if err != nil {
			return fail(err.Error())
		}
		return r.print(fmt.Sprintf("imported %s (%s) into %s", addr, signercosmos.HDPath, path),
			map[string]string{"chain": chain, "address": addr, "file": path})
	}, nil
}

// readMnemonic reads one line from the terminal without echo, or from stdin when it is not one.
func readMnemonic(out io.Writer, stdin io.Reader) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(out, "mnemonic (not echoed): ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(out)
		if err != nil {
			return "", fmt.Errorf("reading the mnemonic: %v", err)
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || line == "") {
		return "", errors.New("reading the mnemonic from standard input: nothing read")
	}
	return strings.TrimSpace(line), nil
}
