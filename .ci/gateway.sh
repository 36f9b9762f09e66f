#!/usr/bin/env bash
# The recording gateway's memory proofs at issue 20's sizes, without the
# race detector (whose shadow memory would be most of what they measure):
# TestGatewayMemory with 16 clients streaming 16 MB answers (the live heap
# half way through), TestGatewayResident with 64 clients streaming 20 MB
# answers through a logtool gateway process (its peak resident memory,
# within 256 MB). The test command runs both at small sizes. Run it from
# anywhere in the repository; GATEWAY_MEMORY and GATEWAY_RESIDENT
# (CLIENTSxMB) override the sizes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
GATEWAY_MEMORY="${GATEWAY_MEMORY:-16x16}" GATEWAY_RESIDENT="${GATEWAY_RESIDENT:-64x20}" \
	go test -count=1 -timeout 10m -run '^TestGateway(Memory|Resident)$' -v ./gateway ./cmd/logtool >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
	cat "$log"
	exit "$status"
fi
grep -E '^(--- |PASS|ok)|grew by|peak resident' "$log"
