package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/scangate/scangate/pkg/client"
)

const uploadAbout = `Uploads scanners' SARIF 2.1.0 logs (gitleaks, semgrep, trivy, bandit, checkov,
CodeQL...) for the pull request, or for the branch of a push, one request per file: each
log is gzipped (a .gz file is sent as it is) and sent inline when the request fits the
service's 6 MB limit, else through a presigned S3 upload, whose processing it waits for
(bounded by --timeout). Errors of a log are printed as the service gives them, with
pointers into the log.

On a pull request it sends its base branch and base commit (the merge base of the head
and the base branch when the checkout has both, else the CI's), so that each finding is
classified new or unchanged against the base branch's analysis; it prints the findings
the pull request adds, then its gate, and exits on it: 0 not blocked, 1 blocked (unless
--no-gate). On a push to a branch (GitHub's push event, GitLab's branch pipeline) or with
--branch, it records a branch analysis, the baseline of the pull requests on that branch,
and exits 0: a branch has no gate.

First, each result with a line of a file in the checkout (--checkout) and no
partialFingerprints.primaryLocationLineHash gets the one GitHub computes from that
line, so that it keeps its identity when lines above it move (a .gz file is then
gzipped anew); --no-fingerprints sends the logs as they are.
`

// uploaded is what one file's upload recorded.
type uploaded struct {
	File     string          `json:"file"`
	Via      string          `json:"via"` // inline or presigned
	UploadID int64           `json:"upload_id,omitempty"`
	Result   json.RawMessage `json:"result"` // the answer of POST /pr/scan/sarif, or the upload as GET shows it
	scans    []client.Scan
}

var uploadCommand = command{name: "upload", synopsis: "[flags] FILE.sarif...", about: uploadAbout, maxArgs: -1, setup: (*app).uploadSetup}

func (a *app) uploadSetup(fs *flag.FlagSet, o *common) runFunc {
	var t target
	t.register(fs, true)
	noGate := fs.Bool("no-gate", false, "do not read the gate: exit 0 once every log is recorded")
	presigned := fs.Bool("presigned", false, "send every log through a presigned S3 upload, whatever its size")
	category := fs.String("category", "", "the analysis category of the log's scans (one file only; default each run's, as the service derives it)")
	var fp fingerprintFlags
	fp.register(fs)
	return func(ctx context.Context, c *client.Client, files []string) error {
		if len(files) == 0 {
			return usagef("no SARIF file given")
		}
		if *category != "" && len(files) > 1 {
			return usagef("--category names the scans of one log: the logs of several files in one category would replace each other")
		}
		p, err := a.resolve(t)
		if err != nil {
			return err
		}
		for _, check := range []func() error{p.needPROrBranch, p.needRepo, p.needEnvelope} {
			if err := check(); err != nil {
				return err
			}
		}
		p.envelope.Category = *category
		base := a.resolveBase(ctx, &p, t.baseSHA, *fp.checkout)
		if a.checkout, err = fp.open(); err != nil {
			return err
		}
		defer a.closeCheckout()
		if p.envelope.Branch != "" {
			return a.uploadBranch(ctx, c, *o, p, files, *presigned)
		}
		return a.uploadAll(ctx, c, *o, p, base, files, *presigned, *noGate)
	}
}

// uploadBranch records the logs as analyses of the push's branch: no
// gate, exit 0 once every log is recorded.
func (a *app) uploadBranch(ctx context.Context, c *client.Client, o common, p pullRequest, files []string, presigned bool) error {
	done, err := a.uploadEach(ctx, c, o, p, files, presigned)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(a.stdout, map[string]any{"branch": p.envelope.Branch, "uploads": done})
	}
	e := p.envelope
	fmt.Fprintf(a.stdout, "%s: branch %s analysed at %s (%s); the baseline of its pull requests, no gate\n",
		printable(e.RepoName), printable(e.Branch), printable(orDash(short(e.CommitSHA))), count(len(done), "log", "logs"))
	return nil
}

// uploadEach uploads the files one after the other.
func (a *app) uploadEach(ctx context.Context, c *client.Client, o common, p pullRequest, files []string, presigned bool) ([]uploaded, error) {
	var done []uploaded
	for _, file := range files {
		u, err := a.uploadFile(ctx, c, p.envelope, file, presigned)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if !o.json {
			printUploaded(a.stdout, u)
		}
		done = append(done, u)
	}
	return done, nil
}

// uploadAll uploads the files one after the other, then prints the
// findings the pull request adds and reads the gate unless noGate.
func (a *app) uploadAll(ctx context.Context, c *client.Client, o common, p pullRequest, base baseOf, files []string, presigned, noGate bool) error {
	done, err := a.uploadEach(ctx, c, o, p, files, presigned)
	if err != nil {
		return err
	}
	if !o.json && p.envelope.BaseRef != "" {
		sha := "no base commit"
		if base.sha != "" {
			sha = short(base.sha) + ", " + base.source
		}
		fmt.Fprintf(a.stdout, "base %s (%s)\n", printable(p.envelope.BaseRef), printable(sha))
	}
	if noGate {
		if o.json {
			return writeJSON(a.stdout, map[string]any{"uploads": done})
		}
		return nil
	}
	return a.uploadGate(ctx, c, o, p, done)
}

