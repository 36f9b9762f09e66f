#!/usr/bin/env bash
# The PostgreSQL store's checks (issue 10): starts the local cluster when it
# is down, runs the PostgreSQL tests with PostgreSQL required (an
# unreachable server fails them instead of skipping), then the full fault
# runs: loop writers SIGKILLed mid-append (120 kills) with PostgreSQL
# itself crashed mid-load among them (immediate-mode stop, then start),
# a fleet of writer processes racing on shared sessions, SIGKILLed 200
# times (each kill is followed by a check of what was appended since the
# last one, the run by a full read and verify of every session), and the
# failover of a synchronous standby (issue 24): a primary and a standby
# of the test's own, on free ports in temporary directories (initdb,
# pg_basebackup, pg_ctl: the Debian packages' /usr/lib/postgresql/*/bin,
# or $SESSIONLOG_TEST_PG_BIN), the primary stopped in immediate mode
# under load, the standby promoted: 0 acknowledged appends lost, writers
# resumed within 10 s. It runs three ways: the standby streaming at the
# crash; cut off for the last 500 ms before it (nothing may be
# acknowledged meanwhile); and asynchronous with the same cut, which
# reports what a failover loses without a synchronous standby (the run
# does not depend on a loss).
#
# Crashing the server disturbs every other user of it: run this script on
# its own, after (not alongside) the rest of .ci/run's tests.
#
# Knobs: SESSIONLOG_TEST_PG (the server), PG_KILLS (crash rounds, 120),
# PG_CRASHES (server crashes among them, 6), FLEET_KILLS (200),
# STRESS_REPORT (a file the one-line summaries are appended to).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

export SESSIONLOG_TEST_PG="${SESSIONLOG_TEST_PG:-postgres://postgres@127.0.0.1:5432/test}"
export SESSIONLOG_TEST_PG_REQUIRED=1

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
	version="$(ls /etc/postgresql | sort -n | tail -1)"
	pg_ctlcluster --skip-systemctl-redirect "$version" main start
	for _ in $(seq 1 60); do
		pg_isready -q -h 127.0.0.1 -p 5432 && break
		sleep 1
	done
fi

# The PostgreSQL tests, short forms (the stress ones without a server crash).
go test -race -short -count=1 \
	./eventlog/pglog/ ./internal/sessioncache/ . ./verify/ ./cmd/logtool/ \
	-run 'Conformance|TwoStores|Race|Staged|ReadOnly|Cancel|HeadParity|Deps|Open|Postgres|URL|Corpus|Cache|Locks|Standby'
go test -race -short -count=1 -run '^(TestCrashPostgres|TestFleetPostgres|TestFailoverPostgres)$' ./stress/

# The full fault runs.
STRESS_KILLS="${PG_KILLS:-120}" STRESS_PG_CRASHES="${PG_CRASHES:-6}" \
	go test -count=1 -run '^TestCrashPostgres$' -v -timeout 60m ./stress/
STRESS_FLEET_KILLS="${FLEET_KILLS:-200}" \
	go test -count=1 -run '^TestFleetPostgres$' -v -timeout 60m ./stress/

# Failover: streaming at the crash; cut off 500 ms before it; asynchronous.
export STRESS_FAILOVER_LOAD=3
go test -count=1 -run '^TestFailoverPostgres$' -v -timeout 5m ./stress/
STRESS_FAILOVER_GAP_MS=500 \
	go test -count=1 -run '^TestFailoverPostgres$' -v -timeout 5m ./stress/
STRESS_FAILOVER_GAP_MS=500 STRESS_FAILOVER_ASYNC=1 \
	go test -count=1 -run '^TestFailoverPostgres$' -v -timeout 5m ./stress/
