package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// A recording writes the findings of its scans as they are given, part
// by part (a SARIF log's runs, as they are read), then commits the scans
// and their PR record (commitScans). Until the commit no reader sees the
// findings: listings read a scan's findings only through its scan item,
// re-evaluations skip the findings of a scan that has none, and check
// counts them apart (Report.Unrecorded). A recording that fails before
// its commit deletes what it wrote (abort); one whose process died leaves
// them, uncounted, until DropUnrecorded deletes them.
//
// What it keeps in memory, whatever the number of findings: per scan its
// counters; per allowlist group met, its key and the version its findings
// were judged at (groupSet: about 60 bytes for an advisory id), and the
// rules of the few groups that have any. A part's findings are the caller's and
// are not kept once written.
type recording struct {
	s     *Store
	scans []scangate.NewScan // without findings
	who   scangate.Who
	now   time.Time
	once  string
	done  map[int][]int64 // by commit, the scans of the commits a delivery before recorded (once)
	ids   []int64         // by scan, for the scans to record here
	parts []scanPart      // by scan
	pol   policies
	// w writes the findings of every part.
	w *writer
	// mu guards what parts written at once share: parts, groups, rules.
	mu sync.Mutex
	// groups are the groups met and the versions their findings were
	// judged at; rules the snapshots of those that have rules.
	groups groupSet
	rules  map[groupKey]group
	// committed are the commits this recording made.
	committed map[int]bool
	// base are the scans' baselines (nil: none), class their counts by
	// baseline state (both guarded by mu while parts are written).
	base  []*baseline
	class []classes
	// baseRef and baseSHA are the base the scans were classified by.
	baseRef, baseSHA string
}

// scanPart is what a recording keeps of one scan's findings.
type scanPart struct {
	n   int                // findings written (the next one's index)
	sev scangate.SevCounts // of those, the unsuppressed, per severity
	new scangate.SevCounts // of those, the new ones (all, unclassified)
}

// groupSet is the allowlist groups a recording met, each once, in about
// 45 bytes and its key's: the keys end to end (the type's initial, then
// the name key), the version each was judged at when it is not 0 (most
// groups have no rule and never had one), and an index from the first 16
// bytes of the SHA-256 of a key (two keys of one recording share them
// with a chance of 2^-128 a pair) to its number.
type groupSet struct {
	at    map[[16]byte]int32
	keys  []byte
	start []uint32
	gv    map[int32]int64
}

func newGroupSet() groupSet {
	return groupSet{at: map[[16]byte]int32{}, gv: map[int32]int64{}}
}

func groupID(g groupKey) [16]byte {
	sum := sha256.Sum256([]byte(string(g.typ) + "#" + g.key))
	return [16]byte(sum[:16])
}

func (s *groupSet) len() int { return len(s.start) }

// add notes a group and the version findings of it are judged at. A
// group read again at another version (by two parts at once) is noted as
// judged at mixedVersions, which no group ever has: the check after the
// commit settles its findings.
func (s *groupSet) add(g groupKey, gv int64) {
	id := groupID(g)
	if i, ok := s.at[id]; ok {
		if s.gv[i] != gv {
			s.gv[i] = mixedVersions
		}
		return
	}
	i := int32(len(s.start))
	s.at[id] = i
	s.start = append(s.start, uint32(len(s.keys)))
	s.keys = append(append(s.keys, g.typ[0]), g.key...)
	if gv != 0 {
		s.gv[i] = gv
	}
}

// mixedVersions marks a group whose findings were judged at two versions.
const mixedVersions = -1

// version returns the version a group met was judged at.
func (s *groupSet) version(g groupKey) (int64, bool) {
	i, ok := s.at[groupID(g)]
	return s.gv[i], ok
}

// key returns the i-th group met.
func (s *groupSet) key(i int) groupKey {
	end := uint32(len(s.keys))
	if i+1 < len(s.start) {
		end = s.start[i+1]
	}
	k := s.keys[s.start[i]:end]
	t := scangate.ScanVulnerability
	if k[0] == scangate.ScanSecret[0] {
		t = scangate.ScanSecret
	}
	return groupKey{typ: t, key: string(k[1:])}
}

// abortTime bounds the deletion of what a failed recording wrote (its
// context may have ended: the failure may be its deadline). What it
// leaves is deleted by DropUnrecorded, or stays unrecorded.
const abortTime = 5 * time.Second

