package store

// The key space: every partition key the store writes or reads (of the table
// and of its indexes), as IAM's dynamodb:LeadingKeys conditions name them. A
// constant ending in "#" is a prefix, followed by an id (a LeadingKeys
// pattern adds "*"); the others are whole keys. The store builds its keys from
// these, and the operations table grants each function these, never the
// strings themselves, so a key renamed here is renamed in the IAM policies.
const (
	KeyAllow       = "ALLOW#"       // an allowlist
	KeyAllowName   = "ALLOWNAME#"   // an allowlist's name marker
	KeyAllows      = "ALLOWS"       // the listing of allowlists
	KeyAudit       = "AUDIT"        // the audit log
	KeyAuditLogin  = "AUDITLOGIN"   // the audit log of logins
	KeyAuditActor  = "AUDITACTOR#"  // the audit entries of one actor
	KeyAuditTarget = "AUDITTARGET#" // the audit entries of one target
	KeyBranch      = "BRANCH#"      // a repository's branches
	KeyBranchID    = "BRANCHID#"    // a branch by id
	KeyCounter     = "COUNTER#"     // the id counters
	KeyEmail       = "EMAIL#"       // an e-mail address marker
	KeyEvent       = "EVENT#"       // an event of the outbox
	KeyExpiry      = "EXPIRY"       // allowlists by expiry
	KeyFinding     = "FINDING#"     // a group's findings
	KeyGroup       = "GROUP#"       // a group of findings
	KeyIntegration = "INTEGRATION#" // a version-control integration
	KeyLoginFail   = "LOGINFAIL#"   // failed logins of a username
	KeyOIDCTrust   = "OIDCTRUST"    // the OIDC trusts
	KeyOnce        = "ONCE#"        // an idempotency marker
	KeyPolicy      = "POLICY"       // the gate policies
	KeyPR          = "PR#"          // a pull request
	KeyPRID        = "PRID#"        // a pull request by id
	KeyPRs         = "PRS"          // the listing of pull requests
	KeyRepoPRs     = "PRS#"         // a repository's pull requests
	KeyPRScans     = "PRSCANS#"     // a pull request's scans
	KeyScan        = "SCAN#"        // a scan and its findings
	KeySSO         = "SSO#"         // a person of single sign-on, by issuer and subject
	KeyStatus      = "STATUS#"      // a commit status
	KeyToken       = "TOKEN#"       // a token, by its hash
	KeyTokenID     = "TOKENID#"     // a token by id
	KeyUpload      = "UPLOAD#"      // a SARIF upload
	KeyUser        = "USER#"        // a user
	KeyUsername    = "USERNAME#"    // a username marker
	KeyUsers       = "USERS"        // the listing of users
	KeyUserTokens  = "USERTOKENS#"  // a user's tokens
	KeyWebhook     = "WEBHOOK#"     // a webhook
	KeyWebhooks    = "WEBHOOKS"     // the webhooks
	KeyWork        = "WORK#"        // a piece of durable work
	KeyWorkQueue   = "WORKQ"        // work by lease
)
