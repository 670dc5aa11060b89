// Package delivery is the deliverer: invoked by the delivery queues with
// the deliveries the dispatcher (internal/events/dispatch) created and queued, it
// makes each attempt — a webhook's POST, or a commit status — records it,
// and schedules the next by the backoff schedule.
//
// Two queues (internal/queue/deliverylane) keep one destination's trouble from delaying
// another's deliveries. A failed attempt's next one waits in the retry
// lane: SQS DelaySeconds when it moves there (at most 15 minutes), then
// ChangeMessageVisibility
// (at most 12 hours, more than the longest wait of the schedule); a
// message that comes up before its delivery is due is hidden again, so
// the delivery item, not the message, says when an attempt is due. After
// the last attempt the delivery is marked failed and its message is sent
// to the dead-letter queue, which raises an alarm.
package delivery
