package starter

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/stakeflow/stakeflow/amount"
	"github.com/stakeflow/stakeflow/approval"
	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/internal/cli"
	"github.com/stakeflow/stakeflow/workflows"
	wfcelestia "github.com/stakeflow/stakeflow/workflows/celestia"
	wfhyperliquid "github.com/stakeflow/stakeflow/workflows/hyperliquid"
	wfpolygon "github.com/stakeflow/stakeflow/workflows/polygon"
	wfsolana "github.com/stakeflow/stakeflow/workflows/solana"
	wfton "github.com/stakeflow/stakeflow/workflows/ton"
)

const usageHead = `usage: starter <command> [flags]

Operations:
  stake     --network N --staker ADDR (--lamports N | --sol X) [--vote-account ADDR] [--id ID] [--wait]
  unstake   --network N --staker ADDR --stake-account ADDR [--lamports N] [--id ID] [--wait]
  withdraw  --network N --staker ADDR --stake-account ADDR [--lamports N] [--id ID] [--wait]
            (each also takes --requested-by NAME, default the OS user: that name cannot approve it;
            and --sign-key FILE or --ssh-agent to sign the start: that key cannot approve it)
  approve   --id ID (--key FILE | --ssh-agent [--key-fingerprint SHA256:...]) [--reason TEXT]
  reject    --id ID (--key FILE | --ssh-agent [--key-fingerprint SHA256:...]) [--reason TEXT]
            (a worker with --approvers takes only decisions signed by an approver's key;
            one without takes --approver NAME instead: a typed name, not separation of duties)
  cancel    --id ID
  status    --id ID
  list      [--step STEP] [--operation OP] [--staker ADDR] [--account ADDR] [--tx ID] [--open] [--limit N]
  tag       --payload-keyset FILE VALUE...   (the search tag of each address or transaction ID: with
            a keyset, search attributes hold tags, not values; paste one in the Web UI's search)
`

// usageTail follows the chains' command groups in the usage.
const usageTail = `Keys:
  keys import --chain celestia --dir DIR --passphrase-file FILE   (reads a BIP-39 mnemonic, not echoed; m/44'/118'/0'/0/0)
  keys generate --backend pkcs11 --chain solana|evm|celestia|hyperliquid --label L
                --pkcs11-module M --pkcs11-token T --pkcs11-pin-file F
                (a key pair made inside the HSM token, never extractable; prints its address)
  keys list [--pkcs11-module M --pkcs11-token T --pkcs11-pin-file F] [--solana-keys F,..]
            [--evm-keys DIR --evm-passphrase-file F] [--celestia-keys DIR --celestia-passphrase-file F]
            [--hyperliquid-keys DIR --hyperliquid-passphrase-file F]   (addresses and labels, never secrets)
Schedules (recurring stakes; each run's operation ID is the schedule ID plus its scheduled time):
  schedule create   --schedule-id ID (--cron EXPR | --every 24h [--offset 9h]) --network N --staker ADDR
                    (--lamports N | --sol X) [--vote-account ADDR] [--overlap skip] [--catchup-window 10m]
                    [--paused] [--pause-on-failure=true]
  schedule create   --job apy --network N | --job rewards --network ethereum --address 0xADDR | --job ssv
                    (--cron EXPR | --every 1h) [--since DATE] [--schedule-id ID, default job-apy-<network>,
                    job-rewards-<network>-<address>, job-ssv: one schedule per scope]
  schedule list | describe | pause | unpause | trigger | delete   [--schedule-id ID] [--note TEXT]
Data (read from the store the worker's jobs write; --store DSN, default sqlite:data/stakeflow.db):
  data export       --kind apy|rewards|ssv [--from DATE] [--to DATE] [--format csv|json]
                    [--network N] [--address 0xADDR] [--status S]
  ssv list          [--status failed]
Payload keyset (the --payload-keyset of the worker, the starter and the codec server; docs/codec-server.md):
  keyset new    --id ID --out FILE    (one fresh AES-256 key, current; FILE is created 0600, never overwritten)
  keyset add    --id ID FILE          (a fresh key beside the others, not current: step 1 of a rotation)
  keyset use    --id ID FILE          (make a key current: step 2, once every reader holds the file)
  keyset rotate --id ID FILE          (add and use at once: for processes all restarted together)
  keyset show   FILE                  (the key IDs and which is current, never the keys)
Namespace:
  setup     register the search attributes stakeflow needs (idempotent)

Each operation starts on its chain's task queue, <prefix>-<module> (--task-queue-prefix, default
stakeflow: stakeflow-solana, -evm, -celestia, -hyperliquid, -ton, -jobs), where only a worker
serving that chain polls; the start says when no worker polled it lately.
Every flag has an environment twin (STAKEFLOW_<FLAG>, e.g. STAKEFLOW_TEMPORAL_ADDRESS) and may
come from a JSON file given with --config. Add --json for machine-readable output.
`

