package starter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/stakeflow/stakeflow/codec"
	"github.com/stakeflow/stakeflow/secretfile"
)

// keysetCmd runs the keyset commands, on the payload codec's keyset file (the --payload-keyset of
// the worker, the starter and the codec server): new writes a keyset of one fresh key; add puts a
// fresh key in a keyset, not current; use makes one of its keys current; rotate does both at once;
// show lists the key IDs. Key bytes are never printed.
func (r *Session) keysetCmd(fs *flag.FlagSet, verb string) (func(context.Context) error, error) {
	var id, out, file string
	switch verb {
	case "new":
		fs.StringVar(&id, "id", "", "ID of the key (letters, digits, '-', '_', '.'; written in every payload it seals)")
		fs.StringVar(&out, "out", "", "keyset file to create (mode 0600; an existing file is refused)")
		return func(context.Context) error { return r.keysetNew(id, out) }, nil
	case "add", "use", "rotate":
		fs.StringVar(&id, "id", "", "ID of the key")
		r.operand = &operand{name: "keyset FILE", dst: &file}
		return func(context.Context) error { return r.keysetChange(verb, id, file) }, nil
	case "show":
		r.operand = &operand{name: "keyset FILE", dst: &file}
		return func(context.Context) error { return r.keysetShow(file) }, nil
	default:
		return nil, &UsageError{Msg: fmt.Sprintf("keyset: unknown command %q (new, add, use, rotate, show)", verb)}
	}
}

// keysetShown is the JSON of keyset show, new and the changes: IDs only, and the search key's
// fingerprint (codec.SearchKeyFingerprint; empty without a search key), never a key's bytes.
type keysetShown struct {
	File                 string   `json:"file"`
	Current              string   `json:"current"`
	Keys                 []string `json:"keys"`
	SearchKeyFingerprint string   `json:"searchKeyFingerprint"`
}

func shown(file string, f codec.KeysetFile) keysetShown {
	s := keysetShown{File: file, Current: f.Current}
	for _, k := range f.Keys {
		s.Keys = append(s.Keys, k.ID)
	}
	s.SearchKeyFingerprint, _ = f.SearchKeyFingerprint()
	return s
}

// human lists the keys, one a line, the current one marked, then the search key's fingerprint:
// the worker logs the same fingerprint when it starts, so keysets that tag alike can be told.
func (s keysetShown) human(head string) string {
	var b bytes.Buffer
	b.WriteString(head)
	for _, id := range s.Keys {
		b.WriteString("\n  " + id)
		if id == s.Current {
			b.WriteString("  (current)")
		}
	}
	if s.SearchKeyFingerprint != "" {
		b.WriteString("\nsearch key fingerprint: " + s.SearchKeyFingerprint)
	} else {
		b.WriteString("\nno search key: operations write no staker, account or transaction search attributes (docs/encryption.md)")
	}
	return b.String()
}

// keysetNew: keyset new --id ID --out FILE.
func (r *Session) keysetNew(id, out string) error {
	fail := func(msg string) error { return &UsageError{Msg: "keyset new: " + msg} }
	if id == "" {
		return fail("--id is required")
	}
	if out == "" {
		return fail("--out is required")
	}
	f, err := codec.NewKeyFile(id)
	if err != nil {
		return fail(fmt.Sprintf("--id: %v", err))
	}
	b, err := marshalKeyset(f)
	if err != nil {
		return err
	}
	// O_EXCL: a keyset is never overwritten, whatever it holds.
	w, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fail(fmt.Sprintf("--out %s exists: a keyset is never overwritten (to add a key: starter keyset rotate --id NEWID %s)", out, out))
		}
		return fail(fmt.Sprintf("--out: %v", err))
	}
	if _, err = w.Write(b); err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(out)
		return fmt.Errorf("keyset new: writing %s: %w", out, err)
	}
	return r.print(shown(out, f).human("created "+out+" (mode 0600), keys:"), shown(out, f))
}

