// Package npmcache installs a Node project (a package.json and a package-lock.json pinning exact
// versions, usually embedded in the binary) with `npm ci` into a per-user cache directory, once.
//
// Contract:
//
//   - The install directory is <cacheDir>/<name>-<hash>, where hash is the first 16 hex digits of
//     the SHA-256 of the project's files (names and contents). Changing any file gives a new
//     directory; an unchanged project is installed once and reused.
//   - A directory counts as installed when it holds the marker file (Marker), written after
//     `npm ci` succeeded, and every path of Project.Require.
//   - [Install] is safe to call from many goroutines and processes at once: an exclusive file lock
//     (<name>-<hash>.lock, github.com/gofrs/flock) serialises installers of one project, the
//     project is installed in a temporary directory (<name>-<hash>.tmp-*) renamed into place only
//     once complete, and temporary directories found while holding the lock are leftovers of an
//     installer that died, removed before installing. A directory at the final path without the
//     marker is replaced.
//   - `npm ci` runs with --no-audit --no-fund; its output appears only in the error of a failed
//     install (its last 2,000 bytes).
package npmcache
