package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/dashboard"
)

// TestLocal: the local server serves the dashboard's files at the root
// with the security headers (HSTS only over HTTPS), a config.json naming
// /api, and hands every other request to the API.
func TestLocal(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "api "+r.Method+" "+r.URL.Path)
	})
	plain := httptest.NewServer(dashboard.Local(api))
	defer plain.Close()
	tls := httptest.NewTLSServer(dashboard.Local(api))
	defer tls.Close()
	get := func(c *http.Client, method, url string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for path, typ := range map[string]string{"/": "text/html; charset=utf-8", "/index.html": "text/html; charset=utf-8",
		"/app.js": "text/javascript; charset=utf-8", "/pages/pr.js": "text/javascript; charset=utf-8",
		"/style.css": "text/css; charset=utf-8", "/icon.svg": "image/svg+xml", "/config.json": "application/json"} {
		resp, body := get(plain.Client(), "GET", plain.URL+path)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != typ || body == "" {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		for k, v := range dashboard.Headers("'self'") {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("GET %s: %s %q; want %q", path, k, got, v)
			}
		}
		if resp.Header.Get("Strict-Transport-Security") != "" || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s over http: HSTS %q, Cache-Control %q", path, resp.Header.Get("Strict-Transport-Security"), resp.Header.Get("Cache-Control"))
		}
	}
	if _, body := get(plain.Client(), "GET", plain.URL+"/config.json"); body != `{"api_url":"/api"}` {
		t.Errorf("config.json: %s", body)
	}
	if resp, body := get(plain.Client(), "HEAD", plain.URL+"/app.js"); resp.StatusCode != 200 || body != "" || resp.ContentLength <= 0 {
		t.Errorf("HEAD /app.js: %d %q %d", resp.StatusCode, body, resp.ContentLength)
	}
	if resp, _ := get(tls.Client(), "GET", tls.URL+"/"); resp.Header.Get("Strict-Transport-Security") != dashboard.HSTS {
		t.Errorf("over https, HSTS is %q", resp.Header.Get("Strict-Transport-Security"))
	}
	for _, r := range [][2]string{{"GET", "/api/pr"}, {"POST", "/"}, {"DELETE", "/app.js"}, {"GET", "/nothing.js"}, {"GET", "/assets/app.js"}, {"GET", "/prod/api/pr"}} {
		if resp, body := get(plain.Client(), r[0], plain.URL+r[1]); resp.StatusCode != 404 || body != "api "+r[0]+" "+r[1] || strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src") {
			t.Errorf("%s %s did not go to the API: %d %q", r[0], r[1], resp.StatusCode, body)
		}
	}
}
