#!/usr/bin/env bash
# Contract fuzzing: Schemathesis (pinned, from PyPI, in .venv-fuzz) against the
# local server, authenticated as the admin, over every operation of
# docs/openapi.yaml. Fails on any 5xx or any response the document does not allow.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-fuzz/bin/schemathesis ]; then
  python3 -m venv .venv-fuzz
  .venv-fuzz/bin/pip install -q 'schemathesis==4.32.5'
fi
mkdir -p .build
go build -o .build/scangate-local ./cmd/scangate-local
port=${FUZZ_PORT:-3077}
password=fuzz-admin-password-1
SCANGATE_ADDR=127.0.0.1:$port SCANGATE_ADMIN_PASSWORD=$password SCANGATE_AUTHORIZER_TTL=300 LOG_LEVEL=ERROR \
  .build/scangate-local > .build/fuzz-server.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/api/pr/scan/1" && break
  sleep 0.2
done
token=$(curl -s -X POST "http://127.0.0.1:$port/api/auth/token" -H 'Content-Type: application/json' \
  -d "{\"username\":\"admin\",\"password\":\"$password\"}" | sed -E 's/.*"access_token":"([^"]+)".*/\1/')
export SCHEMATHESIS_TELEMETRY=false
.venv-fuzz/bin/schemathesis run docs/openapi.yaml --url "http://127.0.0.1:$port" \
  -H "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
  --max-examples "${FUZZ_EXAMPLES:-40}" --generation-deterministic --no-color
