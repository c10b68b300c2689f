package check

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseDockerfile parses src with BuildKit's parser and linter and returns its stages, its
// global ARGs and every parser warning and parse-time lint finding (rules that need the full
// build graph, such as SecretsUsedInArgOrEnv, run only in `docker build --check`).
func parseDockerfile(src []byte) ([]instructions.Stage, map[string]string, []string, error) {
	res, err := parser.Parse(bytes.NewReader(src))
	if err != nil {
		return nil, nil, nil, err
	}
	var warnings []string
	for _, w := range res.Warnings {
		warnings = append(warnings, w.Short)
	}
	lint := linter.New(&linter.Config{Warn: func(rule, _, _, msg string, _ []parser.Range) {
		warnings = append(warnings, rule+": "+msg)
	}})
	stages, metaArgs, err := instructions.Parse(res.AST, lint)
	if err != nil {
		return nil, nil, nil, err
	}
	args := map[string]string{}
	for _, a := range metaArgs {
		for _, kv := range a.Args {
			if kv.Value != nil {
				args[kv.Key] = *kv.Value
			}
		}
	}
	return stages, args, warnings, nil
}

// stageUser is the user a stage's image runs as: the last USER instruction ("" if none).
func stageUser(s instructions.Stage) string {
	user := ""
	for _, c := range s.Commands {
		if u, ok := c.(*instructions.UserCommand); ok {
			user = u.User
		}
	}
	return user
}

// nonRoot reports whether a USER value names a user other than root.
func nonRoot(user string) bool {
	name, _, _ := strings.Cut(user, ":")
	return name != "" && name != "0" && name != "root"
}

// expandArgs resolves ${NAME} references to the global ARGs.
func expandArgs(s string, args map[string]string) string {
	for k, v := range args {
		s = strings.ReplaceAll(s, "${"+k+"}", v)
		s = strings.ReplaceAll(s, "$"+k, v)
	}
	return s
}

func TestNonRoot(t *testing.T) {
	for user, want := range map[string]bool{"": false, "root": false, "0": false, "0:0": false, "root:root": false, "65532:65532": true, "node": true, "1000": true} {
		assert.Equal(t, want, nonRoot(user), "USER %q", user)
	}
}

func TestDockerfile(t *testing.T) {
	stages, args, warnings, err := parseDockerfile(readFile(t, deployPath(t, "Dockerfile")))
	require.NoError(t, err)
	assert.Empty(t, warnings, "BuildKit lint warnings")

	byName := map[string]instructions.Stage{}
	for _, s := range stages {
		byName[s.Name] = s
	}
	for _, target := range []string{"build", "worker", "starter", "sandbox"} {
		require.Contains(t, byName, target, "no stage %q", target)
	}

	// The Go build: trimmed paths, every binary the targets copy; worker and starter with cgo (they
	// dlopen PKCS#11 modules), the sandbox and the health probe static.
	var build strings.Builder
	builtWith := map[string]string{} // package -> the CGO_ENABLED its go build command sets
	for _, c := range byName["build"].Commands {
		switch c := c.(type) {
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				fmt.Fprintf(&build, "%s=%s\n", kv.Key, kv.Value)
			}
		case *instructions.RunCommand:
			line := strings.Join(c.CmdLine, " ")
			build.WriteString(line + "\n")
			if !strings.Contains(line, "go build") {
				continue
			}
			assert.Contains(t, line, "-trimpath")
			cgo := ""
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "CGO_ENABLED="); ok {
					cgo = v
				}
				if strings.HasPrefix(f, "./") {
					builtWith[f] = cgo
				}
			}
		}
	}
	assert.Contains(t, build.String(), "-trimpath")
	for pkg, cgo := range map[string]string{"./cmd/worker": "1", "./cmd/starter": "1", "./harness/cmd/sandbox": "0", "./deploy/healthprobe": "0"} {
		if assert.Contains(t, builtWith, pkg, "not built") {
			assert.Equal(t, cgo, builtWith[pkg], "%s is built with CGO_ENABLED=%q", pkg, builtWith[pkg])
		}
	}
	buildBase := expandArgs(byName["build"].BaseName, args)
	assert.True(t, strings.HasPrefix(buildBase, "golang:1.26"), "build stage base %q", buildBase)
	// The cgo binaries link the build image's glibc: it must be the runtime's Debian release.
	assert.Contains(t, buildBase, "-bookworm", "build stage base %q", buildBase)

	for target, wantBase := range map[string]string{
		"worker":  "gcr.io/distroless/cc-debian12:nonroot",
		"starter": "gcr.io/distroless/cc-debian12:nonroot",
		"sandbox": "node:20",
	} {
		t.Run(target, func(t *testing.T) {
			s := byName[target]
			base := expandArgs(s.BaseName, args)
			assert.True(t, strings.HasPrefix(base, wantBase), "base image %q", base)
			assert.NotContains(t, base, ":latest")
			assert.True(t, nonRoot(stageUser(s)), "%s runs as %q", target, stageUser(s))
			var entrypoint *instructions.EntrypointCommand
			for _, c := range s.Commands {
				if e, ok := c.(*instructions.EntrypointCommand); ok {
					entrypoint = e
				}
				if cp, ok := c.(*instructions.CopyCommand); ok {
					assert.Equal(t, "build", cp.From, "%s copies from outside the build stage", target)
				}
			}
			if assert.NotNil(t, entrypoint, "%s has no ENTRYPOINT", target) {
				assert.False(t, entrypoint.PrependShell, "%s ENTRYPOINT uses a shell", target)
			}
		})
	}

	// The sandbox image installs the Solana runtime's npm dependencies when it is built, as the
	// user it runs as, into the directory the sandbox reads (SANDBOX_DATA_DIR).
	sb := byName["sandbox"]
	var user, dataDir string
	installedAs := ""
	for _, c := range sb.Commands {
		switch c := c.(type) {
		case *instructions.UserCommand:
			user = c.User
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				if kv.Key == "SANDBOX_DATA_DIR" {
					dataDir = kv.Value
				}
			}
		case *instructions.RunCommand:
			if strings.Contains(strings.Join(c.CmdLine, " "), ".npmcache-installed") {
				installedAs = user
			}
		}
	}
	assert.NotEmpty(t, dataDir, "sandbox image sets no SANDBOX_DATA_DIR")
	assert.Equal(t, stageUser(sb), installedAs, "the runtime is not installed by the user the sandbox runs as")
}

func TestDockerfileLintCatches(t *testing.T) {
	// The parse-time lint rules are live: stage name casing and FROM/AS casing are reported.
	_, _, warnings, err := parseDockerfile([]byte("FROM scratch as Build\n"))
	require.NoError(t, err)
	assert.Len(t, warnings, 2, "%v", warnings)
}
