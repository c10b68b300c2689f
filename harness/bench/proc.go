package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// VmRSS reads a process's resident set size in bytes from /proc/<pid>/status.
func VmRSS(pid int) (uint64, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, fmt.Errorf("reading status of process %d: %w", pid, err)
	}
	return parseVmRSS(raw)
}

// parseVmRSS finds the VmRSS line ("VmRSS:   123456 kB") of a /proc/<pid>/status text.
func parseVmRSS(status []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("unexpected VmRSS line %q", line)
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected VmRSS line %q: %w", line, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no VmRSS line in process status")
}

// ChildByName finds a direct child of parent whose command name (/proc/<pid>/comm) is name.
func ChildByName(parent int, name string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		comm, ppid, ok := parseStat(stat)
		if ok && ppid == parent && comm == name {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no child process %q of process %d", name, parent)
}

// clockTick is the kernel's USER_HZ, the unit of utime and stime in /proc/<pid>/stat (100 on
// every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// CPUTime reads the user plus system CPU time a process has used from /proc/<pid>/stat.
func CPUTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("reading stat of process %d: %w", pid, err)
	}
	return parseCPUTime(raw)
}

// parseCPUTime reads utime and stime (fields 14 and 15) of a /proc/<pid>/stat line.
func parseCPUTime(stat []byte) (time.Duration, error) {
	s := string(stat)
	closing := strings.LastIndexByte(s, ')')
	if closing < 0 {
		return 0, errors.New("malformed process stat")
	}
	// Fields after the command name start at field 3 (state).
	f := strings.Fields(s[closing+1:])
	if len(f) < 13 {
		return 0, errors.New("malformed process stat: too few fields")
	}
	var total uint64
	for _, v := range f[11:13] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("malformed process stat: %w", err)
		}
		total += n
	}
	return time.Duration(total) * clockTick, nil
}

// parseStat reads the command name and parent pid of a /proc/<pid>/stat line.
func parseStat(stat []byte) (comm string, ppid int, ok bool) {
	s := string(stat)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, false
	}
	f := strings.Fields(s[closing+1:])
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return "", 0, false
	}
	return s[open+1 : closing], ppid, true
}

// loadAvg returns the first three fields of /proc/loadavg (1, 5 and 15 minute load averages),
// or "unknown".
func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
