#!/usr/bin/env bash
# Template conformance: sam validate --lint, cfn-lint, checkov and sam build of
# every function, with AWS SAM CLI and cfn-lint (pinned, from PyPI) in the
# project-local .venv and checkov in the venv of the scanners' tier
# (.ci/scanners.sh template). No AWS credentials needed; telemetry off.
#
#   sam validate --lint   runs cfn-lint in-process and never calls AWS; plain
#                         `sam validate` needs credentials (it asks IAM for the
#                         managed policies), so it is not used.
#   cfn-lint              the same linter, standalone, so its own config and
#                         exit codes apply.
#   sam build             --build-in-source (also in samconfig.toml): make runs in
#                         the repository; without it SAM copies the whole tree
#                         (CodeUri ./, with .venv, .build, .cache) once per function.
#                         The binaries are linked once, by make build (one go build
#                         for all), and sam build's makefile rule copies them
#                         (SCANGATE_PREBUILT=.build): linking ~50 arm64 binaries
#                         twice was most of this tier's time. .ci/run has just run
#                         make build and says so with SCANGATE_LAMBDAS_BUILT=1.
#
#   .ci/validate.sh tools   only the pinned SAM CLI and cfn-lint into .venv (.ci/run
#                           starts it early, in the background)
set -euo pipefail
cd "$(dirname "$0")/.."

SAM_CLI_VERSION=1.170.0
CFN_LINT_VERSION=1.58.0
PINS="aws-sam-cli==$SAM_CLI_VERSION cfn-lint==$CFN_LINT_VERSION"
VENV=.venv
STAMP=$VENV/.validate-pins
BUILD_DIR=.aws-sam/build
BUILD_LOG=.aws-sam/sam-build.log

export SAM_CLI_TELEMETRY=0
export AWS_DEFAULT_REGION=${AWS_DEFAULT_REGION:-us-east-1}
export AWS_REGION=$AWS_DEFAULT_REGION # cfn-lint prefers AWS_REGION when both are set
export AWS_EC2_METADATA_DISABLED=true # never probe an instance metadata service for credentials

start=$SECONDS
step() { printf -- '-- %s\n' "$*"; t0=$SECONDS; }
ok() { printf -- '   ok (%ds)%s\n' "$((SECONDS - t0))" "${1:+: $1}"; }

step "tools: $PINS"
if [ ! -x "$VENV/bin/sam" ] || [ ! -x "$VENV/bin/cfn-lint" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$PINS" ]; then
  rm -f "$STAMP"
  [ -x "$VENV/bin/python" ] || "${PYTHON:-python3}" -m venv "$VENV"
  # shellcheck disable=SC2086 # PINS is a list of requirements
  "$VENV/bin/pip" install -q --disable-pip-version-check $PINS
  echo "$PINS" >"$STAMP"
  ok "installed into $VENV"
else
  ok "cached in $VENV"
fi
[ "${1:-}" = tools ] && exit 0

step "sam validate --lint (region $AWS_DEFAULT_REGION)"
"$VENV/bin/sam" validate --lint --region "$AWS_DEFAULT_REGION" --template template.yaml
ok

step "cfn-lint template.yaml"
"$VENV/bin/cfn-lint" template.yaml
ok

step "checkov template.yaml (pinned, offline; every skipped check has its reason in the template)"
bash .ci/scanners.sh template
ok

if [ -z "${SCANGATE_LAMBDAS_BUILT:-}" ]; then
  step "make build (every function's bootstrap, once)"
  make build
  ok
fi

step "sam build --build-in-source --parallel into $BUILD_DIR, copying .build/<function>/bootstrap (log: $BUILD_LOG)"
mkdir -p .aws-sam
rm -rf "$BUILD_DIR"
if ! SCANGATE_PREBUILT=$PWD/.build "$VENV/bin/sam" build --build-in-source --parallel --template template.yaml --build-dir "$BUILD_DIR" >"$BUILD_LOG" 2>&1; then
  cat "$BUILD_LOG"
  echo "sam build failed" >&2
  exit 1
fi
ok

step "bootstrap of every AWS::Serverless::Function"
"$VENV/bin/python" - template.yaml "$BUILD_DIR" <<'PY'
import os, struct, sys
from samtranslator.yaml_helper import yaml_parse  # understands !Ref, !GetAtt, !Sub

template, build_dir = sys.argv[1], sys.argv[2]
with open(template, encoding="utf-8") as f:
    doc = yaml_parse(f.read())
resources = doc.get("Resources", {})
functions = sorted(k for k, r in resources.items() if r.get("Type") == "AWS::Serverless::Function")
if not functions:
    sys.exit(f"{template}: no AWS::Serverless::Function")
default_arch = (doc.get("Globals", {}).get("Function", {}).get("Architectures") or ["x86_64"])[0]
E_MACHINE = {"arm64": 183, "x86_64": 62}  # ELF e_machine: EM_AARCH64, EM_X86_64
bad = []
for fn in functions:
    path = os.path.join(build_dir, fn, "bootstrap")
    try:
        with open(path, "rb") as f:
            head = f.read(20)
        size = os.path.getsize(path)
    except OSError as e:
        bad.append(f"{fn}: {e.strerror}: {path}")
        continue
    arch = (resources[fn].get("Properties", {}).get("Architectures") or [default_arch])[0]
    # 64-bit little-endian ELF for the function's architecture
    if size == 0 or head[:6] != b"\x7fELF\x02\x01" or struct.unpack_from("<H", head, 18)[0] != E_MACHINE.get(arch):
        bad.append(f"{fn}: {path} is not a linux/{arch} executable ({size} bytes)")
    elif not os.access(path, os.X_OK):
        bad.append(f"{fn}: {path} is not executable")
    else:
        print(f"   {fn}: linux/{arch}, {size} bytes")
if bad:
    sys.exit("\n".join(bad))
PY
ok

echo "validate: passed in $((SECONDS - start))s"
