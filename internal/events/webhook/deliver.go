package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/scangate/scangate/internal/egress"
)

// Timeout bounds one attempt, from dialling to the end of the answer.
const Timeout = 10 * time.Second

// MaxResponse is how much of a receiver's answer is kept (1 KiB).
const MaxResponse = 1024

// drainLimit is how much more of an answer is read, and dropped, so that
// the connection can be reused; a longer answer closes it.
const drainLimit = 64 << 10

// UserAgent names scangate to receivers.
const UserAgent = "scangate-webhooks/1"

// Outcome is what became of an attempt.
type Outcome string

// The outcomes of an attempt.
const (
	// Delivered: the receiver answered 2xx.
	Delivered Outcome = "delivered"
	// Gone: the receiver answered 410; the subscription is to be disabled
	// and the delivery not retried.
	Gone Outcome = "gone"
	// Retry: any other answer (3xx included: redirects are not followed),
	// a timeout, a refused connection or a refused address; Backoff says
	// when.
	Retry Outcome = "retry"
)

// Delivery is one event for one subscription.
type Delivery struct {
	URL    string
	ID     string // the event's id: the webhook-id header, the same on every attempt
	Body   []byte // the event's body (Event.Body)
	Signer *Signer
}

// Result is the record of one attempt, as the delivery log shows it.
type Result struct {
	Outcome    Outcome
	StatusCode int           // the receiver's status; 0 when it gave none
	Response   string        // at most MaxResponse bytes of its answer, valid UTF-8
	Duration   time.Duration // from the start of the attempt to the end of the answer read
	Error      string        // why the attempt failed; "" when delivered. Never holds the URL
}

// Sender makes delivery attempts.
type Sender struct {
	Policy egress.Policy    // checks each URL before its attempt
	Client *http.Client     // dials through Policy (Policy.Client(Timeout))
	Now    func() time.Time // the webhook-timestamp of an attempt
}

// NewSender returns a sender whose client follows the policy.
func NewSender(p egress.Policy) *Sender {
	return &Sender{Policy: p, Client: p.Client(Timeout), Now: time.Now}
}

// Send makes one attempt: it signs the body with the attempt's timestamp,
// POSTs it and classifies the answer. It returns an error only when the
// delivery itself is wrong (no signer); every failure of the receiver's is
// in the Result.
func (s *Sender) Send(ctx context.Context, d Delivery) (Result, error) {
	if d.Signer == nil || d.ID == "" {
		return Result{}, errors.New("a delivery needs an id and a signer")
	}
	if _, err := s.Policy.CheckURL(d.URL); err != nil {
		return Result{Outcome: Retry, Error: "refused: " + err.Error()}, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return Result{Outcome: Retry, Error: "refused: the URL cannot be requested"}, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	if err := d.Signer.Sign(req.Header, d.ID, s.Now(), d.Body); err != nil {
		return Result{}, err
	}
	start := time.Now()
	resp, err := s.Client.Do(req)
	if err != nil {
		return Result{Outcome: Retry, Duration: time.Since(start), Error: describe(err)}, nil
	}
	defer func() { _ = resp.Body.Close() }()
	kept, readErr := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	if readErr == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	}
	r := Result{StatusCode: resp.StatusCode, Response: text(kept), Duration: time.Since(start)}
	r.Outcome, r.Error = classify(resp.StatusCode)
	return r, nil
}

// classify maps a receiver's status to an outcome and an error.
func classify(status int) (Outcome, string) {
	switch {
	case status >= 200 && status < 300:
		return Delivered, ""
	case status == http.StatusGone:
		return Gone, "the receiver answered 410 Gone"
	case status >= 300 && status < 400:
		return Retry, fmt.Sprintf("the receiver answered %d; redirects are not followed", status)
	}
	return Retry, fmt.Sprintf("the receiver answered %d", status)
}

// describe says why an attempt got no answer, without the URL (which may
// carry a token of the receiver's).
func describe(err error) string {
	var refusal *egress.RefusedError
	var dns *net.DNSError
	var netErr net.Error
	switch {
	case errors.As(err, &refusal):
		return "refused: " + refusal.Reason
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		return "timeout: the receiver did not answer in time"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "cannot resolve " + dns.Name + ": " + dns.Err
	}
	if inner := errors.Unwrap(err); inner != nil {
		return inner.Error() // a *url.Error's cause, without its URL
	}
	return err.Error()
}

// text is up to MaxResponse bytes of an answer as valid UTF-8: a rune cut
// at the end is dropped, invalid bytes become '?'.
func text(b []byte) string {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return strings.ToValidUTF8(string(b), "?")
}
