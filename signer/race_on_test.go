//go:build race

package signer

// raceEnabled reports whether the tests run under the race detector, which makes the exhaustive
// sweeps about five times slower; they then take every third input.
const raceEnabled = true
