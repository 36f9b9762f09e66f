#!/usr/bin/env bash
# The full proofs, each its own step with an explicit timeout (the test
# command `go test -race ./...` runs their short forms):
#
#   1. the DSH corpus must be beside the checkout (../shared): the corpus
#      tests skip without it, so CI must not run without it;
#   2. crash-kill: STRESS_KILLS (200) SIGKILLs of a loop process under the
#      race detector, with every acknowledged event checked after each;
#   3. corruption sweep: the full structural sweep (-sweep.full: 2000
#      random flips and every byte of the structure that locates sessions
#      and records, the meta records, salvage) under the race detector.
#   4. write-ahead log sweep: every byte of the segments of a log with
#      unapplied writes flipped, and the last record truncated at each of
#      its offsets (TestCorruptWAL -sweep.full) under the race detector.
#
# Run it from anywhere in the repository. PROOFS_SKIP_CORPUS_CHECK=1 skips
# step 1 (a user's clone has no ../shared). Each step prints its wall time
# and peak resident set (GNU time, when installed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

kills="${STRESS_KILLS:-200}"

step() {
	local name="$1"
	shift
	echo "proofs: $name"
	local start=$SECONDS
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "proofs: $name: %e s wall, %M KiB peak RSS of the largest process" "$@"
	else
		"$@"
	fi
	echo "proofs: $name: done in $((SECONDS - start)) s"
}

if [ "${PROOFS_SKIP_CORPUS_CHECK:-}" != "1" ]; then
	if [ ! -f ../shared/testdata/dsh/cases/INDEX.tsv ]; then
		echo "proofs: ../shared/testdata/dsh/cases/INDEX.tsv is missing: the DSH corpus must be beside the checkout" >&2
		echo "  (the corpus tests skip without it; set PROOFS_SKIP_CORPUS_CHECK=1 to run the other proofs anyway)" >&2
		exit 1
	fi
fi

go test -race -count=1 -run '^$' ./stress # build once, outside the timed steps

step "crash-kill, $kills kills (-race)" \
	env STRESS_KILLS="$kills" go test -race -count=1 -timeout 30m -run '^TestCrash$' -v ./stress
step "corruption sweep, full (-race)" \
	go test -race -count=1 -timeout 45m -run '^TestCorrupt$' -v ./stress -sweep.full
step "write-ahead log sweep, full (-race)" \
	go test -race -count=1 -timeout 45m -run '^TestCorruptWAL$' -v ./stress -sweep.full
