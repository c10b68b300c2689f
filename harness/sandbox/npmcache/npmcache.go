package npmcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// Marker is the file written into an install directory once `npm ci` has succeeded.
const Marker = ".npmcache-installed"

// lockRetry is how often a waiting installer tries the lock again.
const lockRetry = 100 * time.Millisecond

// Project is a Node project to install.
type Project struct {
	// Name prefixes the install directory; letters, digits, '-' and '_' only.
	Name string
	// Files maps a file name (no directories) to its content; it must hold package.json and
	// package-lock.json.
	Files map[string][]byte
	// Require lists paths, relative to the install directory, that a complete install has
	// (for example "node_modules/solc/package.json").
	Require []string
}

// DefaultCacheDir returns $XDG_CACHE_HOME/stakeflow, or the platform's user cache directory
// followed by stakeflow.
func DefaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("npmcache: no user cache directory (name one explicitly): %w", err)
	}
	return filepath.Join(base, "stakeflow"), nil
}

// FilesFromFS reads every regular file directly inside dir of fsys (an embed.FS, say) into a
// map fit for Project.Files.
func FilesFromFS(fsys fs.FS, dir string) (map[string][]byte, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("npmcache: read %s: %w", dir, err)
	}
	files := make(map[string][]byte, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("npmcache: read %s: %w", path.Join(dir, e.Name()), err)
		}
		files[e.Name()] = b
	}
	return files, nil
}

// Hash is the 16-hex-digit digest of files that names their install directory.
func Hash(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(files[n])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Dir is the install directory of p under cacheDir, installed or not.
func (p Project) Dir(cacheDir string) string {
	return filepath.Join(cacheDir, p.Name+"-"+Hash(p.Files))
}

func (p Project) validate() error {
	if p.Name == "" {
		return errors.New("npmcache: Project.Name is empty")
	}
	for _, r := range p.Name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("npmcache: Project.Name %q holds %q: letters, digits, '-' and '_' only", p.Name, r)
		}
	}
	for _, need := range []string{"package.json", "package-lock.json"} {
		if _, ok := p.Files[need]; !ok {
			return fmt.Errorf("npmcache: project %s has no %s", p.Name, need)
		}
	}
	for name := range p.Files {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
			return fmt.Errorf("npmcache: project %s: file name %q is not a plain file name", p.Name, name)
		}
	}
	return nil
}

// Installed reports whether dir holds a complete install of p.
func (p Project) Installed(dir string) bool {
	for _, rel := range append([]string{Marker}, p.Require...) {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
			return false
		}
	}
	return true
}

// Install makes sure p is installed under cacheDir and returns its install directory. ctx
// bounds the wait for the lock and `npm ci`.
func Install(ctx context.Context, cacheDir string, p Project) (string, error) {
	if err := p.validate(); err != nil {
		return "", err
	}
	final := p.Dir(cacheDir)
	if p.Installed(final) {
		return final, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("npmcache: create cache directory %s: %w", cacheDir, err)
	}
	lock := flock.New(final + ".lock")
	locked, err := lock.TryLockContext(ctx, lockRetry)
	if err != nil || !locked {
		return "", fmt.Errorf("npmcache: wait for install lock %s.lock: %w", final, errors.Join(err, ctx.Err()))
	}
	defer func() { _ = lock.Unlock() }()
	if p.Installed(final) {
		return final, nil
	}
	// Holding the lock, no other installer of this project runs: temporary directories are
	// leftovers of one that died.
	leftovers, err := filepath.Glob(final + ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("npmcache: list leftovers of %s: %w", final, err)
	}
	for _, dir := range leftovers {
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("npmcache: remove leftover %s: %w", dir, err)
		}
	}

	tmp, err := os.MkdirTemp(cacheDir, filepath.Base(final)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("npmcache: create install directory: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	for name, content := range p.Files {
		if err := os.WriteFile(filepath.Join(tmp, name), content, 0o644); err != nil {
			return "", fmt.Errorf("npmcache: write %s: %w", name, err)
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npmcache: npm not found on PATH: %w", err)
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npmcache: npm ci of %s failed: %w: %s", p.Name, err, tail(out.String(), 2000))
	}
	for _, rel := range p.Require {
		if _, err := os.Stat(filepath.Join(tmp, filepath.FromSlash(rel))); err != nil {
			return "", fmt.Errorf("npmcache: npm ci of %s succeeded but %s is missing: %w", p.Name, rel, err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, Marker), []byte(Hash(p.Files)+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("npmcache: write install marker: %w", err)
	}
	// A directory at the final path without the marker is an incomplete install: replace it.
	if err := os.RemoveAll(final); err != nil {
		return "", fmt.Errorf("npmcache: remove incomplete install %s: %w", final, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("npmcache: move install into place at %s: %w", final, err)
	}
	return final, nil
}

// tail returns at most the last n bytes of s.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