// judgeChunk is how many findings of a part are judged (their groups read)
// at once, while the batches of the chunk before are being written.
const judgeChunk = 1000

// RecordScansFrom records scans of one pull request (an upload's, one per
// (type, category)) whose findings fill hands to add, part by part: add(i,
// fs) writes fs as the next findings of scans[i] (scans carry no findings),
// judged by the allowlists as they are, in batches, batchParallel at a
// time: add returns once the writer took the last batch of fs, and the
// writes end before the commit. fill may call add from several goroutines
// at once (parts of different scans are then written at once: they are
// in different partitions), and may drop fs once add returns.
// Then the scans, their audit entries and the PR record are committed in
// one transaction (scansPerCommit scans a transaction), so a reader never
// sees a scan without its findings and one upload is one change of the
// gate.
//
// With a key once (an S3 event, which may be delivered more than once),
// each commit also writes its once key, and a delivery that finds a
// commit's key recorded already records nothing of it (fill is not called
// when every commit is recorded): recorded is false when nothing was
// recorded, and the scans returned are those of the first delivery. Each
// delivery writes its findings under scan ids of its own, and notes them
// under the key before writing (DropUnrecorded).
//
// A failure before the commit deletes the findings written (best effort:
// a process that dies leaves them, uncounted and unseen).
//
// The handshake with concurrent allowlist and policy changes: the
// recording reads the versions of its findings' groups and the gate
// policy before judging, and again after its commit. A change that moved
// a group in between re-evaluates from the index and the RECENT items,
// but skips these scans while they are not committed; so for every group
// whose version moved, the recording settles its own findings against
// the group's new rules (reading them back from its scans' partitions).
// A policy that moved is judged again for the PR. A change that comes
// after the second read finds the findings through the index, or, while
// the index lags, through the RECENT items written with them; a policy
// change re-judges every PR after its commit.
func (s *Store) RecordScansFrom(ctx context.Context, scans []scangate.NewScan, who scangate.Who, now time.Time, once string,
	fill func(add func(i int, fs []scangate.Finding) error) error) ([]scangate.Scan, scangate.PR, bool, error) {
	r, err := s.startRecording(ctx, scans, who, now, once)
	if err != nil {
		return nil, scangate.PR{}, false, err
	}
	if r.pending() {
		r.w = s.newWriter(ctx, "put findings")
		err = fill(func(i int, fs []scangate.Finding) error { return r.add(ctx, i, fs) })
		if err == nil {
			err = r.writeAbsent(ctx)
		}
		if werr := r.w.close(); err == nil {
			err = werr
		}
	}
	var out []scangate.Scan
	var pr scangate.PR
	var recorded bool
	if err == nil {
		out, pr, recorded, err = r.commit(ctx)
	}
	if err != nil {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTime)
		defer cancel()
		if aerr := r.abort(actx); aerr != nil {
			err = fmt.Errorf("%w (the findings it wrote are left unrecorded: %v)", err, aerr)
		}
		return nil, scangate.PR{}, false, err
	}
	return out, pr, recorded, nil
}

// RecordScans records scans of one pull request, their findings given
// whole: RecordScansFrom with one part a scan. Findings without a
// fingerprint get a derived one (scangate.FingerprintFindings).
func (s *Store) RecordScans(ctx context.Context, nss []scangate.NewScan, who scangate.Who, now time.Time, once string) ([]scangate.Scan, scangate.PR, bool, error) {
	scans := make([]scangate.NewScan, len(nss))
	for i, ns := range nss {
		scans[i] = ns
		scans[i].Findings = nil
		scangate.FingerprintFindings(ns.Findings)
	}
	return s.RecordScansFrom(ctx, scans, who, now, once, func(add func(int, []scangate.Finding) error) error {
		for i, ns := range nss {
			if err := add(i, ns.Findings); err != nil {
				return err
			}
		}
		return nil
	})
}