// UsageError is a command line that cannot be run; the text says what is wrong.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Run runs one starter command. Temporal is dialled with dial when the command needs it (nil:
// from the connection flags).
func Run(ctx context.Context, args []string, stdout io.Writer, dial func(cli.Temporal) (client.Client, error), chains ...Group) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage(chains))
		if len(args) == 0 {
			return &UsageError{Msg: "no command given"}
		}
		return nil
	}
	cmd, rest := args[0], args[1:]
	verb := ""
	group, isGroup := groups[cmd]
	for _, g := range chains {
		if g.Name == cmd {
			group, isGroup = struct {
				noVerb error
				cmd    groupCmd
			}{errors.New(g.NoVerb), g.Command}, true
		}
	}
	if isGroup {
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			return &UsageError{Msg: group.noVerb.Error()}
		}
		verb, rest = rest[0], rest[1:]
	}
	r := &Session{out: stdout, dial: dial}
	fs := flag.NewFlagSet("starter "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	r.temporal.Register(fs)
	fs.BoolVar(&r.json, "json", false, "print JSON")
	fs.StringVar(&r.config, "config", "", "JSON file of flag values")

	isChain := false
	for _, g := range chains {
		isChain = isChain || g.Name == cmd
	}
	if cmd == "stake" || cmd == "unstake" || cmd == "withdraw" || isChain {
		// Commands that start operations may sign the start.
		r.sign.register(fs, "sign-key", "the start")
	}
	var run func(context.Context) error
	switch cmd {
	case "stake":
		run = r.stakeCmd(fs)
	case "unstake", "withdraw":
		run = r.unstakeCmd(fs, cmd)
	case "approve", "reject":
		run = r.decideCmd(fs, cmd)
	case "cancel":
		run = r.cancelCmd(fs)
	case "status":
		run = r.statusCmd(fs)
	case "list":
		run = r.listCmd(fs)
	case "tag":
		run = r.tagCmd(fs)
	case "setup":
		run = r.setupCmd()
	default:
		if !isGroup {
			return &UsageError{Msg: fmt.Sprintf("unknown command %q (see starter --help)", cmd)}
		}
		var err error
		if run, err = group.cmd(r, fs, verb); err != nil {
			return err
		}
	}
	if err := cli.Parse(fs, rest, "config"); err != nil {
		return &UsageError{Msg: fmt.Sprintf("%s: %v", cmd, err)}
	}
	if r.operand != nil {
		// The command's one argument; its flags may come before or after it.
		if fs.NArg() == 0 {
			return &UsageError{Msg: fmt.Sprintf("%s %s: give the %s", cmd, verb, r.operand.name)}
		}
		*r.operand.dst = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return &UsageError{Msg: fmt.Sprintf("%s: %v", cmd, err)}
		}
	}
	if fs.NArg() > 0 && cmd != "tag" {
		return &UsageError{Msg: fmt.Sprintf("%s: unexpected argument %q", cmd, fs.Arg(0))}
	}
	return run(ctx)
}

// groupCmd returns the command of a group for its verb (an error names an unknown verb).
type groupCmd func(r *Session, fs *flag.FlagSet, verb string) (func(context.Context) error, error)

// groups are the commands that take a verb: one per chain (starter polygon delegate ...) and the
// admin groups. noVerb is the usage error when the verb is missing.
var groups = map[string]struct {
	noVerb error
	cmd    groupCmd
}{
	"schedule": {errNoVerb, (*Session).scheduleCmd},
	"data":     {errors.New("data: give a command: export"), (*Session).dataCmd},
	"ssv":      {errors.New("ssv: give a command: list"), (*Session).ssvCmd},
	"keyset":   {errors.New("keyset: give a command: new, add, use, rotate, show"), (*Session).keysetCmd},
	"keys": {errors.New("keys: give a command: import, generate, list"), func(r *Session, fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
		return r.keysCmd(fs, verb, os.Stdin)
	}},
}

// Group is a chain's command group, `starter <Name> <verb> [flags]`: its module contributes it
// (modules/all.StarterGroups), and cmd/starter hands every group to Run.
type Group struct {
	Name string
	// Usage is the group's part of `starter --help`.
	Usage string
	// NoVerb is the usage error when the verb is missing ("ton: give a command: watch").
	NoVerb string
	// Command adds the verb's flags to fs and returns the command; an unknown verb is a
	// *UsageError naming it.
	Command func(s *Session, fs *flag.FlagSet, verb string) (func(context.Context) error, error)
}

// usage is the text of `starter --help` with the chains' groups.
func usage(chains []Group) string {
	var b strings.Builder
	b.WriteString(usageHead)
	for _, g := range chains {
		b.WriteString(g.Usage)
	}
	b.WriteString(usageTail)
	return b.String()
}

// Session is one starter command's: its connection settings and output. A chain's command group
// starts its operations through it (Start, AfterStartOf), each on the chain's task queue.
type Session struct {
	out      io.Writer
	temporal cli.Temporal
	json     bool
	config   string
	dial     func(cli.Temporal) (client.Client, error)
	// queue is the task queue the last operation was started on; unserved says no worker
	// polled it lately (checkQueue).
	queue    string
	unserved bool
	// sign signs the starts of operations (--sign-key, --ssh-agent); signedBy is the fingerprint
	// of the key that signed the last one.
	sign     signing
	signedBy string
	// tagger is --payload-keyset's search tagger once loaded (searchTagger).
	tagger       *codec.Tagger
	taggerLoaded bool
	// converter opens sealed failures (openFailure) once loaded.
	converter converter.DataConverter
	// operand, when a command sets it, receives the command's one argument (keyset show FILE).
	operand *operand
}

// operand is a command's one argument: its name in the usage error, and where it goes.
type operand struct {
	name string
	dst  *string
}

// statementClock dates signed statements; policyPoll is the pause between status reads while a
// decision waits for the operation's policy. Tests replace them.
var (
	statementClock = time.Now
	policyPoll     = 500 * time.Millisecond
)

// Client dials Temporal with the command's connection settings.
func (r *Session) Client() (client.Client, error) {
	if r.dial != nil {
		return r.dial(r.temporal)
	}
	return r.temporal.Dial(zap.NewNop())
}

