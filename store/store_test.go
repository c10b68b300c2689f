package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/stakeflow/stakeflow/store"
	"github.com/stakeflow/stakeflow/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// eachDialect runs f against a fresh database of each dialect.
func eachDialect(t *testing.T, f func(t *testing.T, dsn string)) {
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		t.Run(d.name, func(t *testing.T) { f(t, d.dsn(t)) })
	}
}

func open(t *testing.T, dsn string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

// raw opens dsn with the plain driver, beside the store.
func raw(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	driver := "pgx"
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		driver, dsn = "sqlite", path
	}
	db, err := sql.Open(driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func day(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }

func TestMigrations(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db, err := store.Open(ctx, dsn)
		require.NoError(t, err)
		dialect := db.Dialect()
		assert.Equal(t, map[bool]string{true: "sqlite", false: "postgres"}[strings.HasPrefix(dsn, "sqlite:")], dialect)
		_, err = db.UpsertAPY(ctx, []store.APY{{Network: "ethereum", Period: 1, NetworkAPY: "3.1"}})
		require.NoError(t, err)
		require.NoError(t, db.Close())

		// The versions goose recorded are those of the migration files, each applied once,
		// also after a second Open.
		files, err := filepath.Glob(filepath.Join("migrations", dialect, "*.sql"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		var want []int64
		for _, f := range files {
			v, err := strconv.ParseInt(strings.SplitN(filepath.Base(f), "_", 2)[0], 10, 64)
			require.NoError(t, err)
			want = append(want, v)
		}
		applied := func() []int64 {
			rs, err := raw(t, dsn).QueryContext(ctx, `SELECT version_id FROM goose_db_version WHERE version_id > 0 ORDER BY id`)
			require.NoError(t, err)
			defer rs.Close()
			var vs []int64
			for rs.Next() {
				var v int64
				require.NoError(t, rs.Scan(&v))
				vs = append(vs, v)
			}
			require.NoError(t, rs.Err())
			return vs
		}
		assert.Equal(t, want, applied())

		again := open(t, dsn)
		assert.Equal(t, want, applied())
		got, err := again.APYs(ctx, store.Query{})
		require.NoError(t, err)
		require.Len(t, got, 1, "the second Open keeps the rows")
		assert.Equal(t, "3.1", got[0].NetworkAPY)

		if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			di, err := os.Stat(filepath.Dir(path))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o700), di.Mode().Perm())
		}
	})
}

func TestUpsertIdempotent(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := open(t, dsn)
		apys := []store.APY{
			{Network: "ethereum", Period: 10, PeriodStart: day(1), PeriodEnd: day(2), UpdatedAt: day(2),
				NetworkAPY: "3.25", ConsensusAPY: "2.75", ExecutionAPY: "0.5"},
			{Network: "ethereum", Period: 11, PeriodStart: day(2), PeriodEnd: day(3),
				NetworkAPY: "3.3", ConsensusAPY: "2.8", ExecutionAPY: "0.5"},
		}
		n, err := db.UpsertAPY(ctx, apys)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		n, err = db.UpsertAPY(ctx, apys)
		require.NoError(t, err)
		assert.Equal(t, 0, n, "an identical re-write changes nothing")

		changed := apys[1]
		changed.ExecutionAPY = "0.55"
		n, err = db.UpsertAPY(ctx, []store.APY{apys[0], changed})
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		got, err := db.APYs(ctx, store.Query{})
		require.NoError(t, err)
		assert.Equal(t, []store.APY{apys[0], changed}, got)

		rewards := []store.Reward{
			{Network: "ethereum", Address: "0xabc", Period: "10", Type: "consensus", Validator: "0x01",
				Currency: "ETH", Recipient: "0xabc", Amount: "0.01", NetAmount: "0.009", Fee: "0.001",
				PeriodStart: day(1), PeriodEnd: day(2)},
			{Network: "ethereum", Address: "0xabc", Period: "11", Type: "consensus", Validator: "0x01",
				Currency: "ETH", Recipient: "0xabc", Amount: "0.02", NetAmount: "0.018", Fee: "0.002",
				PeriodStart: day(2), PeriodEnd: day(3), NotFinalized: true},
		}
		n, err = db.UpsertRewards(ctx, rewards)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		n, err = db.UpsertRewards(ctx, rewards)
		require.NoError(t, err)
		assert.Equal(t, 0, n, "an identical re-write changes nothing")
		final := rewards[1]
		final.NotFinalized = false
		n, err = db.UpsertRewards(ctx, []store.Reward{rewards[0], final})
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		gotR, err := db.Rewards(ctx, store.Query{})
		require.NoError(t, err)
		assert.Equal(t, []store.Reward{rewards[0], final}, gotR)
	})
}

