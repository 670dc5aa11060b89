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
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/pkg/scangate"
)

// MaxBody is the largest request body accepted: 256 KiB.
const MaxBody = 256 << 10

// maxDepth bounds the nesting of a JSON body.
const maxDepth = 32

// httpError is an error the adapter answers with its own status.
type httpError struct {
	status int
	detail string
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

// body checks a request body in the order of the contract (413, 415, 400)
// and returns its members, not yet checked against any schema.
func body(req events.APIGatewayProxyRequest) (members, error) {
	raw := []byte(req.Body)
	if req.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(req.Body)
		if err != nil {
			return nil, failf(400, "the body is not valid base64")
		}
		raw = b
	}
	if len(raw) > MaxBody {
		return nil, failf(413, "the body is %d bytes; at most %d are accepted", len(raw), MaxBody)
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		ct := header(req, "Content-Type")
		mt, _, err := mime.ParseMediaType(ct)
		if ct == "" || err != nil || mt != "application/json" {
			return nil, failf(415, "send the body with Content-Type: application/json")
		}
	}
	return parseObject(raw)
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