func (r *Session) print(human string, v any) error {
	if r.json {
		enc := json.NewEncoder(r.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintln(r.out, human)
	return err
}

// CurrentUser is the operating-system user running the starter, the default of --requested-by.
func CurrentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// NewOperationID is a new operation ID for op: op, a time and a random suffix.
func NewOperationID(op string) string {
	return fmt.Sprintf("%s-%s", op, randomSuffix())
}

type started struct {
	OperationID string `json:"operationId"`
	RunID       string `json:"runId"`
	Workflow    string `json:"workflow"`
	Summary     string `json:"summary"`
	// TaskQueue is where it waits for its module's worker; Warning says when no worker polled it
	// lately.
	TaskQueue string `json:"taskQueue,omitempty"`
	Warning   string `json:"warning,omitempty"`
	// SignedBy is the fingerprint of the key that signed the start, when it was signed.
	SignedBy string `json:"signedBy,omitempty"`
}

// TaskQueue is the task queue of module under the command's --task-queue-prefix.
func (r *Session) TaskQueue(module string) string { return r.temporal.TaskQueue(module) }

// CheckQueue records the task queue an operation was started on and whether a worker polled it
// lately: an operation on a queue nobody serves waits, and the person who started it is told
// which worker it waits for rather than finding it silent later.
func (r *Session) CheckQueue(ctx context.Context, c client.Client, queue string) {
	r.queue = queue
	d, err := c.DescribeTaskQueue(ctx, queue, enums.TASK_QUEUE_TYPE_WORKFLOW)
	r.unserved = err == nil && len(d.GetPollers()) == 0
}

// queueWarning is the warning of an operation started on a queue no worker polled lately.
func (r *Session) queueWarning() string {
	if !r.unserved {
		return ""
	}
	module := strings.TrimPrefix(r.queue, r.temporal.TaskQueuePrefix+"-")
	return fmt.Sprintf("no worker has polled task queue %s lately: the operation waits until a worker serving %s (its settings given) runs", r.queue, module)
}

// start starts an operation's workflow on its module's task queue; a reused operation ID is refused with ErrAlreadyStarted.
func (r *Session) start(ctx context.Context, c client.Client, module, id, summary string, wf any, in any, attrs ...temporal.SearchAttributeUpdate) (client.WorkflowRun, error) {
	queue := r.temporal.TaskQueue(module)
	var memo map[string]any
	if r.sign.set() {
		// The statement names the staker itself: it travels in the memo, a payload.
		signed, err := r.signStart(id, attrs)
		if err != nil {
			return nil, err
		}
		memo = map[string]any{workflows.MemoStart: signed}
	}
	attrs, err := r.Conceal(attrs)
	if err != nil {
		return nil, err
	}
	opts := StartOptions(id, summary, queue, attrs...)
	opts.Memo = memo
	run, err := c.ExecuteWorkflow(ctx, opts, wf, in)
	if err != nil {
		var already *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &already) {
			return nil, fmt.Errorf("%w: %q was used before (run %s); pick another --id", workflows.ErrAlreadyStarted, id, already.RunId)
		}
		return nil, fmt.Errorf("starting %s: %w", id, err)
	}
	r.CheckQueue(ctx, c, queue)
	return run, nil
}

// SignsStarts reports whether the command was given a key to sign the start with (--sign-key or
// --ssh-agent).
func (r *Session) SignsStarts() bool { return r.sign.set() }

// signStart signs the start statement of operation id with the key --sign-key or --ssh-agent
// names: the operation, its chain, operation and staker (from the search attributes it starts
// with). That key cannot approve or reject the operation.
func (r *Session) signStart(id string, attrs []temporal.SearchAttributeUpdate) (approval.Signed, error) {
	sa := temporal.NewSearchAttributes(attrs...)
	chain, _ := sa.GetKeyword(workflows.SAChain)
	op, _ := sa.GetKeyword(workflows.SAOperation)
	staker, _ := sa.GetKeyword(workflows.SAStaker)
	if chain == "" || op == "" || staker == "" {
		return approval.Signed{}, &UsageError{Msg: "this start cannot be signed: it does not name its chain, operation and staker"}
	}
	sg, closeSigner, err := r.sign.signer("sign-key")
	if err != nil {
		return approval.Signed{}, err
	}
	defer closeSigner()
	st := approval.Start{OperationID: id, Chain: chain, Operation: op, Staker: staker, At: statementClock().UTC().Truncate(time.Second)}
	signed, err := signStatement(sg, st.Text())
	if err != nil {
		return approval.Signed{}, err
	}
	r.signedBy = approval.Fingerprint(sg.Public())
	return signed, nil
}

// Op is one operation a command starts: its module (whose queue it runs on), its ID, the
// workflow (Name as the output shows it) and input, its summary and search attributes; with Wait
// the command follows it to its end, read by Result.
type Op struct {
	Module, ID, Summary, Name string
	Workflow, Input           any
	Attrs                     []temporal.SearchAttributeUpdate
	Wait                      bool
	Result                    ResultOf
}

// Launch dials Temporal, starts op on its module's queue and prints it, or with op.Wait follows it
// to its end.
func (r *Session) Launch(ctx context.Context, op Op) error {
	c, err := r.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	run, err := r.start(ctx, c, op.Module, op.ID, op.Summary, op.Workflow, op.Input, op.Attrs...)
	if err != nil {
		return err
	}
	return r.AfterStartOf(ctx, c, run, op.Name, op.Summary, op.Wait, op.Result)
}

// OperationID is id, or a new one for kind when id is empty; an ID the workflows refuse is an
// error naming why.
func OperationID(id, kind string) (string, error) {
	if id == "" {
		id = NewOperationID(kind)
	}
	return id, workflows.ValidateOperationID(id)
}

func (r *Session) stakeCmd(fs *flag.FlagSet) func(context.Context) error {
	var in wfsolana.StakeInput
	var id, lamports, sol string
	var wait bool
	fs.StringVar(&in.Network, "network", "", "Solana network: mainnet-beta or testnet")
	fs.StringVar(&in.Staker, "staker", "", "staker address (fee payer and stake/withdraw authority)")
	fs.StringVar(&lamports, "lamports", "", "amount in lamports")
	fs.StringVar(&sol, "sol", "", "amount in SOL (at most 9 decimals)")
	fs.StringVar(&in.VoteAccount, "vote-account", "", "validator vote account (default: chosen by the service within the worker's --allowed-vote-accounts)")
	fs.StringVar(&in.RequestedBy, "requested-by", CurrentUser(), "who starts the operation (cannot approve it)")
	fs.StringVar(&id, "id", "", "operation ID (default: generated and printed)")
	fs.BoolVar(&wait, "wait", false, "follow the operation until it ends, printing each step")
	return func(ctx context.Context) error {
		n, err := parseLamports(lamports, sol)
		if err != nil {
			return &UsageError{Msg: "stake: " + err.Error()}
		}
		if n == 0 {
			return &UsageError{Msg: "stake: give the amount with --lamports or --sol"}
		}
		in.Lamports = n
		if err := in.Validate(); err != nil {
			return &UsageError{Msg: "stake: " + err.Error()}
		}
		if id, err = OperationID(id, "stake"); err != nil {
			return &UsageError{Msg: "stake: " + err.Error()}
		}
		return r.Launch(ctx, Op{Module: wfsolana.Module, ID: id, Summary: wfsolana.StakeSummary(in), Name: "StakeWorkflow",
			Workflow: wfsolana.StakeWorkflow, Input: in, Attrs: wfsolana.StakeAttributes(in), Wait: wait, Result: solanaResult})
	}
}

func (r *Session) unstakeCmd(fs *flag.FlagSet, op string) func(context.Context) error {
	var in wfsolana.UnstakeInput
	var id, lamports string
	var wait bool
	fs.StringVar(&in.Network, "network", "", "Solana network: mainnet-beta or testnet")
	fs.StringVar(&in.Staker, "staker", "", "staker address (stake and withdraw authority)")
	fs.StringVar(&in.StakeAccount, "stake-account", "", "stake account address")
	fs.StringVar(&lamports, "lamports", "", "expected stake account balance in lamports (default: read from chain)")
	fs.StringVar(&in.RequestedBy, "requested-by", CurrentUser(), "who starts the operation (cannot approve it)")
	fs.StringVar(&id, "id", "", "operation ID (default: generated and printed)")
	fs.BoolVar(&wait, "wait", false, "follow the operation until it ends, printing each step")
	return func(ctx context.Context) error {
		if lamports != "" {
			n, err := parseLamports(lamports, "")
			if err != nil {
				return &UsageError{Msg: op + ": " + err.Error()}
			}
			in.Lamports = n
		}
		if err := in.Validate(); err != nil {
			return &UsageError{Msg: op + ": " + err.Error()}
		}
		var err error
		if id, err = OperationID(id, op); err != nil {
			return &UsageError{Msg: op + ": " + err.Error()}
		}
		o := Op{Module: wfsolana.Module, ID: id, Summary: wfsolana.UnstakeSummary(in), Name: "UnstakeWorkflow",
			Workflow: wfsolana.UnstakeWorkflow, Input: in, Attrs: wfsolana.UnstakeAttributes(op, in), Wait: wait, Result: solanaResult}
		if op == "withdraw" {
			o.Workflow, o.Name, o.Summary = wfsolana.WithdrawWorkflow, "WithdrawWorkflow", wfsolana.WithdrawSummary(in)
		}
		return r.Launch(ctx, o)
	}
}

// ResultOf reads a finished operation's result: the value printed with --json and its human form.
type ResultOf func(client.WorkflowRun, context.Context) (any, string, error)

func solanaResult(run client.WorkflowRun, ctx context.Context) (any, string, error) {
	var res wfsolana.Result
	err := run.Get(ctx, &res)
	return res, formatResult(res), err
}

// AfterStartOf prints the started operation (and any warning about its queue) or, with wait,
// follows it step by step until result reads its end.
func (r *Session) AfterStartOf(ctx context.Context, c client.Client, run client.WorkflowRun, name, summary string, wait bool, result ResultOf) error {
	s := started{OperationID: run.GetID(), RunID: run.GetRunID(), Workflow: name, Summary: summary, TaskQueue: r.queue, Warning: r.queueWarning(),
		SignedBy: r.signedBy}
	human := fmt.Sprintf("started %s\n  operation ID: %s\n  %s", name, s.OperationID, summary)
	if s.SignedBy != "" {
		human += "\n  start signed with: " + s.SignedBy + " (that key cannot approve or reject it)"
	}
	if s.Warning != "" {
		human += "\n  warning: " + s.Warning
	}
	if !wait {
		return r.print(human, s)
	}
	if !r.json {
		fmt.Fprintln(r.out, human)
	}
	return r.follow(ctx, c, run, result)
}

// follow prints each step as the operation moves, then its outcome.
func (r *Session) follow(ctx context.Context, c client.Client, run client.WorkflowRun, result ResultOf) error {
	done := make(chan error, 1)
	var res any
	var human string
	go func() {
		var err error
		res, human, err = result(run, ctx)
		done <- err
	}()
	last := ""
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			st, _ := queryStatus(ctx, c, run.GetID())
			if !r.json && st != nil {
				r.printStep(st, &last)
			}
			if err != nil {
				return fmt.Errorf("operation %s ended: %w", run.GetID(), err)
			}
			return r.print(human, res)
		case <-tick.C:
			if r.json {
				continue
			}
			if st, err := queryStatus(ctx, c, run.GetID()); err == nil {
				r.printStep(st, &last)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *Session) printStep(st *workflows.Status, last *string) {
	line := st.Step
	if st.Stall != nil {
		line += fmt.Sprintf(" (%s, try %d: %s)", st.Stall.Step, st.Stall.Tries, st.Stall.LastError)
	}
	if n := len(st.Attempts); n > 0 && st.Attempts[n-1].TxID != "" {
		at := st.Attempts[n-1]
		line += fmt.Sprintf(" (%s tx %s)", at.Kind, at.TxID)
	}
	if line != *last {
		fmt.Fprintf(r.out, "  %s  %s\n", st.StepSince.UTC().Format("15:04:05"), line)
		*last = line
	}
}

func formatResult(res wfsolana.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "done: %s %s", res.Operation, wfsolana.FormatSOL(res.Lamports))
	if res.StakeAccount != "" {
		fmt.Fprintf(&b, "\n  stake account: %s", res.StakeAccount)
	}
	if res.VoteAccount != "" {
		fmt.Fprintf(&b, "\n  vote account:  %s", res.VoteAccount)
	}
	for _, t := range res.Transactions {
		fmt.Fprintf(&b, "\n  %-8s tx %s (slot %d, builds %d, fee %s lamports)", t.Kind, t.TxID, t.Block, t.Builds, OrDash(t.Fee))
	}
	if res.CancelRequested {
		b.WriteString("\n  a cancel arrived after broadcast: the transaction was followed to its end")
	}
	return b.String()
}

func queryStatus(ctx context.Context, c client.Client, id string) (*workflows.Status, error) {
	v, err := c.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
	if err != nil {
		return nil, err
	}
	var st workflows.Status
	if err := v.Get(&st); err != nil {
		return nil, err
	}
	return &st, nil
}

func (r *Session) decideCmd(fs *flag.FlagSet, cmd string) func(context.Context) error {
	var id string
	var in workflows.ApprovalInput
	var sign signing
	fs.StringVar(&id, "id", "", "operation ID")
	fs.StringVar(&in.Approver, "approver", "", "name of the person deciding, on a worker without approvers (named mode)")
	fs.StringVar(&in.Reason, "reason", "", "why (recorded with the decision)")
	sign.register(fs, "key", "the decision")
	return func(ctx context.Context) error {
		if id == "" {
			return &UsageError{Msg: cmd + ": --id is required"}
		}
		switch {
		case in.Approver == "" && !sign.set():
			return &UsageError{Msg: cmd + ": give --key FILE or --ssh-agent (signed decisions), or --approver NAME on a worker without approvers"}
		case in.Approver != "" && sign.set():
			return &UsageError{Msg: cmd + ": --approver names a free-text approver; a signed decision is named by its key: give one or the other"}
		}
		signer, closeSigner, err := sign.signer("key")
		if err != nil {
			if u, ok := err.(*UsageError); ok {
				u.Msg = cmd + ": " + u.Msg
			}
			return err
		}
		defer closeSigner()
		c, err := r.Client()
		if err != nil {
			return err
		}
		defer c.Close()
		st, err := awaitPolicy(ctx, c, id, policyPoll)
		if err != nil {
			return fmt.Errorf("%s %s: %w", cmd, id, err)
		}
		switch {
		case st.Approval.Mode == workflows.ModeNamed && signer != nil:
			return fmt.Errorf("%s %s: the worker has no approvers configured (named mode): decide with --approver NAME", cmd, id)
		case st.Approval.Mode == workflows.ModeSigned && signer == nil:
			return fmt.Errorf("%s %s: the worker takes only signed decisions: give --key FILE or --ssh-agent", cmd, id)
		}
		var shown, fingerprint string
		if signer != nil {
			decision := approval.Approve
			if cmd == "reject" {
				decision = approval.Reject
			}
			stmt := approval.Statement{OperationID: st.OperationID, Decision: decision, Intent: st.IntentDigest, At: statementClock().UTC().Truncate(time.Second)}
			signed, err := signStatement(signer, stmt.Text())
			if err != nil {
				return fmt.Errorf("%s %s: %w", cmd, id, err)
			}
			in.Statement, in.PublicKey, in.Signature = signed.Statement, signed.PublicKey, signed.Signature
			fingerprint = approval.Fingerprint(signer.Public())
			shown = whatIsDecided(cmd, st) + fmt.Sprintf("\n  signed with: %s\n", fingerprint)
		}
		name := workflows.UpdateApprove
		if cmd == "reject" {
			name = workflows.UpdateReject
		}
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			WorkflowID: id, UpdateName: name, Args: []any{in}, WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err != nil {
			return fmt.Errorf("%s %s: %w", cmd, id, err)
		}
		var after workflows.Status
		if err := h.Get(ctx, &after); err != nil {
			return fmt.Errorf("%s %s: %w", cmd, id, err)
		}
		who := in.Approver
		if fingerprint != "" {
			who = fingerprint
			if n := len(after.Approval.Decisions); n > 0 {
				who = after.Approval.Decisions[n-1].Approver + " (" + fingerprint + ")"
			}
		}
		if r.json {
			return r.print("", struct {
				workflows.Status
				SignedWith string `json:"signedWith,omitempty"`
			}{after, fingerprint})
		}
		return r.print(shown+decisionLine(id, cmd, who, &after), after)
	}
}

// approvalMode says how an operation's decisions are bound to people.
func approvalMode(mode string) string {
	switch mode {
	case workflows.ModeSigned:
		return "signed by approvers' keys"
	case workflows.ModeNamed:
		return "named in free text: not separation of duties"
	}
	return "policy not known yet"
}

// awaitPolicy reads the operation's status until its policy answered (its approval mode is
// known) or it left the validating step: the workflow refuses decisions before, since it cannot
// tell yet whether they must be signed.
func awaitPolicy(ctx context.Context, c client.Client, id string, every time.Duration) (*workflows.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		st, err := queryStatus(ctx, c, id)
		if err != nil {
			return nil, fmt.Errorf("reading the status: %w", err)
		}
		if st.Approval.Mode != "" || st.Step != workflows.StepValidating {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("the operation's policy did not answer within 2m (is a worker serving its chain running?)")
		case <-time.After(every):
		}
	}
}