func TestNaturalKeys(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := open(t, dsn)
		n, err := db.UpsertAPY(ctx, []store.APY{
			{Network: "ethereum", Period: 7, NetworkAPY: "3"},
			{Network: "solana", Period: 7, NetworkAPY: "7"},
		})
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		got, err := db.APYs(ctx, store.Query{})
		require.NoError(t, err)
		assert.Equal(t, []store.APY{{Network: "ethereum", Period: 7, NetworkAPY: "3"}, {Network: "solana", Period: 7, NetworkAPY: "7"}}, got)
		got, err = db.APYs(ctx, store.Query{Network: "solana"})
		require.NoError(t, err)
		assert.Equal(t, []store.APY{{Network: "solana", Period: 7, NetworkAPY: "7"}}, got)

		base := store.Reward{Network: "ethereum", Address: "0xa", Period: "7", Type: "consensus", Amount: "1"}
		vary := []func(r *store.Reward){
			func(r *store.Reward) {},
			func(r *store.Reward) { r.Network = "polygon" },
			func(r *store.Reward) { r.Address = "0xb" },
			func(r *store.Reward) { r.Period = "8" },
			func(r *store.Reward) { r.Type = "execution" },
		}
		var rows []store.Reward
		for _, v := range vary {
			r := base
			v(&r)
			rows = append(rows, r)
		}
		n, err = db.UpsertRewards(ctx, rows)
		require.NoError(t, err)
		assert.Equal(t, len(vary), n)
		all, err := db.Rewards(ctx, store.Query{})
		require.NoError(t, err)
		assert.Len(t, all, len(vary))
		mine, err := db.Rewards(ctx, store.Query{Network: "ethereum", Address: "0xa"})
		require.NoError(t, err)
		assert.Len(t, mine, 3)
	})
}

func TestExactDecimals(t *testing.T) {
	const tiny, huge = "0.000000000000000001", "123456789012345678901234567890.5"
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := open(t, dsn)
		apy := store.APY{Network: "ethereum", Period: 1, NetworkAPY: tiny, ConsensusAPY: huge, ExecutionAPY: "-0.10"}
		_, err := db.UpsertAPY(ctx, []store.APY{apy})
		require.NoError(t, err)
		got, err := db.APYs(ctx, store.Query{})
		require.NoError(t, err)
		assert.Equal(t, []store.APY{apy}, got)

		r := store.Reward{Network: "ethereum", Address: "0xa", Period: "1", Type: "staking", Amount: huge, NetAmount: tiny, Fee: ""}
		_, err = db.UpsertRewards(ctx, []store.Reward{r})
		require.NoError(t, err)
		gotR, err := db.Rewards(ctx, store.Query{})
		require.NoError(t, err)
		assert.Equal(t, []store.Reward{r}, gotR)

		for _, bad := range []string{"1e-18", "NaN", "1,5", " 1", "0x10"} {
			_, err := db.UpsertAPY(ctx, []store.APY{{Network: "ethereum", Period: 2, NetworkAPY: bad}})
			assert.ErrorContains(t, err, "not decimal text", bad)
		}
	})
}

