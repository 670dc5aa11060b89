// Package local assembles the whole service on one machine: the embedded
// DynamoDB-API server, the table, the first admin, and every function of
// template.yaml wired to its handler behind the local API Gateway.
package local

import (
	"fmt"
	"net"
	"net/http"
	"time"

	miniserver "github.com/truora/minidyn/server"

	"github.com/scangate/scangate/pkg/api"
	"github.com/scangate/scangate/pkg/gateway"
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

// Function is one function of the operations table built for the local
// stack: its logical id in template.yaml and its handler, in the form
// lambda.Start would be given it.
type Function struct {
	LogicalID string
	Handler   any
}

// Functions builds every function of api.Operations(); deps gives each its
// dependencies by logical id (the local server gives all the same store; a
// test may tell them apart).
func Functions(deps func(logicalID string) api.Deps) []Function {
	var fns []Function
	for _, op := range api.Operations() {
		id := api.LogicalID(op.Name)
		fns = append(fns, Function{LogicalID: id, Handler: op.Handler(deps(id))})
	}
	return fns
}

// gatewayHandlers sorts the functions for the local API Gateway: REST
// proxy handlers by logical id, and the TOKEN authorizer. Functions of
// other kinds are invoked by their triggers through Stack.Invoke.
func gatewayHandlers(fns []Function) (map[string]gateway.Handler, gateway.AuthorizerHandler) {
	proxies := map[string]gateway.Handler{}
	var authorizer gateway.AuthorizerHandler
	for _, f := range fns {
		switch h := f.Handler.(type) {
		case api.Handler:
			proxies[f.LogicalID] = gateway.Handler(h)
		case api.AuthorizerHandler:
			authorizer = gateway.AuthorizerHandler(h)
		}
	}
	return proxies, authorizer
}
