package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// ScanStore keeps scans and their pull requests.
type ScanStore interface {
	AuthorityStore
	// RecordScans records scans of one pull request in one commit (with
	// once, at most once per key: recorded is false when a delivery
	// before recorded them).
	RecordScans(ctx context.Context, nss []scangate.NewScan, who scangate.Who, now time.Time, once string) (scans []scangate.Scan, pr scangate.PR, recorded bool, err error)
	// RecordScansFrom is RecordScans with the findings given part by
	// part: fill hands each part to add (i: the scan's index in nss), which
	// writes it before it returns (the store's RecordScansFrom).
	RecordScansFrom(ctx context.Context, nss []scangate.NewScan, who scangate.Who, now time.Time, once string,
		fill func(add func(i int, fs []scangate.Finding) error) error) (scans []scangate.Scan, pr scangate.PR, recorded bool, err error)
	Scan(ctx context.Context, id int64) (scangate.Scan, scangate.PR, error)
}

// ScanReader reads scans.
type ScanReader interface {
	Scan(ctx context.Context, id int64) (scangate.Scan, scangate.PR, error)
}

// GetScan is GET /pr/scan/{pr_scan_id} (Get Pr Scan By Id Route).
func GetScan(st ScanReader, log *slog.Logger) Endpoint {
	return Endpoint{Name: "GetScan", Roles: []scangate.Role{scangate.RoleAdmin, scangate.RoleUser, scangate.RoleReadonly}, RepoScope: true, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			id, err := PathID(req, "pr_scan_id")
			if err != nil {
				return Reply{}, err
			}
			sc, pr, err := st.Scan(ctx, id)
			if err == nil {
				err = mayRead(c, sc.VcID, sc.RepoID, "no scan has the id %d", id)
			}
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusOK, Body: scangate.ViewScan(sc, pr)}, nil
		}}
}

// recordRoles may record scans; a scan token (a CI job's) may too.
var recordRoles = []scangate.Role{scangate.RoleAdmin, scangate.RoleUser}

// RecordScan is POST /pr/scan: a scanner records a scan and its findings.
func RecordScan(st ScanStore, now func() time.Time, log *slog.Logger) Endpoint {
	return Endpoint{Name: "RecordScan", Roles: recordRoles, Users: st, ScanScope: true, RepoScope: true, Now: now, Log: log,
		Run: func(ctx context.Context, c scangate.Caller, req events.APIGatewayProxyRequest) (Reply, error) {
			m, err := body(req)
			if err != nil {
				return Reply{}, err
			}
			ns, err := readScan(m)
			if err == nil {
				err = mayRecord(c, ns.VcID, ns.RepoID)
			}
			if err != nil {
				return Reply{}, err
			}
			scans, pr, _, err := st.RecordScans(ctx, []scangate.NewScan{ns}, whoOf(c, req), now(), "")
			if err != nil {
				return Reply{}, err
			}
			return Reply{Status: http.StatusCreated, Body: scangate.ViewScan(scans[0], pr), Location: location(req, "/pr/scan", scans[0].ID)}, nil
		}}
}

// readScan reads and validates the body of a scan to record.
func readScan(m members) (scangate.NewScan, error) {
	var p scangate.Problems
	f := readFields(m, "", &p)
	t, _ := f.enum("scan_type", true, scangate.ScanTypes)
	ns := readEnvelope(f, scangate.ScanStatuses[0])
	ns.Type = scangate.ScanType(t)
	findings := f.array("findings", false)
	if len(findings) > scangate.MaxFindings {
		p.Add("/findings", "may hold at most %d findings", scangate.MaxFindings)
		findings = nil
	}
	for i, v := range findings {
		if ff := f.element("findings", i, v); ff != nil {
			ns.Findings = append(ns.Findings, readFinding(ff))
		}
	}
	f.done()
	if len(p) == 0 {
		ns.Validate(&p)
	}
	return ns, p.Err()
}

