package api

import "github.com/scangate/scangate/internal/scangate"

// marshal encodes v as JSON without escaping <, > and &, and a newline.
func marshal(v any) ([]byte, error) {
	b, err := scangate.PlainJSON(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
