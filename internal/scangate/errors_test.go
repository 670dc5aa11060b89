package scangate_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/scangate/scangate/internal/scangate"
)

// TestFieldErrorJSON: an error of a body or of a SARIF log names its
// member by a JSON pointer, also the whole document's ("": a body that is
// not an object, a log that is not SARIF); an error of the query string
// names its parameter and no pointer.
func TestFieldErrorJSON(t *testing.T) {
	for _, c := range []struct {
		in   scangate.FieldError
		want string
	}{
		{scangate.FieldError{Pointer: "", Detail: "must be an object"}, `{"pointer":"","detail":"must be an object"}`},
		{scangate.FieldError{Pointer: "/runs/0", Detail: "x"}, `{"pointer":"/runs/0","detail":"x"}`},
		{scangate.FieldError{Parameter: "limit", Detail: "y"}, `{"parameter":"limit","detail":"y"}`},
		{scangate.FieldError{Pointer: "/x", Detail: "z", Accepted: []string{"a", "b"}}, `{"pointer":"/x","detail":"z","accepted":["a","b"]}`},
		{scangate.FieldError{Parameter: "x", Detail: "z", Accepted: []string{"limit"}}, `{"parameter":"x","detail":"z","accepted":["limit"]}`},
	} {
		b, err := json.Marshal(c.in)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: %s %v; want %s", c.in, b, err, c.want)
		}
		var back scangate.FieldError
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, c.in) {
			t.Errorf("%s reads back as %+v %v", b, back, err)
		}
	}
}
