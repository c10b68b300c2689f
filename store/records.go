package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// APY is one staking period's network APY (endpoint 2).
type APY struct {
	Network                                string
	Period                                 int64     // staking period number
	PeriodStart, PeriodEnd, UpdatedAt      time.Time // zero when unknown
	NetworkAPY, ConsensusAPY, ExecutionAPY string    // exact decimal text as the service sent it
	// Flag says why the record is not to be taken as true (it contradicts itself or what the chain
	// can produce), one line; "" for a record as the interface means it.
	Flag string
}

// Reward is one delegator reward of a staking period (endpoint 1).
type Reward struct {
	Network, Address, Period, Type string // natural key: network+address+period+type
	Validator, Currency, Recipient string
	Amount, NetAmount, Fee         string // exact decimal text
	PeriodStart, PeriodEnd         time.Time
	NotFinalized                   bool
	Flag                           string // as APY.Flag
}

// SSVRequest is one SSV validator set-up request as last seen (endpoint 8).
type SSVRequest struct {
	ID, Status               string
	ValidatorsCount          int
	AmountPerValidator, Type string
	SSVOwnerAddress          string
	WithdrawalAddress        string
	FeeRecipientAddress      string
	UpdatedAt                time.Time // when we saw it
	Flag                     string    // as APY.Flag
}

// SSVEvent is one status change of an SSV request.
type SSVEvent struct {
	RequestID, From, To string // From "" for a new request
	At                  time.Time
}

// Query selects rows; zero fields do not filter. From is inclusive and To exclusive.
type Query struct {
	Network, Address, Status string
	From, To                 time.Time
}

// UpsertAPY inserts or updates by (network, period); returns how many rows were inserted or
// changed (an identical re-write counts 0).
func (db *DB) UpsertAPY(ctx context.Context, rows []APY) (int, error) {
	const q = `INSERT INTO network_apy AS t
  (network, period, period_start, period_end, updated_at, network_apy, consensus_apy, execution_apy, flag_reason)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (network, period) DO UPDATE SET
  period_start = excluded.period_start, period_end = excluded.period_end,
  updated_at = excluded.updated_at, network_apy = excluded.network_apy,
  consensus_apy = excluded.consensus_apy, execution_apy = excluded.execution_apy,
  flag_reason = excluded.flag_reason
WHERE t.flag_reason IS DISTINCT FROM excluded.flag_reason
   OR t.period_start IS DISTINCT FROM excluded.period_start
   OR t.period_end IS DISTINCT FROM excluded.period_end
   OR t.updated_at IS DISTINCT FROM excluded.updated_at
   OR t.network_apy IS DISTINCT FROM excluded.network_apy
   OR t.consensus_apy IS DISTINCT FROM excluded.consensus_apy
   OR t.execution_apy IS DISTINCT FROM excluded.execution_apy`
	args := make([][]any, len(rows))
	for i, r := range rows {
		if r.Network == "" {
			return 0, errors.New("store: APY row without a network")
		}
		a := []any{r.Network, r.Period, db.timeArg(r.PeriodStart), db.timeArg(r.PeriodEnd), db.timeArg(r.UpdatedAt)}
		for _, d := range []struct{ name, v string }{
			{"network APY", r.NetworkAPY}, {"consensus APY", r.ConsensusAPY}, {"execution APY", r.ExecutionAPY},
		} {
			v, err := decimalArg(d.name, d.v)
			if err != nil {
				return 0, err
			}
			a = append(a, v)
		}
		args[i] = append(a, textArg(r.Flag))
	}
	return db.execEach(ctx, "APY", q, args)
}

// LastAPYPeriod is the highest stored period of network; ok false when none.
func (db *DB) LastAPYPeriod(ctx context.Context, network string) (period int64, ok bool, err error) {
	var p sql.NullInt64
	err = db.sql.QueryRowContext(ctx, `SELECT MAX(period) FROM network_apy WHERE network = $1`, network).Scan(&p)
	if err != nil {
		return 0, false, fmt.Errorf("store: last APY period of %s: %w", network, err)
	}
	return p.Int64, p.Valid, nil
}

