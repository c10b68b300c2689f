//go:build !race

package signer

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