// startRecording reads what a recording starts from: the once keys of its
// commits, and, when some are not recorded, the PR record (which must take
// the scans' pairs: scangate.MaxCategories) and the gate policy; then it
// allocates the ids of the scans to record and notes them under once.
func (s *Store) startRecording(ctx context.Context, scans []scangate.NewScan, who scangate.Who, now time.Time, once string) (*recording, error) {
	if len(scans) == 0 {
		return nil, fmt.Errorf("record scans: none to record")
	}
	r := &recording{s: s, scans: scans, who: who, now: now, once: once, ids: make([]int64, len(scans)),
		parts: make([]scanPart, len(scans)), groups: newGroupSet(), rules: map[groupKey]group{}, committed: map[int]bool{},
		base: make([]*baseline, len(scans)), class: make([]classes, len(scans))}
	if once != "" {
		var err error
		if r.done, err = s.recordedOnce(ctx, onceKeys(once, r.commits())); err != nil {
			return nil, err
		}
	}
	var todo []int
	for i := range scans {
		if !r.recordedBefore(i) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return r, nil
	}
	if err := r.admit(ctx); err != nil {
		return nil, err
	}
	ids, err := s.nextIDs(ctx, "scan", len(todo))
	if err != nil {
		return nil, err
	}
	for k, i := range todo {
		r.ids[i] = ids[k]
	}
	if once != "" {
		err = s.noteWritten(ctx, once, ids, now)
	}
	return r, err
}

func (r *recording) commits() int { return (len(r.scans) + scansPerCommit - 1) / scansPerCommit }

// recordedBefore reports whether scan i's commit was recorded by a
// delivery before.
func (r *recording) recordedBefore(i int) bool {
	_, ok := r.done[i/scansPerCommit]
	return ok
}

// pending reports whether some scan is to be recorded here.
func (r *recording) pending() bool { return len(r.done) < r.commits() }

// admit reads the PR record (a branch analysis's: the branch record)
// and the gate policy at once, and refuses (409) a recording that would
// give the PR (or branch) more (type, category) pairs than it may have,
// before any finding is written; then it reads a PR's scans' baselines.
func (r *recording) admit(ctx context.Context) error {
	first := r.scans[0]
	var rec prRecord
	var b branchRecord
	var recErr error
	var wg sync.WaitGroup
	k := prKey(first.VcID, first.RepoID, first.PR.Number)
	wg.Go(func() {
		if first.IsBranch() {
			b, _, recErr = r.s.branchRecordOf(ctx, first.VcID, first.RepoID, first.Branch)
			return
		}
		var recs map[string]prRecord
		recs, recErr = r.s.prRecords(ctx, []item{k})
		rec = recs[getS(k, aPK)]
	})
	var err error
	r.pol, err = r.s.readPolicies(ctx, []int64{first.RepoID})
	wg.Wait()
	if err == nil {
		err = recErr
	}
	if err != nil {
		return err
	}
	pairs := map[catKey]bool{}
	for c := range rec.cats {
		pairs[c] = true
	}
	for c := range b.cats {
		pairs[c] = true
	}
	for i, ns := range r.scans {
		if !r.recordedBefore(i) {
			pairs[catKeyOf(scangate.Scan{Type: ns.Type, Category: ns.Category})] = true
		}
	}
	if len(pairs) > scangate.MaxCategories {
		what := fmt.Sprintf("pull request %d", rec.ID)
		if first.IsBranch() {
			what = fmt.Sprintf("branch %q", first.Branch)
		}
		return scangate.Errorf(scangate.KindConflict, "%s would have %d (scan type, category) pairs; it may have at most %d",
			what, len(pairs), scangate.MaxCategories)
	}
	if first.IsBranch() {
		return nil
	}
	// The base: the scans' own, else the PR's (of its newest scan that
	// named one).
	baseRef, baseSHA := rec.BaseRef, rec.BaseSHA
	if first.BaseRef != "" {
		baseRef, baseSHA = first.BaseRef, first.BaseSHA
	}
	r.baseRef, r.baseSHA = baseRef, baseSHA
	return r.readBaselines(ctx, baseRef, baseSHA)
}

// writtenKey is the item on which deliveries under the key once note the
// scan ids they write findings under, one item a delivery.
func writtenKey(once string, first int64) item {
	return key(KeyOnce+once, "WRITTEN#"+strconv.FormatInt(first, 10))
}

// noteWritten notes the scan ids a delivery under once is about to write
// findings under, before it writes any, so that a delivery after it can
// delete them if it dies before its commit (DropUnrecorded).
func (s *Store) noteWritten(ctx context.Context, once string, ids []int64, now time.Time) error {
	it := merge(writtenKey(once, ids[0]), item{aScanID: numList(ids), aTTL: num(now.Add(onceTTL).Unix())})
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: it}); err != nil {
		return dbErr("note the scans of a recording", err)
	}
	return nil
}

