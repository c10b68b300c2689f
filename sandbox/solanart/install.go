package solanart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// installedMarker is written into an install directory once `npm ci` has succeeded.
const installedMarker = ".solanart-installed"

// defaultCacheDir returns $XDG_CACHE_HOME/stakeflow, or ~/.cache/stakeflow.
func defaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("solanart: no cache directory (set Options.CacheDir): %w", err)
	}
	return filepath.Join(base, "stakeflow"), nil
}

// install makes sure cacheDir/solanart-<hash> holds the embedded Node project with its
// dependencies installed, and returns that directory. It is safe to call from several
// processes at once: a file lock serialises installers, and the project is installed in
// a temporary directory that is renamed into place only when complete.
func install(ctx context.Context, cacheDir string) (string, error) {
	files, hash, err := projectFiles()
	if err != nil {
		return "", fmt.Errorf("solanart: read embedded node project: %w", err)
	}
	final := filepath.Join(cacheDir, "solanart-"+hash)
	if isInstalled(final) {
		return final, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("solanart: create cache directory: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(cacheDir, "solanart-"+hash+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if isInstalled(final) {
		return final, nil
	}
	// Holding the lock, no other installer of this hash is running: whatever temporary
	// directories exist were left by an installer that died.
	if leftovers, err := filepath.Glob(filepath.Join(cacheDir, "solanart-"+hash+".tmp-*")); err == nil {
		for _, dir := range leftovers {
			_ = os.RemoveAll(dir)
		}
	}

	tmp, err := os.MkdirTemp(cacheDir, "solanart-"+hash+".tmp-")
	if err != nil {
		return "", fmt.Errorf("solanart: create install directory: %w", err)
	}
	defer os.RemoveAll(tmp) // no-op once renamed
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), content, 0o644); err != nil {
			return "", fmt.Errorf("solanart: write %s: %w", name, err)
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("solanart: npm not found on PATH: %w", err)
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("solanart: npm ci in %s failed: %w: %s", tmp, err, tail(out.String(), 2000))
	}
	if err := os.WriteFile(filepath.Join(tmp, installedMarker), []byte(hash+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("solanart: write install marker: %w", err)
	}
	// A directory left without a marker is stale: replace it.
	if err := os.RemoveAll(final); err != nil {
		return "", fmt.Errorf("solanart: remove stale install %s: %w", final, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("solanart: move install into place: %w", err)
	}
	return final, nil
}

func isInstalled(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, installedMarker))
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "node_modules", "litesvm", "package.json"))
	return err == nil
}

// tail returns at most the last n bytes of s.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
