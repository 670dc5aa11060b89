package scangate

import "encoding/json"

// The resources as their GET routes show them, here so that the store
// writes into events exactly what the API answers (one encoder for both).

// PRView is the PR object of spec section 2.2.
type PRView struct {
	ID                 int64  `json:"id"`
	PrID               int64  `json:"pr_id"`
	PrName             string `json:"pr_name"`
	PrLink             string `json:"pr_link"`
	RepoID             int64  `json:"repo_id"`
	VcID               int64  `json:"vc_id"`
	WebhookID          int64  `json:"webhook_id"`
	CreatedAt          Time   `json:"created_at"`
	LastScan           Time   `json:"last_scan"`
	SecretCount        int64  `json:"secret_count"`
	VulnerabilityCount int64  `json:"vulnerability_count"`
	// BaseRef and BaseSHA: the base of its newest scan that named one.
	BaseRef *string `json:"base_ref"`
	BaseSHA *string `json:"base_sha"`
}

// ViewPR is the view of a pull request.
func ViewPR(pr PR) PRView {
	return PRView{
		ID: pr.ID, PrID: pr.Number, PrName: pr.Name, PrLink: pr.Link, RepoID: pr.RepoID, VcID: pr.VcID,
		WebhookID: pr.WebhookID, CreatedAt: pr.CreatedAt, LastScan: pr.LastScan,
		SecretCount: pr.SecretCount, VulnerabilityCount: pr.VulnerabilityCount,
		BaseRef: nullable(pr.BaseRef), BaseSHA: nullable(pr.BaseSHA),
	}
}

// nullable is a string as JSON shows an optional one: null when empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ScanView is the pull-request scan of spec section 2.1, every field
// present, as GET /pr/scan/{pr_scan_id} shows it and scan.recorded
// carries it.
type ScanView struct {
	ID                 int64           `json:"id"`
	PrID               *int64          `json:"pr_id"`
	VcID               int64           `json:"vc_id"`
	WebhookID          int64           `json:"webhook_id"`
	RepoID             int64           `json:"repo_id"`
	VcType             string          `json:"vc_type"`
	ScanType           ScanType        `json:"scan_type"`
	CreatedAt          Time            `json:"created_at"`
	PR                 *PRView         `json:"pr"`
	Branch             *BranchRefView  `json:"branch"`
	VcName             string          `json:"vc_name"`
	RepoName           string          `json:"repo_name"`
	Status             string          `json:"status"`
	BlockStatus        bool            `json:"block_status"`
	OtherDetails       json.RawMessage `json:"other_details"`
	StatURL            *string         `json:"stat_url"`
	SecretCount        int64           `json:"secret_count"`
	VulnerabilityCount int64           `json:"vulnerability_count"`
}

// BranchRefView names the branch of a branch analysis.
type BranchRefView struct {
	BranchID int64  `json:"branch_id"`
	Name     string `json:"name"`
}

// ViewScan is the view of a scan with its pull request: a branch
// analysis shows its branch, and pr_id and pr null (pr is then ignored);
// a pull request's scan shows branch null.
func ViewScan(sc Scan, pr PR) ScanView {
	v := ScanView{
		ID: sc.ID, PrID: &sc.PRID, VcID: sc.VcID, WebhookID: sc.WebhookID, RepoID: sc.RepoID,
		VcType: sc.VcType, ScanType: sc.Type, CreatedAt: sc.CreatedAt,
		VcName: sc.VcName, RepoName: sc.RepoName, Status: sc.Status, BlockStatus: sc.BlockStatus,
		OtherDetails: sc.OtherDetails, StatURL: sc.StatURL,
		SecretCount: sc.SecretCount, VulnerabilityCount: sc.VulnerabilityCount,
	}
	if sc.BranchID != 0 {
		v.PrID = nil
		v.Branch = &BranchRefView{BranchID: sc.BranchID, Name: sc.Branch}
		return v
	}
	p := ViewPR(pr)
	v.PR = &p
	return v
}

// GateCategoryView is a pull request's newest scan of one (scan type,
// category), as its gate shows it.
type GateCategoryView struct {
	ScanType           ScanType `json:"scan_type"`
	Category           string   `json:"category"`
	ScanID             int64    `json:"scan_id"`
	Status             string   `json:"status"`
	BlockStatus        bool     `json:"block_status"`
	SecretCount        int64    `json:"secret_count"`
	VulnerabilityCount int64    `json:"vulnerability_count"`
	CreatedAt          Time     `json:"created_at"`
	// Baseline is the base branch's analysis it was classified against
	// (null: none, every finding new); the counts are its findings new
	// and unchanged, and the baseline's absent from it.
	Baseline       *BaselineView `json:"baseline"`
	NewCount       int64         `json:"new_count"`
	UnchangedCount int64         `json:"unchanged_count"`
	AbsentCount    int64         `json:"absent_count"`
}

