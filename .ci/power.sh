#!/usr/bin/env bash
# The power-loss proof's full step (issue 15): TestPowerCut with 210 power
# cuts (70 each of drop, tear and reorder) on a powerfs FUSE mount, and
# TestPowerCutImports with 60 cuts in the middle of staged imports. Needs
# root and /dev/fuse (the tests skip, saying why, without them); run it
# from anywhere in the repository. STRESS_CUTS, STRESS_IMPORT_CUTS and
# STRESS_SEED override the defaults. The verbose log is trimmed to the
# summary; on a failure it is printed whole.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
STRESS_CUTS="${STRESS_CUTS:-210}" STRESS_IMPORT_CUTS="${STRESS_IMPORT_CUTS:-60}" \
	go test -race -count=1 -timeout 20m -run '^TestPowerCut(Imports)?$' -v ./stress >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
	cat "$log"
	exit "$status"
fi
grep -E '^(--- |PASS|ok)|power: |power-imports: |crash: | seed ' "$log"
