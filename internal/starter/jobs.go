package starter

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/temporal"

	actjobs "github.com/stakeflow/stakeflow/activities/jobs"
	"github.com/stakeflow/stakeflow/store"
	"github.com/stakeflow/stakeflow/workflows"
	wfjobs "github.com/stakeflow/stakeflow/workflows/jobs"
)

// OpenStore opens the data jobs' store from a DSN ("postgres://..." or "sqlite:PATH") for the
// data and ssv commands: the store package's; tests may put another in its place.
var OpenStore = func(ctx context.Context, dsn string) (actjobs.Reader, error) {
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// defaultStore is --store's default: the worker's default store, run from the same directory.
const defaultStore = "sqlite:data/stakeflow.db"

// jobOperation is the StakeflowOperation of a job kind's runs.
func jobOperation(kind string) string { return "job-" + kind }

// jobScheduled is the action of a data job's schedule and the schedule ID suggested for its scope
// (one schedule per scope: job-apy-<network>, job-rewards-<network>-<address>, job-ssv; with
// --payload-keyset the address's tag in place of the address, as IDs are never encrypted).
func (r *Session) jobScheduled(kind, network, address string, since time.Time) (scheduledAction, string, error) {
	var (
		in  any
		err error
		id  string
	)
	address = strings.ToLower(address)
	attrs := []temporal.SearchAttributeUpdate{workflows.SAOperation.ValueSet(jobOperation(kind))}
	switch kind {
	case wfjobs.KindAPY:
		if address != "" {
			return scheduledAction{}, "", errors.New("--address: the APY job's scope is a network")
		}
		j := wfjobs.APYJobInput{Network: network, Since: since}
		err, in, id = j.Validate(), j, "job-apy-"+network
		attrs = append(attrs, workflows.SANetwork.ValueSet(network))
	case wfjobs.KindRewards:
		j := wfjobs.RewardsJobInput{Network: network, Address: address, Since: since}
		if err = j.Validate(); err != nil {
			return scheduledAction{}, "", err
		}
		name, err := r.Searchable("--address", address)
		if err != nil {
			return scheduledAction{}, "", err
		}
		in, id = j, "job-rewards-"+network+"-"+name
		attrs = append(attrs, workflows.SANetwork.ValueSet(network), workflows.SAStaker.ValueSet(address))
	case wfjobs.KindSSV:
		if network != "" || address != "" || !since.IsZero() {
			return scheduledAction{}, "", errors.New("--network, --address and --since: the SSV job reads every request of the worker's token")
		}
		in, id = wfjobs.SSVJobInput{}, "job-ssv"
	default:
		return scheduledAction{}, "", fmt.Errorf("--job %q: want apy, rewards or ssv", kind)
	}
	if err != nil {
		return scheduledAction{}, "", err
	}
	types := map[string]string{wfjobs.KindAPY: wfjobs.APYJobWorkflowType, wfjobs.KindRewards: wfjobs.RewardsJobWorkflowType, wfjobs.KindSSV: wfjobs.SSVJobWorkflowType}
	return scheduledAction{module: wfjobs.Module, workflow: types[kind], input: in, summary: wfjobs.Summary(kind, network, address), attrs: attrs, job: true}, id, nil
}

// parseTime reads an RFC 3339 time or a date (YYYY-MM-DD, midnight UTC); empty is the zero time.
func parseTime(flagName, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s %q: want a date (2026-11-01) or an RFC 3339 time (2026-11-01T09:00:00Z)", flagName, s)
}

// dataCmd dispatches `starter data <verb>`.
func (r *Session) dataCmd(fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	if verb != "export" {
		return nil, &UsageError{Msg: fmt.Sprintf("unknown data command %q (export)", verb)}
	}
	var kind, from, to, format, dsn string
	var q actjobs.Query
	fs.StringVar(&kind, "kind", "", "what to export: apy, rewards or ssv")
	fs.StringVar(&from, "from", "", "first staking period start (or SSV update) to export: a date or RFC 3339 time (default: the first)")
	fs.StringVar(&to, "to", "", "exclusive end: a date or RFC 3339 time (default: none)")
	fs.StringVar(&format, "format", "csv", "csv or json")
	fs.StringVar(&dsn, "store", defaultStore, "the store: postgres://... or sqlite:PATH")
	fs.StringVar(&q.Network, "network", "", "only this network (apy, rewards)")
	fs.StringVar(&q.Address, "address", "", "only this delegator (rewards)")
	fs.StringVar(&q.Status, "status", "", "only requests of this status (ssv)")
	return func(ctx context.Context) error {
		fail := func(msg string) error { return &UsageError{Msg: "data export: " + msg} }
		var err error
		if q.From, err = parseTime("--from", from); err != nil {
			return fail(err.Error())
		}
		if q.To, err = parseTime("--to", to); err != nil {
			return fail(err.Error())
		}
		if !q.From.IsZero() && !q.To.IsZero() && !q.To.After(q.From) {
			return fail("--to must be after --from")
		}
		if format != "csv" && format != "json" {
			return fail(fmt.Sprintf("--format %q: want csv or json", format))
		}
		if kind != wfjobs.KindAPY && kind != wfjobs.KindRewards && kind != wfjobs.KindSSV {
			return fail(fmt.Sprintf("--kind %q: want apy, rewards or ssv", kind))
		}
		q.Address = strings.ToLower(q.Address)
		st, err := openStore(ctx, dsn)
		if err != nil {
			return err
		}
		t, err := readTable(ctx, st, kind, q)
		if err != nil {
			return err
		}
		if format == "json" {
			return t.writeJSON(r.out)
		}
		return t.writeCSV(r.out)
	}, nil
}

// ssvCmd dispatches `starter ssv <verb>`.
func (r *Session) ssvCmd(fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	if verb != "list" {
		return nil, &UsageError{Msg: fmt.Sprintf("unknown ssv command %q (list)", verb)}
	}
	var dsn, status string
	fs.StringVar(&status, "status", "", "only requests of this status, e.g. failed (default: all)")
	fs.StringVar(&dsn, "store", defaultStore, "the store: postgres://... or sqlite:PATH")
	return func(ctx context.Context) error {
		st, err := openStore(ctx, dsn)
		if err != nil {
			return err
		}
		rows, err := st.SSVRequests(ctx, actjobs.Query{Status: status})
		if err != nil {
			return fmt.Errorf("reading SSV requests: %w", err)
		}
		t := ssvTable(rows)
		if r.json {
			return t.writeJSON(r.out)
		}
		return t.writeText(r.out)
	}, nil
}

func openStore(ctx context.Context, dsn string) (actjobs.Reader, error) {
	st, err := OpenStore(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("opening the store %s (--store): %w", store.RedactDSN(dsn), err)
	}
	return st, nil
}

// table is rows of text under a header: CSV columns, JSON keys. Decimals stay the store's text.
type table struct {
	header []string
	rows   [][]string
	// kinds marks the columns written as JSON numbers or booleans (by index); the rest are
	// strings.
	numeric, boolean map[int]bool
}

func readTable(ctx context.Context, st actjobs.Reader, kind string, q actjobs.Query) (*table, error) {
	switch kind {
	case wfjobs.KindAPY:
		rows, err := st.APYs(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("reading APYs: %w", err)
		}
		return apyTable(rows), nil
	case wfjobs.KindRewards:
		rows, err := st.Rewards(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("reading rewards: %w", err)
		}
		return rewardsTable(rows), nil
	}
	rows, err := st.SSVRequests(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("reading SSV requests: %w", err)
	}
	return ssvTable(rows), nil
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func apyTable(rows []actjobs.APY) *table {
	t := &table{header: []string{"network", "period", "periodStart", "periodEnd", "updatedAt", "networkApy", "consensusApy", "executionApy", "flag"},
		numeric: map[int]bool{1: true}}
	for _, r := range rows {
		t.rows = append(t.rows, []string{r.Network, strconv.FormatInt(r.Period, 10), ts(r.PeriodStart), ts(r.PeriodEnd), ts(r.UpdatedAt),
			r.NetworkAPY, r.ConsensusAPY, r.ExecutionAPY, r.Flag})
	}
	return t
}

func rewardsTable(rows []actjobs.Reward) *table {
	t := &table{header: []string{"network", "address", "period", "periodStart", "periodEnd", "type", "validator", "currency", "recipient",
		"amount", "netAmount", "fee", "notFinalized", "flag"}, boolean: map[int]bool{12: true}}
	for _, r := range rows {
		t.rows = append(t.rows, []string{r.Network, r.Address, r.Period, ts(r.PeriodStart), ts(r.PeriodEnd), r.Type, r.Validator, r.Currency,
			r.Recipient, r.Amount, r.NetAmount, r.Fee, strconv.FormatBool(r.NotFinalized), r.Flag})
	}
	return t
}

func ssvTable(rows []actjobs.SSVRequest) *table {
	t := &table{header: []string{"id", "status", "validatorsCount", "amountPerValidator", "type", "ssvOwnerAddress", "withdrawalAddress",
		"feeRecipientAddress", "updatedAt", "flag"}, numeric: map[int]bool{2: true}}
	for _, r := range rows {
		t.rows = append(t.rows, []string{r.ID, r.Status, strconv.Itoa(r.ValidatorsCount), r.AmountPerValidator, r.Type, r.SSVOwnerAddress,
			r.WithdrawalAddress, r.FeeRecipientAddress, ts(r.UpdatedAt), r.Flag})
	}
	return t
}

// writeCSV writes the header row then one row per record (RFC 4180).
func (t *table) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.header); err != nil {
		return err
	}
	if err := cw.WriteAll(t.rows); err != nil {
		return err
	}
	return cw.Error()
}

// writeJSON writes a JSON array of objects keyed by the header. Decimals are JSON strings, so no
// reader rounds them through a float.
func (t *table) writeJSON(w io.Writer) error {
	out := make([]json.RawMessage, 0, len(t.rows))
	for _, row := range t.rows {
		var b strings.Builder
		b.WriteByte('{')
		for i, h := range t.header {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(h)
			b.Write(k)
			b.WriteByte(':')
			if t.numeric[i] || t.boolean[i] {
				b.WriteString(row[i])
				continue
			}
			v, _ := json.Marshal(row[i])
			b.Write(v)
		}
		b.WriteByte('}')
		out = append(out, json.RawMessage(b.String()))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeText writes the table aligned for a terminal.
func (t *table) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(t.header, "\t")))
	for _, row := range t.rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}
