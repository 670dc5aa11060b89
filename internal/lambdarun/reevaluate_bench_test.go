package lambdarun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/lambdarun"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// benchWorkers is how many work functions run at once in the benchmark
// (the work queue's MaximumConcurrency; the template's default is 5).
const benchWorkers = 4

// perScan is the findings of each scan of the benchmark's groups: a
// million findings in 20,000 scans.
const perScan = 50

// collected is a work queue that keeps what it is sent.
type collected struct {
	mu     sync.Mutex
	bodies []string
}

func (c *collected) Send(_ context.Context, bodies []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies = append(c.bodies, bodies...)
	return nil
}

// reevalSizes are the sizes measured: SCANGATE_BENCH_REEVAL_SIZES (comma
// separated) or 10,000, 100,000 and 1,000,000 findings.
func reevalSizes(b *testing.B) []int {
	s := os.Getenv("SCANGATE_BENCH_REEVAL_SIZES")
	if s == "" {
		return []int{10_000, 100_000, 1_000_000}
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < perScan {
			b.Fatalf("SCANGATE_BENCH_REEVAL_SIZES: %q", f)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkReevaluateFanOut measures an allowlist change that covers N
// findings of one vulnerability, in N/50 scans of 10 per pull request
// (a million findings in 20,000 scans), on DynamoDB Local (make bench) or
// the embedded server, fanned out at every size (BenchmarkReevaluate in
// internal/api measures a change of 10,000 findings run in its request): the
// findings are loaded with store.BulkLoad; then,
// in the same table, a raw-rate probe writes findings-sized items with
// plain BatchWriteItem at the re-evaluation's concurrency (benchWorkers
// writers, 8 requests in flight each); then the change is made and its
// work dispatched (the change's own process), and its steps run in
// benchWorkers processes of the work function (functions/run-work, built
// for this machine, under the local Lambda Runtime API), each handed its
// share of the queue's messages. It reports the time from the change to
// the work's completion, findings per second, that rate as a fraction of
// the raw write rate, the same as a fraction of the raw rate of
// transactional updates (TransactWriteItems of 98 conditioned updates of
// the probe's items: the most transactions can do on this server), and
// the largest peak resident memory (VmHWM) of a worker; and checks that the work counted every finding once and that
// every scan's count is 0.
func BenchmarkReevaluateFanOut(b *testing.B) {
	ctx := context.Background()
	endpoint := os.Getenv("TEST_DYNAMODB_ENDPOINT")
	if endpoint == "" {
		emb, err := localstack.StartEmbedded()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = emb.Close() })
		endpoint = emb.URL
	}
	db, err := store.NewClient(ctx, endpoint)
	if err != nil {
		b.Fatal(err)
	}
	bin := build(b, b.TempDir(), "./functions/run-work", runtime.GOARCH)
	for _, n := range reevalSizes(b) {
		b.Run(fmt.Sprintf("findings=%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				table := fmt.Sprintf("bench-reeval-%d-%d", time.Now().UnixNano(), i)
				if err := store.CreateTable(ctx, db, table); err != nil {
					b.Fatal(err)
				}
				// Every size fans out (10,000 would run in its request).
				st := store.New(db, table, store.WithReevaluation(0, store.DefaultStepFindings))
				loadGroup(b, st, n)
				raw := rawRate(b, db, table, min(n, 100_000))
				rawTx := rawTxRate(b, db, table, min(n, 100_000))
				took, peak := reevaluate(b, st, bin, table, endpoint, n)
				b.ReportMetric(took.Seconds(), "s/change")
				b.ReportMetric(float64(n)/took.Seconds(), "findings/s")
				b.ReportMetric(raw, "raw-items/s")
				b.ReportMetric(float64(n)/took.Seconds()/raw, "fraction-of-raw")
				b.ReportMetric(rawTx, "raw-tx-items/s")
				b.ReportMetric(float64(n)/took.Seconds()/rawTx, "fraction-of-raw-tx")
				b.ReportMetric(float64(peak)/1024, "worker-peak-MiB")
			}
		})
	}
}

