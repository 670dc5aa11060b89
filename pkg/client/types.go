package client

import "encoding/json"

// Envelope names what a scan is of: the envelope of POST /pr/scan without
// scan_type and findings, as the SARIF routes take it. A scan is of a pull
// request (PR) or of a branch (Branch, a push's analysis): the one left
// zero is not sent.
type Envelope struct {
	VcType    string `json:"vc_type"`
	VcID      int64  `json:"vc_id"`
	VcName    string `json:"vc_name"`
	RepoID    int64  `json:"repo_id"`
	RepoName  string `json:"repo_name"`
	WebhookID int64  `json:"webhook_id"`
	PR        PRRef  `json:"pr,omitzero"`
	Branch    string `json:"branch,omitempty"`
	// The commit and ref scanned and the analysis category (docs/API.md
	// section 11); empty ones are not sent.
	CommitSHA string `json:"commit_sha,omitempty"`
	Ref       string `json:"ref,omitempty"`
	Category  string `json:"category,omitempty"`
	// A pull request's base branch and the merge base of its head and
	// base (what its findings are classified against); not sent when
	// empty.
	BaseRef string `json:"base_ref,omitempty"`
	BaseSHA string `json:"base_sha,omitempty"`
}

// PRRef is the envelope's pull request: its number in the version-control
// system (pr_id), title and link.
type PRRef struct {
	Number int64  `json:"pr_id"`
	Name   string `json:"pr_name"`
	Link   string `json:"pr_link"`
}

// Page is one page of a listing.
type Page[T any] struct {
	Raw
	Items      []T     `json:"items"`
	NextCursor *string `json:"next_cursor"`
}

// PR is a pull request as GET /pr/{pr_id} shows it: id is the service's,
// pr_id the number in the version-control system.
type PR struct {
	ID                 int64  `json:"id"`
	Number             int64  `json:"pr_id"`
	Name               string `json:"pr_name"`
	Link               string `json:"pr_link"`
	RepoID             int64  `json:"repo_id"`
	VcID               int64  `json:"vc_id"`
	LastScan           string `json:"last_scan"`
	SecretCount        int64  `json:"secret_count"`
	VulnerabilityCount int64  `json:"vulnerability_count"`
}

// keepRaw decodes b into v (a type without this UnmarshalJSON) and keeps
// b in r.
func keepRaw(b []byte, v any, r *Raw) error {
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	r.JSON = append(json.RawMessage(nil), b...)
	return nil
}

// Scan is a scan as GET /pr/scan/{id} shows it.
type Scan struct {
	Raw
	ID                 int64           `json:"id"`
	PRID               int64           `json:"pr_id"`
	ScanType           string          `json:"scan_type"`
	CreatedAt          string          `json:"created_at"`
	RepoName           string          `json:"repo_name"`
	PR                 PR              `json:"pr"`
	Status             string          `json:"status"`
	BlockStatus        bool            `json:"block_status"`
	OtherDetails       json.RawMessage `json:"other_details"`
	SecretCount        int64           `json:"secret_count"`
	VulnerabilityCount int64           `json:"vulnerability_count"`
}

// UnmarshalJSON keeps the scan's body beside its fields.
func (s *Scan) UnmarshalJSON(b []byte) error {
	type plain Scan
	return keepRaw(b, (*plain)(s), &s.Raw)
}

// Category is the scan's analysis category (other_details.category), or
// "" when the scan has none.
func (s Scan) Category() string {
	var d struct {
		Category string `json:"category"`
	}
	_ = json.Unmarshal(s.OtherDetails, &d)
	return d.Category
}

// Finding is one finding of a scan, as its listing shows it.
type Finding struct {
	Raw
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	Aliases      []string `json:"aliases"`
	Rule         *string  `json:"rule"`
	Path         *string  `json:"path"`
	Line         *int64   `json:"line"`
	Severity     string   `json:"severity,omitempty"`
	Suppressed   bool     `json:"suppressed"`
	SuppressedBy []int64  `json:"suppressed_by"`
	Fingerprint  *string  `json:"fingerprint"`
	// BaselineState is new or unchanged against the pull request's
	// baseline; nil for a branch analysis's findings.
	BaselineState *string `json:"baseline_state"`
}

// UnmarshalJSON keeps the finding's body beside its fields.
func (f *Finding) UnmarshalJSON(b []byte) error {
	type plain Finding
	return keepRaw(b, (*plain)(f), &f.Raw)
}

// SARIFResult is the answer of POST /pr/scan/sarif.
type SARIFResult struct {
	Raw
	Scans              []Scan `json:"scans"`
	Results            int    `json:"results"`
	Recorded           int    `json:"recorded"`
	SuppressedInSource int    `json:"suppressed_in_source"`
	Skipped            int    `json:"skipped"`
}

// CreatedUpload is the answer of POST /pr/scan/sarif/uploads.
type CreatedUpload struct {
	ID            int64             `json:"id"`
	Status        string            `json:"status"`
	UploadURL     string            `json:"upload_url"`
	UploadHeaders map[string]string `json:"upload_headers"`
	ExpiresAt     string            `json:"expires_at"`
}

