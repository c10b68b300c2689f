// Package starter is the admin tool behind cmd/starter: it starts operations (stake, unstake,
// withdraw), approves, rejects and cancels them, shows their status, lists them, and registers the
// search attributes a namespace needs (setup). It creates the schedules of operations and of the
// data jobs (schedule create --job), and reads what the jobs stored (data export, ssv list)
// through OpenStore.
//
// Every input is checked before any workflow starts, with an error that names what is wrong. An
// operation ID given twice is refused, also after the first operation finished. Output is for
// people by default and JSON with --json.
package starter
