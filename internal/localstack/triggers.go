package localstack

import (
	"context"
	"fmt"

	"github.com/scangate/scangate/internal/localstack/gateway"
	"github.com/scangate/scangate/internal/queue/deliverylane"
)

// openStreams makes a stream for each DynamoDB event of the template.
func (s *Stack) openStreams(t *gateway.Template) error {
	s.streams = map[string]*Stream{}
	for _, ev := range t.StreamEvents {
		st, err := newStream(ev.Function, ev.Filters)
		if err != nil {
			return err
		}
		st.batch = ev.BatchSize
		s.streams[ev.Function] = st
	}
	return nil
}

// openQueues makes every queue of the template (consumed or not), the
// delivery lanes among them, and the event bus.
func (s *Stack) openQueues(t *gateway.Template, o Options) {
	s.queues = map[string]*Queue{}
	for id := range t.Queues {
		s.queues[id] = newQueue(id)
		if o.Now != nil {
			s.queues[id].now = o.Now
		}
	}
	for id, q := range t.Queues {
		if q.DeadLetter != "" {
			s.queues[id].DeadLetter, s.queues[id].MaxReceive = s.queues[q.DeadLetter], q.MaxReceive
		}
	}
	s.lanes = &Lanes{queues: map[deliverylane.Lane]*Queue{}}
	for ln, id := range laneQueues {
		if q := s.queues[id]; q != nil {
			s.lanes.queues[ln] = q
		}
	}
	s.bus = &Bus{}
}

// startTriggers starts, until Close, what invokes the functions that API
// Gateway does not: a notifier for each S3 event, a consumer for each SQS
// event (every queue of the template exists, consumed or not) and each
// DynamoDB stream event. The schedules run with RunSchedules.
func (s *Stack) startTriggers(t *gateway.Template, o Options) error {
	run, stop := context.WithCancel(context.Background())
	s.stopTriggers = stop
	s.startNotifiers(run, t, o)
	redeliver := o.RedeliverAfter
	if redeliver <= 0 {
		redeliver = DefaultRedeliverAfter
	}
	for _, ev := range t.QueueEvents {
		q := s.queues[ev.Queue]
		if q == nil {
			return fmt.Errorf("%s: an SQS event of a queue the template does not define (%s)", ev.Function, ev.Queue)
		}
		q.consumer, q.batch, q.concurrency, q.retry, q.log = s.invoker(ev.Function), ev.BatchSize, ev.Concurrency, redeliver, o.Log
		s.triggers.Go(func() { q.run(run, &s.triggers) })
	}
	for _, st := range s.streams {
		st.consumer, st.retry, st.log = s.invoker(st.Function), redeliver, o.Log
		s.triggers.Go(func() { st.run(run) })
	}
	return nil
}

// invoker invokes a function of the stack by logical id.
func (s *Stack) invoker(function string) func(context.Context, []byte) ([]byte, error) {
	return func(ctx context.Context, event []byte) ([]byte, error) { return s.Invoke(ctx, function, event) }
}
