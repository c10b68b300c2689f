package bench

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseVmRSS(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     uint64
		err      string
	}{
		{"kB line", "Name:\tx\nVmPeak:\t  9 kB\nVmRSS:\t  2048 kB\nThreads: 3\n", 2048 * 1024, ""},
		{"missing", "Name:\tx\n", 0, "no VmRSS line"},
		{"bad unit", "VmRSS:\t 12 MB\n", 0, "unexpected VmRSS line"},
		{"bad number", "VmRSS:\t x kB\n", 0, "unexpected VmRSS line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseVmRSS([]byte(tc.in))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestVmRSSOfThisProcess(t *testing.T) {
	rss, err := VmRSS(os.Getpid())
	require.NoError(t, err)
	assert.Greater(t, rss, uint64(1<<20), "a Go test binary holds more than 1 MiB")
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		comm     string
		ppid     int
		ok       bool
	}{
		{"plain", "123 (temporal) S 45 123 45 0", "temporal", 45, true},
		{"name with spaces and parens", "9 (a (b) c) R 1 9 9", "a (b) c", 1, true},
		{"truncated", "9 (x)", "", 0, false},
		{"no parens", "9 x S 1", "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comm, ppid, ok := parseStat([]byte(tc.in))
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.comm, comm)
			assert.Equal(t, tc.ppid, ppid)
		})
	}
}

func TestChildByNameMissing(t *testing.T) {
	_, err := ChildByName(os.Getpid(), "no-such-process-name")
	require.ErrorContains(t, err, "no child process")
}

func TestParseCPUTime(t *testing.T) {
	// Fields: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
	line := "42 (temporal x) S 1 42 42 0 -1 4194560 10 0 0 0 250 50 0 0 20 0 12 0"
	got, err := parseCPUTime([]byte(line))
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, got, "300 ticks of 10ms")

	_, err = parseCPUTime([]byte("42 (x) S 1 2"))
	require.ErrorContains(t, err, "too few fields")

	self, err := CPUTime(os.Getpid())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, self, time.Duration(0))
}
