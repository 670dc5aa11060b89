package lambdarun_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/ops"
)

// TestFunctionsLinkOnlyWhatTheyUse reads every function's dependencies
// (go list, for the Lambda build tags): none links the SDK's default
// credential chain, the embedded DynamoDB server, the local gateway,
// YAML, the operations table (pkg/ops, which links every handler) or
// oklog/ulid (its initialisation seeds a random source at every start),
// only the functions that hash or check a password link argon2, only the
// functions of large uploads and the dashboard's publisher link the S3
// client, only the publisher links the dashboard's files, only the
// deliverer go-github, and none the SDK's Secrets Manager, SQS or
// EventBridge clients (internal/awsjson calls them with the SDK's signer, for
// the cold start).
// (make bench's BenchmarkSize checks the same of argon2 in the binaries'
// symbols with go tool nm.)
func TestFunctionsLinkOnlyWhatTheyUse(t *testing.T) {
	deps := lambdaDeps(t, "./functions/...")
	banned := []string{
		"github.com/aws/aws-sdk-go-v2/config", "github.com/aws/aws-sdk-go-v2/feature/ec2/imds",
		"github.com/aws/aws-sdk-go-v2/service/sts", "github.com/aws/aws-sdk-go-v2/service/sso",
		"github.com/truora/minidyn", "github.com/johannesboyne/gofakes3", "gopkg.in/yaml.v3",
		"github.com/scangate/scangate/internal/localstack/gateway", "github.com/scangate/scangate/internal/localstack",
		"github.com/scangate/scangate/internal/ops", "github.com/oklog/ulid",
	}
	for _, op := range ops.Operations() {
		list, ok := deps[op.Name]
		if !ok {
			t.Errorf("go list did not list functions/%s", op.Name)
			continue
		}
		argon2, s3, text, sqs, eventbridge, github, secrets := false, false, false, false, false, false, false
		for _, d := range list {
			secrets = secrets || d == "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
			s3 = s3 || d == "github.com/aws/aws-sdk-go-v2/service/s3"
			sqs = sqs || d == "github.com/aws/aws-sdk-go-v2/service/sqs"
			text = text || d == "golang.org/x/text/cases"
			eventbridge = eventbridge || d == "github.com/aws/aws-sdk-go-v2/service/eventbridge"
			github = github || d == "github.com/google/go-github/v75/github"
			for _, b := range banned {
				if d == b || strings.HasPrefix(d, b+"/") {
					t.Errorf("%s links %s", op.Name, d)
				}
			}
			argon2 = argon2 || d == "golang.org/x/crypto/argon2"
		}
		if secrets {
			t.Errorf("%s links the SDK's Secrets Manager client", op.Name)
		}
		if hashes := op.Name == "login" || op.Name == "create-user"; argon2 != hashes {
			t.Errorf("%s: links argon2 %v, hashes or checks passwords %v", op.Name, argon2, hashes)
		}
		// create-oidc-session folds the address of a person signing in for the first time.
		if folds := op.Name == "create-user" || op.Name == "update-user" || op.Name == "create-token" || op.Name == "create-oidc-session"; text != folds {
			t.Errorf("%s: links x/text %v, folds e-mail addresses or token names %v", op.Name, text, folds)
		}
		// get-pr-sarif writes a log too large to answer to the bucket.
		if bucket := op.Name == "create-sarif-upload" || op.Name == "ingest-sarif-upload" || op.Name == "publish-dashboard" || op.Name == "get-pr-sarif"; s3 != bucket {
			t.Errorf("%s: links the S3 client %v, uses a bucket %v", op.Name, s3, bucket)
		}
		if dash := slices.Contains(list, "github.com/scangate/scangate/internal/dashboard"); dash != (op.Name == "publish-dashboard") {
			t.Errorf("%s: links the dashboard's files %v", op.Name, dash)
		}
		if sqs || eventbridge {
			t.Errorf("%s links the SDK's SQS client %v, its EventBridge client %v (internal/awsjson calls both, for the cold start)", op.Name, sqs, eventbridge)
		}
		if statuses := op.Name == "deliver-events"; github != statuses {
			t.Errorf("%s: links go-github %v, posts commit statuses %v", op.Name, github, statuses)
		}
	}
}

// lambdaDeps are the dependencies of main packages as go list gives them
// for the Lambda build (linux/arm64, lambda.norpc), by the last element of
// each package's path (functions/get-scan: get-scan).
func lambdaDeps(t *testing.T, pkgs ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-tags", "lambda.norpc", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, pkgs...)...)
	cmd.Dir = "../.."
	cmd.Env = append(cmd.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[f[0][strings.LastIndex(f[0], "/")+1:]] = f[1:]
	}
	return deps
}
