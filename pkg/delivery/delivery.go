// Package delivery takes events from the outbox to where they go: the
// dispatcher (invoked by the table's stream, filtered to event items)
// puts each event on the event bus and creates one delivery per
// destination — each active webhook that takes its type, and for a
// pr.gate_changed with a commit the integration of the PR's vc_id — and
// queues it; the deliverer (invoked by the delivery queues) makes each
// attempt, records it, and schedules the next by the backoff schedule.
//
// Two queues (pkg/lane) keep one destination's trouble from delaying
// another's deliveries. A failed attempt's next one waits in the retry
// lane: SQS DelaySeconds when it moves there (at most 15 minutes), then
// ChangeMessageVisibility
// (at most 12 hours, more than the longest wait of the schedule); a
// message that comes up before its delivery is due is hidden again, so
// the delivery item, not the message, says when an attempt is due. After
// the last attempt the delivery is marked failed and its message is sent
// to the dead-letter queue, which raises an alarm.
package delivery

import (
	"context"
	"time"
)

// Entry is one event as it is put on the event bus: source scangate,
// detail-type its type, detail its body.
type Entry struct {
	Type   string
	Time   time.Time
	Detail []byte
}

// Bus is the stack's event bus: EventBridge on AWS (pkg/bus), a recorded
// bus locally. Put puts every entry or returns an error.
type Bus interface {
	Put(ctx context.Context, entries []Entry) error
}

// Source is the source of the events scangate puts on the bus.
const Source = "scangate"

// gateData is what the deliveries read of a pr.gate_changed event's data
// (the gate resource of GET /pr/{pr_id}/gate, with the PR's repository and
// the change's sequence): where its commit status goes.
type gateData struct {
	PRID     int64  `json:"pr_id"`
	VcID     int64  `json:"vc_id"`
	RepoName string `json:"repo_name"`
	HeadSHA  string `json:"head_sha"`
	Sequence int64  `json:"sequence"`
}
