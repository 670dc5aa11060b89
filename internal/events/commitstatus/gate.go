package commitstatus

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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
	} `json:"policy"`
}

// Reason is one reason why a gate blocks.
type Reason struct {
	Kind     string `json:"kind"` // findings, pending, failed or missing
	ScanType string `json:"scan_type"`
	Category string `json:"category"`
	Count    int64  `json:"count"` // findings, for kind findings
}

// Category is the newest scan of one (scan type, category).
type Category struct {
	ScanType string `json:"scan_type"`
	Category string `json:"category"`
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
// (qualified by the policy's lowest blocking severity when it is not none)
// and names the categories missing, failed or pending:
//
//	Blocked: 2 secrets, 1 critical vulnerability; missing: secret/gitleaks
//	Pending: vulnerability/semgrep
//	Not blocked: 3 scans, no blocking finding
func Describe(g Gate) (State, string) {
	if !g.Blocked {
		return Success, fmt.Sprintf("Not blocked: %s, no blocking finding", plural(int64(len(g.Categories)), "scan", "scans"))
	}
	var secrets, vulns int64
	named := map[string][]string{}
	for _, r := range g.Reasons {
		switch r.Kind {
		case ReasonFindings:
			if r.ScanType == "SECRET" {
				secrets += r.Count
			} else {
				vulns += r.Count
			}
		default:
			named[r.Kind] = append(named[r.Kind], strings.ToLower(r.ScanType)+"/"+r.Category)
		}
	}
	var parts []string
	var counts []string
	if secrets > 0 {
		counts = append(counts, qualified(secrets, g.Policy.BlockSeverity["SECRET"], "secret", "secrets"))
	}
	if vulns > 0 {
		counts = append(counts, qualified(vulns, g.Policy.BlockSeverity["VULNERABILITY"], "vulnerability", "vulnerabilities"))
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
		return Pending, truncate("Pending: " + strings.Join(named[ReasonPending], ", "))
	}
	if len(parts) == 0 {
		return Failure, "Blocked"
	}
	return Failure, truncate("Blocked: " + strings.Join(parts, "; "))
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

// truncate cuts s to MaxDescription characters, ending it with "..." when
// it cut.
func truncate(s string) string {
	if utf8.RuneCountInString(s) <= MaxDescription {
		return s
	}
	r := []rune(s)
	return string(r[:MaxDescription-3]) + "..."
}
