#!/usr/bin/env bash
# Real scanners for the SARIF tier (issue 14): installs pinned scanners, runs
# them over the fixture directories of internal/sarif/testdata/scanners and writes
# their SARIF to .build/sarif/, then computes from those files, with a reader
# of its own (.ci/sarif_facts.py), what scangate must record.
#
#   .ci/scanners.sh install   pinned scanners into .build/scanners (idempotent)
#   .ci/scanners.sh venvs     only the Python ones (semgrep, bandit, checkov): downloads,
#                             no compiling, so .ci/run starts it early in the background
#   .ci/scanners.sh run       SARIF files into .build/sarif/ (gitleaks also over an empty
#                             checkout: a clean re-run) and facts.json
#   .ci/scanners.sh check     the Go reader (internal/sarif) against those facts
#   .ci/scanners.sh golden    copy those files to internal/sarif/testdata/golden
#   .ci/scanners.sh template  checkov (the same pin) over template.yaml: fails on any
#                             failed check and on any skip without a written reason
#   .ci/scanners.sh           install, run, check
#
# Everything comes from the package registries: gitleaks from the Go module
# proxy, semgrep, bandit and checkov from PyPI, each in a venv of its own.
# Nothing else is downloaded: semgrep reads rules kept in the repository with
# --metrics=off, checkov runs with --skip-download.
#
# Measured on the 2-core machine: install on a machine with empty Go and pip
# caches takes about 2 min (gitleaks 68 s, building it; semgrep 20 s; bandit
# 6 s; checkov 29 s), and under 1 s once installed. run takes about 6 s
# (gitleaks under 1 s twice, semgrep 2 s, bandit under 1 s, checkov 3 s),
# check about 1 s.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

GITLEAKS_VERSION=v8.30.1
SEMGREP_VERSION=1.180.0 # 1.181 and later need a certifi newer than PyPI serves here
BANDIT_VERSION=1.9.4
CHECKOV_VERSION=3.3.30

tools=$PWD/.build/scanners
out=$PWD/.build/sarif
fixtures=$PWD/internal/sarif/testdata/scanners

# venv NAME SPEC VERSION: a venv with one pinned package (and its extras).
venv() {
  local name=$1 spec=$2 version=$3
  if [ -f "$tools/$name/.installed" ] && [ "$(cat "$tools/$name/.installed")" = "$spec==$version" ]; then
    return
  fi
  rm -rf "${tools:?}/$name"
  python3 -m venv "$tools/$name"
  "$tools/$name/bin/pip" install -q --disable-pip-version-check "$spec==$version"
  echo "$spec==$version" > "$tools/$name/.installed"
}

# timed LABEL CMD...: runs CMD and says how long it took.
timed() {
  local label=$1 start=$SECONDS
  shift
  "$@"
  echo "scanners: $label $((SECONDS - start)) s" >&2
}

venvs() {
  timed "install semgrep" venv semgrep semgrep "$SEMGREP_VERSION"
  timed "install bandit" venv bandit 'bandit[sarif]' "$BANDIT_VERSION"
  timed "install checkov" venv checkov checkov "$CHECKOV_VERSION"
}

install() {
  mkdir -p "$tools/bin"
  if [ "$("$tools/bin/gitleaks" version 2>/dev/null)" != "$GITLEAKS_VERSION" ]; then
    timed "install gitleaks" env GOBIN="$tools/bin" go install \
      -ldflags "-X github.com/zricethezav/gitleaks/v8/version.Version=$GITLEAKS_VERSION" \
      "github.com/zricethezav/gitleaks/v8@$GITLEAKS_VERSION"
  fi
  venvs
}