// keysetChange: keyset add|use|rotate --id ID FILE. add puts a fresh key under ID beside the
// others, use makes the key ID current, rotate does both. The file is replaced atomically, mode
// 0600, keeping its owner.
func (r *Session) keysetChange(verb, id, file string) error {
	fail := func(msg string) error { return &UsageError{Msg: "keyset " + verb + ": " + msg} }
	if id == "" {
		return fail("--id is required")
	}
	f, err := readKeysetFile(file)
	if err != nil {
		return fmt.Errorf("keyset %s: %w", verb, err)
	}
	has := slices.ContainsFunc(f.Keys, func(k codec.Key) bool { return k.ID == id })
	switch verb {
	case "add", "rotate":
		if has {
			return fail(fmt.Sprintf("--id %q: %s already holds a key of that ID; give the new key a new ID", id, file))
		}
		k, err := codec.NewKey(id)
		if err != nil {
			return err
		}
		f.Keys = append(f.Keys, k)
	case "use":
		if !has {
			return fail(fmt.Sprintf("--id %q: %s holds no key of that ID (it holds %s)", id, file, shown(file, f).Keys))
		}
		if f.Current == id {
			return fail(fmt.Sprintf("--id %q is already the current key of %s", id, file))
		}
	}
	if verb != "add" {
		f.Current = id
	}
	b, err := marshalKeyset(f)
	if err != nil {
		// The new ID is checked here, with the rest, before anything is written.
		return fail(err.Error())
	}
	if err := replaceFile(file, b); err != nil {
		return fmt.Errorf("keyset %s: %w", verb, err)
	}
	s := shown(file, f)
	head := map[string]string{
		"add":    fmt.Sprintf("added key %s to %s, not current; once every worker, codec server and starter holds this file: starter keyset use --id %s %s", id, file, id, file),
		"use":    fmt.Sprintf("%s is now the current key of %s", id, file),
		"rotate": fmt.Sprintf("added key %s to %s and made it current", id, file),
	}[verb]
	return r.print(s.human(head+"; keys:"), s)
}

// keysetShow: keyset show FILE.
func (r *Session) keysetShow(file string) error {
	f, err := readKeysetFile(file)
	if err != nil {
		return fmt.Errorf("keyset show: %w", err)
	}
	s := shown(file, f)
	return r.print(s.human(file+":"), s)
}

// readKeysetFile reads a keyset file as codec.LoadKeyset does (mode 0600 or stricter, a valid
// keyset), keeping its keys in the file's order.
func readKeysetFile(path string) (codec.KeysetFile, error) {
	if path == "" {
		return codec.KeysetFile{}, errors.New("no keyset file given")
	}
	if _, err := codec.LoadKeyset(path); err != nil {
		return codec.KeysetFile{}, err
	}
	b, err := secretfile.Read(path)
	if err != nil {
		return codec.KeysetFile{}, err
	}
	var f codec.KeysetFile
	if err := json.Unmarshal(b, &f); err != nil {
		return codec.KeysetFile{}, fmt.Errorf("payload keyset %s: %w", path, err)
	}
	return f, nil
}

// marshalKeyset encodes f after checking it is a keyset codec.ParseKeyset accepts.
func marshalKeyset(f codec.KeysetFile) ([]byte, error) {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, err := codec.ParseKeyset(b); err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// replaceFile replaces path with data atomically: a 0600 file beside it, synced, owned as path
// is, renamed over it, and the directory synced.
func replaceFile(path string, data []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing beside %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if tst, err := tmp.Stat(); err == nil {
			if own, ok := tst.Sys().(*syscall.Stat_t); ok && (own.Uid != st.Uid || own.Gid != st.Gid) {
				if err := tmp.Chown(int(st.Uid), int(st.Gid)); err != nil {
					return fmt.Errorf("keeping the owner of %s (%d:%d): %w", path, st.Uid, st.Gid, err)
				}
			}
		}
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}
