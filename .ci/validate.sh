#!/usr/bin/env bash
# Template conformance: sam validate --lint, cfn-lint and sam build, with AWS SAM
# CLI and cfn-lint (pinned, from PyPI) in the project-local .venv. No AWS
# credentials needed; telemetry off.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/sam ] || [ ! -x .venv/bin/cfn-lint ]; then
  python3 -m venv .venv
  .venv/bin/pip install -q 'aws-sam-cli==1.170.0' 'cfn-lint==1.58.0'
fi
export SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION=${AWS_DEFAULT_REGION:-us-east-1}
echo "-- sam validate --lint"
.venv/bin/sam validate --lint --template template.yaml
echo "-- cfn-lint"
.venv/bin/cfn-lint template.yaml
echo "-- sam build"
rm -rf .aws-sam/build
.venv/bin/sam build --template template.yaml --build-dir .aws-sam/build
for fn in $(.venv/bin/python - <<'PY'
import re
doc = open("template.yaml").read()
for m in re.finditer(r"^  (\w+):\n    Type: AWS::Serverless::Function", doc, re.M):
    print(m.group(1))
PY
); do
  test -s ".aws-sam/build/$fn/bootstrap" || { echo "sam build produced no bootstrap for $fn"; exit 1; }
  echo "built $fn: $(stat -c %s ".aws-sam/build/$fn/bootstrap") bytes"
done
