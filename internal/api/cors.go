package api

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
)

// CORS lets the dashboard, served from another origin, read h's answers:
// an answer to a request whose Origin is exactly origin names it in
// Access-Control-Allow-Origin; a request from any other origin, or from
// none, gets no CORS header, so a browser keeps the answer from that
// page. Every answer varies by Origin (caches keep them apart). Without an
// origin, h is unchanged. (API Gateway answers the preflight OPTIONS and
// its own errors, with the same origin, from template.yaml.)
func CORS(origin string, h Handler) Handler {
	if origin == "" {
		return h
	}
	return func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		resp, err := h(ctx, req)
		if err != nil {
			return resp, err
		}
		if resp.Headers == nil {
			resp.Headers = map[string]string{}
		}
		if v := resp.Headers["Vary"]; v != "" {
			resp.Headers["Vary"] = v + ", Origin"
		} else {
			resp.Headers["Vary"] = "Origin"
		}
		if header(req, "Origin") == origin {
			resp.Headers["Access-Control-Allow-Origin"] = origin
		}
		return resp, nil
	}
}