func TestSSVEvents(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := open(t, dsn)
		a := store.SSVRequest{ID: "a", Status: "pending", ValidatorsCount: 2, AmountPerValidator: "32",
			Type: "create", SSVOwnerAddress: "0xo", WithdrawalAddress: "0xw", FeeRecipientAddress: "0xf"}
		b := a
		b.ID = "b"
		t1, t2, t3 := day(1), day(2), day(3)

		ev, err := db.UpsertSSVRequests(ctx, []store.SSVRequest{a, b}, t1)
		require.NoError(t, err)
		assert.Equal(t, []store.SSVEvent{{RequestID: "a", To: "pending", At: t1}, {RequestID: "b", To: "pending", At: t1}}, ev)

		ev, err = db.UpsertSSVRequests(ctx, []store.SSVRequest{a, b}, t2)
		require.NoError(t, err)
		assert.Empty(t, ev, "same statuses: no event")

		failed := a
		failed.Status = "failed"
		ev, err = db.UpsertSSVRequests(ctx, []store.SSVRequest{failed, b}, t3)
		require.NoError(t, err)
		assert.Equal(t, []store.SSVEvent{{RequestID: "a", From: "pending", To: "failed", At: t3}}, ev)

		hist, err := db.SSVEvents(ctx, "a")
		require.NoError(t, err)
		assert.Equal(t, []store.SSVEvent{{RequestID: "a", To: "pending", At: t1}, {RequestID: "a", From: "pending", To: "failed", At: t3}}, hist)
		hist, err = db.SSVEvents(ctx, "b")
		require.NoError(t, err)
		assert.Equal(t, []store.SSVEvent{{RequestID: "b", To: "pending", At: t1}}, hist)

		counts, err := db.SSVStatusCounts(ctx)
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"pending": 1, "failed": 1}, counts)
		got, err := db.SSVRequests(ctx, store.Query{Status: "failed"})
		require.NoError(t, err)
		failed.UpdatedAt = t3 // when it was seen
		assert.Equal(t, []store.SSVRequest{failed}, got)
	})
}

func TestQueryTimeRange(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := open(t, dsn)
		var apys []store.APY
		var rewards []store.Reward
		for d := 1; d <= 5; d++ {
			// A start given in another zone is the same instant, read back in UTC.
			start := day(d).In(time.FixedZone("UTC+3", 3*3600))
			apys = append(apys, store.APY{Network: "ethereum", Period: int64(d), PeriodStart: start, NetworkAPY: "1"})
			rewards = append(rewards, store.Reward{Network: "ethereum", Address: "0xa", Period: strconv.Itoa(d),
				Type: "staking", PeriodStart: start, Amount: "1"})
		}
		apys = append(apys, store.APY{Network: "ethereum", Period: 6, NetworkAPY: "1"}) // start unknown
		_, err := db.UpsertAPY(ctx, apys)
		require.NoError(t, err)
		_, err = db.UpsertRewards(ctx, rewards)
		require.NoError(t, err)

		got, err := db.APYs(ctx, store.Query{From: day(2), To: day(4)})
		require.NoError(t, err)
		var periods []int64
		for _, a := range got {
			periods = append(periods, a.Period)
			assert.Equal(t, time.UTC, a.PeriodStart.Location())
		}
		assert.Equal(t, []int64{2, 3}, periods, "From inclusive, To exclusive")
		got, err = db.APYs(ctx, store.Query{From: day(4)})
		require.NoError(t, err)
		assert.Len(t, got, 2)
		got, err = db.APYs(ctx, store.Query{})
		require.NoError(t, err)
		assert.Len(t, got, 6)

		gotR, err := db.Rewards(ctx, store.Query{Address: "0xa", From: day(3).Add(-time.Microsecond), To: day(3).Add(time.Microsecond)})
		require.NoError(t, err)
		require.Len(t, gotR, 1)
		assert.Equal(t, "3", gotR[0].Period)
		assert.True(t, gotR[0].PeriodStart.Equal(day(3)))

		_, err = db.UpsertSSVRequests(ctx, []store.SSVRequest{{ID: "x", Status: "done"}}, day(1))
		require.NoError(t, err)
		_, err = db.UpsertSSVRequests(ctx, []store.SSVRequest{{ID: "y", Status: "done"}}, day(3))
		require.NoError(t, err)
		ssv, err := db.SSVRequests(ctx, store.Query{From: day(2)})
		require.NoError(t, err)
		require.Len(t, ssv, 1)
		assert.Equal(t, "y", ssv[0].ID)
	})
}

