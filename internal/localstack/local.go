// Package localstack assembles the whole service on one machine: the embedded
// DynamoDB-API server, the table, the first admin, every function of the
// operations table (internal/ops) built from its dependencies, and the triggers
// of template.yaml wired to them: the local API Gateway, S3 events,
// schedules, SQS queues and the table's DynamoDB stream.
package localstack

import (
	"fmt"
	"net"
	"net/http"
	"time"

	miniserver "github.com/truora/minidyn/server"
)

// The region and account of the ARNs in the events the local triggers
// send.
const (
	region  = "us-east-1"
	account = "123456789012"
)

// Embedded is the in-process DynamoDB-API server (minidyn) on a loopback port.
type Embedded struct {
	URL    string
	Server *miniserver.Server
	srv    *http.Server
}

// StartEmbedded starts the embedded DynamoDB-API server.
func StartEmbedded() (*Embedded, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the embedded DynamoDB server: %w", err)
	}
	mini := miniserver.NewServer()
	srv := &http.Server{Handler: mini, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &Embedded{URL: "http://" + ln.Addr().String(), Server: mini, srv: srv}, nil
}

// Close stops the embedded server.
func (e *Embedded) Close() error { return e.srv.Close() }