// whatIsDecided shows what a signed decision is about, as the status says it.
func whatIsDecided(cmd string, st *workflows.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s %s on %s\n", cmd, st.OperationID, st.Chain, st.Operation, st.Network)
	fmt.Fprintf(&b, "  staker:      %s\n", st.Staker)
	if st.Amount != "" {
		fmt.Fprintf(&b, "  amount:      %s %s\n", st.Amount, st.Unit)
	}
	if st.Validator != "" {
		fmt.Fprintf(&b, "  validator:   %s\n", st.Validator)
	}
	if st.Account != "" {
		fmt.Fprintf(&b, "  account:     %s\n", st.Account)
	}
	who := st.RequestedBy
	if st.InitiatorFingerprint != "" {
		who += " (" + st.InitiatorFingerprint + ")"
	}
	fmt.Fprintf(&b, "  requested by: %s\n  intent:      %s", who, st.IntentDigest)
	return b.String()
}

// decisionLine says what an accepted approve or reject did: decided the gate, or counted as one
// approval of the several required.
func decisionLine(id, cmd, approver string, st *workflows.Status) string {
	ap := st.Approval
	if ap.Decision != "" {
		who := ap.Approver
		if n := len(ap.Decisions); n > 0 && ap.Decisions[n-1].Fingerprint != "" {
			who += " (" + ap.Decisions[n-1].Fingerprint + ")"
		}
		return fmt.Sprintf("%s: %s (latest decision by %s)", id, ap.Decision, who)
	}
	n := 0
	for _, d := range ap.Decisions {
		if d.Decision == workflows.DecisionApproved {
			n++
		}
	}
	return fmt.Sprintf("%s: %sd by %s; %d of %d approvals, waiting for another approver", id, cmd, approver, n, max(ap.ApprovalsRequired, 1))
}

