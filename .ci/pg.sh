#!/usr/bin/env bash
# The PostgreSQL store's checks (issue 10): starts the local cluster when it
# is down, runs the PostgreSQL tests with PostgreSQL required (an
# unreachable server fails them instead of skipping), then the full fault
# runs: loop writers SIGKILLed mid-append (120 kills) with PostgreSQL
# itself crashed mid-load among them (immediate-mode stop, then start),
# and a fleet of writer processes racing on shared sessions, SIGKILLed 50
# times (each kill is followed by a full read and verify of every
# session while the others write, so its time grows faster than the
# kills: 120 took over 25 minutes).
#
# Crashing the server disturbs every other user of it: run this script on
# its own, after (not alongside) the rest of .ci/run's tests.
#
# Knobs: SESSIONLOG_TEST_PG (the server), PG_KILLS (crash rounds, 120),
# PG_CRASHES (server crashes among them, 6), FLEET_KILLS (50),
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
	-run 'Conformance|TwoStores|Race|Staged|ReadOnly|Cancel|HeadParity|Deps|Open|Postgres|URL|Corpus|Cache|Locks'
go test -race -short -count=1 -run '^(TestCrashPostgres|TestFleetPostgres)$' ./stress/

# The full fault runs.
STRESS_KILLS="${PG_KILLS:-120}" STRESS_PG_CRASHES="${PG_CRASHES:-6}" \
	go test -count=1 -run '^TestCrashPostgres$' -v -timeout 60m ./stress/
STRESS_FLEET_KILLS="${FLEET_KILLS:-50}" \
	go test -count=1 -run '^TestFleetPostgres$' -v -timeout 60m ./stress/