func TestLastPeriods(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := open(t, dsn)
		_, ok, err := db.LastAPYPeriod(ctx, "ethereum")
		require.NoError(t, err)
		assert.False(t, ok)
		_, err = db.UpsertAPY(ctx, []store.APY{
			{Network: "ethereum", Period: 9, NetworkAPY: "1"},
			{Network: "ethereum", Period: 12, NetworkAPY: "1"},
			{Network: "solana", Period: 800, NetworkAPY: "1"},
		})
		require.NoError(t, err)
		p, ok, err := db.LastAPYPeriod(ctx, "ethereum")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, int64(12), p)

		_, ok, err = db.LastRewardPeriodStart(ctx, "ethereum", "0xa")
		require.NoError(t, err)
		assert.False(t, ok)
		_, err = db.UpsertRewards(ctx, []store.Reward{
			{Network: "ethereum", Address: "0xa", Period: "1", Type: "staking", PeriodStart: day(1)},
			{Network: "ethereum", Address: "0xa", Period: "2", Type: "staking", PeriodStart: day(2)},
			{Network: "ethereum", Address: "0xa", Period: "3", Type: "staking", PeriodStart: day(3), NotFinalized: true},
			{Network: "ethereum", Address: "0xb", Period: "4", Type: "staking", PeriodStart: day(4)},
		})
		require.NoError(t, err)
		last, ok, err := db.LastRewardPeriodStart(ctx, "ethereum", "0xa")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, day(2), last, "the latest finalized period")
	})
}

func TestOpenErrors(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		start := time.Now()
		_, err := store.Open(context.Background(), "postgres://u:sekrit-pw@127.0.0.1:1/x")
		require.Error(t, err)
		assert.Less(t, time.Since(start), 5*time.Second, "a refused connection fails fast")
		assert.Contains(t, err.Error(), "127.0.0.1:1")
		assert.Contains(t, err.Error(), "cannot connect")
		assert.NotContains(t, err.Error(), "sekrit-pw")
	})
	t.Run("sqlite", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "plain-file")
		require.NoError(t, os.WriteFile(file, []byte(strings.Repeat("not a database\n", 100)), 0o600))
		for _, path := range []string{filepath.Join(file, "store.db"), t.TempDir()} {
			_, err := store.Open(context.Background(), "sqlite:"+path)
			require.Error(t, err, path)
			assert.Contains(t, err.Error(), path)
		}
		// A database whose tables clash with the schema fails to migrate, naming its path.
		clash := filepath.Join(t.TempDir(), "clash.db")
		_, err := raw(t, "sqlite:"+clash).Exec(`CREATE TABLE network_apy (x TEXT)`)
		require.NoError(t, err)
		_, err = store.Open(context.Background(), clash)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "migrate")
		assert.Contains(t, err.Error(), clash)

		// A file that is not a database is refused too.
		_, err = store.Open(context.Background(), file)
		require.Error(t, err)
		assert.Contains(t, err.Error(), file)
	})
}

// Writers that race (a retried activity beside the one it retries, two workers starting at once)
// neither fail nor duplicate: the migrations run once, and each status change is one event.
func TestConcurrentWriters(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		const writers = 8
		dbs := make([]*store.DB, writers)
		if strings.HasPrefix(dsn, "sqlite:") {
			// One process owns an embedded store: its handles open one after another.
			for i := range dbs {
				dbs[i] = open(t, dsn)
			}
		} else {
			errs := make(chan error, writers)
			start := make(chan struct{})
			for i := range dbs {
				go func() {
					<-start
					db, err := store.Open(ctx, dsn)
					dbs[i] = db
					errs <- err
				}()
			}
			close(start)
			for range writers {
				require.NoError(t, <-errs)
			}
			for _, db := range dbs {
				t.Cleanup(func() { _ = db.Close() })
			}
		}

		var rows []store.SSVRequest
		for i := range 20 {
			rows = append(rows, store.SSVRequest{ID: "r" + strconv.Itoa(i), Status: "pending"})
		}
		events := make(chan int, writers)
		errs := make(chan error, writers)
		for _, db := range dbs {
			go func() {
				ev, err := db.UpsertSSVRequests(ctx, rows, day(1))
				events <- len(ev)
				errs <- err
			}()
		}
		total := 0
		for range writers {
			total += <-events
			require.NoError(t, <-errs)
		}
		assert.Equal(t, len(rows), total, "one event per new request across all writers")

		for i := range rows {
			rows[i].Status = "failed"
		}
		for _, db := range dbs {
			go func() {
				ev, err := db.UpsertSSVRequests(ctx, rows, day(2))
				events <- len(ev)
				errs <- err
			}()
		}
		total = 0
		for range writers {
			total += <-events
			require.NoError(t, <-errs)
		}
		assert.Equal(t, len(rows), total, "one event per changed request across all writers")
		for _, r := range rows {
			hist, err := dbs[0].SSVEvents(ctx, r.ID)
			require.NoError(t, err)
			assert.Equal(t, []store.SSVEvent{{RequestID: r.ID, To: "pending", At: day(1)},
				{RequestID: r.ID, From: "pending", To: "failed", At: day(2)}}, hist)
		}
	})
}