func (r *Session) cancelCmd(fs *flag.FlagSet) func(context.Context) error {
	var id string
	fs.StringVar(&id, "id", "", "operation ID")
	return func(ctx context.Context) error {
		if id == "" {
			return &UsageError{Msg: "cancel: --id is required"}
		}
		c, err := r.Client()
		if err != nil {
			return err
		}
		defer c.Close()
		if err := c.CancelWorkflow(ctx, id, ""); err != nil {
			return fmt.Errorf("cancel %s: %w", id, err)
		}
		return r.print(fmt.Sprintf("%s: cancel requested (before broadcast nothing is sent; after it the transaction is followed to its end)", id),
			map[string]string{"operationId": id, "cancel": "requested"})
	}
}

type statusView struct {
	Status    *workflows.Status `json:"status,omitempty"`
	Execution string            `json:"execution"`
	Summary   string            `json:"summary,omitempty"`
	Failure   string            `json:"failure,omitempty"`
	// Retrying lists the activities being retried (Temporal's pending activities past their first
	// attempt, or with a failure).
	Retrying []retryView `json:"retrying,omitempty"`
}

// retryView is an activity the server is retrying: which, how many attempts, the last failure in
// one line and when the next attempt comes.
type retryView struct {
	Activity    string     `json:"activity"`
	Attempt     int32      `json:"attempt"`
	MaxAttempts int32      `json:"maxAttempts,omitempty"`
	LastFailure string     `json:"lastFailure,omitempty"`
	NextAttempt *time.Time `json:"nextAttempt,omitempty"`
	// Running is true while an attempt is under way (its next one is not scheduled yet).
	Running bool `json:"running"`
}

