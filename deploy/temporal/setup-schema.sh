#!/bin/sh
# Creates or upgrades Temporal's PostgreSQL schemas (main and visibility) to the versions shipped
# in the admin-tools image, or to those in TEMPORAL_SCHEMA_DIR (`make cluster` passes the ones
# shipped in the server's Go module: scripts/tools.sh temporal-server). Safe to run on every start:
# setup-schema keeps an existing version and update-schema applies only the versions not yet applied. The databases themselves are created by
# PostgreSQL's init script (postgres-init.sql). Connection settings come from SQL_HOST, SQL_PORT,
# SQL_USER, SQL_PASSWORD and SQL_PLUGIN.
set -eu
schemas=${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}
for pair in temporal:temporal temporal_visibility:visibility; do
  db=${pair%%:*}
  dir=${pair#*:}
  echo "schema of database ${db}"
  temporal-sql-tool --db "$db" setup-schema -v 0.0
  temporal-sql-tool --db "$db" update-schema -d "${schemas}/${dir}/versioned"
done
echo "Temporal schemas are up to date"
