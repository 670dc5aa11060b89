#!/usr/bin/env bash
# Runs a command with S3Proxy (an S3 implementation that checks SigV4
# signatures, presigned ones and their expiry included, as S3 does: a
# tampered signature or another Content-Type is SignatureDoesNotMatch, an
# expired URL "Request has expired") on 127.0.0.1:$S3_PORT, objects in a
# temporary directory, and TEST_S3_ENDPOINT and the credentials pointing at
# it; stops it afterwards. $S3PROXY_JAR is its jar (make fetches it from
# Maven Central, pinned).
set -euo pipefail
jar=${S3PROXY_JAR:-.cache/s3proxy/s3proxy-jar-with-dependencies.jar}
port=${S3_PORT:-9765}
if (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; then
  echo "port $port is in use: set S3_PORT (or MINIO_PORT)" >&2
  exit 1
fi
data=$(mktemp -d)
user=scangate-test
password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
mkdir -p .build
cat >"$data/s3proxy.conf" <<CONF
s3proxy.endpoint=http://127.0.0.1:$port
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=$user
s3proxy.credential=$password
jclouds.provider=filesystem
jclouds.filesystem.basedir=$data/objects
CONF
java -jar "$jar" --properties "$data/s3proxy.conf" >.build/s3proxy.log 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 300); do
  (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat .build/s3proxy.log >&2; exit 1; }
  sleep 0.2
done
echo "S3Proxy on 127.0.0.1:$port"
TEST_S3_ENDPOINT="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=$user AWS_SECRET_ACCESS_KEY=$password AWS_REGION=us-east-1 "$@"
