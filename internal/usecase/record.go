package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/scangate/scangate/internal/sarif"
	"github.com/scangate/scangate/internal/scangate"
)

// LogStore is what recording a log writes: the store's RecordScansFrom,
// RecordScans with the findings given part by part (fill hands each part
// to add, i the scan's index in nss, which writes it before it returns).
type LogStore interface {
	RecordScansFrom(ctx context.Context, nss []scangate.NewScan, who scangate.Who, now time.Time, once string,
		fill func(add func(i int, fs []scangate.Finding) error) error) (scans []scangate.Scan, pr scangate.PR, recorded bool, err error)
}

// Recorded is what recording a log did: the scans it recorded (as their
// routes show them) and the log's counts.
type Recorded struct {
	Scans              []scangate.ScanView
	Results            int
	Recorded           int
	SuppressedInSource int
	Skipped            int
}

// Recording is how a read log is recorded: by whom (its audit entries),
// when, and at most once per key Once (an S3 event's redeliveries: "" for
// none). Check, when set, runs once the log is read whole and before
// anything is written (the ingest checks its upload's creator there).
type Recording struct {
	Who   scangate.Who
	At    time.Time
	Once  string
	Check func(context.Context) error
}

// A LogReader reads a log, handing each of its runs to h as it is read
// (with every run's category the envelope's, when it names one), and
// returns the envelope of its scans and the log's counts; its errors are
// domain errors (SARIFError). RecordLog reads it twice.
type LogReader func(h sarif.Handler) (scangate.NewScan, sarif.Counts, error)

// errLogChanged reports a log that read otherwise the second time (an
// object replaced between the reads): nothing is recorded, and a retry
// reads it again.
var errLogChanged = errors.New("the SARIF log read differently the second time")

// RecordLog records the scans of a log in its envelope, exactly as POST
// /pr/scan records a scan: one scan per (scan type, category), for every
// run of the log (a run that found nothing records a completed scan with
// no finding: a clean re-scan clears its category), with the tools of
// each scan in its other_details.tools. A run's category is its own
// unless the envelope names one for every run.
//
// It reads the log twice, keeping no finding: first whole, to refuse it
// (too large, malformed, invalid) before anything is written and to learn its scans and
// their tools; then to write each run's findings as soon as the run is
// read (store's RecordScansFrom), while the next run is read. The scans
// and the PR record are committed after the last run, in one commit.
func RecordLog(ctx context.Context, st LogStore, read LogReader, r Recording) (Recorded, error) {
	plan := &logPlan{at: map[string]int{}, occ: scangate.NewOccurrences()}
	env, counts, err := read(plan.add)
	out := Recorded{Scans: []scangate.ScanView{}, Results: counts.Results, Skipped: counts.Skipped,
		Recorded: counts.Recorded, SuppressedInSource: counts.SuppressedInSource}
	if err == nil && r.Check != nil {
		err = r.Check(ctx)
	}
	if err != nil {
		return out, err
	}
	nss, err := plan.newScans(env)
	if err != nil {
		return out, err
	}
	plan.occ.Seal()
	recorded, pr, _, err := st.RecordScansFrom(ctx, nss, r.Who, r.At, r.Once, func(add func(int, []scangate.Finding) error) error {
		return plan.record(read, counts, add)
	})
	if err != nil {
		return out, err
	}
	for _, sc := range recorded {
		out.Scans = append(out.Scans, scangate.ViewScan(sc, pr))
	}
	return out, nil
}

// logPlan is what the first read of a log finds: its scans, one per
// (type, category) in the order its runs name them, with their tools.
type logPlan struct {
	scans []planScan
	at    map[string]int // a scan's index, by type#category
	// occ numbers the derived fingerprints of each scan: noted by the
	// first read, suffixed by the second.
	occ *scangate.Occurrences
}

type planScan struct {
	typ      scangate.ScanType
	category string
	tools    []sarif.Tool
}

// add notes the scans of a run (a Handler).
func (p *logPlan) add(run *sarif.Run) error {
	for _, t := range run.Types() {
		k := string(t) + "#" + run.Category
		i, ok := p.at[k]
		if !ok {
			i = len(p.scans)
			p.at[k] = i
			p.scans = append(p.scans, planScan{typ: t, category: run.Category})
		}
		if sc := &p.scans[i]; !slices.Contains(sc.tools, run.Tool) {
			sc.tools = append(sc.tools, run.Tool)
		}
		fs := run.Findings(t)
		for k := range fs {
			p.occ.Note(i, &fs[k])
		}
	}
	return nil
}