// retries reads the activities being retried from a workflow's description; dc opens a last
// failure's sealed message.
func retries(desc *workflowservice.DescribeWorkflowExecutionResponse, dc converter.DataConverter) []retryView {
	var out []retryView
	for _, pa := range desc.GetPendingActivities() {
		if pa.GetAttempt() <= 1 && pa.GetLastFailure() == nil {
			continue
		}
		last := pa.GetLastFailure()
		if last != nil {
			last = proto.Clone(last).(*failurepb.Failure)
			converter.DecodeCommonFailureAttributes(dc, last)
		}
		v := retryView{
			Activity: pa.GetActivityType().GetName(), Attempt: pa.GetAttempt(), MaxAttempts: pa.GetMaximumAttempts(),
			LastFailure: shorten(firstLine(last.GetMessage()), 200),
			Running:     pa.GetState() == enums.PENDING_ACTIVITY_STATE_STARTED,
		}
		if t := pa.GetScheduledTime(); t != nil && !v.Running {
			at := t.AsTime().UTC()
			v.NextAttempt = &at
		}
		out = append(out, v)
	}
	return out
}

// retryLine says in one line where a retried activity stands.
func retryLine(v retryView, now time.Time) string {
	line := fmt.Sprintf("%s attempt %d", v.Activity, v.Attempt)
	if v.MaxAttempts > 0 {
		line += fmt.Sprintf(" of %d", v.MaxAttempts)
	}
	if v.LastFailure != "" {
		line += "; last failure: " + v.LastFailure
	}
	switch {
	case v.Running:
		line += "; attempt running"
	case v.NextAttempt != nil:
		line += fmt.Sprintf("; next attempt %s (in %s)", v.NextAttempt.Format(time.RFC3339),
			max(v.NextAttempt.Sub(now), 0).Round(time.Second))
	}
	return line
}

// dataConverter is the converter of the session's client (its payload codec included): what
// opens the failure messages the worker sealed, which the server hands over as stored (a
// history's events, a pending activity's last failure).
func (r *Session) dataConverter() (converter.DataConverter, error) {
	if r.converter == nil {
		dc, err := r.temporal.DataConverter()
		if err != nil {
			return nil, err
		}
		r.converter = dc
	}
	return r.converter, nil
}