// DropUnrecorded deletes the findings that deliveries under the key once
// wrote for scans they never committed (a delivery that died, or whose
// deletion failed). It must run only while no other delivery under the
// key is at work (the ingest holds its upload's claim): a delivery's
// scans are not committed until they are.
func (s *Store) DropUnrecorded(ctx context.Context, once string) error {
	items, err := s.queryAll(ctx, "list the scans of recordings", &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :w)"),
		ExpressionAttributeValues: item{":pk": str(KeyOnce + once), ":w": str("WRITTEN#")},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return err
	}
	var ids []int64
	for _, it := range items {
		ids = append(ids, getIDs(it, aScanID)...)
	}
	return s.dropUnrecorded(ctx, ids)
}

// dropUnrecorded deletes the items of the scans among ids that are not
// committed (no scan item): their findings and alias entries. Their
// RECENT items name findings that no longer exist and expire with the
// table's TTL.
func (s *Store) dropUnrecorded(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	keys := make([]item, len(ids))
	for i, id := range ids {
		keys[i] = scanKey(id)
	}
	found, err := s.batchGetAll(ctx, "get scans", keys)
	if err != nil {
		return err
	}
	committed := map[int64]bool{}
	for _, it := range found {
		committed[getN(it, aID)] = true
	}
	w := s.newWriter(ctx, "delete unrecorded findings")
	b := &batcher{w: w}
	for _, id := range ids {
		if committed[id] {
			continue
		}
		err := s.queryPages(ctx, "list unrecorded findings", &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String(ref(aPK) + " = :pk"),
			ExpressionAttributeValues: item{":pk": str(scanPK(id))},
			ProjectionExpression:      aws.String(ref(aPK) + ", " + ref(aSK)),
			ConsistentRead:            aws.Bool(true),
		}, func(page []item) error {
			for _, it := range page {
				if err := b.put(types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(it)}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			_ = w.close()
			return err
		}
	}
	err = b.flush()
	if cerr := w.close(); err == nil {
		err = cerr
	}
	return err
}

// add writes fs as the next findings of scan i, with their alias entries
// and RECENT items: the groups of each chunk of judgeChunk findings read
// (those not met before), the chunk judged and its items handed to the
// writer, which writes them while the next chunk's groups are read.
func (r *recording) add(ctx context.Context, i int, fs []scangate.Finding) error {
	if i < 0 || i >= len(r.scans) {
		return fmt.Errorf("record scans: no scan %d", i)
	}
	if r.recordedBefore(i) || len(fs) == 0 {
		return nil
	}
	r.mu.Lock()
	p := &r.parts[i]
	base := p.n
	p.n += len(fs) // before any write: abort deletes what was written of it
	r.mu.Unlock()
	b := &batcher{w: r.w}
	put := func(it item) error { return b.put(types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}) }
	var err error
	if r.s.recentWindow > 0 {
		err = recentItems(r.ids[i], r.scans[i], base, fs, r.now, put)
	}
	for start := 0; start < len(fs) && err == nil; start += judgeChunk {
		part := fs[start:min(start+judgeChunk, len(fs))]
		rows := recordingRows(r.ids[i], base+start, r.scans[i], part)
		if err = r.judge(ctx, rows); err != nil {
			break
		}
		var states []string
		if !r.scans[i].IsBranch() {
			r.mu.Lock()
			states = r.classify(i, part)
			r.mu.Unlock()
		}
		var sev, newSev scangate.SevCounts
		for k := range rows {
			if !rows[k].sup() {
				sev.Add(rows[k].sev, 1)
				if states == nil || states[k] == scangate.BaselineNew {
					newSev.Add(rows[k].sev, 1)
				}
			}
			items := findingItems(rows[k], base+start+k, part[k])
			if states != nil {
				items[0][aBaselineState] = str(states[k])
			}
			for _, it := range items {
				if err = put(it); err != nil {
					break
				}
			}
		}
		r.mu.Lock()
		for k := range sev {
			p.sev[k] += sev[k]
			p.new[k] += newSev[k]
		}
		r.mu.Unlock()
	}
	if ferr := b.flush(); err == nil {
		err = ferr
	}
	return err
}

