package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Dialect names, as Dialect returns them.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// connectTimeout bounds the first connection when the DSN sets none.
const connectTimeout = 10 * time.Second

//go:embed migrations
var migrations embed.FS

// DB is an open, migrated store. It is safe for concurrent use.
type DB struct {
	sql     *sql.DB
	dialect string
	where   string // host:port or path, for errors
}

// Open opens (and migrates to the latest version) the store at dsn: "postgres://...",
// "postgresql://..." or a libpq key=value DSN ("host=db user=app password=...") is PostgreSQL;
// "sqlite:PATH" or a plain file path is SQLite (the file and its directory created 0700/0600).
// An unreachable or refused DSN is an error that says so and names the host/path, never a
// password (RedactDSN's forms).
func Open(ctx context.Context, dsn string) (*DB, error) {
	var (
		db  *DB
		err error
	)
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") || isKeyValueDSN(dsn) {
		db, err = openPostgres(ctx, dsn)
	} else {
		db, err = openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"))
	}
	if err != nil {
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		_ = db.sql.Close()
		return nil, err
	}
	return db, nil
}

func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	secrets := dsnPasswords(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx redacts the password of its parse errors in its own way; its message is scrubbed of
		// every password form RedactDSN knows as well, and the error is not wrapped (its
		// ConnString field holds the DSN).
		return nil, fmt.Errorf("store: invalid PostgreSQL DSN %s: %s", RedactDSN(dsn), scrub(err.Error(), secrets...))
	}
	secrets = append(secrets, cfg.Password)
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	where := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	db := stdlib.OpenDB(*cfg)
	pctx, cancel := context.WithTimeout(ctx, connectTimeout+5*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: cannot connect to PostgreSQL at %s (database %q): %s",
			where, cfg.Database, scrub(err.Error(), secrets...))
	}
	return &DB{sql: db, dialect: DialectPostgres, where: where}, nil
}

func openSQLite(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("store: empty SQLite path")
	}
	shown := RedactDSN(path) // a path is not a secret, but a mistyped DSN may be taken for one
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: SQLite path %s: %w", shown, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: cannot create the directory of SQLite store %s: %w", shown, err)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: cannot open SQLite store %s: %w", shown, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("store: cannot open SQLite store %s: %w", shown, err)
	}
	// A file: URI with an absolute, escaped path: any file name works (spaces, '%', '?', '#').
	u := url.URL{Scheme: "file", Path: abs, RawQuery: url.Values{"_pragma": {
		"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)",
	}}.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("store: cannot open SQLite store %s: %w", shown, err)
	}
	// One connection: SQLite has one writer, and a single connection turns what would be
	// "database is locked" between our own transactions into plain queueing.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: cannot open SQLite store %s: %w", shown, err)
	}
	return &DB{sql: db, dialect: DialectSQLite, where: shown}, nil
}

func (db *DB) migrate(ctx context.Context) error {
	fsys, err := fs.Sub(migrations, "migrations/"+db.dialect)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	dialect := goose.DialectSQLite3
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if db.dialect == DialectPostgres {
		dialect = goose.DialectPostgres
		// Another worker migrating holds the lock for a moment: look again every second, for
		// up to five minutes.
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
		if err != nil {
			return fmt.Errorf("store: migrations: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, db.sql, fsys, opts...)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store: migrate %s store %s: %w", db.dialect, db.where, err)
	}
	return nil
}

// Close closes the database.
func (db *DB) Close() error { return db.sql.Close() }

// Dialect is "sqlite" or "postgres".
func (db *DB) Dialect() string { return db.dialect }

// scrub removes every secret from msg.
func scrub(msg string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, redactMask)
		}
	}
	return msg
}