# Each scanner runs inside its fixture directory, as a CI job runs inside its
# checkout, so the paths it writes are relative to that root.
run() {
  rm -rf "$out"
  mkdir -p "$out"
  export SEMGREP_ENABLE_VERSION_CHECK=0 SEMGREP_SEND_METRICS=off BC_SKIP_MAPPING=TRUE

  cd "$fixtures/secrets"
  timed "run gitleaks" "$tools/bin/gitleaks" dir . --no-banner --log-level error \
    --exit-code 0 --report-format sarif --report-path "$out/gitleaks.sarif"
  timed "run gitleaks --redact" "$tools/bin/gitleaks" dir . --no-banner --log-level error --redact \
    --exit-code 0 --report-format sarif --report-path "$out/gitleaks-redacted.sarif"
  # A clean re-run: gitleaks over a checkout whose secrets were removed (an
  # empty directory), as after "we fixed it": a run without results.
  local clean
  clean=$(mktemp -d)
  cd "$clean"
  timed "run gitleaks (clean)" "$tools/bin/gitleaks" dir . --no-banner --log-level error \
    --exit-code 0 --report-format sarif --report-path "$out/gitleaks-clean.sarif"
  cd "$root" && rmdir "$clean"

  cd "$fixtures/python"
  timed "run semgrep" "$tools/semgrep/bin/semgrep" scan --metrics=off --disable-version-check \
    --config ../semgrep-rules.yml --sarif --output "$out/semgrep.sarif" --quiet .
  timed "run bandit" "$tools/bandit/bin/bandit" -r . -q -f sarif -o "$out/bandit.sarif" --exit-zero

  cd "$fixtures/iac"
  timed "run checkov" "$tools/checkov/bin/checkov" -d . --framework terraform dockerfile \
    --skip-download --soft-fail --quiet --compact -o sarif --output-file-path "$out" > /dev/null
  mv "$out/results_sarif.sarif" "$out/checkov.sarif"

  cd "$root"

  python3 .ci/sarif_facts.py --planted "$fixtures/planted.txt" "$out"/*.sarif > "$out/facts.json"
  echo "scanners: SARIF and facts in $out: $(cd "$out" && echo *)"
}

# check: the Go reader against the facts, over this run's SARIF files.
check() {
  SCANGATE_SARIF_DIR=$out go test -count=1 -run 'TestScannerTier' -v ./internal/sarif
}

# template: checkov's CloudFormation and SAM checks over template.yaml, offline.
# A check the template does not meet must be skipped in the resource's
# Metadata (checkov: skip: - {id, comment}) with its reason, which
# docs/SECURITY.md explains; any failed check, or a skip without a reason,
# fails. Prints the counts.
template() {
  timed "install checkov" venv checkov checkov "$CHECKOV_VERSION"
  local report=$root/.build/checkov-template.json
  BC_SKIP_MAPPING=TRUE "$tools/checkov/bin/checkov" -f template.yaml --framework cloudformation \
    --skip-download --compact -o json > "$report" || true
  python3 - "$report" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d if isinstance(d, list) else [d]:
    s, res = r["summary"], r["results"]
    print(f"checkov {s['checkov_version']} on template.yaml: {s['passed']} passed, {s['failed']} failed, "
          f"{s['skipped']} skipped, {s['parsing_errors']} parsing errors, {s['resource_count']} resources")
    bad = [f"FAILED {c['check_id']} {c['resource']}: {c['check_name']}" for c in res.get("failed_checks", [])]
    bad += [f"SKIPPED WITHOUT A REASON {c['check_id']} {c['resource']}" for c in res.get("skipped_checks", [])
            if (c["check_result"].get("suppress_comment") or "No comment provided").strip() in ("", "No comment provided")]
    bad += [f"PARSING ERROR {e}" for e in res.get("parsing_errors", [])]
    if bad:
        print("\n".join(bad))
    if bad or s["passed"] == 0:
        sys.exit(1)
PY
}

golden() {
  local dir=internal/sarif/testdata/golden
  mkdir -p "$dir"
  cp "$out"/*.sarif "$out/facts.json" "$dir/"
}

case "${1:-all}" in
  install) install ;;
  venvs) venvs ;;
  run) run ;;
  check) check ;;
  golden) golden ;;
  template) template ;;
  all) install && run && check ;;
  *) echo "usage: $0 [install|venvs|run|check|golden|template|all]" >&2; exit 2 ;;
esac
