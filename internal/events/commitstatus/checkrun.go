package commitstatus

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/go-github/v75/github"
)

// A GitHub App may create check runs (a token may not): one check run
// named "scangate" per pull request head commit, created once and then
// updated with every gate, its conclusion from the gate, a summary table
// per category and annotations on the blocking findings' lines.

// MaxAnnotations is the most annotations GitHub takes in one request; more
// are sent in further updates of the same run, which GitHub appends.
const MaxAnnotations = 50

// Annotation is a blocking finding on its line.
type Annotation struct {
	Path      string
	StartLine int
	EndLine   int // StartLine when 0
	Title     string
	Message   string
	// Finding names the finding annotated (its scan type, category, rule,
	// name, path and line), so that it is annotated once whatever else
	// changes of it (its baseline state); "" to name it by what it shows.
	Finding string
}

// CheckRun is what a check run shows of a gate.
type CheckRun struct {
	Conclusion  string // success, failure or action_required
	Title       string
	Summary     string // Markdown
	DetailsURL  string
	Annotations []Annotation
}

// CheckRunOf is the check run of a gate: its conclusion (failure when it
// blocks, action_required when a required category is missing and nothing
// else blocks, success otherwise), its description as title, a Markdown
// table per category, and the annotations given.
func CheckRunOf(g Gate, dashboard string, annotations []Annotation) CheckRun {
	state, desc := Describe(g)
	conclusion := "success"
	if state != Success {
		conclusion = "failure"
		missingOnly := len(g.Reasons) > 0
		for _, r := range g.Reasons {
			missingOnly = missingOnly && r.Kind == ReasonMissing
		}
		if missingOnly {
			conclusion = "action_required"
		}
	}
	sum := summary(g)
	if total := Blocking(g); int64(len(annotations)) < total {
		sum += fmt.Sprintf("\n%d of the %d blocking findings are annotated on their lines (new first, then the most severe); "+
			"the pull request's page in scangate lists them all.\n", len(annotations), total)
	}
	run := CheckRun{Conclusion: conclusion, Title: desc, Summary: sum, Annotations: annotations}
	if dashboard != "" {
		run.DetailsURL = TargetURL(dashboard, g.PRID)
	}
	return run
}

// summary is a Markdown table of the gate's categories: the blocking
// findings of each, and their new, unchanged and absent counts when the
// gate carries them.
func summary(g Gate) string {
	var b strings.Builder
	blocking := map[string]int64{}
	state := map[string]string{}
	for _, r := range g.Reasons {
		k := r.ScanType + "/" + r.Category
		if r.Kind == ReasonFindings {
			blocking[k] += r.Count
		} else {
			state[k] = r.Kind
		}
	}
	b.WriteString("| Scan type | Category | Blocking findings | New | Unchanged | Absent | Note |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	seen := map[string]bool{}
	row := func(scanType, category string, c *Category) {
		k := scanType + "/" + category
		if seen[k] {
			return
		}
		seen[k] = true
		counts := []string{"", "", ""}
		if c != nil {
			for i, n := range []*int64{c.NewCount, c.UnchangedCount, c.AbsentCount} {
				if n != nil {
					counts[i] = strconv.FormatInt(*n, 10)
				}
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s |\n", cell(scanType), cell(category), blocking[k],
			counts[0], counts[1], counts[2], state[k])
	}
	for i := range g.Categories {
		row(g.Categories[i].ScanType, g.Categories[i].Category, &g.Categories[i])
	}
	for _, r := range g.Reasons {
		row(r.ScanType, r.Category, nil)
	}
	return b.String()
}

// cell escapes a table cell's text: pipes, and no line breaks.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}

// SyncCheckRun creates the check run of the commit (id 0) or updates run
// id, with the first MaxAnnotations annotations, and sends the others in
// further updates of MaxAnnotations each (GitHub appends them to the
// run's: send each once, see Unsent). It returns the run's id and how
// many of the annotations it sent (the first ones), also when a later
// batch failed (the run exists: the caller keeps its id, and sends the
// rest later).
func (g *GitHub) SyncCheckRun(ctx context.Context, c Commit, id int64, run CheckRun) (_ int64, sent int, err error) {
	defer func() { err = sending("check run", err) }()
	if err := checkCommit("github", c); err != nil {
		return id, 0, err
	}
	owner, repo, err := g.repository(ctx, c.RepoID)
	if err != nil {
		return id, 0, err
	}
	owner, repo = url.PathEscape(owner), url.PathEscape(repo)
	batches := batch(run.Annotations)
	output := func(i int) *github.CheckRunOutput {
		return &github.CheckRunOutput{Title: github.Ptr(run.Title), Summary: github.Ptr(run.Summary), Annotations: batches[i]}
	}
	var details *string
	if run.DetailsURL != "" {
		details = github.Ptr(run.DetailsURL)
	}
	for i := range batches {
		var resp *github.Response
		if id == 0 {
			var cr *github.CheckRun
			cr, resp, err = g.client.Checks.CreateCheckRun(ctx, owner, repo, github.CreateCheckRunOptions{Name: Context, HeadSHA: c.SHA,
				DetailsURL: details, Status: github.Ptr("completed"), Conclusion: github.Ptr(run.Conclusion), Output: output(i)})
			if err == nil {
				id = cr.GetID()
			}
		} else {
			_, resp, err = g.client.Checks.UpdateCheckRun(ctx, owner, repo, id, github.UpdateCheckRunOptions{Name: Context,
				DetailsURL: details, Status: github.Ptr("completed"), Conclusion: github.Ptr(run.Conclusion), Output: output(i)})
		}
		if err != nil {
			e := failure(resp, err)
			e.Err = fmt.Errorf("annotations batch %d of %d: %w", i+1, len(batches), e.Err)
			return id, sent, e
		}
		sent += len(batches[i])
	}
	return id, sent, nil
}

// batch cuts the annotations into requests of at most MaxAnnotations (one
// empty batch when there are none), blocking findings at failure level.
func batch(as []Annotation) [][]*github.CheckRunAnnotation {
	out := [][]*github.CheckRunAnnotation{{}}
	for _, a := range as {
		last := &out[len(out)-1]
		if len(*last) == MaxAnnotations {
			out = append(out, nil)
			last = &out[len(out)-1]
		}
		end := a.EndLine
		if end < a.StartLine {
			end = a.StartLine
		}
		*last = append(*last, &github.CheckRunAnnotation{Path: github.Ptr(a.Path), StartLine: github.Ptr(a.StartLine),
			EndLine: github.Ptr(end), AnnotationLevel: github.Ptr("failure"), Title: github.Ptr(a.Title), Message: github.Ptr(a.Message)})
	}
	return out
}