// Upload is a large upload as GET /pr/scan/sarif/uploads/{id} shows it.
type Upload struct {
	Raw
	ID                 int64     `json:"id"`
	Status             string    `json:"status"`
	Errors             []Problem `json:"errors"`
	ScanIDs            []int64   `json:"scan_ids"`
	Results            int       `json:"results"`
	Recorded           int       `json:"recorded"`
	SuppressedInSource int       `json:"suppressed_in_source"`
	Skipped            int       `json:"skipped"`
}

// Gate is a pull request's gate, GET /pr/{pr_id}/gate: whether it may
// merge, why not, and the newest scan of each (scan type, category).
type Gate struct {
	Raw
	PRID        int64          `json:"pr_id"`
	Blocked     bool           `json:"blocked"`
	HeadSHA     *string        `json:"head_sha"`
	BaseRef     *string        `json:"base_ref"`
	Reasons     []GateReason   `json:"reasons"`
	Categories  []GateCategory `json:"categories"`
	Policy      map[string]any `json:"policy"`
	EvaluatedAt string         `json:"evaluated_at"`
}

// GateReason is one reason a pull request is blocked: findings, a
// pending, failed or missing scan of a category. Count is the findings
// that block (only new ones under block_on new), NewCount how many of
// those are new against the scan's baseline (findings reasons only).
type GateReason struct {
	Kind     string `json:"kind"`
	ScanType string `json:"scan_type"`
	Category string `json:"category"`
	ScanID   *int64 `json:"scan_id"`
	Count    int64  `json:"count"`
	NewCount int64  `json:"new_count"`
}

// GateCategory is the newest scan of one (scan type, category).
type GateCategory struct {
	ScanType           string `json:"scan_type"`
	Category           string `json:"category"`
	ScanID             int64  `json:"scan_id"`
	Status             string `json:"status"`
	BlockStatus        bool   `json:"block_status"`
	SecretCount        int64  `json:"secret_count"`
	VulnerabilityCount int64  `json:"vulnerability_count"`
	CreatedAt          string `json:"created_at"`
	// Baseline is the base branch's analysis the scan was classified
	// against, nil when there was none (every finding is new).
	Baseline       *Baseline `json:"baseline"`
	NewCount       int64     `json:"new_count"`
	UnchangedCount int64     `json:"unchanged_count"`
	AbsentCount    int64     `json:"absent_count"`
}

// Baseline is the base branch's analysis a pull request's scan was
// classified against: the one at its base commit (exact) or the
// branch's newest (newest).
type Baseline struct {
	ScanID    int64   `json:"scan_id"`
	CommitSHA *string `json:"commit_sha"`
	Match     string  `json:"match"`
}

// Allowlist is an allowlist as GET /whitelist lists it.
type Allowlist struct {
	Raw
	ID        int64    `json:"id"`
	Type      string   `json:"type"`
	Name      string   `json:"name"`
	Active    bool     `json:"active"`
	Global    bool     `json:"global_"`
	Repos     []int64  `json:"repos"`
	Vcs       []int64  `json:"vcs"`
	Paths     []string `json:"paths"`
	Reason    *string  `json:"reason"`
	ExpiresAt *string  `json:"expires_at"`
	Expired   bool     `json:"expired"`
}

// UnmarshalJSON keeps the allowlist's body beside its fields.
func (a *Allowlist) UnmarshalJSON(b []byte) error {
	type plain Allowlist
	return keepRaw(b, (*plain)(a), &a.Raw)
}

// AllowlistChange is the answer of creating or modifying an allowlist.
type AllowlistChange struct {
	Raw
	ID                     int64  `json:"id"`
	Type                   string `json:"type"`
	Name                   string `json:"name"`
	SecretsUpdated         int64  `json:"secrets_updated"`
	VulnerabilitiesUpdated int64  `json:"vulnerabilities_updated"`
	// Reevaluation is set when the change answered 202: its findings are
	// re-evaluated in the background (GET /reevaluations/{id} has the
	// exact counts once complete; the counts above are then 0).
	Reevaluation *struct {
		ID       int64  `json:"id"`
		Status   string `json:"status"`
		Findings *int64 `json:"findings"`
	} `json:"reevaluation"`
}

// TokenRequest is the body of POST /auth/tokens; zero members are left to
// the service's defaults.
type TokenRequest struct {
	Name          string    `json:"name"`
	ExpiresInDays int       `json:"expires_in_days,omitempty"`
	Scope         string    `json:"scope,omitempty"`
	Repos         []RepoRef `json:"repos,omitempty"` // none: every repository
}

// RepoRef is a repository a token is scoped to.
type RepoRef struct {
	VcID   int64 `json:"vc_id"`
	RepoID int64 `json:"repo_id"`
}

// Token is a personal token as POST /auth/tokens answers it, the only
// time its secret is shown.
type Token struct {
	Raw
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Scope       string `json:"scope"`
	ExpiresAt   string `json:"expires_at"`
	AccessToken string `json:"access_token"`
}

// Login is the answer of POST /auth/token.
type Login struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
}

// CIToken is the scan token a CI job's id token was exchanged for.
type CIToken struct {
	Login
	Scope string    `json:"scope"`
	Repos []RepoRef `json:"repos"`
}
