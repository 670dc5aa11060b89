package localstack

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/scangate/scangate/internal/api"
	"github.com/scangate/scangate/internal/bucket"
	"github.com/scangate/scangate/internal/config"
	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/events/dispatch"
	"github.com/scangate/scangate/internal/localstack/gateway"
	"github.com/scangate/scangate/internal/ops"
	"github.com/scangate/scangate/internal/queue/deliverylane"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/seal"
	"github.com/scangate/scangate/internal/store"
)

// deps is what the local stack gives one function (ops.Deps): every
// dependency, its own store and bucket when Options asks for them.
type deps struct {
	store   *store.Store
	log     *slog.Logger
	now     func() time.Time
	config  config.Config
	cursors api.Cursors
	bucket  *bucket.Bucket
	lanes   deliverylane.Queues
	bus     dispatch.Bus
	box     *seal.Box
	egress  egress.Policy
	work    work.Sender // nil when the template has no work queue
}

func (d deps) Store() *store.Store         { return d.store }
func (d deps) Log() *slog.Logger           { return d.log }
func (d deps) Now() time.Time              { return d.now() }
func (d deps) Config() config.Config       { return d.config }
func (d deps) Cursors() api.Cursors        { return d.cursors }
func (d deps) Bucket() *bucket.Bucket      { return d.bucket }
func (d deps) Queues() deliverylane.Queues { return d.lanes }
func (d deps) Bus() dispatch.Bus           { return d.bus }
func (d deps) Box() *seal.Box              { return d.box }
func (d deps) Egress() egress.Policy       { return d.egress }
func (d deps) WorkQueue() work.Sender      { return d.work }

// S3 is the client of the local S3-compatible server, the uploads
// bucket's.
func (d deps) S3() *s3.Client { return d.bucket.Client() }

// queueSender sends to a queue of the stack, as SQS would (work.Sender):
// the queue is looked up when sending, since the stack's queues start
// after its functions are built.
type queueSender struct {
	stack    *Stack
	queue    string // its logical id
	function string // the sender's logical id
	observe  func(function, action string)
}

func (q queueSender) Send(_ context.Context, bodies []string) error {
	to := q.stack.Queue(q.queue)
	if to == nil {
		return fmt.Errorf("no queue %s", q.queue)
	}
	if q.observe != nil {
		q.observe(q.function, "sqs:SendMessage@"+q.queue)
	}
	for _, b := range bodies {
		to.Send(b)
	}
	return nil
}

// workSender is function's sender of the queue the template's run-work
// function reads, nil when it has none.
func (s *Stack) workSender(t *gateway.Template, function string, observe func(function, action string)) work.Sender {
	for _, ev := range t.QueueEvents {
		if ev.Function == ops.LogicalID("run-work") {
			return queueSender{stack: s, queue: ev.Queue, function: function, observe: observe}
		}
	}
	return nil
}
