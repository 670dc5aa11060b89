package ddbtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Answer is an error response of DynamoDB that a Fault gives in the
// service's place: an HTTP status and a JSON body in DynamoDB's wire form
// ({"__type": "com.amazonaws.dynamodb.v20120810#<Type>", ...}). The SDK
// reads it as it reads a real response, so the error a caller gets, and
// whether and how the SDK retries it, are those of the real failure.
type Answer struct {
	Status int            // HTTP status
	Type   string         // the error's type, such as ThrottlingException
	Fields map[string]any // the body's other members, such as message
}

// InternalServerError is DynamoDB's HTTP 500, which the SDK retries.
func InternalServerError() *Answer {
	return &Answer{Status: http.StatusInternalServerError, Type: "InternalServerError",
		Fields: map[string]any{"message": "injected internal server error"}}
}

// Throttled is DynamoDB's HTTP 400 ThrottlingException, which the SDK
// retries as throttling.
func Throttled() *Answer {
	return &Answer{Status: http.StatusBadRequest, Type: "ThrottlingException",
		Fields: map[string]any{"message": "injected throttling"}}
}

// Canceled is an HTTP 400 TransactionCanceledException with one
// cancellation reason per transaction item, in order ("None" for an item
// that did not fail, "TransactionConflict", "ConditionalCheckFailed"). The
// SDK does not retry it: the code that sent the transaction decides.
func Canceled(codes ...string) *Answer {
	reasons := make([]map[string]string, len(codes))
	for i, c := range codes {
		reasons[i] = map[string]string{"Code": c}
	}
	return &Answer{Status: http.StatusBadRequest, Type: "TransactionCanceledException",
		Fields: map[string]any{"Message": "injected cancellation", "CancellationReasons": reasons}}
}

func (a *Answer) Error() string { return fmt.Sprintf("injected HTTP %d %s", a.Status, a.Type) }

// response builds the HTTP response of the answer, with the request id
// that DynamoDB puts in every response.
func (a *Answer) response(requestID string) *smithyhttp.Response {
	body := map[string]any{"__type": "com.amazonaws.dynamodb.v20120810#" + a.Type}
	for k, v := range a.Fields {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(fmt.Sprintf("ddbtest: answer %s: %v", a.Type, err))
	}
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amzn-Requestid", requestID)
	return &smithyhttp.Response{Response: &http.Response{
		StatusCode:    a.Status,
		Status:        strconv.Itoa(a.Status) + " " + http.StatusText(a.Status),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		ContentLength: int64(len(b)),
		Body:          io.NopCloser(bytes.NewReader(b)),
	}}
}
