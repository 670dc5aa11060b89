package api_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/api"
)

// TestCORS: only a request from the dashboard's exact origin gets
// Access-Control-Allow-Origin, naming that origin (never *); every answer
// varies by Origin; without an origin configured nothing changes.
func TestCORS(t *testing.T) {
	const dash = "https://d111111abcdef8.cloudfront.net"
	inner := func(_ context.Context, _ events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "application/json"}, Body: "{}"}, nil
	}
	h := api.CORS(dash, inner)
	for origin, want := range map[string]string{
		dash: dash, "https://evil.example": "", "https://d111111abcdef8.cloudfront.net.evil.example": "",
		"http://d111111abcdef8.cloudfront.net": "", "null": "", "": "", "HTTPS://D111111ABCDEF8.CLOUDFRONT.NET": "",
	} {
		for _, req := range []events.APIGatewayProxyRequest{
			{Headers: map[string]string{"origin": origin}},
			{MultiValueHeaders: map[string][]string{"Origin": {origin}}},
		} {
			resp, err := h(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Headers["Access-Control-Allow-Origin"]; got != want {
				t.Errorf("Origin %q: Access-Control-Allow-Origin %q; want %q", origin, got, want)
			}
			if resp.Headers["Vary"] != "Origin" || resp.Headers["Content-Type"] != "application/json" || resp.StatusCode != 200 {
				t.Errorf("Origin %q: %v", origin, resp)
			}
		}
	}
	resp, _ := api.CORS("", inner)(context.Background(), events.APIGatewayProxyRequest{Headers: map[string]string{"Origin": dash}})
	if len(resp.Headers) != 1 {
		t.Errorf("without a dashboard origin: %v", resp.Headers)
	}
}