func (r *Session) statusCmd(fs *flag.FlagSet) func(context.Context) error {
	var id string
	fs.StringVar(&id, "id", "", "operation ID")
	return func(ctx context.Context) error {
		if id == "" {
			return &UsageError{Msg: "status: --id is required"}
		}
		c, err := r.Client()
		if err != nil {
			return err
		}
		defer c.Close()
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return fmt.Errorf("status %s: %w", id, err)
		}
		dc, err := r.dataConverter()
		if err != nil {
			return err
		}
		v := statusView{Execution: desc.GetWorkflowExecutionInfo().GetStatus().String(), Retrying: retries(desc, dc)}
		if st, err := queryStatus(ctx, c, id); err == nil {
			v.Status = st
		} else {
			v.Failure = "status query: " + err.Error()
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s", id, v.Execution)
		if st := v.Status; st != nil {
			fmt.Fprintf(&b, "\n  step:      %s (since %s)", st.Step, st.StepSince.UTC().Format(time.RFC3339))
			fmt.Fprintf(&b, "\n  operation: %s %s %s on %s %s", st.Operation, formatAmount(st), st.Staker, st.Chain, st.Network)
			if st.Account != "" {
				fmt.Fprintf(&b, "\n  account:   %s", st.Account)
			}
			if st.Validator != "" {
				fmt.Fprintf(&b, "\n  validator: %s", st.Validator)
			}
			if st.Approval.Required {
				fmt.Fprintf(&b, "\n  approval:  %s %s (%s)", OrDash(st.Approval.Decision), st.Approval.Approver, approvalMode(st.Approval.Mode))
				for _, d := range st.Approval.Decisions {
					if d.Fingerprint != "" {
						fmt.Fprintf(&b, "\n    %s by %s (%s)", d.Decision, d.Approver, d.Fingerprint)
					}
				}
				fmt.Fprintf(&b, "\n  intent:    %s", st.IntentDigest)
			}
			for _, at := range st.Attempts {
				fmt.Fprintf(&b, "\n  %s build %d: %s %s", at.Kind, at.Build, at.TxID, OrDash(at.Outcome))
				if at.BroadcastError != "" {
					fmt.Fprintf(&b, " (broadcast: %s)", at.BroadcastError)
				}
			}
			if sl := st.Stall; sl != nil {
				fmt.Fprintf(&b, "\n  stalled:   %s, try %d: %s; next try %s", sl.Step, sl.Tries, sl.LastError, sl.NextTryAt.UTC().Format(time.RFC3339))
			}
			switch {
			case st.Reason != "":
				// One line, cause first; the whole chain is in --json (status.error).
				fmt.Fprintf(&b, "\n  failed: %s", st.Reason)
			case st.Error != "":
				fmt.Fprintf(&b, "\n  error: %s", st.Error)
			}
		} else {
			fmt.Fprintf(&b, "\n  %s", v.Failure)
		}
		now := time.Now()
		for _, rv := range v.Retrying {
			fmt.Fprintf(&b, "\n  retrying:  %s", retryLine(rv, now))
		}
		return r.print(b.String(), v)
	}
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// recordedSteps are the values StakeflowStep takes, over every chain.
func recordedSteps() []string {
	steps := slices.Clone(wfsolana.RecordedSteps)
	for _, s := range slices.Concat(wfpolygon.RecordedSteps, wfcelestia.RecordedSteps, wfhyperliquid.RecordedSteps, wfton.RecordedSteps) {
		if !slices.Contains(steps, s) {
			steps = append(steps, s)
		}
	}
	return steps
}

// formatAmount renders a status's amount for people: in SOL for Solana, HYPE for Hyperliquid, in
// the chain's base unit otherwise; "-" while it is not known.
func formatAmount(st *workflows.Status) string {
	if st.Amount == "" {
		return "-"
	}
	if a, err := amount.Parse(st.Amount); err == nil && st.Chain == wfsolana.Chain {
		return a.Format(wfsolana.Decimals) + " SOL"
	}
	if st.Chain == wfhyperliquid.Chain {
		return wfhyperliquid.FormatHYPE(st.Amount)
	}
	return st.Amount + " " + st.Unit
}

// OrDash is s, or "-" when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type listed struct {
	OperationID string `json:"operationId"`
	Workflow    string `json:"workflow"`
	Execution   string `json:"execution"`
	Step        string `json:"step,omitempty"`
	Staker      string `json:"staker,omitempty"`
	Amount      int64  `json:"lamports,omitempty"`
	StartedAt   string `json:"startedAt"`
	// Reason is why a failed operation failed, in one line (its failure's message).
	Reason string `json:"reason,omitempty"`
}

