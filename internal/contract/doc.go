// Package contract is the workflow contract for admin tools written in any language: every
// workflow type the worker registers, with the Go types of its input, result, queries and updates,
// and the JSON Schemas of those types (docs/schemas), generated from the Go types themselves.
//
// The list is not written by hand: Workflows registers the worker's workflows on a recording
// registry and reads each function's signature, so a workflow added to the worker is in the
// contract (or, named in Internal, kept out of it) without anyone remembering to add it.
//
// The schemas describe the JSON the SDK's default data converter writes (encoding/json): field
// names from the json tags, fields tagged omitempty or omitzero optional, uint64 and durations
// (nanoseconds) as integers, time.Time as RFC 3339 date-time strings. Inputs refuse unknown
// properties (the workflow would silently drop them); results and the status accept them, so a
// client keeps working when a later version adds a field.
//
// `go generate ./internal/contract` (or `make schemas`) rewrites docs/schemas; the package's tests
// fail when the committed files differ from what the Go types give.
//
// This package is for tools and tests: workflows and activities never import it.
package contract

//go:generate go run ./schemagen