// The SQLite store is the file named, whatever characters its path holds, relative or not.
func TestSQLitePaths(t *testing.T) {
	ctx := context.Background()
	t.Chdir(t.TempDir())
	for _, path := range []string{
		"store.db",
		"sqlite:rel dir/store.db",
		filepath.Join(t.TempDir(), "a b%20c?d#e", "store.db"),
	} {
		db, err := store.Open(ctx, path)
		require.NoError(t, err, path)
		assert.Equal(t, "sqlite", db.Dialect())
		_, err = db.UpsertAPY(ctx, []store.APY{{Network: "ethereum", Period: 1, NetworkAPY: "1"}})
		require.NoError(t, err)
		require.NoError(t, db.Close())
		// The file at that very path holds the row: read through a copy at a plain path.
		b, err := os.ReadFile(strings.TrimPrefix(path, "sqlite:"))
		require.NoError(t, err, path)
		plain := filepath.Join(t.TempDir(), "copy.db")
		require.NoError(t, os.WriteFile(plain, b, 0o600))
		var n int
		require.NoError(t, raw(t, "sqlite:"+plain).QueryRow(`SELECT COUNT(*) FROM network_apy`).Scan(&n), path)
		assert.Equal(t, 1, n, path)
	}
}

// Every form a DSN carries a password in is redacted: URL user info, query parameters (password,
// pass, sslpassword, any case, percent-encoded), key=value DSNs (plain, quoted with spaces, escaped
// quotes); malformed input hides more, never less.
func TestRedactDSN(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"userinfo", "postgres://stakeflow:s3cr3t@db:5432/x", "postgres://stakeflow:xxxxx@db:5432/x"},
		{"userinfo postgresql", "postgresql://u:s3cr3t@db/x?sslmode=require", "postgresql://u:xxxxx@db/x?sslmode=require"},
		{"userinfo with @", "postgres://u:p@ss@db/x", "postgres://u:xxxxx@db/x"},
		{"userinfo with ? and =", "postgres://u:a?password=b@db/x", "postgres://u:xxxxx"},
		{"no password", "postgres://stakeflow@db/x", "postgres://stakeflow@db/x"},
		{"no user", "postgres://db/x", "postgres://db/x"},
		{"host and port only", "postgres://db:5432/x?sslmode=disable", "postgres://db:5432/x?sslmode=disable"},
		{"query password", "postgres://u@db/x?password=s3cr3t", "postgres://u@db/x?password=xxxxx"},
		{"query password among others", "postgres://u@db/x?sslmode=require&password=s3cr3t&application_name=w",
			"postgres://u@db/x?sslmode=require&password=xxxxx&application_name=w"},
		{"query PASSWORD any case", "postgres://u@db/x?PassWord=s3cr3t", "postgres://u@db/x?PassWord=xxxxx"},
		{"query pass", "postgres://u@db/x?pass=s3cr3t", "postgres://u@db/x?pass=xxxxx"},
		{"query sslpassword", "postgres://u@db/x?sslmode=verify-full&sslpassword=k3y-s3cr3t", "postgres://u@db/x?sslmode=verify-full&sslpassword=xxxxx"},
		{"query key percent-encoded", "postgres://u@db/x?pass%77ord=s3cr3t", "postgres://u@db/x?pass%77ord=xxxxx"},
		{"query password with @", "postgres://db:5432/x?password=a@s3cr3t", "postgres://db:xxxxx"},
		{"query password with unescaped &", "postgres://u@db/x?password=s3c&r3t", "postgres://u@db/x?password=xxxxx&xxxxx"},
		{"both forms", "postgres://u:one@db/x?password=two", "postgres://u:xxxxx@db/x?password=xxxxx"},
		{"key=value", "host=db user=app password=s3cr3t dbname=x", "host=db user=app password=xxxxx dbname=x"},
		{"key=value spaces around =", "host=db password = s3cr3t dbname=x", "host=db password = xxxxx dbname=x"},
		{"key=value quoted with spaces", "host=db password='my s3cr3t pw' dbname=x", "host=db password=xxxxx dbname=x"},
		{"key=value quoted with escaped quote", `host=db password='it\'s s3cr3t' dbname=x`, "host=db password=xxxxx dbname=x"},
		{"key=value unterminated quote", "host=db password='s3cr3t dbname=x", "host=db password=xxxxx"},
		{"key=value Password any case", "host=db Password=s3cr3t", "host=db Password=xxxxx"},
		{"key=value sslpassword", "host=db sslpassword=s3cr3t sslmode=verify-full", "host=db sslpassword=xxxxx sslmode=verify-full"},
		{"key=value first", "password=s3cr3t host=db", "password=xxxxx host=db"},
		{"sqlite", "sqlite:/tmp/a.db", "sqlite:/tmp/a.db"},
		{"plain path", "/var/lib/stakeflow/store.db", "/var/lib/stakeflow/store.db"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := store.RedactDSN(tt.in)
			assert.Equal(t, tt.want, got)
			for _, secret := range []string{"s3cr3t", "one", "two"} {
				if strings.Contains(tt.in, secret) {
					assert.NotContains(t, got, secret)
				}
			}
		})
	}
}

