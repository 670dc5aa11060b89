package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// MaxBody is the largest request body accepted: 256 KiB.
const MaxBody = 256 << 10

// maxDepth bounds the nesting of a JSON body.
const maxDepth = 32

// httpError is an error the adapter answers with its own status, and
// headers when some apply.
type httpError struct {
	status  int
	detail  string
	headers map[string]string
}

func (e *httpError) Error() string { return e.detail }

func failf(status int, format string, args ...any) error {
	return &httpError{status: status, detail: fmt.Sprintf(format, args...)}
}

// header returns a request header, matching its name ignoring case.
func header(req events.APIGatewayProxyRequest, name string) string {
	for k, v := range req.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	for k, v := range req.MultiValueHeaders {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// hasHeader reports whether the request carries a header with a value
// other than blanks, in either of the proxy event's header maps.
func hasHeader(req events.APIGatewayProxyRequest, name string) bool {
	for k, v := range req.Headers {
		if strings.EqualFold(k, name) && strings.TrimSpace(v) != "" {
			return true
		}
	}
	for k, vs := range req.MultiValueHeaders {
		for _, v := range vs {
			if strings.EqualFold(k, name) && strings.TrimSpace(v) != "" {
				return true
			}
		}
	}
	return false
}

// body checks a request body in the order of the contract (413, 415, 400)
// and returns its members, not yet checked against any schema. A body must
// be JSON in UTF-8 with no content coding (gzip and the like).
func body(req events.APIGatewayProxyRequest) (members, error) { return bodyUpTo(req, MaxBody) }

// bodyUpTo is body with a larger limit, for the operations that take one.
func bodyUpTo(req events.APIGatewayProxyRequest, limit int) (members, error) {
	raw, err := rawBody(req, limit)
	if err != nil {
		return nil, err
	}
	return parseObject(raw)
}

// rawBody checks a request body's size and headers (413, 415) and returns
// its bytes, not yet parsed.
func rawBody(req events.APIGatewayProxyRequest, limit int) ([]byte, error) {
	raw := []byte(req.Body)
	if req.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(req.Body)
		if err != nil {
			return nil, failf(400, "the body is not valid base64")
		}
		raw = b
	}
	if len(raw) > limit {
		return nil, failf(413, "the body is %d bytes; at most %d are accepted", len(raw), limit)
	}
	if hasHeader(req, "Content-Encoding") {
		return nil, &httpError{status: 415, detail: "send the body without Content-Encoding: no content coding is accepted",
			headers: map[string]string{"Accept-Encoding": "identity"}}
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		ct := header(req, "Content-Type")
		mt, params, err := mime.ParseMediaType(ct)
		if ct == "" || err != nil || mt != "application/json" {
			return nil, failf(415, "send the body with Content-Type: application/json")
		}
		if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
			return nil, failf(415, "send the body in UTF-8; charset %q is not accepted", cs)
		}
	}
	return raw, nil
}

// parseObject accepts exactly one JSON object of valid UTF-8 with no
// repeated member names and at most maxDepth levels of nesting.
func parseObject(raw []byte) (members, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, failf(400, "the body is empty; send a JSON object")
	}
	if !utf8.Valid(raw) {
		return nil, failf(400, "the body is not valid UTF-8")
	}
	if err := checkJSON(raw); err != nil {
		return nil, failf(400, "the body is not valid JSON: %v", err)
	}
	if at, ok := loneSurrogate(raw); ok {
		return nil, failf(400, "the body is not I-JSON (RFC 7493): the \\u escape at byte %d is a lone surrogate", at)
	}
	if bytes.TrimSpace(raw)[0] != '{' {
		return nil, failf(400, "the body must be a JSON object")
	}
	var m members
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, failf(400, "the body is not valid JSON: %v", err)
	}
	return m, nil
}

// jsonFrame is one open object or array while checkJSON walks a body.
type jsonFrame struct {
	object  bool
	keys    map[string]bool
	wantKey bool // the next token of an object is a member name
}

// checkJSON walks the tokens of one JSON value, rejecting repeated member
// names, deep nesting and trailing data.
func checkJSON(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []*jsonFrame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) > 0 {
				return errors.New("unexpected end of input")
			}
			return nil
		}
		if err != nil {
			return err
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				if stack[n-1].keys[k] {
					return fmt.Errorf("the member %q appears more than once", k)
				}
				stack[n-1].keys[k] = true
				stack[n-1].wantKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= maxDepth {
				return fmt.Errorf("nested deeper than %d levels", maxDepth)
			}
			stack = append(stack, &jsonFrame{object: tok == json.Delim('{'), keys: map[string]bool{}, wantKey: true})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
		if len(stack) == 0 && dec.More() {
			return errors.New("data after the top-level value")
		}
	}
}

// loneSurrogate finds a \u escape in a string of raw, which must be valid
// JSON, that is half of a UTF-16 surrogate pair without its other half, and
// returns its byte offset. encoding/json would quietly decode it as U+FFFD,
// so two different names could become one.
func loneSurrogate(raw []byte) (int, bool) {
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\':
			start := i
			i++
			if raw[i] != 'u' {
				continue
			}
			r := hex4(raw[i+1 : i+5])
			i += 4
			if !utf16.IsSurrogate(r) {
				continue
			}
			// A high surrogate followed at once by a low one is a pair.
			if r < 0xDC00 && i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' &&
				utf16.DecodeRune(r, hex4(raw[i+3:i+7])) != utf8.RuneError {
				i += 6
				continue
			}
			return start, true
		}
	}
	return 0, false
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) rune {
	n, err := strconv.ParseUint(string(b), 16, 16)
	if err != nil {
		return utf8.RuneError
	}
	return rune(n)
}

// PathID reads a path id: [1-9][0-9]* within 1 to 2^63-1, or a 422.
func PathID(req events.APIGatewayProxyRequest, name string) (int64, error) {
	s := req.PathParameters[name]
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 || s[0] == '0' || s[0] == '+' {
		return 0, &scangate.Error{Kind: scangate.KindInvalid, Detail: fmt.Sprintf("the path id %s must be a positive integer below 2^63", name),
			Fields: []scangate.FieldError{{Pointer: "/" + name, Detail: "must be a positive integer"}}}
	}
	return id, nil
}
