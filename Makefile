# scangate: make run (local API), make test (every Go test), make build (arm64 Lambdas).
SHELL         := bash
GO            ?= go
# Every directory of functions/ is a Lambda (api.Operations() lists the same; a
# test keeps them, template.yaml and docs/openapi.yaml in step).
FUNCTIONS     := $(patsubst functions/%/main.go,%,$(wildcard functions/*/main.go))
LAMBDA_FLAGS  := -tags lambda.norpc -trimpath -ldflags='-s -w -buildid='
GOLANGCI_LINT := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.6.2
TOOLS         := $(CURDIR)/.build/tools

PYTHON        ?= python3.11
BENCH_VENV    := .build/bench-venv
FASTAPI_DIR   := internal/lambdarun/testdata/fastapi
WEBHOOK_VENV     := .build/webhook-venv
WEBHOOK_RECEIVER := internal/events/webhook/testdata/receiver
OCTOKIT          := .build/octokit
OIDC_PROVIDER    := .build/oidc-provider
SARIF_MULTITOOL  := .build/sarif-multitool

DDB_LOCAL      := .cache/dynamodb-local
DDB_LOCAL_PORT ?= 8765

# S3Proxy, one jar from Maven Central (pinned in .ci/s3proxy/pom.xml), for the S3
# tier: it checks SigV4 signatures, presigned ones and their expiry included.
# S3_PORT (MINIO_PORT, its former name, is still read).
S3PROXY       := .cache/s3proxy
S3_PORT       ?= $(or $(MINIO_PORT),9765)

# The command-line client's builds (make dist): version, commit and the commit's date
# (so that one commit always gives the same binaries), read by scangate version.
DIST_DIR       ?= .build/dist
DIST_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST_VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
DIST_COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
DIST_DATE      ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
DIST_LDFLAGS   := -s -w -buildid= -X main.version=$(DIST_VERSION) -X main.commit=$(DIST_COMMIT) -X main.date=$(DIST_DATE)

.PHONY: generate build run test test-browser test-race test-dynamodb-local test-s3 test-scanners test-webhooks test-github test-oidc test-sarif-out bench load fuzz fuzz-go validate lint tools clean dist

## generate: every functions/<op>/main.go and template.yaml's function blocks, from the
## operations table (internal/ops); run it after changing the table (a test fails until then)
generate:
	$(GO) run ./cmd/scangate-generate

## build: one stripped linux/arm64 bootstrap per function in .build/<function>/bootstrap
## (one go build for all: it links them side by side and loads the packages once)
build:
	@rm -rf .build/lambda && mkdir -p .build/lambda
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o .build/lambda/ $(FUNCTIONS:%=./functions/%)
	@for f in $(FUNCTIONS); do mkdir -p .build/$$f && mv .build/lambda/$$f .build/$$f/bootstrap || exit 1; done
	@rmdir .build/lambda

# One function alone: make .build/get-scan/bootstrap
.build/%/bootstrap: FORCE
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $@ ./functions/$*

.PHONY: FORCE
FORCE:

# sam build (BuildMethod: makefile) runs build-<LogicalId> with ARTIFACTS_DIR set.
# A logical id is the CamelCase of the function's directory + Function
# (GetScanFunction: functions/get-scan), so one pattern rule serves them all.
# With SCANGATE_PREBUILT set to a directory (.ci/validate.sh sets it to .build
# right after make build), the rule copies <dir>/<function>/bootstrap instead
# of linking the same binary again.
kebab = $(shell printf '%s' '$(1)' | sed -E 's/([a-z0-9])([A-Z])/\1-\2/g' | tr '[:upper:]' '[:lower:]')
build-%Function:
	@test -f functions/$(call kebab,$*)/main.go || { echo 'no functions/$(call kebab,$*) for $*Function'; exit 1; }
ifdef SCANGATE_PREBUILT
	cp $(SCANGATE_PREBUILT)/$(call kebab,$*)/bootstrap $(ARTIFACTS_DIR)/bootstrap
else
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(call kebab,$*)
endif

## dist: the command-line client (cmd/scangate) for linux and darwin, amd64 and arm64, in
## $(DIST_DIR)/scangate-<os>-<arch> with SHA256SUMS; scangate version names the build
dist:
	rm -rf $(DIST_DIR) && mkdir -p $(DIST_DIR)
	for p in $(DIST_PLATFORMS); do \
	  GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) build -trimpath -ldflags='$(DIST_LDFLAGS)' \
	    -o $(DIST_DIR)/scangate-$${p%/*}-$${p#*/} ./cmd/scangate || exit 1; \
	done
	cd $(DIST_DIR) && sha256sum scangate-* > SHA256SUMS

## run: the API on http://127.0.0.1:3000/api on an embedded DynamoDB-API server, the dashboard on
## http://127.0.0.1:3000/; its table is kept in .build/local-state.json across restarts
## (make run FRESH=1 starts empty)
run:
	@echo 'make run: building cmd/scangate-local into .build/ (the first time Go downloads the modules and compiles for a few minutes; then seconds)'
	@$(GO) build -o .build/scangate-local ./cmd/scangate-local
	@echo 'make run: starting it; it listens once its table and first admin are ready'
	@SCANGATE_FRESH='$(FRESH)' SCANGATE_STATE="$${SCANGATE_STATE:-.build/local-state.json}" exec ./.build/scangate-local

## test: every test that needs only Go (the embedded DynamoDB-API server runs in process)
test:
	$(GO) test -count=1 ./...

## test-browser: the dashboard in headless Chromium (Debian's, installed when missing) with
## axe-core (npm ci, pinned); screenshots of every page in .build/screenshots
test-browser:
	bash .ci/browser.sh

## test-race: the same tests under the race detector, but for the tests of sizes and limits
## (RACE_SKIP: megabytes of input, each request handled in one goroutine; make test and
## test-dynamodb-local run them, and the same routes run under the detector in smaller tests);
## internal/api alone ran past go test's default 10-minute limit under the detector on a loaded 2-core machine
RACE_SKIP := ^(TestManyLargeAllowlistsOfOneName|TestSARIFBadInputStoresNothing|TestUploadFailures|TestUploadObjectLimit)$$
test-race:
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m -skip '$(RACE_SKIP)' ./...

## test-dynamodb-local: the same suite against AWS's DynamoDB Local (Maven Central, Java 17):
## every package whose test binary links internal/ddbtest, the one reader of
## TEST_DYNAMODB_ENDPOINT (the others never reach a table but the embedded one: make test ran them)
DDB_PACKAGES = $(GO) list -test -f '{{if not .ForTest}}{{.ImportPath}} {{join .Deps " "}}{{end}}' ./... | \
  awk '$$1 ~ /\.test$$/ && / github.com\/scangate\/scangate\/internal\/ddbtest( |$$)/ { sub(/\.test$$/, "", $$1); print $$1 }'
test-dynamodb-local: $(DDB_LOCAL)/DynamoDBLocal.jar
	@pkgs=$$($(DDB_PACKAGES)) && test -n "$$pkgs" && echo "packages on DynamoDB Local:" $$pkgs && \
	DDB_LOCAL=$(DDB_LOCAL) DDB_LOCAL_PORT=$(DDB_LOCAL_PORT) .ci/with-dynamodb-local.sh $(GO) test -count=1 $$pkgs

## test-s3: the large-upload tests against S3Proxy (presigned signatures and expiry checked
## as S3 does), started and stopped around them
test-s3: $(S3PROXY)/s3proxy-jar-with-dependencies.jar
	S3PROXY_JAR=$(S3PROXY)/s3proxy-jar-with-dependencies.jar S3_PORT=$(S3_PORT) .ci/with-s3proxy.sh \
	  $(GO) test -count=1 -run '^(TestUpload|TestUploads|TestIAMPolicies)' -v ./internal/localstack

$(S3PROXY)/s3proxy-jar-with-dependencies.jar: .ci/s3proxy/pom.xml
	mvn -q -B -f .ci/s3proxy/pom.xml dependency:copy-dependencies -DexcludeTransitive=true -DoutputDirectory=$(CURDIR)/$(S3PROXY) -Dmdep.stripVersion=true
	@touch $@

## test-scanners: real scanners (gitleaks, semgrep, bandit, checkov; pinned, offline, from the
## Go proxy and PyPI) over fixtures; their SARIF uploaded through the local server and checked
## against facts computed independently by .ci/sarif_facts.py; docs/CI.md's jobs run with them
## (a push, then a pull request); a base branch's analysis and a pull request that moves every
## finding down and adds one per scanner, uploaded by the client: exactly the added ones new
test-scanners:
	bash .ci/scanners.sh
	SCANGATE_SARIF_DIR=$(CURDIR)/.build/sarif SCANGATE_SCANNERS=$(CURDIR)/.build/scanners \
	  $(GO) test -count=1 -run '^(TestScannerUploads|TestScannerGate|TestCIDocs|TestScannerNewCode)$$' -v ./internal/localstack

## test-webhooks: deliveries verified by a receiver that uses the Standard Webhooks library
## for Python (PyPI standardwebhooks, pinned and hashed, in .build/webhook-venv): the sender
## alone, then events end to end through the local stack over HTTP
test-webhooks: $(WEBHOOK_VENV)/.pins
	SCANGATE_WEBHOOK_RECEIVER=$(CURDIR)/$(WEBHOOK_VENV)/bin/python $(GO) test -count=1 -run '^TestPythonReceiver' -v ./internal/events/webhook
	SCANGATE_WEBHOOK_RECEIVER=$(CURDIR)/$(WEBHOOK_VENV)/bin/python $(GO) test -count=1 -run '^(TestWebhook|TestEvents)' -v ./internal/localstack

$(WEBHOOK_VENV)/.pins: $(WEBHOOK_RECEIVER)/requirements.txt
	rm -rf $(WEBHOOK_VENV)
	$(PYTHON) -m venv $(WEBHOOK_VENV)
	$(WEBHOOK_VENV)/bin/pip install -q --disable-pip-version-check --require-hashes -r $<
	cp $< $@

## test-github: commit statuses through go-github to a stand-in that validates every request
## against GitHub's published OpenAPI description (npm @octokit/openapi, pinned, in .build/octokit),
## alone and from gate changes through the local stack (with the Python webhook receiver): statuses,
## and a GitHub App's check runs with their annotations
test-github: $(OCTOKIT)/.installed $(WEBHOOK_VENV)/.pins
	SCANGATE_GITHUB_OPENAPI=$(CURDIR)/$(OCTOKIT)/node_modules/@octokit/openapi/generated/api.github.com.json \
	  $(GO) test -count=1 -run '^TestGitHub' -v ./internal/events/commitstatus
	SCANGATE_GITHUB_OPENAPI=$(CURDIR)/$(OCTOKIT)/node_modules/@octokit/openapi/generated/api.github.com.json \
	  SCANGATE_WEBHOOK_RECEIVER=$(CURDIR)/$(WEBHOOK_VENV)/bin/python $(GO) test -count=1 -run '^(TestCommitStatuses|TestCheckRun)' -v ./internal/localstack

$(OCTOKIT)/.installed: .ci/octokit/package.json .ci/octokit/package-lock.json
	rm -rf $(OCTOKIT)
	mkdir -p $(OCTOKIT)
	cp .ci/octokit/package.json .ci/octokit/package-lock.json $(OCTOKIT)/
	cd $(OCTOKIT) && npm ci --no-audit --no-fund
	@touch $@

## test-oidc: trusted CI against a real OpenID provider (npm oidc-provider, pinned, in
## .build/oidc-provider, run by the tests on loopback): id tokens it signs exchanged for scan
## tokens, tokens forged against its published keys refused, scangate upload with no stored secret
test-oidc: $(OIDC_PROVIDER)/.installed
	SCANGATE_OIDC_PROVIDER=$(CURDIR)/$(OIDC_PROVIDER) $(GO) test -count=1 -run '^TestOIDCProvider' -v ./internal/localstack

$(OIDC_PROVIDER)/.installed: .ci/oidc-provider/package.json .ci/oidc-provider/package-lock.json .ci/oidc-provider/issuer.mjs
	rm -rf $(OIDC_PROVIDER)
	mkdir -p $(OIDC_PROVIDER)
	cp .ci/oidc-provider/package.json .ci/oidc-provider/package-lock.json .ci/oidc-provider/issuer.mjs $(OIDC_PROVIDER)/
	cd $(OIDC_PROVIDER) && npm ci --no-audit --no-fund

## test-sarif-out: GET /pr/{pr_id}/sarif of a PR of 25,000 findings (through the bucket), checked
## against the SARIF 2.1.0 schema and by the SARIF SDK's multitool (npm @microsoft/sarif-multitool,
## pinned, in .build/sarif-multitool)
test-sarif-out: $(SARIF_MULTITOOL)/.installed
	SCANGATE_SARIF_MULTITOOL=$(CURDIR)/$(SARIF_MULTITOOL)/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool \
	  $(GO) test -count=1 -timeout 30m -run '^TestPRSARIF25k$$' -v ./internal/api

$(SARIF_MULTITOOL)/.installed: .ci/sarif-multitool/package.json .ci/sarif-multitool/package-lock.json
	rm -rf $(SARIF_MULTITOOL)
	mkdir -p $(SARIF_MULTITOOL)
	cp .ci/sarif-multitool/package.json .ci/sarif-multitool/package-lock.json $(SARIF_MULTITOOL)/
	cd $(SARIF_MULTITOOL) && npm ci --no-audit --no-fund
	chmod u+x $(SARIF_MULTITOOL)/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
	@touch $@

## bench: cold start (beside a hello world and a FastAPI + Mangum function), size and
## throughput on the embedded server; allowlist re-evaluation (10,000 findings in the request;
## 10,000, 100,000 and 1,000,000 fanned out to work functions, beside the raw write rate), a
## 100,000-result upload through the ingest function, a base scan re-classifying 100 and
## 1,000 PRs of 1,000 findings, and events from change to webhook on
## DynamoDB Local (figures in docs/BENCHMARKS.md)
bench: $(DDB_LOCAL)/DynamoDBLocal.jar $(BENCH_VENV)/.pins
	SCANGATE_BENCH_PYTHON=$(CURDIR)/$(BENCH_VENV)/bin/python $(GO) test -run '^$$' -bench 'ColdStart|Size' -benchtime 15x ./internal/lambdarun
	$(GO) test -run '^$$' -bench Throughput -benchtime 3s ./internal/localstack
	DDB_LOCAL=$(DDB_LOCAL) DDB_LOCAL_PORT=$(DDB_LOCAL_PORT) .ci/with-dynamodb-local.sh \
	  $(GO) test -run '^$$' -bench 'Reevaluate|SARIFUpload' -benchtime 3x ./internal/api
	$(GO) test -run '^$$' -bench 'BenchmarkRead|BenchmarkGzipBomb' -benchtime 5x ./internal/sarif
	$(GO) test -run '^$$' -bench . -benchtime 10x ./internal/linehash
	DDB_LOCAL=$(DDB_LOCAL) DDB_LOCAL_PORT=$(DDB_LOCAL_PORT) .ci/with-dynamodb-local.sh \
	  $(GO) test -run '^$$' -bench Ingest -benchtime 1x -timeout 30m ./internal/lambdarun
	DDB_LOCAL=$(DDB_LOCAL) DDB_LOCAL_PORT=$(DDB_LOCAL_PORT) .ci/with-dynamodb-local.sh \
	  $(GO) test -run '^$$' -bench ReevaluateFanOut -benchtime 1x -timeout 180m ./internal/lambdarun
	DDB_LOCAL=$(DDB_LOCAL) DDB_LOCAL_PORT=$(DDB_LOCAL_PORT) .ci/with-dynamodb-local.sh \
	  $(GO) test -run '^$$' -bench Reclassify -benchtime 1x -timeout 60m ./internal/lambdarun
	DDB_LOCAL=$(DDB_LOCAL) DDB_LOCAL_PORT=$(DDB_LOCAL_PORT) .ci/with-dynamodb-local.sh \
	  $(GO) test -run '^$$' -bench EventDelivery -benchtime 1000x ./internal/localstack

# The FastAPI + Mangum comparison function's packages, pinned, from PyPI.
$(BENCH_VENV)/.pins: $(FASTAPI_DIR)/requirements.txt
	rm -rf $(BENCH_VENV)
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q --disable-pip-version-check -r $<
	cp $< $@

$(DDB_LOCAL)/DynamoDBLocal.jar: .ci/dynamodb-local/pom.xml
	mvn -q -B -f .ci/dynamodb-local/pom.xml dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/$(DDB_LOCAL) -Dmdep.stripVersion=true
	@touch $@

## load: 100 concurrent clients against the local server for 20 s; no 5xx, no lost write, no drift
load:
	SCANGATE_LOAD=20 $(GO) test -count=1 -run '^TestLoad$$' -v ./internal/localstack

## validate: sam validate --lint, cfn-lint, checkov (zero failed checks; every skip with its reason) and
## sam build (AWS SAM CLI and cfn-lint from PyPI into .venv, checkov into .build/scanners)
validate:
	bash .ci/validate.sh

## fuzz: Schemathesis (PyPI) against the local server over every operation of docs/openapi.yaml
fuzz:
	bash .ci/fuzz.sh

## fuzz-go: the Go fuzz tests of request bodies, path ids, tokens and SARIF logs, 15 s each
fuzz-go:
	$(GO) test -run '^$$' -fuzz '^FuzzBody$$' -fuzztime 15s ./internal/api
	$(GO) test -run '^$$' -fuzz '^FuzzPathID$$' -fuzztime 15s ./internal/api
	$(GO) test -run '^$$' -fuzz '^FuzzParseToken$$' -fuzztime 15s ./internal/auth
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime 15s ./internal/sarif

## lint: go.mod tidy, gofmt, go vet and golangci-lint (pinned, installed into .build/tools;
## .ci/golangci.yml: import groups std / third party / scangate, function length and
## cognitive complexity)
lint: $(TOOLS)/golangci-lint
	$(GO) mod tidy -diff
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: the files above need formatting'; exit 1; }
	$(GO) vet ./...
	$(TOOLS)/golangci-lint run -c .ci/golangci.yml ./...

$(TOOLS)/golangci-lint:
	GOBIN=$(TOOLS) $(GO) install $(GOLANGCI_LINT)

clean:
	rm -rf .build .aws-sam
