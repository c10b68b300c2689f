package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flagCall matches one flag registration on the FlagSet fs, e.g. fs.StringVar(&c.X, "name", ...)
// or fs.Var(&c.X, "name", ...), capturing the flag name.
var flagCall = regexp.MustCompile(`\bfs\.[A-Z][A-Za-z0-9]*\(\s*(?:&?[\w.\[\]]+\s*,\s*)?"([a-z][a-z0-9-]*)"`)

// anyFSCall matches every call of a FlagSet method inside a Register body.
var anyFSCall = regexp.MustCompile(`\bfs\.[A-Z][A-Za-z0-9]*\(`)

// nestedRegister matches a call handing fs to another Register method, e.g. c.Temporal.Register(fs).
var nestedRegister = regexp.MustCompile(`\bc\.(\w+)\.Register\(fs\)`)

// registerBody returns the body of the Register method of receiver type recv in src.
func registerBody(src, recv string) (string, error) {
	re := regexp.MustCompile(`(?m)^func \(\w+ \*` + recv + `\) Register\(fs \*flag\.FlagSet\) \{\n`)
	loc := re.FindStringIndex(src)
	if loc == nil {
		return "", fmt.Errorf("no method (*%s).Register(fs *flag.FlagSet)", recv)
	}
	rest := src[loc[1]:]
	end := strings.Index(rest, "\n}\n")
	if end < 0 {
		return "", fmt.Errorf("(*%s).Register has no closing brace at line start", recv)
	}
	return rest[:end], nil
}

// flagsIn returns the flag names registered in body, failing if any FlagSet call there names none.
func flagsIn(body, where string) ([]string, error) {
	var names []string
	for _, m := range flagCall.FindAllStringSubmatch(body, -1) {
		names = append(names, m[1])
	}
	if calls := len(anyFSCall.FindAllString(body, -1)); calls != len(names) {
		return nil, fmt.Errorf("%s: %d FlagSet calls but %d flag names recognised: extend flagCall", where, calls, len(names))
	}
	return names, nil
}

// workerFlags reads the names of cmd/worker's flags from the source of worker.Config.Register, of
// cli.Temporal.Register and hsmkeys.Settings.Register it delegates to, and of each module's module.go (modules/<name>: every
// FlagSet call there registers one of the module's flags).
func workerFlags(t *testing.T) map[string]bool {
	t.Helper()
	root := repoRoot(t)
	src := string(readFile(t, filepath.Join(root, "internal", "worker", "config.go")))
	body, err := registerBody(src, "Config")
	require.NoError(t, err, "internal/worker/config.go")
	names, err := flagsIn(body, "worker.Config.Register")
	require.NoError(t, err)
	// Delegated registrations: each must be one this check knows how to read.
	delegates := map[string][2]string{
		"Temporal": {filepath.Join(root, "internal", "cli", "temporal.go"), "Temporal"},
		"PKCS11":   {filepath.Join(root, "internal", "hsmkeys", "hsmkeys.go"), "Settings"},
	}
	for _, m := range nestedRegister.FindAllStringSubmatch(body, -1) {
		d, ok := delegates[m[1]]
		require.True(t, ok, "worker.Config.Register calls c.%s.Register(fs): teach workerFlags where that is", m[1])
		sub, err := registerBody(string(readFile(t, d[0])), d[1])
		require.NoError(t, err, d[0])
		more, err := flagsIn(sub, d[1]+".Register")
		require.NoError(t, err)
		names = append(names, more...)
	}
	modules, err := filepath.Glob(filepath.Join(root, "modules", "*", "module.go"))
	require.NoError(t, err)
	require.NotEmpty(t, modules, "the worker's modules")
	for _, path := range modules {
		more, err := flagsIn(string(readFile(t, path)), path)
		require.NoError(t, err)
		names = append(names, more...)
	}
	flags := map[string]bool{}
	for _, n := range names {
		require.False(t, flags[n], "flag %q registered twice", n)
		flags[n] = true
	}
	return flags
}

func TestWorkerFlagsReadFromSource(t *testing.T) {
	flags := workerFlags(t)
	for _, want := range []string{
		"config", "temporal-address", "namespace", "tls-cert", "tls-key", "tls-ca", "tls-server-name",
		"task-queue-prefix", "service-url", "service-token-file", "solana-keys", "solana-rpc",
		"allowed-vote-accounts", "approval-threshold-lamports", "health-addr", "log-format", "log-level",
		"stop-timeout", "pollers", "evm-rpc", "celestia-rest", "hyperliquid-api", "hyperliquid-keys", "ton", "jobs",
		"pkcs11-module", "pkcs11-token", "pkcs11-pin-file", "solana-hsm-keys", "evm-hsm-keys", "approvers",
	} {
		assert.True(t, flags[want], "flag %q not found in the worker's Register methods", want)
	}
}

