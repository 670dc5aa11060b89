package localstack_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/auth"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

// clients is the number of concurrent clients of the throughput benchmarks.
const clients = 16

// latencies collects per-request latencies from parallel goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B, start time.Time) float64 {
	slices.Sort(l.d)
	perSec := float64(len(l.d)) / time.Since(start).Seconds()
	b.ReportMetric(perSec, "req/s")
	b.ReportMetric(float64(l.d[len(l.d)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(l.d[len(l.d)*99/100].Microseconds())/1000, "p99-ms")
	return perSec
}

// BenchmarkThroughput loads the local server with 16 clients reading one
// scan (two GetItems per request; the authorizer's answer cached, or not
// cached, adding its BatchGetItem), beside 16 clients making the same
// DynamoDB calls directly on the same embedded server.
func BenchmarkThroughput(b *testing.B) {
	ctx := context.Background()
	raw := map[int]float64{}
	for _, c := range []struct {
		name  string
		ttl   time.Duration
		calls int // DynamoDB round trips per request
	}{{"get-scan", time.Hour, 2}, {"authorizer-path", 0, 3}} {
		stack, err := localstack.Start(ctx, localstack.Options{
			Template: "../../template.yaml", Table: "bench", AdminUsername: "admin", AdminPassword: "bench-password-1",
			AuthorizerTTL: c.ttl, TokenTTL: time.Hour, Seed: true, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(stack.Handler)
		tok, _ := auth.NewToken(1)
		if err := stack.Store.PutToken(ctx, scangate.Token{Hash: auth.HashToken(tok), UserID: 1, Kind: "cli", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}, scangate.Who{RequestID: "test"}); err != nil {
			b.Fatal(err)
		}
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
		b.Run(c.name+"/raw-dynamodb", func(b *testing.B) {
			db, err := store.NewClient(ctx, stack.Embedded.URL)
			if err != nil {
				b.Fatal(err)
			}
			keys := []map[string]types.AttributeValue{
				{"PK": &types.AttributeValueMemberS{Value: "SCAN#1"}, "SK": &types.AttributeValueMemberS{Value: "SCAN"}},
				{"PK": &types.AttributeValueMemberS{Value: "USER#1"}, "SK": &types.AttributeValueMemberS{Value: "USER"}},
				{"PK": &types.AttributeValueMemberS{Value: "COUNTER#user"}, "SK": &types.AttributeValueMemberS{Value: "COUNTER"}},
			}
			table := "bench"
			var l latencies
			b.SetParallelism(clients / 2)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					t := time.Now()
					for i := range c.calls {
						if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: keys[i]}); err != nil {
							b.Error(err)
							return
						}
					}
					l.add(time.Since(t))
				}
			})
			raw[c.calls] = l.report(b, start)
		})
		b.Run(c.name+"/local-server", func(b *testing.B) {
			var l latencies
			b.SetParallelism(clients / 2)
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("GET", srv.URL+"/api/pr/scan/1", nil)
					req.Header.Set("Authorization", "Bearer "+tok)
					t := time.Now()
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
					l.add(time.Since(t))
				}
			})
			got := l.report(b, start)
			if r := raw[c.calls]; r > 0 {
				b.ReportMetric(got/r, "x-raw")
			}
		})
		srv.Close()
		_ = stack.Close()
	}
}
