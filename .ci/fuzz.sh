#!/usr/bin/env bash
# Contract fuzzing: Schemathesis (pinned, from PyPI, in .venv-fuzz) against the
# local server over every operation of docs/openapi.yaml, each request with an
# admin token that still works (.ci/fuzz_hooks.py). Fails on any 5xx, any
# response the document does not allow, any operation that answered only
# 401/403, and any operation whose generated valid data the server mostly
# refused (.ci/schemathesis.toml). Before the run, the same configuration is
# run against a stand-in server whose one write operation answers only 401
# (.ci/fuzz_selftest.py): the tier fails if that run passes.
#
#   .ci/fuzz.sh install   the pinned Schemathesis into .venv-fuzz (idempotent)
#   .ci/fuzz.sh           install, self-test, then the run
set -euo pipefail
cd "$(dirname "$0")/.."
SCHEMATHESIS=schemathesis==4.32.5
venv=.venv-fuzz

install() {
  if [ "$(cat "$venv/.pins" 2>/dev/null)" != "$SCHEMATHESIS" ] || [ ! -x "$venv/bin/schemathesis" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "$SCHEMATHESIS"
    echo "$SCHEMATHESIS" > "$venv/.pins"
  fi
}

install
[ "${1:-}" = install ] && exit 0

export SCHEMATHESIS_TELEMETRY=false SCHEMATHESIS_HOOKS=fuzz_hooks PYTHONPATH=$PWD/.ci
checks=not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance
# fuzz SPEC URL [ARGS...]: one Schemathesis run with the tier's checks, hooks and configuration.
fuzz() {
  local spec=$1 url=$2
  shift 2
  "$venv/bin/schemathesis" --config-file .ci/schemathesis.toml run "$spec" --url "$url" \
    --checks "$checks" --generation-deterministic --no-color "$@"
}

mkdir -p .build
port=${FUZZ_PORT:-3077}
password=fuzz-admin-password-1

echo "-- self-test: an operation that answers only 401 must fail the run"
"$venv/bin/python" .ci/fuzz_selftest.py "$port" "$password" > .build/fuzz-selftest-server.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/openapi.yaml" && break
  sleep 0.1
done
if SCANGATE_FUZZ_URL=http://127.0.0.1:$port SCANGATE_FUZZ_PASSWORD=$password SCANGATE_FUZZ_PR_ID=1 SCANGATE_FUZZ_WEBHOOK_ID=1 \
  fuzz "http://127.0.0.1:$port/openapi.yaml" "http://127.0.0.1:$port" --max-examples 5 > .build/fuzz-selftest.log 2>&1; then
  cat .build/fuzz-selftest.log
  echo "fuzz: the self-test passed although one operation answered only 401" >&2
  exit 1
fi
if ! grep -q 'Authentication failed' .build/fuzz-selftest.log || ! grep -q 'POST /api/denied' .build/fuzz-selftest.log ||
  grep -q '^=* FAILURES' .build/fuzz-selftest.log; then
  cat .build/fuzz-selftest.log
  echo "fuzz: the self-test failed, but not for the operation that answers only 401" >&2
  exit 1
fi
echo "   ok: the run failed on POST /api/denied (log: .build/fuzz-selftest.log)"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true

go build -o .build/scangate-local ./cmd/scangate-local
SCANGATE_ADDR=127.0.0.1:$port SCANGATE_ADMIN_PASSWORD=$password SCANGATE_AUTHORIZER_TTL=300 LOG_LEVEL=ERROR \
  .build/scangate-local > .build/fuzz-server.log 2>&1 &
pid=$!
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/api/pr/scan/1" && break
  sleep 0.2
done
# The test data .ci/schemathesis.toml names: a PR of the demo data, a new subscription.
api=http://127.0.0.1:$port/api
token=$(curl -fsS -X POST "$api/auth/token" -H 'Content-Type: application/json' \
  -d "{\"username\":\"admin\",\"password\":\"$password\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
pr_id=$(curl -fsS "$api/pr?limit=1" -H "Authorization: Bearer $token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["id"])')
webhook_id=$(curl -fsS -X POST "$api/webhooks" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"url":"https://hooks.example.com/fuzz","events":["scan.recorded","webhook.test"]}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo "-- test data: PR $pr_id, webhook $webhook_id"
SCANGATE_FUZZ_URL=http://127.0.0.1:$port SCANGATE_FUZZ_PASSWORD=$password \
  SCANGATE_FUZZ_PR_ID=$pr_id SCANGATE_FUZZ_WEBHOOK_ID=$webhook_id \
  fuzz docs/openapi.yaml "http://127.0.0.1:$port" --max-examples "${FUZZ_EXAMPLES:-40}" --request-timeout 60