// Open fails on a server that is not there with an error that names it and holds no password,
// whatever form the DSN gives it in; a key=value DSN is PostgreSQL, not a SQLite file name.
func TestOpenErrorsHideEveryPasswordForm(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, dsn := range []string{
		"postgres://u:sekrit-pw@127.0.0.1:1/x",
		"postgres://u@127.0.0.1:1/x?password=sekrit-pw",
		"postgres://u@127.0.0.1:1/x?sslmode=disable&Password=sekrit-pw",
		"postgresql://u@127.0.0.1:1/x?sslmode=disable&sslpassword=sekrit-pw&password=sekrit-pw",
		"host=127.0.0.1 port=1 user=u password=sekrit-pw dbname=x sslmode=disable",
		"host=127.0.0.1 port=1 user=u password='sekrit-pw with spaces' dbname=x sslmode=disable",
		"host=127.0.0.1 port=1 password=sekrit-pw dbname=x sslmode=nonsense",                 // refused by the parser
		"postgres://u:sekrit-pw@127.0.0.1:1/x?password=sekrit-pw&connect_timeout=notanumber", // refused by the parser
	} {
		t.Run(dsn, func(t *testing.T) {
			_, err := store.Open(context.Background(), dsn)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "sekrit")
			if !strings.Contains(dsn, "nonsense") && !strings.Contains(dsn, "notanumber") {
				assert.Contains(t, err.Error(), "127.0.0.1:1")
				assert.Contains(t, err.Error(), "cannot connect")
			}
		})
	}
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	assert.Empty(t, entries, "no SQLite file was created under a DSN's name")
}

