// Package store keeps what the scheduled data jobs collect from the staking
// service (network APY history, delegator rewards, SSV set-up requests and
// their status changes) in a SQL database that dashboards read, and the
// nonces the worker signs Hyperliquid actions with.
//
// # Contract
//
//   - Two databases, one code path. Open takes a DSN: "postgres://...",
//     "postgresql://..." or a libpq key=value DSN whose first word is a libpq
//     parameter ("host=db user=app password=...") is PostgreSQL (the
//     production store, driver pgx);
//     "sqlite:PATH" or a plain file path is SQLite (the embedded default, a
//     pure-Go driver; the file is created 0600 in a directory created 0700).
//     Both go through database/sql with the same statements.
//   - Migrations. One schema, versioned with goose from the SQL files embedded
//     under migrations/ (one directory per dialect: the column types differ).
//     Open migrates to the latest version; running it again changes nothing.
//     On PostgreSQL a session advisory lock keeps two workers that start at
//     once from migrating together.
//   - Idempotent writes. Every write is an upsert keyed by the natural key:
//     (network, period) for APY, (network, address, period, type) for
//     rewards, the request id for SSV requests. Writing the same rows again
//     changes nothing and counts 0; a changed value updates the row and
//     counts 1. Each batch is one transaction.
//   - SSV status history. UpsertSSVRequests records an SSVEvent for each
//     request that is new (From "") or whose status changed, in the same
//     transaction as the upsert; a re-run records nothing more.
//   - Flags. Each APY, reward and SSV request row has a nullable flag_reason
//     (migration 00003; Flag in Go, "" for NULL): why the data jobs do not
//     take the record as true (it contradicts itself or what the chain can
//     produce). A flag is part of the row: changing or clearing it alone is a
//     change.
//   - Exact decimals. Amounts and APYs are decimal text ("-"? digits, optional
//     "." and digits; "" for unknown), never floats: TEXT in SQLite, NUMERIC
//     (value and scale kept) in PostgreSQL. Other text is refused.
//   - Times. Stored as UTC instants at microsecond precision (finer parts are
//     dropped before writing, so both databases give back the same value); a
//     zero time is stored as NULL ("unknown") and read back as zero.
//   - Queries. Query fields left zero do not filter. From is inclusive, To
//     exclusive; they bound the period start of APY and reward rows and the
//     UpdatedAt of SSV requests (rows with an unknown time are left out
//     when a bound is set).
//   - Hyperliquid nonces. ClaimNonce records (address, nonce, operation)
//     before the worker signs; the first operation to record a nonce of a key
//     keeps it (insert, then read back the owner, in both databases), claiming
//     it again for the same operation changes nothing, and another operation
//     gets a *NonceTakenError naming the first. Rows are never deleted.
//   - Errors. A DSN that does not connect fails Open with an error naming the
//     host and port (or the SQLite path); a password in the DSN never appears
//     in an error. RedactDSN hides every password form (URL user info; the
//     query parameters password, pass, passwd, pwd and sslpassword, any case;
//     key=value values, quoted or not) for whoever logs or reports a DSN.
package store
