package incidentlib

import (
	"context"
	"time"
)

// This file holds the write path of a shared library (package pgstore
// implements it): accounts with roles, drafts that are reviewed and then
// published as cases, and every version of every case.

// Error codes of the write path, beside those in error.go (where
// EUNAVAILABLE, "try again later", also covers a store that does not
// answer).
const (
	EUNAUTHORIZED = "unauthorized" // no valid token or session
	EFORBIDDEN    = "forbidden"    // signed in, but the role or team does not allow it
	ECONFLICT     = "conflict"     // the draft is not in a state that allows it
)

// Role is what an account may do. Each role may do what the ones before it
// may.
type Role string

// The roles, least first.
const (
	RoleReader    Role = "reader"    // reads the team's private cases
	RoleSubmitter Role = "submitter" // writes and submits drafts
	RoleReviewer  Role = "reviewer"  // approves (publishes) or returns drafts
	RoleAdmin     Role = "admin"     // manages accounts and tokens
	// RoleMaintainer looks after the whole library: edits any public case
	// (the shipped corpus too), reads any public case's history, and may
	// withdraw and purge cases.
	RoleMaintainer Role = "maintainer"
)

// Roles lists the roles, least first.
var Roles = []Role{RoleReader, RoleSubmitter, RoleReviewer, RoleAdmin, RoleMaintainer}

// Allows reports whether the role includes another.
func (r Role) Allows(need Role) bool { return r.rank() >= need.rank() && need.rank() > 0 }

func (r Role) rank() int {
	for i, v := range Roles {
		if v == r {
			return i + 1
		}
	}
	return 0
}

// Account is someone who signs in.
type Account struct {
	ID   int64
	Name string
	Team string // the team whose private cases the account sees
	Role Role
}

// Draft states.
const (
	DraftOpen      = "draft"     // being written
	DraftSubmitted = "submitted" // waiting for review
	DraftPublished = "published" // approved: a case now
	DraftReturned  = "returned"  // sent back with a note; editable again
)

// Draft is a case being written, new or an edit of a published one.
type Draft struct {
	ID         int64
	CaseID     string // the case it edits, or the ID it got when published; "" before
	Private    bool   // published for the author's team only
	Team       string
	Content    []byte // the case file, YAML; its id line is set at publication
	State      string
	Author     string
	Reviewer   string
	ReviewNote string
	Created    time.Time
	Updated    time.Time
}

// CaseVersion is one stored version of a case.
type CaseVersion struct {
	Version int
	Content []byte
	By      string
	At      time.Time
}

// Workflow is the write path. Every method checks the account's role and
// team; the content of drafts is validated by the caller first.
type Workflow interface {
	// Authenticate returns the account an API token belongs to, or
	// EUNAUTHORIZED (a session is not an API token).
	Authenticate(ctx context.Context, token string) (*Account, error)
	// SessionAccount returns the account a web session belongs to, or
	// EUNAUTHORIZED: a session lives only while the token that started it
	// does.
	SessionAccount(ctx context.Context, session string) (*Account, error)
	// CreateDraft starts a draft, of a new case or of an edit to caseID.
	CreateDraft(ctx context.Context, a *Account, caseID string, private bool, content []byte) (*Draft, error)
	// UpdateDraft replaces a draft's content while it is open or returned.
	UpdateDraft(ctx context.Context, a *Account, id int64, content []byte) (*Draft, error)
	// SubmitDraft sends a draft for review.
	SubmitDraft(ctx context.Context, a *Account, id int64) (*Draft, error)
	// ReviewDraft publishes a submitted draft (approve) or returns it with
	// a note. Publishing gives a new case the next free ID of its range.
	ReviewDraft(ctx context.Context, a *Account, id int64, approve bool, note string) (*Draft, error)
	// FindDraft returns a draft the account may see.
	FindDraft(ctx context.Context, a *Account, id int64) (*Draft, error)
	// ListDrafts returns one page (from 1) of the drafts the account may
	// see, DraftsPerPage at most, and whether more follow; newest first,
	// in one state or all ("").
	ListDrafts(ctx context.Context, a *Account, state string, page int) (drafts []*Draft, more bool, err error)
	// CaseHistory returns every version of a case the account may see.
	CaseHistory(ctx context.Context, a *Account, caseID string) ([]CaseVersion, error)
	// StartSession signs in to the web pages with an API token: a session
	// bound to that token and its account, which expires within hours and
	// never outlives the token.
	StartSession(ctx context.Context, token string) (a *Account, session string, expires time.Time, err error)
	// EndSession signs out: the session token stops working at once.
	EndSession(ctx context.Context, token string) error
}

// DraftsPerPage is how many drafts one page of ListDrafts holds.
const DraftsPerPage = 100

// Problem is one thing wrong with a case file, at a line of it.
type Problem struct {
	Line    int
	Message string
}
