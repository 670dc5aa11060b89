package dashboard

// CSP is the Content-Security-Policy of the dashboard, with connect-src
// the sources it may call (the API): no inline script or style, nothing
// from another origin, no framing, no <base>, forms posting only to
// itself.
func CSP(connect string) string {
	return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src " + connect +
		"; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
}

// Headers are the security headers of every file of the dashboard, with
// the CSP's connect-src connect. The deployed CloudFront distribution's
// response headers policy sets the same (a test compares them), and
// Strict-Transport-Security besides (HSTS).
func Headers(connect string) map[string]string {
	return map[string]string{
		"Content-Security-Policy": CSP(connect),
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
	}
}

// HSTS is the Strict-Transport-Security of the deployed dashboard (two
// years, subdomains too). It is sent over HTTPS only: RFC 6797 section 7.2
// forbids it over plain HTTP, where a browser ignores it anyway.
const HSTS = "max-age=63072000; includeSubDomains"