// judge sets each row's judgement by each of its groups: the groups not
// met before are read first (their versions and rules), and kept.
func (r *recording) judge(ctx context.Context, rows []findingRow) error {
	var missing []groupKey
	asked := map[groupKey]bool{}
	r.mu.Lock()
	for _, row := range rows {
		for _, g := range row.groups {
			if _, ok := r.groups.version(g); !ok && !asked[g] {
				asked[g] = true
				missing = append(missing, g)
			}
		}
	}
	r.mu.Unlock()
	var read map[groupKey]group
	if len(missing) > 0 {
		var err error
		if read, err = r.s.readGroups(ctx, missing); err != nil {
			return err
		}
	}
	snaps := map[groupKey]group{}
	r.mu.Lock()
	for g, snap := range read {
		r.groups.add(g, snap.gv)
		if len(snap.rules) > 0 {
			r.rules[g] = snap
		}
		snaps[g] = snap // this part is judged by what it read
	}
	for _, row := range rows {
		for _, g := range row.groups {
			if _, ok := snaps[g]; !ok {
				snap, ok := r.rules[g]
				if !ok { // no rules when an earlier part read it, at its version
					snap.groupKey = g
					snap.gv, _ = r.groups.version(g)
					snap.gv = max(snap.gv, 0) // mixed versions: settled after the commit
				}
				snaps[g] = snap
			}
		}
	}
	r.mu.Unlock()
	for k := range rows {
		for j, g := range rows[k].groups {
			// Each judgement keeps the group version it was made at (gvs).
			rows[k].by, rows[k].gvs[j] = rows[k].judged(j, snaps[g].covering(rows[k].ref)), snaps[g].gv
		}
	}
	return nil
}

// commit commits the scans not recorded before, scansPerCommit a
// transaction, then settles them (the handshake's second half), and
// answers with every scan of the recording and its PR.
func (r *recording) commit(ctx context.Context) ([]scangate.Scan, scangate.PR, bool, error) {
	var mine []int64
	var moved []work.Item // the work of branch commits that moved a baseline
	for c := range r.commits() {
		if r.recordedBefore(c * scansPerCommit) {
			continue
		}
		var scans []scangate.Scan
		for i := c * scansPerCommit; i < min((c+1)*scansPerCommit, len(r.scans)); i++ {
			ns := r.scans[i]
			sc := newScan(r.ids[i], ns, r.parts[i].sev, r.parts[i].new, r.pol.effective(ns.RepoID), r.now)
			if !ns.IsBranch() {
				c := r.class[i]
				sc.Class = scangate.Classification{Classified: true, New: c.newN, Unchanged: c.unch, Absent: c.absent}
				if bl := r.base[i]; bl != nil {
					sc.Class.BaselineScanID, sc.Class.BaselineSHA, sc.Class.Match = bl.scanID, bl.sha, bl.match
				}
			}
			scans = append(scans, sc)
		}
		k := ""
		if r.once != "" {
			k = onceKeys(r.once, c+1)[c]
		}
		var err error
		if r.scans[0].IsBranch() {
			var w *work.Item
			w, err = r.s.commitBranchScans(ctx, scans, k, r.who, r.s.baselineRunner(time.Now).LeaseFrom(time.Now()))
			if w != nil {
				moved = append(moved, *w)
			}
		} else {
			err = r.s.commitScans(ctx, scans, r.scans[0].PR, k, r.who, r.pol)
		}
		if failed(err, lOnce) { // a concurrent delivery recorded it first: answer with its scans
			return r.theirs(ctx)
		}
		if err != nil {
			return nil, scangate.PR{}, false, err
		}
		r.committed[c] = true
		for _, sc := range scans {
			mine = append(mine, sc.ID)
		}
	}
	recorded := len(mine) > 0
	if recorded {
		if err := r.settle(ctx, mine); err != nil {
			return nil, scangate.PR{}, false, err
		}
		if err := r.rebase(ctx); err != nil {
			return nil, scangate.PR{}, false, err
		}
		r.s.runBaseline(ctx, moved)
	}
	scans, pr, err := r.s.scansOf(ctx, r.answerIDs())
	return scans, pr, recorded, err
}

// answerIDs are the ids of the recording's scans: those of each commit's
// once key where a delivery before recorded it.
func (r *recording) answerIDs() []int64 {
	var ids []int64
	for c := range r.commits() {
		if done, ok := r.done[c]; ok {
			ids = append(ids, done...)
			continue
		}
		ids = append(ids, r.ids[c*scansPerCommit:min((c+1)*scansPerCommit, len(r.ids))]...)
	}
	return ids
}