// BaselineView names a scan's baseline and how it was found.
type BaselineView struct {
	ScanID    int64   `json:"scan_id"`
	CommitSHA *string `json:"commit_sha"`
	Match     string  `json:"match"`
}

// GateView is a pull request's gate as GET /pr/{pr_id}/gate shows it.
type GateView struct {
	PRID        int64              `json:"pr_id"`
	Blocked     bool               `json:"blocked"`
	HeadSHA     *string            `json:"head_sha"`
	BaseRef     *string            `json:"base_ref"`
	Reasons     []GateReason       `json:"reasons"`
	Categories  []GateCategoryView `json:"categories"`
	Policy      Policy             `json:"policy"`
	EvaluatedAt Time               `json:"evaluated_at"`
}

// ViewGate is the view of a pull request's stored gate: the decision, and
// each newest scan's block status by the policy it was judged by.
func ViewGate(g PRGate) GateView {
	v := GateView{PRID: g.PRID, Blocked: g.Gate.Blocked, Reasons: NonNil(g.Gate.Reasons), Categories: []GateCategoryView{},
		Policy: g.Gate.Policy, EvaluatedAt: g.Gate.EvaluatedAt}
	if g.HeadSHA != "" {
		v.HeadSHA = &g.HeadSHA
	}
	v.BaseRef = nullable(g.BaseRef)
	for _, c := range g.Categories {
		s, vu := c.Counts()
		cv := GateCategoryView{ScanType: c.Type, Category: c.Category, ScanID: c.ScanID, Status: c.Status,
			BlockStatus: g.Gate.Policy.ScanBlocks(c.Type, c.Status, c.Sev), SecretCount: s, VulnerabilityCount: vu, CreatedAt: c.CreatedAt,
			NewCount: c.Class.New, UnchangedCount: c.Class.Unchanged, AbsentCount: c.Class.Absent}
		if c.Class.BaselineScanID != 0 {
			cv.Baseline = &BaselineView{ScanID: c.Class.BaselineScanID, CommitSHA: nullable(c.Class.BaselineSHA), Match: c.Class.Match}
		}
		v.Categories = append(v.Categories, cv)
	}
	return v
}

// The causes of a gate change (pr.gate_changed's cause).
const (
	CauseScan      = "scan"      // a recording
	CauseAllowlist = "allowlist" // an allowlist created or changed
	CauseExpiry    = "expiry"    // an allowlist's expiry
	CausePolicy    = "policy"    // a change of the gate policy
)

// GateDecision is a gate's decision alone.
type GateDecision struct {
	Blocked bool         `json:"blocked"`
	Reasons []GateReason `json:"reasons"`
}

// GateChange is what a pr.gate_changed event carries: the gate as GET
// /pr/{pr_id}/gate shows it after the change, the pull request's
// identity, the change's sequence (the number of changes of the PR's
// decision so far), its cause, and the decision before (null for a pull
// request's first gate).
type GateChange struct {
	GateView
	VcID     int64         `json:"vc_id"`
	RepoID   int64         `json:"repo_id"`
	RepoName string        `json:"repo_name"`
	Number   int64         `json:"number"`
	Sequence int64         `json:"sequence"`
	Cause    string        `json:"cause"`
	Previous *GateDecision `json:"previous"`
}

// BranchCategoryView is a branch's newest scan of one (scan type,
// category), as GET /branches/{branch_id} shows it.
type BranchCategoryView struct {
	ScanType           ScanType `json:"scan_type"`
	Category           string   `json:"category"`
	ScanID             int64    `json:"scan_id"`
	CommitSHA          *string  `json:"commit_sha"`
	CreatedAt          Time     `json:"created_at"`
	SecretCount        int64    `json:"secret_count"`
	VulnerabilityCount int64    `json:"vulnerability_count"`
}

// BranchView is a branch as GET /branches/{branch_id} and the listing
// GET /branches show it.
type BranchView struct {
	BranchID   int64                `json:"branch_id"`
	VcID       int64                `json:"vc_id"`
	RepoID     int64                `json:"repo_id"`
	Name       string               `json:"name"`
	LastScan   Time                 `json:"last_scan"`
	Categories []BranchCategoryView `json:"categories"`
}

// ViewBranch is the view of a branch.
func ViewBranch(b Branch) BranchView {
	v := BranchView{BranchID: b.ID, VcID: b.VcID, RepoID: b.RepoID, Name: b.Name, LastScan: b.LastScan,
		Categories: make([]BranchCategoryView, 0, len(b.Categories))}
	for _, c := range b.Categories {
		cv := BranchCategoryView{ScanType: c.Type, Category: c.Category, ScanID: c.ScanID, CreatedAt: c.CreatedAt,
			SecretCount: c.SecretCount, VulnerabilityCount: c.VulnerabilityCount}
		if c.CommitSHA != "" {
			sha := c.CommitSHA
			cv.CommitSHA = &sha
		}
		v.Categories = append(v.Categories, cv)
	}
	return v
}
