package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/page"
	"github.com/scangate/scangate/internal/scangate"
)

// What every listing shares (docs/API.md, Reading): its query parameters,
// read against the ones it takes; limit and cursor; and its answer,
// {"items","next_cursor"} with a Link header to the next page that repeats
// the filters.

// query reads the query string parameters of a request. Each read marks a
// parameter known and keeps its value for the listing's filters; done
// reports the parameters nobody read.
type query struct {
	values  map[string][]string
	filters url.Values // the filters read, as sent
	known   []string   // the parameters read, sent or not
	errs    []scangate.FieldError
}

func readQuery(req events.APIGatewayProxyRequest) *query {
	q := &query{values: req.MultiValueQueryStringParameters, filters: url.Values{}}
	if q.values == nil {
		q.values = map[string][]string{}
		for k, v := range req.QueryStringParameters {
			q.values[k] = []string{v}
		}
	}
	return q
}

func (q *query) bad(name, format string, args ...any) {
	q.errs = append(q.errs, scangate.FieldError{Parameter: name, Detail: fmt.Sprintf(format, args...)})
}

// raw returns a parameter's value, if it was sent once; sent twice is an
// error, since the two might disagree.
func (q *query) raw(name string) (string, bool) {
	q.known = append(q.known, name)
	vs, ok := q.values[name]
	delete(q.values, name)
	switch {
	case !ok:
		return "", false
	case len(vs) != 1:
		q.bad(name, "may be given once")
		return "", false
	}
	return vs[0], true
}

// filter reads a filter and keeps it for the listing.
func (q *query) filter(name string, check func(string) error) (string, bool) {
	v, ok := q.raw(name)
	if !ok {
		return "", false
	}
	if err := check(v); err != nil {
		q.bad(name, "%s", err.Error())
		return "", false
	}
	q.filters.Set(name, v)
	return v, true
}

// boolean reads a filter of true or false; nil when absent or wrong.
func (q *query) boolean(name string) *bool {
	v, ok := q.filter(name, oneOf("true", "false"))
	if !ok {
		return nil
	}
	b := v == "true"
	return &b
}

// enum reads a filter that must be one of values; "" when absent or wrong.
func (q *query) enum(name string, values []string) string {
	v, _ := q.filter(name, oneOf(values...))
	return v
}

// id reads a filter that is an id: a positive integer below 2^63 written
// without sign or leading zero, as path ids are.
func (q *query) id(name string) int64 {
	v, ok := q.filter(name, func(s string) error {
		if _, ok := parseID(s); !ok {
			return fmt.Errorf("must be a positive integer below 2^63")
		}
		return nil
	})
	if !ok {
		return 0
	}
	id, _ := parseID(v)
	return id
}

// text reads a filter that is a name: 1 to max characters, no control or
// format characters (it becomes part of a key).
func (q *query) text(name string, maxLen int) string {
	v, _ := q.filter(name, func(s string) error {
		if n := len([]rune(s)); n < 1 || n > maxLen {
			return fmt.Errorf("must be 1 to %d characters", maxLen)
		}
		if _, _, hidden := scangate.Hidden(s); hidden || !utf8.ValidString(s) {
			return fmt.Errorf("must be UTF-8 without control or format characters")
		}
		return nil
	})
	return v
}

// unknown reports every parameter that no read asked for, each with the
// names of the parameters the listing takes.
func (q *query) unknown() {
	if len(q.values) == 0 {
		return
	}
	accepted := slices.Sorted(slices.Values(q.known))
	accepted = slices.Compact(accepted)
	for name := range q.values {
		q.errs = append(q.errs, scangate.FieldError{Parameter: name, Detail: "is not a parameter of this listing", Accepted: accepted})
	}
}

func oneOf(values ...string) func(string) error {
	return func(s string) error {
		if !slices.Contains(values, s) {
			return fmt.Errorf("must be one of %s", strings.Join(values, ", "))
		}
		return nil
	}
}

func parseID(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id >= 1 && s[0] != '0' && s[0] != '+'
}