// theirs is the answer of a delivery that lost the race for a once key:
// it deletes what it wrote and answers with the scans of the delivery that
// won, once that delivery has recorded every commit.
func (r *recording) theirs(ctx context.Context) ([]scangate.Scan, scangate.PR, bool, error) {
	if err := r.abort(ctx); err != nil {
		return nil, scangate.PR{}, false, err
	}
	done, err := r.s.recordedOnce(ctx, onceKeys(r.once, r.commits()))
	if err != nil {
		return nil, scangate.PR{}, false, err
	}
	if len(done) < r.commits() {
		return nil, scangate.PR{}, false, scangate.Unavailable(fmt.Errorf("record scans under %s: another delivery is recording them", r.once))
	}
	r.done = done
	scans, pr, err := r.s.scansOf(ctx, r.answerIDs())
	return scans, pr, false, err
}

// abort deletes the findings written of the scans this recording did not
// commit (dropUnrecorded checks that none of them is committed).
func (r *recording) abort(ctx context.Context) error {
	var ids []int64
	for i := range r.scans {
		if r.parts[i].n > 0 && !r.recordedBefore(i) && !r.committed[i/scansPerCommit] {
			ids = append(ids, r.ids[i])
		}
	}
	return r.s.dropUnrecorded(ctx, ids)
}

// settle is the second half of the handshake: it reads the versions of
// every group met again (settleChunk at a time) and the policy version;
// the findings of a group that moved since they were judged are read
// back from the scans committed here, a page at a time, and settled
// against its rules (settleRows). If the policy moved, the PR is judged
// again.
func (r *recording) settle(ctx context.Context, ids []int64) error {
	moved := map[groupKey]bool{}
	pv := int64(-1)
	check := func(gs []groupKey) error {
		var more []item
		if pv < 0 {
			more = []item{globalPolicyKey()}
		}
		after, v, err := r.s.readVersions(ctx, gs, more)
		if err != nil {
			return err
		}
		if pv < 0 {
			pv = v
		}
		for _, g := range gs {
			if v, _ := r.groups.version(g); after[g].gv != v {
				moved[g] = true
			}
		}
		return nil
	}
	chunk := make([]groupKey, 0, min(r.groups.len(), settleChunk))
	for i := range r.groups.len() {
		if chunk = append(chunk, r.groups.key(i)); len(chunk) == settleChunk {
			if err := check(chunk); err != nil {
				return err
			}
			chunk = chunk[:0]
		}
	}
	if len(chunk) > 0 || pv < 0 {
		if err := check(chunk); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if len(moved) == 0 {
			break
		}
		err := r.s.queryPages(ctx, "read back findings", &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String(ref(aPK) + " = :pk AND begins_with(" + ref(aSK) + ", :f)"),
			ExpressionAttributeValues: item{":pk": str(scanPK(id)), ":f": str(KeyFinding)},
			ConsistentRead:            aws.Bool(true),
		}, func(page []item) error {
			rows := make([]findingRow, len(page))
			for k, it := range page {
				rows[k] = rowFrom(it)
			}
			return r.settleRows(ctx, rows, moved)
		})
		if err != nil {
			return err
		}
	}
	if pv == r.pol.pv || r.scans[0].IsBranch() { // a branch analysis has no gate
		return nil
	}
	first := r.scans[0]
	_, err := r.s.rejudge(ctx, []item{prKey(first.VcID, first.RepoID, first.PR.Number)}, r.now)
	return err
}

// settleChunk is how many groups' versions the check after a commit
// reads at once (batchGetMax a request, batchParallel requests at once).
const settleChunk = 10_000

// settleRows settles rows read back against the current rules of each
// group among moved they belong to.
func (r *recording) settleRows(ctx context.Context, rows []findingRow, moved map[groupKey]bool) error {
	for _, g := range rowGroups(rows) {
		if !moved[g] {
			continue
		}
		var mine []findingRow
		for _, row := range rows {
			if row.groupIndex(g) >= 0 {
				mine = append(mine, row)
			}
		}
		if _, err := r.s.settleRows(ctx, g, nil, mine, scangate.CauseAllowlist, r.now); err != nil {
			return err
		}
	}
	return nil
}
