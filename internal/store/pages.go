package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// A listing reads one page with one Query of one partition, in the order
// of its sort key, and hands back the key it stopped after for the next
// page's cursor (the API seals cursors; see internal/page).

// pageQuery is a listing's query: a partition of the table or of an
// index, an optional sort-key range, an optional filter.
type pageQuery struct {
	index  string // "" for the table
	pk, sk string // the key attributes the query runs on
	value  string // the partition
	prefix string // sort keys begin with it, when set
	from   string // sort keys at least this, when set
	to     string // sort keys at most this, when set
	newest bool   // read backwards (newest first)
	filter string // a filter expression, with its values in values
	values item
	strong bool // strongly consistent (the table only)
}

// keyAttrs are the attributes of a page key: the table's and the index's.
func (q pageQuery) keyAttrs() []string {
	if q.index == "" {
		return []string{aPK, aSK}
	}
	return []string{aPK, aSK, q.pk, q.sk}
}

// Page is one page of a listing.
type Page struct {
	Items []item
	Next  map[string]string // where the next page starts; nil at the end
}

// errBadCursor is the error of a key that does not belong to the listing.
func errBadCursor() error {
	return &scangate.Error{Kind: scangate.KindInvalid, Detail: "the cursor was not issued by this listing",
		Fields: []scangate.FieldError{{Parameter: "cursor", Detail: "was not issued by this listing"}}}
}

// queryPage reads up to limit items after the key after (nil: from the
// start). The key must lie in the query's partition and range, so a
// cursor can never make it read outside the listing.
func (s *Store) queryPage(ctx context.Context, op string, q pageQuery, limit int, after map[string]string) (Page, error) {
	start, err := q.startKey(after)
	if err != nil {
		return Page{}, err
	}
	cond := ref(q.pk) + " = :pk"
	vals := item{":pk": str(q.value)}
	switch {
	case q.prefix != "":
		cond += " AND begins_with(" + ref(q.sk) + ", :prefix)"
		vals[":prefix"] = str(q.prefix)
	case q.from != "" && q.to != "":
		cond += " AND " + ref(q.sk) + " BETWEEN :from AND :to"
		vals[":from"], vals[":to"] = str(q.from), str(q.to)
	}
	in := &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeValues: merge(vals, q.values),
		ExclusiveStartKey:         start,
		Limit:                     aws.Int32(int32(limit + 1)),
		ScanIndexForward:          aws.Bool(!q.newest),
	}
	if q.index != "" {
		in.IndexName = aws.String(q.index)
	} else if q.strong {
		in.ConsistentRead = aws.Bool(true)
	}
	if q.filter != "" {
		in.FilterExpression = aws.String(q.filter)
	}
	in.TableName = &s.table
	in.ExpressionAttributeNames = namesOf(in.KeyConditionExpression, in.FilterExpression)
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return Page{}, dbErr(op, err)
	}
	p := Page{Items: out.Items}
	switch {
	case len(p.Items) > limit: // one more than asked: continue after the last one kept
		p.Items = p.Items[:limit]
		p.Next = q.pageKey(p.Items[limit-1])
	case out.LastEvaluatedKey != nil: // the filter left fewer than asked
		p.Next = q.pageKey(out.LastEvaluatedKey)
	}
	return p, nil
}

// startKey checks that a page key belongs to the query and makes it the
// query's start.
func (q pageQuery) startKey(after map[string]string) (item, error) {
	if after == nil {
		return nil, nil
	}
	attrs := q.keyAttrs()
	if len(after) != len(attrs) || after[q.pk] != q.value {
		return nil, errBadCursor()
	}
	sk := after[q.sk]
	if q.prefix != "" && len(sk) < len(q.prefix) || q.prefix != "" && sk[:len(q.prefix)] != q.prefix ||
		q.from != "" && sk < q.from || q.to != "" && sk > q.to {
		return nil, errBadCursor()
	}
	start := item{}
	for _, a := range attrs {
		v, ok := after[a]
		if !ok {
			return nil, errBadCursor()
		}
		start[a] = str(v)
	}
	return start, nil
}

// pageOf is a page read by q as the listing's items, each converted by
// conv, with where the listing goes on after each.
func pageOf[T any](q pageQuery, p Page, conv func(item) T) scangate.Page[T] {
	out := scangate.Page[T]{Items: make([]T, 0, len(p.Items)), After: make([]map[string]string, 0, len(p.Items)), Next: p.Next}
	for _, it := range p.Items {
		out.Items = append(out.Items, conv(it))
		out.After = append(out.After, q.pageKey(it))
	}
	return out
}

// pageKey is the key of an item as a page key.
func (q pageQuery) pageKey(it map[string]types.AttributeValue) map[string]string {
	k := map[string]string{}
	for _, a := range q.keyAttrs() {
		k[a] = getS(it, a)
	}
	return k
}