// err returns the problems found so far as one 422, or nil.
func (q *query) err() error {
	if len(q.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(q.errs, func(a, b scangate.FieldError) int { return strings.Compare(a.Parameter, b.Parameter) })
	return &scangate.Error{Kind: scangate.KindInvalid, Detail: "the query parameters are not valid", Fields: q.errs}
}

// Cursors reads and answers the pages of listings, sealing their cursors
// with one key (internal/page): the cursor key, which only the listing functions
// may read (from Secrets Manager, at their first page: NewLazyCursors).
type Cursors struct {
	key *cursorKey // nil: a zero Cursors fails every request (500)
}

// cursorKey is the codec of Cursors, made from its key once it is known.
type cursorKey struct {
	fetch func(context.Context) ([]byte, error)

	mu    sync.Mutex
	codec *page.Codec
}

// NewCursors seals cursors with key; it fails without a usable key (at
// least 32 bytes), and a listing function then refuses to start.
func NewCursors(key []byte) (Cursors, error) {
	codec, err := page.NewCodec(key)
	if err != nil {
		return Cursors{}, fmt.Errorf("cursor key: %w", err)
	}
	return Cursors{key: &cursorKey{codec: &codec}}, nil
}

// NewLazyCursors seals cursors with the key fetch returns, fetched when the
// first page is read and then kept; a fetch that fails answers that
// request 500 and is tried again at the next.
func NewLazyCursors(fetch func(context.Context) ([]byte, error)) Cursors {
	return Cursors{key: &cursorKey{fetch: fetch}}
}

// cursorFetchTimeout bounds the fetch of a lazy cursor key.
const cursorFetchTimeout = 10 * time.Second

// get returns the codec, making it the first time.
func (c *cursorKey) get() (page.Codec, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.codec != nil {
		return *c.codec, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cursorFetchTimeout)
	defer cancel()
	key, err := c.fetch(ctx)
	if err != nil {
		return page.Codec{}, fmt.Errorf("cursor key: %w", err)
	}
	codec, err := page.NewCodec(key)
	if err != nil {
		return page.Codec{}, fmt.Errorf("cursor key: %w", err)
	}
	c.codec = &codec
	return codec, nil
}

// pageRequest is a request for one page of a listing.
type pageRequest struct {
	listing page.Listing
	filters url.Values
	limit   int
	after   map[string]string // where the page starts; nil for the first
	codec   page.Codec        // seals the next page's cursor
}

// read reads limit and cursor, after the listing's filters, and reports
// every bad parameter at once. The cursor must have been issued by the
// listing name with these ids (its path ids) and filters.
func (pg Cursors) read(q *query, name string, ids map[string]string) (pageRequest, error) {
	if pg.key == nil {
		return pageRequest{}, errors.New("listing without a cursor key")
	}
	codec, err := pg.key.get()
	if err != nil {
		return pageRequest{}, err
	}
	r := pageRequest{filters: q.filters, limit: page.DefaultLimit, codec: codec}
	if v, ok := q.raw("limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > page.MaxLimit || v != strconv.Itoa(n) {
			q.bad("limit", "must be an integer from 1 to %d", page.MaxLimit)
		}
		r.limit = n
	}
	cursor, hasCursor := q.raw("cursor")
	q.unknown()
	if err := q.err(); err != nil {
		return pageRequest{}, err
	}
	r.listing = page.Listing{Name: name, Filters: map[string]string{}}
	for k, v := range ids {
		r.listing.Filters["path:"+k] = v
	}
	for k := range q.filters {
		r.listing.Filters[k] = q.filters.Get(k)
	}
	if hasCursor {
		after, err := r.codec.Open(r.listing, cursor)
		if err != nil {
			q.bad("cursor", "was not issued by this listing")
			return pageRequest{}, q.err()
		}
		r.after = after
	}
	return r, nil
}

// pageBody is a page of a listing.
type pageBody struct {
	Items      any     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// reply answers a page: its items (a slice, never nil), and when there is
// a next page its cursor and a Link to it. The link is the path the
// request was sent to (as location builds it: behind a stage or a base
// path, RequestContext.Path keeps them), with the filters, the limit and
// the cursor; fallback stands for that path in events without one.
func (pg Cursors) reply(req events.APIGatewayProxyRequest, fallback string, r pageRequest, items any, next map[string]string) Reply {
	reply := Reply{Status: 200, Body: pageBody{Items: items}}
	if next == nil {
		return reply
	}
	cursor := r.codec.Seal(r.listing, next)
	reply.Body = pageBody{Items: items, NextCursor: &cursor}
	path := req.RequestContext.Path
	if path == "" {
		path = cmp.Or(req.Path, fallback)
	}
	v := url.Values{}
	for k := range r.filters {
		v.Set(k, r.filters.Get(k))
	}
	v.Set("limit", strconv.Itoa(r.limit))
	v.Set("cursor", cursor)
	reply.Headers = map[string]string{"Link": "<" + path + "?" + v.Encode() + `>; rel="next"`}
	return reply
}

// maxPageBytes bounds what a page's items add to its answer as Lambda
// carries it. Lambda answers at most 6 MB, counted on the JSON of the whole
// proxy answer, whose body is a JSON string: each byte the body holds
// counts as JSON escapes it again (a quote or backslash twice, <, >, &, a
// control character or an escape sequence up to seven times). 5 MiB
// leaves room for the rest of the answer: its members, headers and
// cursor.
const maxPageBytes = 5 << 20

// replyPage answers a page of a listing, each item converted by conv
// (reply): its items while they fit under maxPageBytes, at least one (no
// item comes near it: the largest, a scan with 64 KiB of other_details,
// takes less than 500 KB), and the cursor that goes on exactly after the
// last one answered.
func replyPage[T, B any](pg Cursors, req events.APIGatewayProxyRequest, fallback string, r pageRequest, p scangate.Page[T], conv func(T) B) (Reply, error) {
	items := make([]json.RawMessage, 0, len(p.Items))
	size := 0
	for i, it := range p.Items {
		b, err := marshal(conv(it))
		if err != nil {
			return Reply{}, fmt.Errorf("encode an item of a page: %w", err)
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		n := lambdaSize(b)
		if i > 0 && size+n > maxPageBytes {
			return pg.reply(req, fallback, r, items, p.After[i-1]), nil
		}
		size += n
		items = append(items, b)
	}
	return pg.reply(req, fallback, r, items, p.Next), nil
}

// lambdaSize is how many bytes JSON text b, and the comma after it, take
// in Lambda's answer, where the body is a JSON string that the runtime
// (aws-lambda-go) encodes with encoding/json.
func lambdaSize(b []byte) int { return escapedLen(b) + 1 }

// escapedLen is the length of p inside a JSON string as encoding/json
// writes it (Marshal, Lambda's response), without allocating: quote,
// backslash and \b \f \n \r \t take 2 bytes; the other control
// characters, <, >, &, U+2028, U+2029 and each byte of invalid UTF-8
// (\ufffd) 6. Measured a write at a time, a character split between two
// writes counts as invalid bytes: more than it takes, never less.
func escapedLen(p []byte) int {
	n := 0
	for i := 0; i < len(p); {
		if c := p[i]; c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}