// newScans are the plan's scans in the envelope env, without findings.
func (p *logPlan) newScans(env scangate.NewScan) ([]scangate.NewScan, error) {
	nss := make([]scangate.NewScan, len(p.scans))
	for i, sc := range p.scans {
		ns := env
		ns.Type, ns.Category, ns.Findings = sc.typ, sc.category, nil
		var err error
		if ns.OtherDetails, err = withTools(env.OtherDetails, sc.tools); err != nil {
			return nil, err
		}
		nss[i] = ns
	}
	return nss, nil
}

// runsInFlight is how many runs of a log are written at once while the
// next is read: runs of different scans are written to different
// partitions, which DynamoDB takes at once (one partition takes about
// 1,000 writes a second).
const runsInFlight = 4

// record reads the log again and hands each run's findings to add (its
// scan's next part) from runsInFlight goroutines, so that the next run is
// read while runs are written. A run that the first read did not find,
// or counts that differ, fail the recording (errLogChanged).
func (p *logPlan) record(read LogReader, counts sarif.Counts, add func(int, []scangate.Finding) error) error {
	runs := make(chan *sarif.Run)
	stopped := make(chan struct{})
	var mu sync.Mutex
	var werr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if werr == nil {
			werr = err
			close(stopped)
		}
	}
	var wg sync.WaitGroup
	for range runsInFlight {
		wg.Go(func() {
			for run := range runs {
				for _, t := range run.Types() {
					i, ok := p.at[string(t)+"#"+run.Category]
					err := errLogChanged
					if ok {
						fs := run.Findings(t)
						for k := range fs {
							p.occ.Suffix(i, &fs[k])
						}
						err = add(i, fs)
					}
					if err != nil {
						fail(err)
						break
					}
				}
			}
		})
	}
	_, again, err := read(func(run *sarif.Run) error {
		select {
		case runs <- run:
			return nil
		case <-stopped:
			return errLogChanged // the writer's error is returned instead
		}
	})
	close(runs)
	wg.Wait()
	switch {
	case werr != nil:
		return werr
	case err != nil:
		return err
	case again != counts:
		return errLogChanged
	}
	return nil
}

// withTools adds the tools that found a scan's findings to its
// other_details.
func withTools(details json.RawMessage, tools []sarif.Tool) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(details) > 0 {
		if err := json.Unmarshal(details, &obj); err != nil {
			return nil, err
		}
	}
	type tool struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	list := []tool{}
	for _, tl := range tools {
		list = append(list, tool{tl.Name, tl.Version})
	}
	b, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	obj["tools"] = b
	return json.Marshal(obj)
}

// SARIFError gives a reading error of a log its kind: a breached limit
// KindTooLarge, undecodable input KindMalformed, a log that is not SARIF
// 2.1.0 KindInvalid (with the member at fault).
func SARIFError(err error) error {
	if err == nil {
		return nil
	}
	var le *sarif.LimitError
	var ie *sarif.InputError
	var se *sarif.SchemaError
	switch {
	case errors.As(err, &le):
		return &scangate.Error{Kind: scangate.KindTooLarge, Detail: le.Error()}
	case errors.As(err, &ie):
		return &scangate.Error{Kind: scangate.KindMalformed, Detail: ie.Error()}
	case errors.As(err, &se):
		return &scangate.Error{Kind: scangate.KindInvalid, Detail: "the SARIF log is not SARIF 2.1.0 as scangate reads it",
			Fields: []scangate.FieldError{{Pointer: se.Pointer, Detail: se.Detail}}}
	}
	return err
}

// Refused reports whether err refuses the input itself, so that no retry
// changes it: a log too large, malformed or invalid, a creator no longer
// allowed, an object gone, work out of its time, or a recording the store
// refused (invalid, conflicting, not found).
func Refused(err error) bool {
	switch scangate.KindOf(err) {
	case scangate.KindInvalid, scangate.KindConflict, scangate.KindNotFound, scangate.KindTooLarge,
		scangate.KindMalformed, scangate.KindUnauthorized, scangate.KindForbidden, scangate.KindTimedOut:
		return true
	}
	return false
}
