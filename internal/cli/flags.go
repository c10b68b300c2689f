package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
)

// EnvName is the environment variable twin of a flag: STAKEFLOW_ plus the flag name in upper
// snake case (--service-url -> STAKEFLOW_SERVICE_URL).
func EnvName(flagName string) string {
	return "STAKEFLOW_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Parse parses args into fs, then fills every flag not given on the command line from its
// environment twin, then from the JSON object in the file named by the flag configFlag (if fs
// has it and it is set). Keys of the file are flag names; values are strings, numbers, booleans
// or lists of strings (joined with commas). Unknown keys are an error naming them.
func Parse(fs *flag.FlagSet, args []string, configFlag string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []string
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] {
			return
		}
		if v, ok := os.LookupEnv(EnvName(f.Name)); ok {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", EnvName(f.Name), err))
			}
			set[f.Name] = true
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("environment: %s", strings.Join(errs, "; "))
	}
	if configFlag == "" {
		return nil
	}
	cf := fs.Lookup(configFlag)
	if cf == nil || cf.Value.String() == "" {
		return nil
	}
	return applyFile(fs, cf.Value.String(), set)
}

func applyFile(fs *flag.FlagSet, path string, set map[string]bool) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	// Numbers are kept as written: lamport amounts exceed what a float64 prints exactly.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var values map[string]any
	if err := dec.Decode(&values); err != nil {
		return fmt.Errorf("config file %s: not a JSON object: %w", path, err)
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := fs.Lookup(k)
		if f == nil {
			return fmt.Errorf("config file %s: unknown setting %q", path, k)
		}
		if set[k] {
			continue
		}
		var s string
		switch v := values[k].(type) {
		case string:
			s = v
		case bool, json.Number:
			s = fmt.Sprint(v)
		case []any:
			parts := make([]string, 0, len(v))
			for _, p := range v {
				parts = append(parts, fmt.Sprint(p))
			}
			s = strings.Join(parts, ",")
		default:
			return fmt.Errorf("config file %s: setting %q has a value of unsupported type", path, k)
		}
		if err := f.Value.Set(s); err != nil {
			return fmt.Errorf("config file %s: setting %q: %w", path, k, err)
		}
	}
	return nil
}

// StringList is a flag value holding a comma-separated list.
type StringList []string

// String implements flag.Value.
func (l *StringList) String() string { return strings.Join(*l, ",") }

// Set implements flag.Value: it replaces the list with the comma-separated items of v.
func (l *StringList) Set(v string) error {
	*l = nil
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// StringMap is a flag value holding comma-separated key=value pairs.
type StringMap map[string]string

// String implements flag.Value.
func (m *StringMap) String() string {
	keys := make([]string, 0, len(*m))
	for k := range *m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+(*m)[k])
	}
	return strings.Join(parts, ",")
}

// Set implements flag.Value: it replaces the map with the pairs of v.
func (m *StringMap) Set(v string) error {
	out := map[string]string{}
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		k, val, ok := strings.Cut(p, "=")
		if !ok || k == "" || val == "" {
			return fmt.Errorf("%q is not key=value", p)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	*m = out
	return nil
}

// SortedKeys returns the keys of m in order: how settings are read and checked, so that errors and
// logs come in the same order every time.
func SortedKeys(m StringMap) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CheckEndpoints checks every network=url pair of the flag named flagName: each URL must be an
// absolute http(s) URL. The errors name the flag, the network and the value.
func CheckEndpoints(flagName string, m StringMap) []error {
	var errs []error
	for _, n := range SortedKeys(m) {
		if u, err := url.Parse(m[n]); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s %s: %q is not an http(s) URL", flagName, n, m[n]))
		}
	}
	return errs
}
