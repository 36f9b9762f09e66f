#!/usr/bin/env bash
# Installs Debian's chromium for the browser test of package ui
# (ui/browser_test.go), which fails under CI=true when it is missing.
# Idempotent: does nothing when chromium is already on PATH.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null