// uploadGate prints the gate of the pull request the uploads recorded
// scans of, after them, and ends the command on it.
func (a *app) uploadGate(ctx context.Context, c *client.Client, o common, p pullRequest, done []uploaded) error {
	var id int64
	for _, u := range done {
		for _, s := range u.scans {
			id = s.PRID
		}
	}
	if id == 0 {
		e := p.envelope
		pr, err := c.FindPR(ctx, e.VcID, e.RepoID, e.PR.Number)
		if err != nil {
			return err
		}
		id = pr.ID
	}
	g, err := c.Gate(ctx, id)
	if err != nil {
		return fmt.Errorf("the logs are recorded; reading the gate: %w", err)
	}
	added, err := newFindings(ctx, c, g)
	if err != nil {
		return fmt.Errorf("the logs are recorded; reading the new findings: %w", err)
	}
	if o.json {
		if err := writeJSON(a.stdout, map[string]any{"uploads": done, "new_findings": findingsJSON(added), "gate": g.JSON}); err != nil {
			return err
		}
		if g.Blocked {
			return errBlocked
		}
		return nil
	}
	fmt.Fprintln(a.stdout)
	if err := printNew(a.stdout, g, added); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	return a.showGate(o, p.label(id), g)
}

// uploadFile gzips a log and sends it inline or through a presigned
// upload, and waits until it is recorded.
func (a *app) uploadFile(ctx context.Context, c *client.Client, env client.Envelope, file string, presigned bool) (uploaded, error) {
	gz, err := a.readLog(file)
	if err != nil {
		return uploaded{}, err
	}
	if len(gz) > client.MaxUpload {
		return uploaded{}, fmt.Errorf("its gzip is %d bytes; the service takes at most %d (100 MiB)", len(gz), client.MaxUpload)
	}
	inline, err := client.FitsInline(env, len(gz))
	if err != nil {
		return uploaded{}, err
	}
	if inline && !presigned {
		r, err := c.RecordSARIF(ctx, env, gz)
		if err != nil {
			return uploaded{}, err
		}
		return uploaded{File: file, Via: "inline", Result: r.JSON, scans: r.Scans}, nil
	}
	return a.presign(ctx, c, env, file, gz)
}

// presign sends a log through a presigned upload: create it, PUT the gzip
// (with a progress bar on a terminal), wait for its processing.
func (a *app) presign(ctx context.Context, c *client.Client, env client.Envelope, file string, gz []byte) (uploaded, error) {
	created, err := c.CreateUpload(ctx, env)
	if err != nil {
		return uploaded{}, err
	}
	var body io.Reader = bytes.NewReader(gz)
	if a.terminal {
		bar := progressbar.NewOptions64(int64(len(gz)), progressbar.OptionSetWriter(a.stderr),
			progressbar.OptionSetDescription("uploading "+file), progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(a.stderr) }))
		_ = bar.RenderBlank()
		r := progressbar.NewReader(body, bar)
		body = &r
	}
	if err := c.PutUpload(ctx, created, body, int64(len(gz))); err != nil {
		return uploaded{}, err
	}
	u, err := c.AwaitUpload(ctx, created.ID, client.DefaultPoll)
	if err != nil {
		return uploaded{}, err
	}
	if u.Status == "failed" {
		return uploaded{}, uploadFailed(u)
	}
	up := uploaded{File: file, Via: "presigned", UploadID: u.ID, Result: u.JSON}
	for _, id := range u.ScanIDs {
		s, err := c.Scan(ctx, id)
		if err != nil {
			return uploaded{}, err
		}
		up.scans = append(up.scans, s)
	}
	return up, nil
}

// uploadFailed is the error of an upload whose processing failed: its
// problems as the service gives them.
func uploadFailed(u client.Upload) error {
	var b strings.Builder
	fmt.Fprintf(&b, "upload %d failed:", u.ID)
	for _, p := range u.Errors {
		fmt.Fprintf(&b, "\n%s", p)
	}
	return fmt.Errorf("%s", b.String())
}

// gzipLog gzips a log; a log that is gzip already is sent as it is.
func gzipLog(raw []byte) ([]byte, error) {
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		return raw, nil
	}
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(raw); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return b.Bytes(), nil
}

// printUploaded writes one upload's outcome for people.
func printUploaded(w io.Writer, u uploaded) {
	var counts struct {
		Results            int `json:"results"`
		Recorded           int `json:"recorded"`
		SuppressedInSource int `json:"suppressed_in_source"`
		Skipped            int `json:"skipped"`
	}
	_ = json.Unmarshal(u.Result, &counts)
	via := u.Via
	if u.UploadID > 0 {
		via = fmt.Sprintf("presigned upload %d", u.UploadID)
	}
	// Every result is recorded, merged into an earlier one's finding (the
	// same type, name, path and line) or skipped; those suppressed in
	// source are recorded.
	merged := counts.Results - counts.Recorded - counts.Skipped
	fmt.Fprintf(w, "%s: recorded (%s): %s: %d recorded (%d of them suppressed in source), %s, %d skipped\n",
		u.File, via, count(counts.Results, "result", "results"), counts.Recorded, counts.SuppressedInSource,
		count(merged, "duplicate merged", "duplicates merged"), counts.Skipped)
	for _, s := range u.scans {
		cat := ""
		if c := s.Category(); c != "" {
			cat = " " + printable(c)
		}
		fmt.Fprintf(w, "  scan %d %s%s: %s, %s, %s, blocks: %s\n", s.ID, printable(s.ScanType), cat, printable(s.Status),
			count(s.SecretCount, "secret", "secrets"), count(s.VulnerabilityCount, "vulnerability", "vulnerabilities"), yesNo(s.BlockStatus))
	}
}
