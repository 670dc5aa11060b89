package scangate

import (
	"bytes"
	"encoding/json"
)

// PlainJSON is v's JSON as json.Marshal makes it, but with <, > and &
// left as they are: json.Marshal writes each as a six-byte escape
// (\u003c), so text of those characters grows sixfold, and what the store
// keeps of a request (a scan's other_details, an upload's envelope, an
// event's data) must stay within the bounds checked on the request.
func PlainJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
