package solanart

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"sort"
)

// nodeFiles holds the Node project: package.json, package-lock.json and server.mjs.
//
//go:embed node/package.json node/package-lock.json node/server.mjs
var nodeFiles embed.FS

// nodeDir is the directory of the Node project inside nodeFiles.
const nodeDir = "node"

// projectFiles returns the embedded project files by base name and a hash over names and
// contents, which keys the install directory.
func projectFiles() (map[string][]byte, string, error) {
	entries, err := fs.ReadDir(nodeFiles, nodeDir)
	if err != nil {
		return nil, "", err
	}
	files := make(map[string][]byte, len(entries))
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		b, err := nodeFiles.ReadFile(path.Join(nodeDir, e.Name()))
		if err != nil {
			return nil, "", err
		}
		files[e.Name()] = b
		names = append(names, e.Name())
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(files[n])
		h.Write([]byte{0})
	}
	return files, hex.EncodeToString(h.Sum(nil))[:16], nil
}
