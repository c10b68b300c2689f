package contract_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	"github.com/stakeflow/stakeflow/internal/contract"
	"github.com/stakeflow/stakeflow/workflows"
)

// moduleDir is the module's root directory.
func moduleDir(t *testing.T) string {
	t.Helper()
	dir, err := contract.SchemaPath()
	require.NoError(t, err)
	return filepath.Join(dir, "..", "..")
}

// TestDocsCoverTheContract checks docs/workflows.md against the Go code: every workflow type,
// schema, query, update, search attribute and error type is documented, and every example input
// is valid: it validates against its schema, decodes with the SDK's data converter and passes the
// workflow's own validation.
func TestDocsCoverTheContract(t *testing.T) {
	root := moduleDir(t)
	raw, err := os.ReadFile(filepath.Join(root, "docs", "workflows.md"))
	require.NoError(t, err)
	doc := string(raw)

	ws, err := contract.Workflows()
	require.NoError(t, err)
	for _, w := range ws {
		mentions(t, doc, "### `"+w.Type+"`\n", "workflow %s has a section", w.Type)
	}
	for name := range contract.Internal {
		mentions(t, doc, "`"+name+"`", "internal workflow %s is named", name)
	}
	list, err := contract.Schemas(ws)
	require.NoError(t, err)
	for _, s := range list {
		mentions(t, doc, "](schemas/"+s.File+")", "schema %s is linked", s.File)
	}
	for _, h := range append(append([]contract.Handler{}, contract.Queries...), contract.Updates...) {
		mentions(t, doc, "`"+h.Name+"`", "handler %s is documented", h.Name)
	}
	for _, sa := range workflows.SearchAttributeTypes() {
		mentions(t, doc, "| `"+sa[0]+"` | "+sa[1]+" |", "search attribute %s is documented with its type", sa[0])
	}
	types := errorTypes(t, filepath.Join(root, "workflows"), filepath.Join(root, "activities"))
	require.Contains(t, types, "InvalidInput")
	for _, typ := range types {
		mentions(t, doc, "| `"+typ+"` |", "error type %s is in the errors table", typ)
	}

	// The examples.
	sch := schemas(t)
	byType := map[string]contract.Workflow{}
	for _, w := range ws {
		byType[w.Type] = w
	}
	started := map[string]bool{}
	for _, cmd := range shellCommands(doc) {
		input := flagValue(cmd, "--input")
		switch {
		case strings.HasPrefix(cmd, "temporal workflow start "):
			typ := flagValue(cmd, "--type")
			w, ok := byType[typ]
			require.True(t, ok, "example starts unknown workflow type %q: %s", typ, cmd)
			require.Equal(t, "stakeflow-"+w.Module, flagValue(cmd, "--task-queue"), "the queue of the module serving %s: %s", typ, cmd)
			require.NoError(t, workflows.ValidateOperationID(flagValue(cmd, "--workflow-id")), cmd)
			require.NoError(t, validate(t, sch[w.Input], []byte(input)), "%s example: %s", typ, input)
			v := reflect.New(w.Input)
			require.NoError(t, converter.GetDefaultDataConverter().FromPayload(jsonPayload(input), v.Interface()), input)
			require.NoError(t, v.Interface().(interface{ Validate() error }).Validate(), "%s example: %s", typ, input)
			started[typ] = true
		case strings.HasPrefix(cmd, "temporal workflow update execute "):
			require.NoError(t, validate(t, sch[reflect.TypeFor[workflows.ApprovalInput]()], []byte(input)), cmd)
		}
	}
	for _, w := range ws {
		require.True(t, started[w.Type], "workflow %s has an example start", w.Type)
	}
}

// mentions fails the test unless doc contains s.
func mentions(t *testing.T, doc, s, format string, args ...any) {
	t.Helper()
	if !strings.Contains(doc, s) {
		t.Fatalf("docs/workflows.md lacks %q: "+format, append([]any{s}, args...)...)
	}
}

// shellCommands are the commands of the document's sh blocks, continuation lines joined.
func shellCommands(doc string) []string {
	var out []string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(doc, -1) {
		joined := strings.ReplaceAll(block[1], "\\\n", " ")
		for _, line := range strings.Split(joined, "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, strings.Join(strings.Fields(line), " "))
			}
		}
	}
	return out
}

// flagValue is the value of flag in cmd, unquoted when single-quoted.
func flagValue(cmd, flag string) string {
	m := regexp.MustCompile(regexp.QuoteMeta(flag) + ` ('[^']*'|\S+)`).FindStringSubmatch(cmd)
	if m == nil {
		return ""
	}
	return strings.Trim(m[1], "'")
}

// errorTypes lists the values of the string constants named Err* in the Go files (tests aside) under
// dirs: the application error types.
func errorTypes(t *testing.T, dirs ...string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !strings.HasPrefix(name.Name, "Err") || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, err := strconv.Unquote(lit.Value)
						if err != nil {
							return err
						}
						if !seen[v] {
							seen[v] = true
							out = append(out, v)
						}
					}
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	return out
}