// loadGroup loads n findings of one vulnerability, 1,000 scans a call.
func loadGroup(b *testing.B, st *store.Store, n int) {
	start := time.Now()
	nss := ddbtest.GroupScans(n/perScan, perScan, "CVE-2021-44228")
	for from := 0; from < len(nss); from += 1000 {
		if _, err := st.BulkLoad(context.Background(), nss[from:min(from+1000, len(nss))], scangate.Who{RequestID: "bench"}, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("loaded %d findings in %d scans in %.1f s", n, len(nss), time.Since(start).Seconds())
}

// rawRate writes n items shaped as the table's findings (a finding's
// attributes, under keys of a partition of their own and without index
// keys) with BatchWriteItem, 25 a request, benchWorkers writers with 8
// requests in flight each, and returns the items written per second.
func rawRate(b *testing.B, db *dynamodb.Client, table string, n int) float64 {
	ctx := context.Background()
	out, err := db.Query(ctx, &dynamodb.QueryInput{TableName: &table, KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :f)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "SCAN#1"}, ":f": &types.AttributeValueMemberS{Value: "FINDING#"}}})
	if err != nil || len(out.Items) == 0 {
		b.Fatalf("a finding to copy: %v", err)
	}
	model := out.Items[0]
	delete(model, "GSI1PK")
	delete(model, "GSI1SK")
	var batches [][]types.WriteRequest
	for i := 0; i < n; i += 25 {
		var reqs []types.WriteRequest
		for k := i; k < min(i+25, n); k++ {
			it := make(map[string]types.AttributeValue, len(model))
			for a, v := range model {
				it[a] = v
			}
			it["PK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("RAWPROBE#%d", k/1000)}
			it["SK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("FINDING#%06d", k)}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
		}
		batches = append(batches, reqs)
	}
	next := make(chan []types.WriteRequest)
	var wg sync.WaitGroup
	start := time.Now()
	for range benchWorkers * 8 {
		wg.Go(func() {
			for reqs := range next {
				pending := map[string][]types.WriteRequest{table: reqs}
				for len(pending) > 0 {
					out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
					if err != nil {
						b.Error(err)
						return
					}
					pending = out.UnprocessedItems
				}
			}
		})
	}
	for _, reqs := range batches {
		next <- reqs
	}
	close(next)
	wg.Wait()
	rate := float64(n) / time.Since(start).Seconds()
	b.Logf("raw: %d items in BatchWriteItem, %.0f items/s", n, rate)
	return rate
}

// rawTxRate updates the n items rawRate wrote in TransactWriteItems of 98,
// each item's update conditioned on its own attribute as a re-evaluation's
// are (the ceiling of transactional writes on this server), at the same
// concurrency, and returns the items updated per second.
func rawTxRate(b *testing.B, db *dynamodb.Client, table string, n int) float64 {
	ctx := context.Background()
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range benchWorkers * 8 {
		wg.Go(func() {
			for from := range next {
				var items []types.TransactWriteItem
				for k := from; k < min(from+98, n); k++ {
					key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: fmt.Sprintf("RAWPROBE#%d", k/1000)},
						"SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("FINDING#%06d", k)}}
					items = append(items, types.TransactWriteItem{Update: &types.Update{TableName: &table, Key: key,
						UpdateExpression: aws.String("SET sup = :t, fv = :one"), ConditionExpression: aws.String("attribute_not_exists(fv)"),
						ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true},
							":one": &types.AttributeValueMemberN{Value: "1"}}}})
				}
				if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	for from := 0; from < n; from += 98 {
		next <- from
	}
	close(next)
	wg.Wait()
	rate := float64(n) / time.Since(start).Seconds()
	b.Logf("raw transactional: %d items updated in TransactWriteItems of 98, %.0f items/s", n, rate)
	return rate
}

// reevaluate makes the change (a global allowlist of the group) and
// dispatches its work in this process, then runs its steps in
// benchWorkers work functions; it returns the time from the change to the
// work's completion and the largest peak memory of a worker (KiB).
func reevaluate(b *testing.B, st *store.Store, bin, table, endpoint string, n int) (time.Duration, int64) {
	ctx := context.Background()
	queue := &collected{}
	run := st.Runner(time.Now, queue)
	start := time.Now()
	_, it, err := st.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanVulnerability, Name: "CVE-2021-44228",
		Active: true, Global: true}}, "", scangate.Who{RequestID: "bench"}, start, run.LeaseFrom(start))
	if err != nil {
		b.Fatal(err)
	}
	if it, err = run.Continue(ctx, it); err != nil {
		b.Fatal(err)
	}
	planned := time.Since(start)
	shares := make([][][]byte, benchWorkers)
	for i, body := range queue.bodies {
		ev, _ := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{{MessageId: strconv.Itoa(i), Body: body, EventSource: "aws:sqs"}}})
		shares[i%benchWorkers] = append(shares[i%benchWorkers], ev)
	}
	env := []string{"TABLE_NAME=" + table, "DYNAMODB_ENDPOINT=" + endpoint, "LOG_LEVEL=ERROR",
		"AWS_REGION=" + orDefault("AWS_REGION", "us-east-1"), "AWS_ACCESS_KEY_ID=" + orDefault("AWS_ACCESS_KEY_ID", "local"),
		"AWS_SECRET_ACCESS_KEY=" + orDefault("AWS_SECRET_ACCESS_KEY", "local")}
	peaks := make([]int64, benchWorkers)
	var wg sync.WaitGroup
	for w := range benchWorkers {
		wg.Go(func() {
			res, err := lambdarun.RunProcess(ctx, lambdarun.Process{Argv: []string{bin}, Name: "run-work", MemoryMB: 256, Deadline: 15 * time.Minute, Env: env}, shares[w])
			if err != nil {
				b.Error(err)
				return
			}
			for _, r := range res.Responses {
				var resp events.SQSEventResponse
				if json.Unmarshal(r, &resp) != nil || len(resp.BatchItemFailures) > 0 {
					b.Errorf("a step failed: %s", r)
				}
			}
			peaks[w] = res.PeakRSS
		})
	}
	wg.Wait()
	took := time.Since(start)
	got, err := st.WorkItem(ctx, it.ID)
	if err != nil || got.Status != work.Complete || got.Totals["vulnerabilities_updated"] != int64(n) || got.Totals["findings"] != int64(n) {
		b.Fatalf("the work: %+v %v", got, err)
	}
	if left := scansLeft(b, st, n/perScan); left != 0 {
		b.Fatalf("%d findings unsuppressed after the change", left)
	}
	peak := int64(0)
	for _, p := range peaks {
		peak = max(peak, p)
	}
	b.Logf("%d findings: %d steps; planned and dispatched in %.1f s, complete in %.1f s; worker peaks %v KiB", n, got.Steps,
		planned.Seconds(), took.Seconds(), peaks)
	return took, peak
}

// scansLeft sums the vulnerability counts of scans 1..n.
func scansLeft(b *testing.B, st *store.Store, n int) int64 {
	var sum int64
	for id := int64(1); id <= int64(n); id++ {
		sc, _, err := st.Scan(context.Background(), id)
		if err != nil {
			b.Fatal(err)
		}
		sum += sc.VulnerabilityCount
	}
	return sum
}
