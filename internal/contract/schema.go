package contract

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
)

// SchemaDir is where the schemas are committed, relative to the module root.
const SchemaDir = "docs/schemas"

// SchemaBaseID is the base of every schema's $id: the schema's file in the repository.
const SchemaBaseID = "https://github.com/stakeflow/stakeflow/blob/main/" + SchemaDir + "/"

// Schema is one schema file of the contract: the JSON of one Go type.
type Schema struct {
	// File is the file name under SchemaDir: <package>.<Type>.json.
	File string
	Type reflect.Type
	// Input is true for what a client sends (workflow inputs, update arguments): such a schema
	// refuses unknown properties, which the workflow would silently drop.
	Input bool
	// Networks, for a workflow input, are the values its network takes.
	Networks []string
}

// SchemaFile is the file name of t's schema.
func SchemaFile(t reflect.Type) string {
	return path.Base(t.PkgPath()) + "." + t.Name() + ".json"
}

// Schemas lists the schema files of the workflows' inputs, results, queries and updates, sorted by
// file name, one per Go type.
func Schemas(ws []Workflow) ([]Schema, error) {
	byFile := map[string]*Schema{}
	add := func(t reflect.Type, input bool, networks []string) error {
		if t == nil {
			return nil
		}
		if t.Name() == "" || t.Kind() != reflect.Struct {
			return fmt.Errorf("%s: the contract takes named struct types only", t)
		}
		f := SchemaFile(t)
		s, ok := byFile[f]
		if !ok {
			byFile[f] = &Schema{File: f, Type: t, Input: input, Networks: networks}
			return nil
		}
		switch {
		case s.Type != t:
			return fmt.Errorf("%s and %s share the schema file %s", s.Type, t, f)
		case s.Input != input:
			return fmt.Errorf("%s is both sent and returned: one schema cannot both refuse and accept unknown properties", t)
		case !slicesEqual(s.Networks, networks):
			return fmt.Errorf("%s is the input of workflows with different networks", t)
		}
		return nil
	}
	for _, w := range ws {
		if err := add(w.Input, true, w.Networks); err != nil {
			return nil, fmt.Errorf("workflow %s input: %w", w.Type, err)
		}
		if err := add(w.Result, false, nil); err != nil {
			return nil, fmt.Errorf("workflow %s result: %w", w.Type, err)
		}
		for _, h := range append(append([]Handler{}, w.Queries...), w.Updates...) {
			if err := add(h.Input, true, nil); err != nil {
				return nil, fmt.Errorf("workflow %s handler %s: %w", w.Type, h.Name, err)
			}
			if err := add(h.Result, false, nil); err != nil {
				return nil, fmt.Errorf("workflow %s handler %s: %w", w.Type, h.Name, err)
			}
		}
	}
	out := make([]Schema, 0, len(byFile))
	for _, f := range sortedKeys(byFile) {
		out = append(out, *byFile[f])
	}
	return out, nil
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

// Generate renders the contract's schemas: the content of each file, by file name. The
// descriptions come from the Go doc comments of the types and fields, read from the module's
// source (the working directory must be inside the module, as it is for go generate and go test).
func Generate() (map[string][]byte, error) {
	ws, err := Workflows()
	if err != nil {
		return nil, err
	}
	schemas, err := Schemas(ws)
	if err != nil {
		return nil, err
	}
	comments, err := goComments()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(schemas))
	for _, s := range schemas {
		b, err := render(s, comments)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.File, err)
		}
		out[s.File] = b
	}
	return out, nil
}

// render reflects one schema and writes it pretty-printed, with a trailing newline.
func render(s Schema, comments map[string]string) ([]byte, error) {
	r := &jsonschema.Reflector{
		ExpandedStruct:            true,
		AllowAdditionalProperties: !s.Input,
		CommentMap:                comments,
		Mapper:                    mapType,
	}
	js := r.ReflectFromType(s.Type)
	js.ID = jsonschema.ID(SchemaBaseID + s.File)
	nullableArrays(js)
	for _, name := range sortedKeys(js.Definitions) {
		nullableArrays(js.Definitions[name])
	}
	if len(s.Networks) > 0 {
		p, ok := js.Properties.Get("network")
		if !ok {
			return nil, errors.New("a workflow input without a network property")
		}
		for _, n := range s.Networks {
			p.Enum = append(p.Enum, n)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(js); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// nullableArrays lets each array property of an object schema be null too: encoding/json writes a
// nil slice as null, and the Temporal CLI's JSON output (its payload shorthand) shows an empty
// list as null.
func nullableArrays(s *jsonschema.Schema) {
	if s.Properties == nil {
		return
	}
	for p := s.Properties.Oldest(); p != nil; p = p.Next() {
		if p.Value.Type != "array" {
			continue
		}
		desc := p.Value.Description
		p.Value.Description = ""
		p.Value = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{p.Value, {Type: "null"}}, Description: desc}
	}
}

// mapType gives the schema of the Go types whose JSON the reflector would describe loosely.
func mapType(t reflect.Type) *jsonschema.Schema {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		// encoding/json writes a Duration as its int64 count of nanoseconds.
		return &jsonschema.Schema{Type: "integer", Title: "duration in nanoseconds"}
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		return &jsonschema.Schema{Type: "integer", Minimum: "0"}
	}
	return nil
}

// goComments maps the module's types and fields to their doc comments, as the reflector looks them
// up (import path, type, field).
func goComments() (map[string]string, error) {
	root, module, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	// The reflector names a package by joining base with the directory walked, relative to the
	// working directory: base is the working directory's import path.
	fromRoot, err := filepath.Rel(root, wd)
	if err != nil {
		return nil, err
	}
	toRoot, err := filepath.Rel(wd, root)
	if err != nil {
		return nil, err
	}
	base := path.Join(module, filepath.ToSlash(fromRoot))
	r := &jsonschema.Reflector{}
	for _, dir := range []string{"workflows", "activities"} {
		if err := r.AddGoComments(base, filepath.Join(toRoot, dir)); err != nil {
			return nil, err
		}
	}
	return r.CommentMap, nil
}

// moduleRoot finds the directory of go.mod above the working directory, and the module's path.
func moduleRoot() (dir, module string, err error) {
	dir, err = os.Getwd()
	if err != nil {
		return "", "", err
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
					return dir, strings.Trim(strings.TrimSpace(m), `"`), nil
				}
			}
			return "", "", fmt.Errorf("%s/go.mod names no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// SchemaPath is the directory of the committed schemas.
func SchemaPath() (string, error) {
	root, _, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, filepath.FromSlash(SchemaDir)), nil
}

// Write writes the generated schemas into dir and removes the other .json files there.
func Write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if _, keep := files[filepath.Base(f)]; !keep {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	for _, name := range sortedKeys(files) {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
