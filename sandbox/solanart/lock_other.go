//go:build !unix

package solanart

import "context"

// lockFile is a no-op where advisory file locks are unavailable.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