// A flagged record keeps its reason, in both dialects: written, read back, changed alone (an
// upsert that changes only the flag counts 1), cleared.
func TestRecordFlags(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		db := open(t, dsn)
		apy := store.APY{Network: "ethereum", Period: 1, PeriodStart: day(2), PeriodEnd: day(1), NetworkAPY: "1000000000000",
			Flag: "networkApy 1000000000000 is above 1000%; the period ends before it starts"}
		n, err := db.UpsertAPY(ctx, []store.APY{apy, {Network: "ethereum", Period: 2, NetworkAPY: "3.1"}})
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		got, err := db.APYs(ctx, store.Query{})
		require.NoError(t, err)
		assert.Equal(t, []store.APY{apy, {Network: "ethereum", Period: 2, NetworkAPY: "3.1"}}, got, "an unflagged row reads back without a flag")
		n, err = db.UpsertAPY(ctx, []store.APY{apy})
		require.NoError(t, err)
		assert.Equal(t, 0, n)
		apy.Flag = "another reason"
		n, err = db.UpsertAPY(ctx, []store.APY{apy})
		require.NoError(t, err)
		assert.Equal(t, 1, n, "a changed flag is a change")
		apy.Flag = ""
		n, err = db.UpsertAPY(ctx, []store.APY{apy})
		require.NoError(t, err)
		assert.Equal(t, 1, n, "a cleared flag is a change")
		got, err = db.APYs(ctx, store.Query{Network: "ethereum"})
		require.NoError(t, err)
		assert.Equal(t, "", got[0].Flag)

		rw := store.Reward{Network: "ethereum", Address: "0xa", Period: "1", Type: "consensus", Amount: "0.000537976",
			NetAmount: "0.00537976", Fee: "0.000053798", Flag: "netAmount 0.00537976 is not amount 0.000537976 minus fee 0.000053798 (0.000484178)"}
		n, err = db.UpsertRewards(ctx, []store.Reward{rw})
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		gotR, err := db.Rewards(ctx, store.Query{})
		require.NoError(t, err)
		assert.Equal(t, []store.Reward{rw}, gotR)
		rw.Flag = ""
		n, err = db.UpsertRewards(ctx, []store.Reward{rw})
		require.NoError(t, err)
		assert.Equal(t, 1, n)

		req := store.SSVRequest{ID: "a", Status: "processing", ValidatorsCount: -1, Flag: "validatorsCount -1 is below 1", UpdatedAt: day(1)}
		_, err = db.UpsertSSVRequests(ctx, []store.SSVRequest{req}, day(1))
		require.NoError(t, err)
		gotS, err := db.SSVRequests(ctx, store.Query{})
		require.NoError(t, err)
		assert.Equal(t, []store.SSVRequest{req}, gotS)
		req.Flag, req.ValidatorsCount = "", 2
		_, err = db.UpsertSSVRequests(ctx, []store.SSVRequest{req}, day(1))
		require.NoError(t, err)
		gotS, err = db.SSVRequests(ctx, store.Query{})
		require.NoError(t, err)
		assert.Equal(t, []store.SSVRequest{req}, gotS, "the flag goes with the record it was about")
	})
}

// A store made before the flag columns existed migrates to them with its rows kept, unflagged.
func TestMigrationAddsFlagsToAnExistingStore(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		dialect, driver := "postgres", goose.DialectPostgres
		if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
			dialect, driver = "sqlite", goose.DialectSQLite3
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		}
		old := raw(t, dsn)
		p, err := goose.NewProvider(driver, old, os.DirFS(filepath.Join("migrations", dialect)), goose.WithDisableGlobalRegistry(true))
		require.NoError(t, err)
		_, err = p.UpTo(ctx, 2)
		require.NoError(t, err)
		_, err = old.ExecContext(ctx, `INSERT INTO network_apy (network, period, network_apy) VALUES ('sui', 7, '3.5')`)
		require.NoError(t, err)
		_, err = old.ExecContext(ctx, `INSERT INTO delegator_rewards (network, address, period, type, validator, currency, recipient, amount, not_finalized)
VALUES ('ethereum', '0xa', '7', 'consensus', '0xv', 'ETH', '0xa', '0.1', false)`)
		require.NoError(t, err)
		require.NoError(t, old.Close())

		db := open(t, dsn)
		got, err := db.APYs(ctx, store.Query{})
		require.NoError(t, err)
		assert.Equal(t, []store.APY{{Network: "sui", Period: 7, NetworkAPY: "3.5"}}, got)
		gotR, err := db.Rewards(ctx, store.Query{})
		require.NoError(t, err)
		require.Len(t, gotR, 1)
		assert.Equal(t, "", gotR[0].Flag)
		assert.Equal(t, "0.1", gotR[0].Amount)
		var v int64
		require.NoError(t, raw(t, dsn).QueryRowContext(ctx, `SELECT MAX(version_id) FROM goose_db_version`).Scan(&v))
		assert.Equal(t, int64(3), v)
	})
}