// UpsertRewards inserts or updates by (network, address, period, type); returns how many rows
// were inserted or changed (an identical re-write counts 0).
func (db *DB) UpsertRewards(ctx context.Context, rows []Reward) (int, error) {
	const q = `INSERT INTO delegator_rewards AS t
  (network, address, period, type, validator, currency, recipient, amount, net_amount, fee,
   period_start, period_end, not_finalized, flag_reason)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (network, address, period, type) DO UPDATE SET
  validator = excluded.validator, currency = excluded.currency, recipient = excluded.recipient,
  amount = excluded.amount, net_amount = excluded.net_amount, fee = excluded.fee,
  period_start = excluded.period_start, period_end = excluded.period_end,
  not_finalized = excluded.not_finalized, flag_reason = excluded.flag_reason
WHERE t.flag_reason IS DISTINCT FROM excluded.flag_reason
   OR t.validator IS DISTINCT FROM excluded.validator
   OR t.currency IS DISTINCT FROM excluded.currency
   OR t.recipient IS DISTINCT FROM excluded.recipient
   OR t.amount IS DISTINCT FROM excluded.amount
   OR t.net_amount IS DISTINCT FROM excluded.net_amount
   OR t.fee IS DISTINCT FROM excluded.fee
   OR t.period_start IS DISTINCT FROM excluded.period_start
   OR t.period_end IS DISTINCT FROM excluded.period_end
   OR t.not_finalized IS DISTINCT FROM excluded.not_finalized`
	args := make([][]any, len(rows))
	for i, r := range rows {
		if r.Network == "" || r.Address == "" || r.Period == "" || r.Type == "" {
			return 0, fmt.Errorf("store: reward row without its full key (network %q, address %q, period %q, type %q)",
				r.Network, r.Address, r.Period, r.Type)
		}
		a := []any{r.Network, r.Address, r.Period, r.Type, r.Validator, r.Currency, r.Recipient}
		for _, d := range []struct{ name, v string }{
			{"reward amount", r.Amount}, {"reward net amount", r.NetAmount}, {"reward fee", r.Fee},
		} {
			v, err := decimalArg(d.name, d.v)
			if err != nil {
				return 0, err
			}
			a = append(a, v)
		}
		args[i] = append(a, db.timeArg(r.PeriodStart), db.timeArg(r.PeriodEnd), r.NotFinalized, textArg(r.Flag))
	}
	return db.execEach(ctx, "rewards", q, args)
}

// LastRewardPeriodStart is the latest PeriodStart stored for (network, address) among
// finalized rows; ok false when none.
func (db *DB) LastRewardPeriodStart(ctx context.Context, network, address string) (time.Time, bool, error) {
	var t time.Time
	err := db.sql.QueryRowContext(ctx, `SELECT MAX(period_start) FROM delegator_rewards
WHERE network = $1 AND address = $2 AND NOT not_finalized`, network, address).Scan(nullTime{&t})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: last reward period of %s %s: %w", network, address, err)
	}
	return t, !t.IsZero(), nil
}

