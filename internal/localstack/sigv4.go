package localstack

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// RequireSigV4 admits to next only the requests S3 admits for creds in
// region: presigned ones (X-Amz-Algorithm, -Credential, -Date, -Expires,
// -SignedHeaders and -Signature in the query) not expired, and ones signed
// in the Authorization header within 15 minutes of now, whose signature the
// SDK's signer makes again from the request's method, path, query and
// signed headers (and, for a header signature, its x-amz-content-sha256,
// which a hex digest must match the body for). It answers anything else
// 403 with S3's XML error. Any of creds may sign (by its access key).
func RequireSigV4(next http.Handler, region string, creds ...aws.Credentials) http.Handler {
	keys := make(map[string]aws.Credentials, len(creds))
	for _, c := range creds {
		keys[c.AccessKeyID] = c
	}
	return &sigV4{next: next, region: region, keys: keys, signer: v4.NewSigner()}
}

type sigV4 struct {
	next   http.Handler
	region string
	keys   map[string]aws.Credentials
	signer *v4.Signer
}

const (
	sigAlgorithm = "AWS4-HMAC-SHA256"
	amzDate      = "20060102T150405Z"
	// maxSkew is how far from S3's clock a header signature's time may
	// be (RequestTimeTooSkewed).
	maxSkew = 15 * time.Minute
	// maxExpires is the longest a presigned URL may last: 7 days.
	maxExpires = 7 * 24 * 60 * 60
	// unsignedPayload is the payload hash of a presigned request.
	unsignedPayload = "UNSIGNED-PAYLOAD"
)

// sigError is one of S3's error answers.
type sigError struct {
	XMLName xml.Name `xml:"Error"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
}

func (h *sigV4) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var e *sigError
	if r.URL.Query().Has("X-Amz-Signature") {
		e = h.presigned(r)
	} else {
		e = h.headerSigned(r)
	}
	if e != nil {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, xml.Header)
		_ = xml.NewEncoder(w).Encode(e)
		return
	}
	h.next.ServeHTTP(w, r)
}

func denied(msg string) *sigError { return &sigError{Code: "AccessDenied", Message: msg} }

var mismatch = &sigError{Code: "SignatureDoesNotMatch",
	Message: "The request signature we calculated does not match the signature you provided. Check your key and signing method."}

// presigned checks a query-signed request.
func (h *sigV4) presigned(r *http.Request) *sigError {
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") != sigAlgorithm {
		return denied("X-Amz-Algorithm only supports \"" + sigAlgorithm + "\"")
	}
	creds, e := h.credential(q.Get("X-Amz-Credential"))
	if e != nil {
		return e
	}
	at, err := time.Parse(amzDate, q.Get("X-Amz-Date"))
	if err != nil {
		return denied("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
	}
	secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	switch {
	case err != nil || secs < 0:
		return denied("X-Amz-Expires should be a number")
	case secs > maxExpires:
		return denied("X-Amz-Expires must be less than a week (in seconds) that is; 604800")
	case time.Now().After(at.Add(time.Duration(secs) * time.Second)):
		return denied("Request has expired")
	case at.After(time.Now().Add(maxSkew)):
		return denied("Request is not valid yet")
	}
	given := q.Get("X-Amz-Signature")
	q.Del("X-Amz-Signature")
	again := h.unsigned(r, q, q.Get("X-Amz-SignedHeaders"))
	signed, _, err := h.signer.PresignHTTP(r.Context(), creds, again, unsignedPayload, "s3", h.region, at, s3Signing)
	if err != nil {
		return mismatch
	}
	u, err := url.Parse(signed)
	if err != nil || !sameSignature(u.Query().Get("X-Amz-Signature"), given) {
		return mismatch
	}
	return nil
}

// headerSigned checks a request signed in its Authorization header.
func (h *sigV4) headerSigned(r *http.Request) *sigError {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, sigAlgorithm+" ")
	if !ok {
		return denied("Access Denied")
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	creds, e := h.credential(fields["Credential"])
	if e != nil {
		return e
	}
	at, err := time.Parse(amzDate, r.Header.Get("X-Amz-Date"))
	if err != nil {
		return denied("AWS authentication requires a valid Date or x-amz-date header")
	}
	if d := time.Since(at); d > maxSkew || d < -maxSkew {
		return &sigError{Code: "RequestTimeTooSkewed", Message: "The difference between the request time and the current time is too large."}
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		return &sigError{Code: "InvalidRequest", Message: "Missing required header for this request: x-amz-content-sha256"}
	}
	if e := checkPayload(r, payload); e != nil {
		return e
	}
	again := h.unsigned(r, r.URL.Query(), fields["SignedHeaders"])
	if err := h.signer.SignHTTP(r.Context(), creds, again, payload, "s3", h.region, at, s3Signing); err != nil {
		return mismatch
	}
	_, want, _ := strings.Cut(again.Header.Get("Authorization"), "Signature=")
	if !sameSignature(want, fields["Signature"]) {
		return mismatch
	}
	return nil
}

// credential is the credentials of a signature's Credential (key/date/
// region/service/aws4_request); the signature itself binds the rest of
// the scope.
func (h *sigV4) credential(scope string) (aws.Credentials, *sigError) {
	key, _, _ := strings.Cut(scope, "/")
	c, ok := h.keys[key]
	if !ok {
		return aws.Credentials{}, &sigError{Code: "InvalidAccessKeyId", Message: "The AWS Access Key Id you provided does not exist in our records."}
	}
	return c, nil
}

// unsigned is r as it was before it was signed: its method, path, the
// query q, and only the headers signedHeaders names.
func (h *sigV4) unsigned(r *http.Request, q url.Values, signedHeaders string) *http.Request {
	u := *r.URL
	u.Scheme, u.Host, u.RawQuery = "http", r.Host, q.Encode()
	again := &http.Request{Method: r.Method, URL: &u, Host: r.Host, Header: http.Header{}}
	for _, name := range strings.Split(signedHeaders, ";") {
		switch name {
		case "host", "":
		case "content-length":
			again.ContentLength = r.ContentLength
		default:
			if vals, ok := r.Header[http.CanonicalHeaderKey(name)]; ok {
				again.Header[http.CanonicalHeaderKey(name)] = vals
			} else {
				// Signed, but not sent: sign it empty, so it cannot match.
				again.Header.Set(name, "")
			}
		}
	}
	return again
}

// checkPayload reads the body of a request whose x-amz-content-sha256 is
// a digest and wants the body to have it (S3's XAmzContentSHA256Mismatch);
// the body is then read again from memory.
func checkPayload(r *http.Request, payload string) *sigError {
	if len(payload) != sha256.Size*2 {
		return nil // UNSIGNED-PAYLOAD, or a streaming signature
	}
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return &sigError{Code: "IncompleteBody", Message: "You did not provide the number of bytes specified by the Content-Length HTTP header."}
		}
		_ = r.Body.Close()
	}
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != strings.ToLower(payload) {
		return &sigError{Code: "XAmzContentSHA256Mismatch", Message: "The provided 'x-amz-content-sha256' header does not match what was computed."}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}

// sameSignature compares two hex signatures in constant time.
func sameSignature(want, given string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(given)) == 1
}

// s3Signing signs as the S3 client does: the path as sent, not escaped
// again.
func s3Signing(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }
