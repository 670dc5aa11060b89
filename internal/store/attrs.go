package store

// Attribute names, each written once. docs/DATA.md lists which item kinds
// carry which attributes.
const (
	// Keys of the table and of its sparse index GSI1.
	aPK     = "PK"
	aSK     = "SK"
	aGSI1PK = "GSI1PK"
	aGSI1SK = "GSI1SK"
	aGSI2PK = "GSI2PK" // GSI2 and GSI3: listings in an order (projection ALL)
	aGSI2SK = "GSI2SK"
	aGSI3PK = "GSI3PK"
	aGSI3SK = "GSI3SK"
	aTTL    = "ttl" // epoch seconds; DynamoDB's TTL deletes the item some time after

	// Shared by several item kinds.
	aID        = "id"
	aVer       = "ver" // optimistic version of a read-modify-write item
	aN         = "n"   // a counter's value
	aCreatedAt = "created_at"
	aUpdatedAt = "updated_at"
	aUserID    = "user_id"
	aType      = "type"
	aName      = "name"
	aActive    = "active"
	aRepoID    = "repo_id"
	aVcID      = "vc_id"

	// Users.
	aUsername   = "username"
	aUserEmail  = "user_email"
	aEmailKey   = "email_key" // the address folded: its marker's key
	aRole       = "role"
	aPwHash     = "pw_hash"
	aAddedBy    = "added_by_uid"
	aUpdatedBy  = "updated_by_uid"
	aValidFrom  = "tokens_valid_from" // epoch ms: tokens issued before are dead
	aTokenKind  = "kind"
	aExpiresAt  = "expires_at"
	aRevoked    = "revoked"
	aLoginSlots = "slots" // login attempts reserved or failed, epoch ms

	// Scans and pull requests.
	aPRRef        = "pr_ref"
	aPRNumber     = "pr_number"
	aWebhookID    = "webhook_id"
	aVcType       = "vc_type"
	aScanType     = "scan_type"
	aVcName       = "vc_name"
	aRepoName     = "repo_name"
	aStatus       = "status"
	aBlockStatus  = "block_status"
	aOtherDetails = "other_details"
	aStatURL      = "stat_url"
	aSecretCount  = "secret_count"
	aVulnCount    = "vulnerability_count"
	aCountVer     = "cver" // version of a scan's counts
	aPRName       = "pr_name"
	aPRLink       = "pr_link"
	aLastScan     = "last_scan"
	aLastScanID   = "last_scan_id"
	aBlocked      = "blocked"
	aCategory     = "category"
	aSev          = "sev"  // a finding's severity; a scan's unsuppressed counts per severity
	aNewSev       = "nsev" // a PR scan's unsuppressed new findings per severity
	aCommitSHA    = "commit_sha"
	aRef          = "ref"
	aCats         = "cats"     // a PR's newest scan per (type, category)
	aGate         = "gate"     // a PR's stored decision (JSON)
	aGateSeq      = "gseq"     // the number of changes of a PR's decision
	aHeadSHA      = "head_sha" // the commit of a PR's newest scan that named one
	aHeadAt       = "head_at"  // that scan's place in the PR's order
	aBaseRef      = "base_ref" // a PR scan's base branch; a PR's, of its newest scan that named one
	aBaseSHA      = "base_sha" // the merge base with that branch
	aBaseAt       = "base_at"  // the place in the PR's order of the scan that named the PR's base
	aPolicyVer    = "pv"       // the gate policy's version
	aPolicy       = "policy"   // a gate policy (JSON)

	// Findings.
	aRule     = "rule"
	aPath     = "path"
	aLine     = "line"
	aAliases  = "aliases"
	aSup      = "sup" // suppressed: in source, or by some allowlist
	aInSource = "src" // suppressed in the scanner's source (SARIF)
	aBy       = "by"  // allowlist ids covering it, by the index of its group
	aFindVer  = "fv"  // version of the finding's judgement
	aJudgedAt = "gvs" // the group version of each group's judgement, by group index
	aFP       = "fp"  // its fingerprint
	aFPSource = "fps" // where its fingerprint comes from

	// Allowlists, their rules and groups.
	aGlobal    = "global"
	aPaths     = "paths"
	aFPrints   = "fprints" // the only findings' fingerprints an allowlist covers
	aExpired   = "expired" // the allowlist's expiry is applied
	aReason    = "reason"
	aRepos     = "repos"
	aVcs       = "vcs"
	aComments  = "comments"
	aCreatedBy = "created_by"
	aUpdBy     = "updated_by"
	aCreatedOn = "created_on"
	aUpdatedOn = "updated_on"
	aText      = "text"
	aCommentBy = "by"
	aCommentAt = "at"
	aGroupVer  = "gv" // version of a group's rules
	aScanID    = "scan"
	aIndexes   = "idx"
)
