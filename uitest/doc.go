// Package uitest checks what an operator sees in the Temporal Web UI: it starts the local stack
// (harness/stack) with the Web UI on a free port, runs a stake through the admin tool, and loads
// the UI's pages in headless Chromium. The workflow must be listed when the list is filtered on
// its search attributes (StakeflowOperation, StakeflowStep) and absent when filtered on a step it
// is not at, and its search-attributes page must show the values the workflow set. On a stack that
// encrypts its payloads and runs a codec server beside the UI, the workflow's page must show the
// stake's input decoded and its status, and the same page from a UI without a codec endpoint only
// ciphertext. Screenshots of these pages are kept in .artifacts/ui/ at the repository root
// (workflow-decoded.png and workflow-encrypted.png for the codec pair).
//
// The test carries the build tag integration and needs two programs, named by environment
// variables; it fails (it does not skip) without them:
//
//	CHROMIUM=$(scripts/tools.sh chromium) TEMPORAL_CLI=$(scripts/tools.sh temporal) \
//	    go test -tags integration -count=1 ./uitest/...
package uitest
