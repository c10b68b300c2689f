//go:build !cgo

package hsm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenWithoutCgo: a binary built without cgo says plainly that PKCS#11 is unavailable
// (CGO_ENABLED=0 go test ./signer/keys/hsm/).
func TestOpenWithoutCgo(t *testing.T) {
	_, err := Open(Config{Module: "/usr/lib/softhsm/libsofthsm2.so", Token: "t", PINFile: "pin"})
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "built without cgo: PKCS#11 unavailable")
}
