package solc

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/stakeflow/stakeflow/harness/sandbox/npmcache"
)

//go:embed package.json package-lock.json compile.mjs
var project embed.FS

// Version is the pinned compiler version.
const Version = "0.8.30"

// Project is the embedded Node project that holds the compiler.
func Project() (npmcache.Project, error) {
	files, err := npmcache.FilesFromFS(project, ".")
	if err != nil {
		return npmcache.Project{}, err
	}
	return npmcache.Project{Name: "solc", Files: files, Require: []string{"node_modules/solc/package.json"}}, nil
}

// Compile compiles every .sol file in contractsDir and writes one <Contract>.json (ABI and
// creation bytecode) per deployable contract into outDir. cacheDir is where the compiler is
// installed; empty means npmcache.DefaultCacheDir.
func Compile(ctx context.Context, cacheDir, contractsDir, outDir string) error {
	p, err := Project()
	if err != nil {
		return err
	}
	if cacheDir == "" {
		if cacheDir, err = npmcache.DefaultCacheDir(); err != nil {
			return err
		}
	}
	dir, err := npmcache.Install(ctx, cacheDir, p)
	if err != nil {
		return fmt.Errorf("solc: install compiler: %w", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("solc: node not found on PATH: %w", err)
	}
	absContracts, err := filepath.Abs(contractsDir)
	if err != nil {
		return fmt.Errorf("solc: contracts directory %s: %w", contractsDir, err)
	}
	absOut, err := filepath.Abs(outDir)
	if err != nil {
		return fmt.Errorf("solc: output directory %s: %w", outDir, err)
	}
	cmd := exec.CommandContext(ctx, node, "compile.mjs", absContracts, absOut)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("solc: compile %s: %w: %s", contractsDir, err, strings.TrimSpace(out.String()))
	}
	return nil
}
