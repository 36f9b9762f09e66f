#!/usr/bin/env bash
# Starts the machine's PostgreSQL cluster when it is not accepting
# connections on 127.0.0.1:5432 (the go-svc machines run PostgreSQL 15
# there with trust authentication), then waits until it does.
# Idempotent; run it from anywhere.
set -euo pipefail
ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
if ready; then
	exit 0
fi
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
	echo "postgres: pg_ctlcluster not found: PostgreSQL is not installed" >&2
	exit 1
fi
version="$(ls /etc/postgresql | sort -n | tail -n 1)"
pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
for _ in $(seq 1 60); do
	if ready; then
		exit 0
	fi
	sleep 0.5
done
echo "postgres: the cluster $version/main did not come up on 127.0.0.1:5432" >&2
exit 1
