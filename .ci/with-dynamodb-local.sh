#!/usr/bin/env bash
# Runs a command with AWS's DynamoDB Local on 127.0.0.1:$DDB_LOCAL_PORT and
# TEST_DYNAMODB_ENDPOINT pointing at it; stops it afterwards. DynamoDB Local's
# jars are in $DDB_LOCAL (fetched by the Makefile from Maven Central).
set -euo pipefail
dir=$(cd "${DDB_LOCAL:-.cache/dynamodb-local}" && pwd)
port=${DDB_LOCAL_PORT:-8765}
if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then
  echo "port $port is in use: set DDB_LOCAL_PORT" >&2
  exit 1
fi
mkdir -p .build/dynamodb-local
# Run from .build so that its metadata file lands there.
(cd .build/dynamodb-local && exec java -Djava.library.path="$dir" -cp "$dir/*" com.amazonaws.services.dynamodbv2.local.main.ServerRunner \
  -inMemory -port "$port") > .build/dynamodb-local.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 150); do
  (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat .build/dynamodb-local.log >&2; exit 1; }
  sleep 0.2
done
echo "DynamoDB Local on 127.0.0.1:$port"
TEST_DYNAMODB_ENDPOINT="http://127.0.0.1:$port" "$@"