// UpsertSSVRequests upserts by request id in one transaction and records an SSVEvent for each
// request whose status is new or changed (at = at); returns those events.
func (db *DB) UpsertSSVRequests(ctx context.Context, rows []SSVRequest, at time.Time) ([]SSVEvent, error) {
	const insert = `INSERT INTO ssv_requests
  (id, status, validators_count, amount_per_validator, type, ssv_owner_address,
   withdrawal_address, fee_recipient_address, updated_at, flag_reason)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (id) DO NOTHING`
	const update = `UPDATE ssv_requests SET
  status = $2, validators_count = $3, amount_per_validator = $4, type = $5,
  ssv_owner_address = $6, withdrawal_address = $7, fee_recipient_address = $8, updated_at = $9,
  flag_reason = $10
WHERE id = $1`
	const event = `INSERT INTO ssv_events (request_id, from_status, to_status, at) VALUES ($1, $2, $3, $4)`
	current := `SELECT status FROM ssv_requests WHERE id = $1`
	if db.dialect == DialectPostgres {
		current += ` FOR UPDATE` // a concurrent run waits, then sees this run's status
	}
	if at.IsZero() {
		return nil, errors.New("store: SSV requests upserted without a time")
	}
	at = at.UTC().Truncate(time.Microsecond)
	args := make([][]any, len(rows))
	for i, r := range rows {
		if r.ID == "" || r.Status == "" {
			return nil, fmt.Errorf("store: SSV request without an id or status (id %q)", r.ID)
		}
		amount, err := decimalArg("SSV amount per validator", r.AmountPerValidator)
		if err != nil {
			return nil, err
		}
		seen := r.UpdatedAt
		if seen.IsZero() {
			seen = at
		}
		args[i] = []any{r.ID, r.Status, r.ValidatorsCount, amount, r.Type, r.SSVOwnerAddress,
			r.WithdrawalAddress, r.FeeRecipientAddress, db.timeArg(seen), textArg(r.Flag)}
	}
	var events []SSVEvent
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		events = events[:0]
		for i, a := range args {
			res, err := tx.ExecContext(ctx, insert, a...)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			from := ""
			if n == 0 {
				if err := tx.QueryRowContext(ctx, current, rows[i].ID).Scan(&from); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, update, a...); err != nil {
					return err
				}
				if from == rows[i].Status {
					continue
				}
			}
			if _, err := tx.ExecContext(ctx, event, rows[i].ID, from, rows[i].Status, db.timeArg(at)); err != nil {
				return err
			}
			events = append(events, SSVEvent{RequestID: rows[i].ID, From: from, To: rows[i].Status, At: at})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: upsert SSV requests: %w", err)
	}
	return events, nil
}

