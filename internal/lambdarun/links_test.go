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
// YAML, the operations table (internal/ops, which links every handler) or
// oklog/ulid (its initialisation seeds a random source at every start),
// only the functions that hash or check a password link argon2, only the
// functions of large uploads and the dashboard's publisher link the S3
// client, only the publisher links the dashboard's files, only the
// functions that queue deliveries or dispatch durable work link the SQS
// client, only the dispatcher the EventBridge client, only the deliverer
// go-github, and none the SDK's Secrets Manager client (internal/keys reads the
// keys with the SDK's signer, for its cold start).
// (make bench's BenchmarkSize checks the same of argon2 in the binaries'
// symbols with go tool nm.)
func TestFunctionsLinkOnlyWhatTheyUse(t *testing.T) {
	cmd := exec.Command("go", "list", "-tags", "lambda.norpc", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./functions/...")
	cmd.Dir = "../.."
	cmd.Env = append(cmd.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[strings.TrimPrefix(f[0], "github.com/scangate/scangate/functions/")] = f[1:]
	}
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
		if folds := op.Name == "create-user" || op.Name == "update-user" || op.Name == "create-token"; text != folds {
			t.Errorf("%s: links x/text %v, folds e-mail addresses or token names %v", op.Name, text, folds)
		}
		if bucket := op.Name == "create-sarif-upload" || op.Name == "ingest-sarif-upload" || op.Name == "publish-dashboard"; s3 != bucket {
			t.Errorf("%s: links the S3 client %v, uses a bucket %v", op.Name, s3, bucket)
		}
		if dash := slices.Contains(list, "github.com/scangate/scangate/internal/dashboard"); dash != (op.Name == "publish-dashboard") {
			t.Errorf("%s: links the dashboard's files %v", op.Name, dash)
		}
		sends := op.Name == "create-allowlist" || op.Name == "update-allowlist" || op.Name == "expire-allowlists"
		queues := op.Name == "dispatch-events" || op.Name == "deliver-events" || op.Name == "redeliver-webhook-delivery"
		if sqs != (sends || queues) {
			t.Errorf("%s: links the SQS client %v, dispatches durable work %v, queues deliveries %v", op.Name, sqs, sends, queues)
		}
		if bus := op.Name == "dispatch-events"; eventbridge != bus {
			t.Errorf("%s: links the EventBridge client %v, puts events %v", op.Name, eventbridge, bus)
		}
		if statuses := op.Name == "deliver-events"; github != statuses {
			t.Errorf("%s: links go-github %v, posts commit statuses %v", op.Name, github, statuses)
		}
	}
}
