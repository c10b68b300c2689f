// Command sandbox runs the local staking service (package sandbox) on a real
// Solana runtime, or mints a bearer token for it.
//
//	go run ./harness/cmd/sandbox [flags]                 serve until SIGINT/SIGTERM
//	go run ./harness/cmd/sandbox token --subject NAME    print a bearer token
//
// Every flag has an environment twin (SANDBOX_ plus the flag name in upper
// case with dashes as underscores); a flag given on the command line wins.
// The token secret comes from --token-secret-file / SANDBOX_TOKEN_SECRET_FILE
// or from SANDBOX_TOKEN_SECRET (never from a flag value, which would show in
// the process list).
//
// Flags (environment twin in brackets):
//
//	--addr                      API listen address, default 127.0.0.1:8088 [SANDBOX_ADDR]
//	--token-secret-file         HS256 secret file [SANDBOX_TOKEN_SECRET_FILE]; else SANDBOX_TOKEN_SECRET
//	--data-dir                  where the Solana runtime is installed [SANDBOX_DATA_DIR]
//	--solana-addr               Solana JSON-RPC listen address, default 127.0.0.1:8899 [SANDBOX_SOLANA_ADDR]
//	--slot-duration             default 400ms [SANDBOX_SLOT_DURATION]
//	--slots-per-epoch           default 432 (about three minutes per epoch) [SANDBOX_SLOTS_PER_EPOCH]
//	--blockhash-validity, --finalization-depth, --vote-accounts, --delinquent-vote-accounts
//	--genesis-seed              another network: another genesis hash and blockhashes [SANDBOX_GENESIS_SEED]
//	--rate-limit                RateLimit-Policy per token, e.g. "100;w=1,1000;w=60" [SANDBOX_RATE_LIMIT]
//	--faults, --faults-file     initial faults, JSON as POST /sandbox/faults [SANDBOX_FAULTS, SANDBOX_FAULTS_FILE]
//	--hostile                   initial hostile mode [SANDBOX_HOSTILE]
//	--vote-account              vote account stakes go to [SANDBOX_VOTE_ACCOUNT]
//	--log-level, --log-format   info / console by default [SANDBOX_LOG_LEVEL, SANDBOX_LOG_FORMAT]
//
// Once ready, the serve command prints "sandbox API: <url>",
// "solana RPC: <url>" and "solana genesis hash: <hash>" on standard output;
// logs go to standard error. It stops
// the HTTP server and the runtime on SIGINT or SIGTERM. The token command
// takes --subject (required), --ttl (default 24h, 0 for no expiry) and the
// secret as above, and prints the token. After POST /sandbox/token/rotate
// the serving sandbox accepts only tokens of its new secret (the control
// answers one); the token command still mints with the configured secret.
package main