// SSVStatusCounts is the number of stored SSV requests per status.
func (db *DB) SSVStatusCounts(ctx context.Context) (map[string]int, error) {
	rs, err := db.sql.QueryContext(ctx, `SELECT status, COUNT(*) FROM ssv_requests GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("store: SSV status counts: %w", err)
	}
	defer func() { _ = rs.Close() }()
	counts := map[string]int{}
	for rs.Next() {
		var (
			s string
			n int
		)
		if err := rs.Scan(&s, &n); err != nil {
			return nil, fmt.Errorf("store: SSV status counts: %w", err)
		}
		counts[s] = n
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: SSV status counts: %w", err)
	}
	return counts, nil
}

// APYs is the stored APY rows that q selects (by network and period start), ordered by
// network, period.
func (db *DB) APYs(ctx context.Context, q Query) ([]APY, error) {
	where, args := db.filter(q, "network", "", "", "period_start")
	var out []APY
	err := db.query(ctx, `SELECT network, period, period_start, period_end, updated_at,
  network_apy, consensus_apy, execution_apy, flag_reason FROM network_apy`+where+` ORDER BY network, period`, args,
		func(rs *sql.Rows) error {
			var r APY
			if err := rs.Scan(&r.Network, &r.Period, nullTime{&r.PeriodStart}, nullTime{&r.PeriodEnd},
				nullTime{&r.UpdatedAt}, nullText{&r.NetworkAPY}, nullText{&r.ConsensusAPY}, nullText{&r.ExecutionAPY}, nullText{&r.Flag}); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: APYs: %w", err)
	}
	return out, nil
}

// Rewards is the stored reward rows that q selects (by network, address and period start),
// ordered by network, address, period, type.
func (db *DB) Rewards(ctx context.Context, q Query) ([]Reward, error) {
	where, args := db.filter(q, "network", "address", "", "period_start")
	var out []Reward
	err := db.query(ctx, `SELECT network, address, period, type, validator, currency, recipient,
  amount, net_amount, fee, period_start, period_end, not_finalized, flag_reason FROM delegator_rewards`+where+`
ORDER BY network, address, period, type`, args,
		func(rs *sql.Rows) error {
			var r Reward
			if err := rs.Scan(&r.Network, &r.Address, &r.Period, &r.Type, &r.Validator, &r.Currency, &r.Recipient,
				nullText{&r.Amount}, nullText{&r.NetAmount}, nullText{&r.Fee},
				nullTime{&r.PeriodStart}, nullTime{&r.PeriodEnd}, &r.NotFinalized, nullText{&r.Flag}); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: rewards: %w", err)
	}
	return out, nil
}

// SSVRequests is the stored SSV requests that q selects (by status and UpdatedAt), ordered by id.
func (db *DB) SSVRequests(ctx context.Context, q Query) ([]SSVRequest, error) {
	where, args := db.filter(q, "", "", "status", "updated_at")
	var out []SSVRequest
	err := db.query(ctx, `SELECT id, status, validators_count, amount_per_validator, type,
  ssv_owner_address, withdrawal_address, fee_recipient_address, updated_at, flag_reason FROM ssv_requests`+where+`
ORDER BY id`, args,
		func(rs *sql.Rows) error {
			var r SSVRequest
			if err := rs.Scan(&r.ID, &r.Status, &r.ValidatorsCount, nullText{&r.AmountPerValidator}, &r.Type,
				&r.SSVOwnerAddress, &r.WithdrawalAddress, &r.FeeRecipientAddress, nullTime{&r.UpdatedAt}, nullText{&r.Flag}); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: SSV requests: %w", err)
	}
	return out, nil
}

// SSVEvents is the status history of one SSV request, oldest first.
func (db *DB) SSVEvents(ctx context.Context, requestID string) ([]SSVEvent, error) {
	var out []SSVEvent
	err := db.query(ctx, `SELECT request_id, from_status, to_status, at FROM ssv_events
WHERE request_id = $1 ORDER BY id`, []any{requestID},
		func(rs *sql.Rows) error {
			var e SSVEvent
			if err := rs.Scan(&e.RequestID, &e.From, &e.To, nullTime{&e.At}); err != nil {
				return err
			}
			out = append(out, e)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: SSV events of %s: %w", requestID, err)
	}
	return out, nil
}

// filter is the WHERE clause (with its arguments) of q over the named columns; an empty
// column name means q's field does not apply.
func (db *DB) filter(q Query, network, address, status, at string) (string, []any) {
	var (
		conds []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if network != "" && q.Network != "" {
		add(network+" = ?", q.Network)
	}
	if address != "" && q.Address != "" {
		add(address+" = ?", q.Address)
	}
	if status != "" && q.Status != "" {
		add(status+" = ?", q.Status)
	}
	if !q.From.IsZero() {
		add(at+" >= ?", db.timeArg(q.From))
	}
	if !q.To.IsZero() {
		add(at+" < ?", db.timeArg(q.To))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func (db *DB) query(ctx context.Context, q string, args []any, row func(*sql.Rows) error) error {
	rs, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer func() { _ = rs.Close() }()
	for rs.Next() {
		if err := row(rs); err != nil {
			return err
		}
	}
	return rs.Err()
}

// execEach runs q once per argument list in one transaction and sums the rows affected.
func (db *DB) execEach(ctx context.Context, what, q string, args [][]any) (int, error) {
	var n int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		n = 0
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		defer func() { _ = st.Close() }()
		for _, a := range args {
			res, err := st.ExecContext(ctx, a...)
			if err != nil {
				return err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += k
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: upsert %s: %w", what, err)
	}
	return int(n), nil
}

func (db *DB) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
