#!/usr/bin/env bash
# The dashboard's browser tier: Debian's Chromium (installed with apt-get
# when it is missing), axe-core from npm (npm ci: the version of
# internal/dashboard/testdata/axe/package-lock.json), then the browser tests with
# SCANGATE_BROWSER=1, so that a missing browser or axe-core fails them
# instead of skipping. Screenshots of every page land in .build/screenshots.
#
#   .ci/browser.sh install   Chromium and axe-core only (.ci/run starts it early,
#                            in the background)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium
fi
(cd internal/dashboard/testdata/axe && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
[ "${1:-}" = install ] && exit 0
SCANGATE_BROWSER=1 go test -count=1 -run '^(TestBrowser|TestFirstLoadBudget)$' -v ./internal/dashboard