func TestFlagsIn(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    []string
		wantErr string
	}{
		{name: "typed and Var forms", body: `
	fs.StringVar(&c.A, "service-url", "", "x")
	fs.Var(&c.B, "solana-keys", "x")
	fs.DurationVar(&c.C, "stop-timeout", 30*time.Second, "x")
	fs.BoolFunc("verbose", "x", f)`, want: []string{"service-url", "solana-keys", "stop-timeout", "verbose"}},
		{name: "unrecognised call is an error", body: `
	fs.StringVar(&c.A, "service-url", "", "x")
	fs.Var(flagName, value, "x")`, wantErr: "2 FlagSet calls but 1 flag names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := flagsIn(tt.body, "test")
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// workerConfigErrors checks a worker JSON configuration (the --config file) against flags: it
// must be one object whose keys are flag names and whose values the worker's loader turns into
// the flag text unchanged (strings, booleans, integers printed without an exponent, lists of
// those). It returns the parsed object and every problem found.
func workerConfigErrors(raw []byte, flags map[string]bool) (map[string]any, []error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, []error{fmt.Errorf("not a JSON object: %w", err)}
	}
	if dec.More() {
		return nil, []error{fmt.Errorf("trailing data after the JSON object")}
	}
	var errs []error
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	scalar := func(k string, v any) error {
		switch v := v.(type) {
		case string, bool:
			return nil
		case json.Number:
			// The worker decodes numbers as float64 and prints them with fmt.Sprint: large
			// integers would turn into exponent form ("1e+11") and fail to parse.
			f, err := v.Float64()
			if err != nil || fmt.Sprint(f) != v.String() {
				return fmt.Errorf("%q: number %s reaches the worker as %q; write it as a string", k, v, fmt.Sprint(f))
			}
			return nil
		default:
			return fmt.Errorf("%q: value of type %T is not accepted by the worker", k, v)
		}
	}
	for _, k := range keys {
		if !flags[k] {
			errs = append(errs, fmt.Errorf("%q is not a worker flag", k))
			continue
		}
		if k == "config" {
			errs = append(errs, fmt.Errorf(`"config" inside a config file is ignored`))
		}
		if list, ok := obj[k].([]any); ok {
			for _, item := range list {
				if _, isBool := item.(bool); isBool {
					errs = append(errs, fmt.Errorf("%q: list items must be strings or numbers", k))
				} else if err := scalar(k, item); err != nil {
					errs = append(errs, err)
				}
			}
			continue
		}
		if err := scalar(k, obj[k]); err != nil {
			errs = append(errs, err)
		}
	}
	return obj, errs
}

func TestWorkerConfigErrors(t *testing.T) {
	flags := map[string]bool{"config": true, "service-url": true, "pollers": true, "solana-keys": true, "approval-threshold-lamports": true}
	tests := []struct {
		name string
		raw  string
		want []string
	}{
		{name: "valid", raw: `{"service-url": "https://x", "pollers": 8, "solana-keys": ["/a.json", "/b.json"], "approval-threshold-lamports": "100000000000"}`},
		{name: "unknown key", raw: `{"service-urll": "https://x"}`, want: []string{`"service-urll" is not a worker flag`}},
		{name: "large number", raw: `{"approval-threshold-lamports": 100000000000}`, want: []string{`reaches the worker as "1e+11"`}},
		{name: "fraction", raw: `{"pollers": 1.50}`, want: []string{`number 1.50 reaches the worker as "1.5"`}},
		{name: "object value", raw: `{"solana-keys": {"a": 1}}`, want: []string{"map[string]interface {} is not accepted"}},
		{name: "null value", raw: `{"pollers": null}`, want: []string{"<nil> is not accepted"}},
		{name: "config key", raw: `{"config": "/x.json"}`, want: []string{`"config" inside a config file is ignored`}},
		{name: "not an object", raw: `["service-url"]`, want: []string{"not a JSON object"}},
		{name: "two objects", raw: `{} {}`, want: []string{"trailing data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := workerConfigErrors([]byte(tt.raw), flags)
			require.Len(t, errs, len(tt.want), "%v", errs)
			for i, w := range tt.want {
				assert.ErrorContains(t, errs[i], w)
			}
		})
	}
}