// failureReason reads a closed workflow's failure message from its close event (opened when
// sealed): the one-line reason the operation failed with. It needs no worker.
func (r *Session) failureReason(ctx context.Context, c client.Client, id, runID string) string {
	it := c.GetWorkflowHistory(ctx, id, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return ""
		}
		if a := ev.GetWorkflowExecutionFailedEventAttributes(); a != nil {
			r.openFailure(a.GetFailure())
			return firstLine(a.GetFailure().GetMessage())
		}
		if ev.GetWorkflowExecutionTimedOutEventAttributes() != nil {
			return "timed out"
		}
	}
	return ""
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func (r *Session) listCmd(fs *flag.FlagSet) func(context.Context) error {
	var step, op, staker, account, tx string
	var open bool
	var limit int
	fs.StringVar(&step, "step", "", "only operations whose recorded step is this: "+strings.Join(recordedSteps(), ", "))
	fs.StringVar(&op, "operation", "", "only stake, unstake or withdraw")
	fs.StringVar(&staker, "staker", "", "only operations of this staker (found by its tag with --payload-keyset)")
	fs.StringVar(&account, "account", "", "only operations on this account: a stake account, say (found by its tag with --payload-keyset)")
	fs.StringVar(&tx, "tx", "", "only the operation that sent this transaction ID: a Solana signature, an EVM hash (found by its tag with --payload-keyset)")
	fs.BoolVar(&open, "open", false, "only operations still running")
	fs.IntVar(&limit, "limit", 50, "at most this many")
	return func(ctx context.Context) error {
		if step != "" && !slices.Contains(recordedSteps(), step) {
			return &UsageError{Msg: fmt.Sprintf("list: --step %q is never recorded; the recorded steps are %s (`status --id` shows any operation's exact step)",
				step, strings.Join(recordedSteps(), ", "))}
		}
		q := []string{fmt.Sprintf("%s IS NOT NULL", workflows.SAOperation.GetName())}
		if step != "" {
			q = append(q, fmt.Sprintf("%s = '%s'", workflows.SAStep.GetName(), quote(step)))
		}
		if op != "" {
			q = append(q, fmt.Sprintf("%s = '%s'", workflows.SAOperation.GetName(), quote(op)))
		}
		for _, f := range []struct{ flag, value, attr string }{
			{"--staker", staker, workflows.SAStaker.GetName()},
			{"--account", account, workflows.SAStakeAccount.GetName()},
			{"--tx", tx, workflows.SASignatures.GetName()},
		} {
			if f.value == "" {
				continue
			}
			v, err := r.Searchable("list "+f.flag, f.value)
			if err != nil {
				return err
			}
			q = append(q, fmt.Sprintf("%s = '%s'", f.attr, quote(v)))
		}
		if open {
			q = append(q, "ExecutionStatus = 'Running'")
		}
		c, err := r.Client()
		if err != nil {
			return err
		}
		defer c.Close()
		var out []listed
		var token []byte
		for len(out) < limit {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
				Query: strings.Join(q, " AND "), PageSize: int32(min(limit, 1000)), NextPageToken: token,
			})
			if err != nil {
				return fmt.Errorf("list: %w", err)
			}
			for _, e := range resp.GetExecutions() {
				item := listed{
					OperationID: e.GetExecution().GetWorkflowId(), Workflow: e.GetType().GetName(),
					Execution: e.GetStatus().String(), StartedAt: e.GetStartTime().AsTime().UTC().Format(time.RFC3339),
				}
				sa := e.GetSearchAttributes().GetIndexedFields()
				if p, ok := sa[workflows.SAStep.GetName()]; ok {
					_ = json.Unmarshal(p.GetData(), &item.Step)
				}
				if p, ok := sa[workflows.SAStaker.GetName()]; ok {
					_ = json.Unmarshal(p.GetData(), &item.Staker)
				}
				if p, ok := sa[workflows.SAAmount.GetName()]; ok {
					_ = json.Unmarshal(p.GetData(), &item.Amount)
				}
				switch e.GetStatus() {
				case enums.WORKFLOW_EXECUTION_STATUS_FAILED, enums.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
					item.Reason = r.failureReason(ctx, c, item.OperationID, e.GetExecution().GetRunId())
				}
				out = append(out, item)
			}
			token = resp.GetNextPageToken()
			if len(token) == 0 {
				break
			}
		}
		if len(out) > limit {
			out = out[:limit]
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%-36s %-17s %-10s %-22s %-20s %s", "OPERATION", "WORKFLOW", "STATUS", "STEP", "STARTED", "REASON")
		for _, it := range out {
			fmt.Fprintf(&b, "\n%-36s %-17s %-10s %-22s %-20s %s", it.OperationID, it.Workflow,
				strings.TrimPrefix(it.Execution, "WORKFLOW_EXECUTION_STATUS_"), it.Step, it.StartedAt, shorten(it.Reason, 80))
		}
		if out == nil {
			out = []listed{}
		}
		return r.print(b.String(), out)
	}
}

func quote(s string) string { return strings.ReplaceAll(s, "'", "") }

func (r *Session) setupCmd() func(context.Context) error {
	return func(ctx context.Context) error {
		c, err := r.Client()
		if err != nil {
			return err
		}
		defer c.Close()
		added, err := RegisterSearchAttributes(ctx, c, r.temporal.Namespace)
		if err != nil {
			return err
		}
		return r.print(fmt.Sprintf("search attributes in namespace %s: %d added, %d already there",
			r.temporal.Namespace, len(added), len(workflows.SearchAttributeTypes())-len(added)),
			map[string]any{"namespace": r.temporal.Namespace, "added": added})
	}
}

// RegisterSearchAttributes adds the search attributes stakeflow uses to the namespace, leaving
// those already there. It returns the names it added.
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string) ([]string, error) {
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("listing search attributes of %s: %w", namespace, err)
	}
	want := map[string]enums.IndexedValueType{}
	var added []string
	for _, kv := range workflows.SearchAttributeTypes() {
		name, typ := kv[0], kv[1]
		if _, ok := have.GetCustomAttributes()[name]; ok {
			continue
		}
		v, ok := enums.IndexedValueType_value["INDEXED_VALUE_TYPE_"+strings.ToUpper(camelToSnake(typ))]
		if !ok {
			return nil, fmt.Errorf("search attribute %s: unknown type %s", name, typ)
		}
		want[name] = enums.IndexedValueType(v)
		added = append(added, name)
	}
	if len(want) == 0 {
		return nil, nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: want,
	})
	if err != nil {
		return nil, fmt.Errorf("adding search attributes to %s: %w", namespace, err)
	}
	return added, nil
}

func camelToSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}
