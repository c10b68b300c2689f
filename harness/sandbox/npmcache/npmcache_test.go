package npmcache

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingProject is a project without dependencies (npm ci needs no network) whose install
// script appends one line to countFile each time npm ci runs it.
func countingProject(t *testing.T, countFile string) Project {
	t.Helper()
	js := fmt.Sprintf("require('fs').appendFileSync(%q, 'installed\\n')\n", countFile)
	pkg := `{"name":"npmcache-probe","version":"1.0.0","private":true,"scripts":{"install":"node count.js"}}`
	lock := `{"name":"npmcache-probe","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"npmcache-probe","version":"1.0.0","hasInstallScript":true}}}`
	return Project{
		Name:    "probe",
		Files:   map[string][]byte{"package.json": []byte(pkg), "package-lock.json": []byte(lock), "count.js": []byte(js)},
		Require: []string{"package.json"},
	}
}

func runs(t *testing.T, countFile string) int {
	t.Helper()
	b, err := os.ReadFile(countFile)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "installed\n")
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestConcurrentInstallsRunNpmOnce starts eight installs of one project at once into an empty
// cache: every one answers the same directory, holding the marker and the project, and npm ci
// ran exactly once (the project's install script counts its runs).
func TestConcurrentInstallsRunNpmOnce(t *testing.T) {
	ctx := testContext(t)
	cache := t.TempDir()
	count := filepath.Join(t.TempDir(), "runs")
	p := countingProject(t, count)

	const n = 8
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = Install(ctx, cache, p)
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "install %d", i)
		assert.Equal(t, filepath.Join(cache, "probe-"+Hash(p.Files)), dirs[i], "install %d", i)
	}
	assert.Equal(t, 1, runs(t, count), "npm ci runs")
	assert.FileExists(t, filepath.Join(dirs[0], Marker))
	got, err := os.ReadFile(filepath.Join(dirs[0], "package.json"))
	require.NoError(t, err)
	assert.Equal(t, p.Files["package.json"], got)
	tmps, err := filepath.Glob(filepath.Join(cache, "*.tmp-*"))
	require.NoError(t, err)
	assert.Empty(t, tmps, "temporary directories left behind")

	// Installed: a later call answers at once, without npm.
	again, err := Install(ctx, cache, p)
	require.NoError(t, err)
	assert.Equal(t, dirs[0], again)
	assert.Equal(t, 1, runs(t, count), "npm ci runs after a second install")
}

// TestLeftoversOfDeadInstallerAreCleaned leaves what an installer killed mid-way leaves: a
// temporary directory and, at the final path, a directory without the marker. Install removes
// the first, replaces the second and runs npm ci.
func TestLeftoversOfDeadInstallerAreCleaned(t *testing.T) {
	ctx := testContext(t)
	cache := t.TempDir()
	count := filepath.Join(t.TempDir(), "runs")
	p := countingProject(t, count)
	final := p.Dir(cache)

	leftover := final + ".tmp-123456"
	require.NoError(t, os.MkdirAll(filepath.Join(leftover, "node_modules"), 0o755))
	require.NoError(t, os.MkdirAll(final, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(final, "half-written"), []byte("x"), 0o644))
	// A lock file left by the dead installer holds no lock: flock locks die with their process.
	require.NoError(t, os.WriteFile(final+".lock", nil, 0o644))

	dir, err := Install(ctx, cache, p)
	require.NoError(t, err)
	assert.Equal(t, final, dir)
	assert.NoDirExists(t, leftover, "the dead installer's temporary directory")
	assert.NoFileExists(t, filepath.Join(final, "half-written"), "the incomplete install was kept")
	assert.FileExists(t, filepath.Join(final, Marker))
	assert.Equal(t, 1, runs(t, count), "npm ci runs")
}

// TestRequiredPathsDecideInstalled: a directory with the marker but without a required path is
// installed again.
func TestRequiredPathsDecideInstalled(t *testing.T) {
	ctx := testContext(t)
	cache := t.TempDir()
	count := filepath.Join(t.TempDir(), "runs")
	p := countingProject(t, count)
	dir, err := Install(ctx, cache, p)
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(dir, "package.json")))
	assert.False(t, p.Installed(dir))
	_, err = Install(ctx, cache, p)
	require.NoError(t, err)
	assert.Equal(t, 2, runs(t, count), "npm ci runs")
	assert.FileExists(t, filepath.Join(dir, "package.json"))
}

// TestHashFollowsFiles: the directory changes with any file's content or name, and not with
// map order (the hash is of sorted names).
func TestHashFollowsFiles(t *testing.T) {
	a := map[string][]byte{"package.json": []byte("{}"), "package-lock.json": []byte("{}")}
	b := map[string][]byte{"package-lock.json": []byte("{}"), "package.json": []byte("{}")}
	c := map[string][]byte{"package.json": []byte("{} "), "package-lock.json": []byte("{}")}
	d := map[string][]byte{"package.json": []byte("{}"), "package-lock.json": []byte("{}"), "x.mjs": nil}
	assert.Equal(t, Hash(a), Hash(b))
	assert.NotEqual(t, Hash(a), Hash(c))
	assert.NotEqual(t, Hash(a), Hash(d))
	assert.Len(t, Hash(a), 16)
}

// TestInvalidProjectsAreRefused names what is wrong before touching the cache.
func TestInvalidProjectsAreRefused(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "never")
	ok := map[string][]byte{"package.json": []byte("{}"), "package-lock.json": []byte("{}")}
	for _, tc := range []struct {
		p    Project
		want string
	}{
		{Project{Files: ok}, "Name is empty"},
		{Project{Name: "../up", Files: ok}, `holds '.'`},
		{Project{Name: "x", Files: map[string][]byte{"package.json": nil}}, "no package-lock.json"},
		{Project{Name: "x", Files: map[string][]byte{"package.json": nil, "package-lock.json": nil, "a/b": nil}}, `"a/b" is not a plain file name`},
	} {
		_, err := Install(context.Background(), cache, tc.p)
		assert.ErrorContains(t, err, tc.want)
	}
	assert.NoDirExists(t, cache)
}

// TestFailedNpmNamesTheProject: npm ci's failure carries the project name and npm's words,
// and leaves no install behind.
func TestFailedNpmNamesTheProject(t *testing.T) {
	cache := t.TempDir()
	p := Project{Name: "broken", Files: map[string][]byte{"package.json": []byte(`{"name":"a","version":"1.0.0"}`), "package-lock.json": []byte("not json")}}
	_, err := Install(testContext(t), cache, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "npm ci of broken failed")
	assert.NoDirExists(t, p.Dir(cache))
	tmps, _ := filepath.Glob(filepath.Join(cache, "*.tmp-*"))
	assert.Empty(t, tmps)
}