// readEnvelope reads what every recording has (all but the scan type and
// the findings); status defaults as given.
func readEnvelope(f *fields, status string) scangate.NewScan {
	var ns scangate.NewScan
	ns.VcType, _ = f.str("vc_type", true)
	ns.VcID, _ = f.integer("vc_id", true)
	ns.VcName, _ = f.str("vc_name", true)
	ns.RepoID, _ = f.integer("repo_id", true)
	ns.RepoName, _ = f.str("repo_name", true)
	ns.WebhookID, _ = f.integer("webhook_id", true)
	readTarget(f, &ns)
	ns.Status = status
	if s, ok := f.enum("status", false, scangate.ScanStatuses); ok {
		ns.Status = s
	}
	ns.StatURL = f.nullableStr("stat_url")
	ns.OtherDetails = f.rawObject("other_details")
	ns.Category = f.nonEmpty("category")
	ns.CommitSHA = scangate.CommitHash(f.nonEmpty("commit_sha"))
	ns.Ref = f.nonEmpty("ref")
	if b := f.nonEmpty("base_ref"); b != "" {
		if ns.BaseRef = scangate.BranchName(b); ns.BaseRef == "" {
			f.p.Add(f.pointer("base_ref"), "must be 1 to %d characters (after a leading refs/heads/)", scangate.MaxBranchLen)
		}
	}
	ns.BaseSHA = scangate.CommitHash(f.nonEmpty("base_sha"))
	return ns
}

// readTarget reads what a scan is recorded for: a pull request (pr) or a
// branch (branch), exactly one of the two. A branch's leading refs/heads/
// is removed; its bounds are checked with the rest.
func readTarget(f *fields, ns *scangate.NewScan) {
	_, hasPR := f.m["pr"]
	_, hasBranch := f.m["branch"]
	switch {
	case hasPR && hasBranch:
		f.known["pr"], f.known["branch"] = true, true
		f.p.Add(f.pointer("branch"), "send either pr (a pull request's scan) or branch (a branch analysis), not both")
		return
	case hasBranch:
		if b, ok := f.str("branch", true); ok {
			ns.Branch = scangate.BranchName(b)
			if ns.Branch == "" {
				f.p.Add(f.pointer("branch"), "must be 1 to %d characters (after a leading refs/heads/)", scangate.MaxBranchLen)
			}
		}
		return
	}
	f.known["branch"] = true
	if pf := f.object("pr", true); pf != nil {
		ns.PR.Number, _ = pf.integer("pr_id", true)
		ns.PR.Name, _ = pf.str("pr_name", true)
		ns.PR.Link, _ = pf.str("pr_link", true)
		pf.done()
	}
}

// nonEmpty reads an optional string member that, when sent, may not be
// empty (its bounds are checked with the rest).
func (f *fields) nonEmpty(name string) string {
	s, ok := f.str(name, false)
	if ok && s == "" {
		f.p.Add(f.pointer(name), "must not be empty; leave it out instead")
	}
	return s
}

// readFinding reads one finding of a scan body.
func readFinding(ff *fields) scangate.Finding {
	var fd scangate.Finding
	fd.Name, _ = ff.str("name", true)
	fd.Rule, _ = ff.str("rule", false)
	fd.Path, _ = ff.str("path", false)
	if n, ok := ff.integer("line", false); ok {
		fd.Line = &n
	}
	if fp, ok := ff.str("fingerprint", false); ok {
		fd.Fingerprint, fd.FingerprintSource = fp, scangate.FingerprintScanner
		if n := len([]rune(fp)); n < 1 || n > scangate.MaxFingerprintLen {
			ff.p.Add(ff.pointer("fingerprint"), "must be 1 to %d characters", scangate.MaxFingerprintLen)
		} else if _, _, hidden := scangate.Hidden(fp); hidden {
			ff.p.Add(ff.pointer("fingerprint"), "must not hold control or format characters")
		}
	}
	fd.Severity = scangate.SeverityHigh
	if sev, ok := ff.enum("severity", false, scangate.Severities); ok {
		fd.Severity = scangate.Severity(sev)
	}
	for k, v := range ff.array("aliases", false) {
		var a string
		if json.Unmarshal(v, &a) != nil || len(v) == 0 || v[0] != '"' {
			ff.p.Add(ff.pointer("aliases")+"/"+strconv.Itoa(k), "must be a string")
			continue
		}
		fd.Aliases = append(fd.Aliases, a)
	}
	ff.done()
	return fd
}
