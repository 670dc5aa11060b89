#!/usr/bin/env bash
# Runs a command with MinIO (an S3 implementation that checks presigned
# signatures and their expiry as S3 does) on 127.0.0.1:$MINIO_PORT, data in
# a temporary directory, and TEST_S3_ENDPOINT and the credentials pointing
# at it; stops it afterwards. $MINIO is its binary (make builds it from the
# Go module proxy, pinned).
set -euo pipefail
bin=${MINIO:-.build/tools/minio}
port=${MINIO_PORT:-9765}
console=$((port + 1))
for p in "$port" "$console"; do
  if (exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null; then
    echo "port $p is in use: set MINIO_PORT" >&2
    exit 1
  fi
done
data=$(mktemp -d)
user=scangate-test
password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
mkdir -p .build
MINIO_ROOT_USER=$user MINIO_ROOT_PASSWORD=$password MINIO_BROWSER=off MINIO_UPDATE=off \
  "$bin" server --quiet --address "127.0.0.1:$port" --console-address "127.0.0.1:$console" "$data" > .build/minio.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 150); do
  if command -v curl >/dev/null; then
    curl -fsS "http://127.0.0.1:$port/minio/health/ready" >/dev/null 2>&1 && break
  else
    (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
  fi
  kill -0 "$pid" 2>/dev/null || { cat .build/minio.log >&2; exit 1; }
  sleep 0.2
done
echo "MinIO on 127.0.0.1:$port"
TEST_S3_ENDPOINT="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=$user AWS_SECRET_ACCESS_KEY=$password AWS_REGION=us-east-1 "$@"
