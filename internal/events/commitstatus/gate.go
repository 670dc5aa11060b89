package commitstatus

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/scangate/scangate/internal/scangate"
)

// Gate is what a status reports of a pull request's gate: the members of
// the gate resource (GET /pr/{pr_id}/gate, the data of a pr.gate_changed
// event) that it reads, decoded from that JSON.
type Gate struct {
	PRID       int64      `json:"pr_id"`
	Blocked    bool       `json:"blocked"`
	HeadSHA    string     `json:"head_sha"`
	Reasons    []Reason   `json:"reasons"`
	Categories []Category `json:"categories"`
	Policy     struct {
		// BlockSeverity is the lowest severity that blocks, per scan type.
		BlockSeverity map[string]string `json:"block_severity"`
		// BlockOn is which findings block: all (also when absent) or
		// new (only those new against the PR's baseline).
		BlockOn string `json:"block_on"`
	} `json:"policy"`
}

// Reason is one reason why a gate blocks.
type Reason struct {
	Kind     string `json:"kind"` // findings, pending, failed or missing
	ScanType string `json:"scan_type"`
	Category string `json:"category"`
	Count    int64  `json:"count"` // findings, for kind findings
	// ScanID is the newest scan of the category (none when missing).
	ScanID *int64 `json:"scan_id"`

	// NewCount is how many of its findings at or above the severity are
	// new against its baseline (nil in a gate of before new code).
	NewCount *int64 `json:"new_count"`
}

// Category is the newest scan of one (scan type, category).
type Category struct {
	ScanType string `json:"scan_type"`
	Category string `json:"category"`
	// Baseline is the analysis it was classified against (nil: none).
	Baseline *struct {
		ScanID int64 `json:"scan_id"`
	} `json:"baseline"`
	// The new-code counts, when the gate carries them (nil otherwise).
	NewCount       *int64 `json:"new_count"`
	UnchangedCount *int64 `json:"unchanged_count"`
	AbsentCount    *int64 `json:"absent_count"`
}

// The kinds of reason.
const (
	ReasonFindings = "findings"
	ReasonPending  = "pending"
	ReasonFailed   = "failed"
	ReasonMissing  = "missing"
)

// FromGate is the status of a gate: its state and description, linked to
// the pull request's page in the dashboard at dashboard (its base URL).
func FromGate(g Gate, dashboard string) Status {
	state, desc := Describe(g)
	return Status{State: state, Description: desc, TargetURL: TargetURL(dashboard, g.PRID)}
}

// TargetURL is the pull request's page in the dashboard.
func TargetURL(dashboard string, prID int64) string {
	return strings.TrimRight(dashboard, "/") + "/#/pr/" + strconv.FormatInt(prID, 10)
}

// Describe gives a gate's state and a description of at most 140
// characters. A gate that does not block is success. One that blocks is
// pending when every reason is a scan still pending or processing, else
// failure. The description counts the blocking findings per scan type
// (qualified by the policy's lowest blocking severity when it is not
// none), how many of them are new when a category has a baseline, and
// names the categories missing, failed or pending; under block_on new it
// counts the new findings per category:
//
//	Blocked: 2 secrets, 1 critical vulnerability; missing: secret/gitleaks
//	Blocked: 2 secrets (1 new), 1 critical vulnerability (0 new)
//	Blocked: 2 new findings (semgrep), 1 new high+ finding (gitleaks)
//	Pending: vulnerability/semgrep
//	Not blocked: 3 scans, no blocking finding
func Describe(g Gate) (State, string) {
	if !g.Blocked {
		return Success, fmt.Sprintf("Not blocked: %s, no blocking finding", plural(int64(len(g.Categories)), "scan", "scans"))
	}
	var secrets, vulns, newSecrets, newVulns int64
	var perCategory []string
	named := map[string][]string{}
	for _, r := range g.Reasons {
		switch r.Kind {
		case ReasonFindings:
			n := r.Count
			if r.NewCount != nil {
				n = *r.NewCount
			}
			if r.ScanType == "SECRET" {
				secrets, newSecrets = secrets+r.Count, newSecrets+n
			} else {
				vulns, newVulns = vulns+r.Count, newVulns+n
			}
			perCategory = append(perCategory, newFindings(r.Count, g.Policy.BlockSeverity[r.ScanType])+" ("+r.Category+")")
		default:
			named[r.Kind] = append(named[r.Kind], strings.ToLower(r.ScanType)+"/"+r.Category)
		}
	}
	var parts []string
	var counts []string
	if g.Policy.BlockOn == scangate.BlockOnNew {
		counts = perCategory
	} else {
		withNew := g.hasBaseline()
		if secrets > 0 {
			counts = append(counts, qualified(secrets, g.Policy.BlockSeverity["SECRET"], "secret", "secrets")+ofThemNew(withNew, newSecrets))
		}
		if vulns > 0 {
			counts = append(counts, qualified(vulns, g.Policy.BlockSeverity["VULNERABILITY"], "vulnerability", "vulnerabilities")+ofThemNew(withNew, newVulns))
		}
	}
	if len(counts) > 0 {
		parts = append(parts, strings.Join(counts, ", "))
	}
	for _, kind := range []string{ReasonMissing, ReasonFailed, ReasonPending} {
		if len(named[kind]) > 0 {
			parts = append(parts, kind+": "+strings.Join(named[kind], ", "))
		}
	}
	if len(parts) == 1 && len(named[ReasonPending]) > 0 {
		return Pending, clip("Pending: "+strings.Join(named[ReasonPending], ", "), MaxDescription)
	}
	if len(parts) == 0 {
		return Failure, "Blocked"
	}
	return Failure, clip("Blocked: "+strings.Join(parts, "; "), MaxDescription)
}

// hasBaseline reports whether some category of the gate was classified
// against a baseline: its new findings are then worth saying.
func (g Gate) hasBaseline() bool {
	for _, c := range g.Categories {
		if c.Baseline != nil {
			return true
		}
	}
	return false
}

// ofThemNew says how many of a count are new, when with is set.
func ofThemNew(with bool, n int64) string {
	if !with {
		return ""
	}
	return " (" + strconv.FormatInt(n, 10) + " new)"
}

// newFindings counts new findings, naming the lowest blocking severity:
// "2 new findings", "1 new critical finding", "3 new high+ findings".
func newFindings(n int64, severity string) string {
	switch severity {
	case "", "none":
		return plural(n, "new finding", "new findings")
	case "critical":
		return plural(n, "new critical finding", "new critical findings")
	}
	return plural(n, "new "+severity+"+ finding", "new "+severity+"+ findings")
}

// qualified counts findings, naming the lowest blocking severity: "2
// secrets", "1 critical vulnerability", "3 high+ vulnerabilities".
func qualified(n int64, severity, one, many string) string {
	switch severity {
	case "", "none":
		return plural(n, one, many)
	case "critical":
		return plural(n, "critical "+one, "critical "+many)
	}
	return plural(n, severity+"+ "+one, severity+"+ "+many)
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
