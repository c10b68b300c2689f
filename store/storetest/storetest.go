// Package storetest gives tests a fresh store database of each dialect: a SQLite file in the
// test's temporary directory, and a new database on a real PostgreSQL server.
//
// The server is $STAKEFLOW_TEST_POSTGRES (the DSN of a server whose user may create databases)
// when set; otherwise Main starts one for the test binary with scripts/postgres.sh in a
// temporary directory and stops it when the tests end. Each call of Postgres creates a
// database of its own, so tests do not see each other's rows.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// EnvPostgres names the environment variable holding the DSN of a PostgreSQL server to use.
const EnvPostgres = "STAKEFLOW_TEST_POSTGRES"

var (
	mu        sync.Mutex
	serverDSN string // set by Main
)

// Main runs the tests of m with a PostgreSQL server: $STAKEFLOW_TEST_POSTGRES, or one it starts
// (and stops after the tests). Call it from TestMain: os.Exit(storetest.Main(m)).
func Main(m *testing.M) int {
	dsn, stop, err := StartServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	setServer(dsn)
	return m.Run()
}

// StartServer returns the DSN of a PostgreSQL database for a test binary: $STAKEFLOW_TEST_POSTGRES
// when set (stop then does nothing), else that of a server it starts with scripts/postgres.sh in a
// temporary directory, which stop stops and removes.
func StartServer() (dsn string, stop func(), err error) {
	if dsn := os.Getenv(EnvPostgres); dsn != "" {
		return dsn, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "stakeflow-pg-")
	if err != nil {
		return "", nil, fmt.Errorf("storetest: %w", err)
	}
	script, err := script()
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("storetest: %w", err)
	}
	out, err := exec.Command(script, "start", dir).Output()
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("storetest: %s start %s: %v\n%s", script, dir, err, stderr(err))
	}
	stop = func() {
		if out, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "storetest: %s stop %s: %v\n%s", script, dir, err, out)
		}
		_ = os.RemoveAll(dir)
	}
	return strings.TrimSpace(string(out)), stop, nil
}

func setServer(dsn string) {
	mu.Lock()
	defer mu.Unlock()
	serverDSN = dsn
}

// SQLite is the DSN of a new SQLite store in t's temporary directory.
func SQLite(t testing.TB) string {
	t.Helper()
	return "sqlite:" + filepath.Join(t.TempDir(), "data", "store.db")
}

// Postgres is the DSN of a new, empty database on the test server, dropped when t ends.
func Postgres(t testing.TB) string {
	t.Helper()
	mu.Lock()
	server := serverDSN
	mu.Unlock()
	if server == "" {
		t.Fatal("storetest: no PostgreSQL server: call storetest.Main from TestMain")
	}
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("storetest: server DSN does not parse")
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "stakeflow_test_" + hex.EncodeToString(b[:])

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("storetest: create database on %s: %v", u.Host, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := sql.Open("pgx", server)
		if err != nil {
			t.Error(err)
			return
		}
		defer func() { _ = admin.Close() }()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("storetest: drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// script is the path of scripts/postgres.sh in the module holding the working directory.
func script() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "postgres.sh"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("scripts/postgres.sh not found: no go.mod above the working directory")
		}
		dir = parent
	}
}

func stderr(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}
