# scangate: make run (local API), make test (every Go test), make build (arm64 Lambdas).
GO            ?= go
FUNCTIONS     := authorizer login create-user update-user record-scan get-scan
LAMBDA_FLAGS  := -tags lambda.norpc -trimpath -ldflags='-s -w -buildid='
GOLANGCI_LINT := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.6.2
TOOLS         := $(CURDIR)/.build/tools

.PHONY: build run test test-race lint tools clean

## build: one stripped linux/arm64 bootstrap per function in .build/<function>/bootstrap
build: $(FUNCTIONS:%=.build/%/bootstrap)

.build/%/bootstrap: FORCE
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $@ ./functions/$*

.PHONY: FORCE
FORCE:

# sam build (BuildMethod: makefile) runs build-<LogicalId> with ARTIFACTS_DIR set.
lambda = GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/$(1)
build-AuthorizerFunction: ; $(call lambda,authorizer)
build-LoginFunction: ; $(call lambda,login)
build-CreateUserFunction: ; $(call lambda,create-user)
build-UpdateUserFunction: ; $(call lambda,update-user)
build-RecordScanFunction: ; $(call lambda,record-scan)
build-GetScanFunction: ; $(call lambda,get-scan)

## run: the API on http://127.0.0.1:3000/api on an embedded DynamoDB-API server
run:
	$(GO) run ./cmd/scangate-local

## test: every test that needs only Go (the embedded DynamoDB-API server runs in process)
test:
	$(GO) test -count=1 ./...

## test-race: the same tests under the race detector
test-race:
	CGO_ENABLED=1 $(GO) test -race -count=1 ./...

## lint: gofmt, go vet and golangci-lint (pinned, installed into .build/tools)
lint: $(TOOLS)/golangci-lint
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo 'gofmt: the files above need formatting'; exit 1; }
	$(GO) vet ./...
	$(TOOLS)/golangci-lint run -c .ci/golangci.yml ./...

$(TOOLS)/golangci-lint:
	GOBIN=$(TOOLS) $(GO) install $(GOLANGCI_LINT)

clean:
	rm -rf .build .aws-sam
