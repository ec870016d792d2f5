package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/incidentlib/incidentlib"
)

// IDRange is the span of case numbers that publication draws from.
type IDRange struct{ From, To int }

// DefaultPublicRange and DefaultPrivateRange are where published cases get
// their IDs unless configured: above the shipped corpus's numbers, so a
// team's cases never collide with a later shipped case.
var (
	DefaultPublicRange  = IDRange{From: 5000, To: 8999}
	DefaultPrivateRange = IDRange{From: 9000, To: 9999}
)

// SetIDRanges configures publication: the range for public cases, and per
// team the range for its private cases (a team without one uses
// DefaultPrivateRange). Call it before serving.
func (s *Store) SetIDRanges(public IDRange, private map[string]IDRange) {
	s.publicRange, s.privateRanges = public, private
}

// SetPublishCheck sets what publication runs on a draft's case file, in
// the transaction that writes it: it returns the file with its ID given on
// the parsed document, or the problems of the file under that ID. The
// store parses no YAML itself; without a check it publishes nothing.
func (s *Store) SetPublishCheck(check func(content []byte, id string) ([]byte, []incidentlib.Problem)) {
	s.publishCheck = check
}

// PrivateBlock is the size of the block of IDs a team without a
// configured range gets from DefaultPrivateRange at its first private
// publication.
const PrivateBlock = 100

// rangeFor returns the IDs a draft's publication draws from, in the
// publishing transaction: the public range, the team's configured range,
// or the team's own block of the default private range (allocated the
// first time, so no two teams share numbers).
func (s *Store) rangeFor(ctx context.Context, tx pgx.Tx, d *incidentlib.Draft) (IDRange, error) {
	if !d.Private {
		if s.publicRange.To == 0 {
			return DefaultPublicRange, nil
		}
		return s.publicRange, nil
	}
	if r, ok := s.privateRanges[d.Team]; ok {
		return r, nil
	}
	var r IDRange
	err := tx.QueryRow(ctx, `SELECT from_id, to_id FROM team_id_blocks WHERE team = $1`, d.Team).Scan(&r.From, &r.To)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return r, err
	}
	// The next free block (the caller holds the write lock).
	var next int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(max(to_id) + 1, $1) FROM team_id_blocks WHERE from_id BETWEEN $1 AND $2`,
		DefaultPrivateRange.From, DefaultPrivateRange.To).Scan(&next); err != nil {
		return r, err
	}
	r = IDRange{From: next, To: next + PrivateBlock - 1}
	for moved := true; moved; { // past the ranges teams are configured with
		moved = false
		for _, c := range s.privateRanges {
			if r.From <= c.To && c.From <= r.To {
				r = IDRange{From: c.To + 1, To: c.To + PrivateBlock}
				moved = true
			}
		}
	}
	if r.To > DefaultPrivateRange.To {
		return r, conflict("no block of private case IDs is left for team %s in %s–%s: give it a range with serve --team-ids %s=FROM-TO",
			d.Team, caseID(DefaultPrivateRange.From), caseID(DefaultPrivateRange.To), d.Team)
	}
	_, err = tx.Exec(ctx, `INSERT INTO team_id_blocks (team, from_id, to_id) VALUES ($1, $2, $3)`, d.Team, r.From, r.To)
	return r, err
}

// mayEditPublic is the ownership rule of public cases: the team that
// published one edits it, and maintainers edit any (the shipped corpus and
// imported files, owned by no team, only they).
func mayEditPublic(team string, role incidentlib.Role, owner string) bool {
	return role == incidentlib.RoleMaintainer || (owner != "" && owner == team)
}

func ownerOnly(caseID, owner string) error {
	if owner == "" {
		return forbidden("%s is part of the shipped or imported library: only a maintainer edits it; propose the change to one", caseID)
	}
	return forbidden("%s was published by another team: only that team or a maintainer edits it", caseID)
}

func forbidden(format string, args ...any) error {
	return &incidentlib.Error{Code: incidentlib.EFORBIDDEN, Message: fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) error {
	return &incidentlib.Error{Code: incidentlib.ECONFLICT, Message: fmt.Sprintf(format, args...)}
}

const draftColumns = `id, case_id, private, team, content, state, author, reviewer, review_note, created_at, updated_at`

func scanDraft(row pgx.CollectableRow) (*incidentlib.Draft, error) {
	var d incidentlib.Draft
	err := row.Scan(&d.ID, &d.CaseID, &d.Private, &d.Team, &d.Content, &d.State, &d.Author, &d.Reviewer, &d.ReviewNote, &d.Created, &d.Updated)
	return &d, err
}

// CreateDraft implements incidentlib.Workflow.
func (s *Store) CreateDraft(ctx context.Context, a *incidentlib.Account, caseID string, private bool, content []byte) (*incidentlib.Draft, error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	if !a.Role.Allows(incidentlib.RoleSubmitter) {
		return nil, forbidden("writing drafts needs the submitter role; %s is a %s", a.Name, a.Role)
	}
	if caseID != "" {
		var team, owner string
		err := s.pool.QueryRow(ctx, `SELECT team, owner_team FROM cases WHERE id = $1 AND withdrawn_at IS NULL`, caseID).Scan(&team, &owner)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && team != "" && team != a.Team) {
			return nil, &incidentlib.Error{Code: incidentlib.ENOTFOUND, Param: "case_id", Message: fmt.Sprintf("no case %s in the library", caseID)}
		}
		if err != nil {
			return nil, writeError(err)
		}
		if team == "" && !mayEditPublic(a.Team, a.Role, owner) {
			return nil, ownerOnly(caseID, owner)
		}
		private = team != ""
	}
	if private && a.Team == "" {
		return nil, forbidden("a private case belongs to a team, and %s has none", a.Name)
	}
	var d *incidentlib.Draft
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.checkQuota(ctx, tx, a, 0, len(content), true); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `INSERT INTO drafts (case_id, private, team, content, state, author)
			VALUES ($1, $2, $3, $4, 'draft', $5) RETURNING `+draftColumns, caseID, private, a.Team, content, a.Name)
		if err != nil {
			return err
		}
		d, err = pgx.CollectExactlyOneRow(rows, scanDraft)
		return err
	})
	if err != nil {
		return nil, writeError(err)
	}
	s.audit(ctx, a.Name, "draft.create", draftName(d), "")
	return d, nil
}

// Quotas per account, whatever the request rate limits: open drafts (not
// yet published) and the bytes they hold. Sessions are bounded by
// MaxSessionsPerAccount.
const (
	MaxOpenDrafts      = 100
	MaxOpenDraftBytes  = 16 << 20
	quotaHint          = "; ask a reviewer to publish or return some first"
	openDraftCondition = `author = $1 AND state IN ('draft', 'submitted', 'returned')`
)

// checkQuota refuses a draft that would take the account past its quotas:
// adding bytes (in place of draft except's, 0 for none) and, when adding,
// one more draft. It locks the account's row, so an account's writes are
// counted one at a time.
func (s *Store) checkQuota(ctx context.Context, tx pgx.Tx, a *incidentlib.Account, except int64, bytes int, adding bool) error {
	if _, err := tx.Exec(ctx, `SELECT 1 FROM accounts WHERE name = $1 FOR UPDATE`, a.Name); err != nil {
		return err
	}
	var n int
	var total int64
	if err := tx.QueryRow(ctx, `SELECT count(*), COALESCE(sum(octet_length(content)), 0) FROM drafts WHERE `+openDraftCondition+` AND id <> $2`,
		a.Name, except).Scan(&n, &total); err != nil {
		return err
	}
	if adding && n >= MaxOpenDrafts {
		return forbidden("%s has %d open drafts, the most an account may hold"+quotaHint, a.Name, n)
	}
	if total+int64(bytes) > MaxOpenDraftBytes {
		return forbidden("%s's open drafts would hold %d KiB, more than the %d MiB an account may hold"+quotaHint,
			a.Name, (total+int64(bytes))>>10, MaxOpenDraftBytes>>20)
	}
	return nil
}

func draftName(d *incidentlib.Draft) string { return "draft " + strconv.FormatInt(d.ID, 10) }

// FindDraft implements incidentlib.Workflow: a draft is seen by its team.
func (s *Store) FindDraft(ctx context.Context, a *incidentlib.Account, id int64) (*incidentlib.Draft, error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	return s.findDraft(ctx, s.pool, a, id, false)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func (s *Store) findDraft(ctx context.Context, q querier, a *incidentlib.Account, id int64, lock bool) (*incidentlib.Draft, error) {
	sql := `SELECT ` + draftColumns + ` FROM drafts WHERE id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	rows, err := q.Query(ctx, sql, id)
	if err != nil {
		return nil, writeError(err)
	}
	d, err := pgx.CollectExactlyOneRow(rows, scanDraft)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && d.Team != a.Team) {
		return nil, &incidentlib.Error{Code: incidentlib.ENOTFOUND, Param: "id", Message: fmt.Sprintf("no draft %d that %s may see", id, a.Name)}
	}
	if err != nil {
		return nil, writeError(err)
	}
	return d, nil
}

// ListDrafts implements incidentlib.Workflow.
func (s *Store) ListDrafts(ctx context.Context, a *incidentlib.Account, state string, page int) ([]*incidentlib.Draft, bool, error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	page = max(page, 1)
	rows, err := s.pool.Query(ctx, `SELECT `+draftColumns+` FROM drafts WHERE team = $1 AND ($2 = '' OR state = $2)
		ORDER BY updated_at DESC, id DESC LIMIT $3 OFFSET $4`, a.Team, state, incidentlib.DraftsPerPage+1, (page-1)*incidentlib.DraftsPerPage)
	if err != nil {
		return nil, false, writeError(err)
	}
	ds, err := pgx.CollectRows(rows, scanDraft)
	if err != nil {
		return nil, false, writeError(err)
	}
	more := len(ds) > incidentlib.DraftsPerPage
	if more {
		ds = ds[:incidentlib.DraftsPerPage]
	}
	return ds, more, nil
}

// UpdateDraft implements incidentlib.Workflow.
func (s *Store) UpdateDraft(ctx context.Context, a *incidentlib.Account, id int64, content []byte) (*incidentlib.Draft, error) {
	return s.changeDraft(ctx, a, id, "draft.update", func(tx pgx.Tx, d *incidentlib.Draft) error {
		if d.Author != a.Name {
			return forbidden("only the author, %s, edits draft %d", d.Author, d.ID)
		}
		if d.State != incidentlib.DraftOpen && d.State != incidentlib.DraftReturned {
			return conflict("draft %d is %s and can no longer be edited", d.ID, d.State)
		}
		if err := s.checkQuota(ctx, tx, a, d.ID, len(content), false); err != nil {
			return err
		}
		d.Content = content
		_, err := tx.Exec(ctx, `UPDATE drafts SET content = $2, updated_at = now() WHERE id = $1`, d.ID, content)
		return err
	})
}

// SubmitDraft implements incidentlib.Workflow.
func (s *Store) SubmitDraft(ctx context.Context, a *incidentlib.Account, id int64) (*incidentlib.Draft, error) {
	return s.changeDraft(ctx, a, id, "draft.submit", func(tx pgx.Tx, d *incidentlib.Draft) error {
		if d.Author != a.Name {
			return forbidden("only the author, %s, submits draft %d", d.Author, d.ID)
		}
		if d.State != incidentlib.DraftOpen && d.State != incidentlib.DraftReturned {
			return conflict("draft %d is %s, not open", d.ID, d.State)
		}
		d.State = incidentlib.DraftSubmitted
		_, err := tx.Exec(ctx, `UPDATE drafts SET state = 'submitted', updated_at = now() WHERE id = $1`, d.ID)
		return err
	})
}

// ReviewDraft implements incidentlib.Workflow.
func (s *Store) ReviewDraft(ctx context.Context, a *incidentlib.Account, id int64, approve bool, note string) (*incidentlib.Draft, error) {
	action := "draft.return"
	if approve {
		action = "draft.publish"
	}
	return s.changeDraft(ctx, a, id, action, func(tx pgx.Tx, d *incidentlib.Draft) error {
		if !a.Role.Allows(incidentlib.RoleReviewer) {
			return forbidden("reviewing needs the reviewer role; %s is a %s", a.Name, a.Role)
		}
		if d.Author == a.Name && !a.Role.Allows(incidentlib.RoleAdmin) {
			return forbidden("a draft is reviewed by someone other than its author")
		}
		if d.State != incidentlib.DraftSubmitted {
			return conflict("draft %d is %s, not submitted for review", d.ID, d.State)
		}
		d.Reviewer, d.ReviewNote = a.Name, note
		if !approve {
			d.State = incidentlib.DraftReturned
			_, err := tx.Exec(ctx, `UPDATE drafts SET state = 'returned', reviewer = $2, review_note = $3, updated_at = now() WHERE id = $1`, d.ID, a.Name, note)
			return err
		}
		return s.publish(ctx, tx, a, d)
	})
}

// publish writes a draft as a case, a new version of it, in the caller's
// transaction (which holds the write lock).
func (s *Store) publish(ctx context.Context, tx pgx.Tx, a *incidentlib.Account, d *incidentlib.Draft) error {
	if d.CaseID == "" {
		r, err := s.rangeFor(ctx, tx, d)
		if err != nil {
			return err
		}
		var last string
		err = tx.QueryRow(ctx, `SELECT id FROM cases WHERE id BETWEEN $1 AND $2 ORDER BY id DESC LIMIT 1`,
			caseID(r.From), caseID(r.To)).Scan(&last)
		next := r.From
		if err == nil {
			n, _ := strconv.Atoi(last[3:])
			next = n + 1
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if next > r.To {
			return conflict("no free case ID left in %s–%s: widen the range", caseID(r.From), caseID(r.To))
		}
		d.CaseID = caseID(next)
	}
	if d.CaseID != "" && !d.Private {
		var owner string
		var withdrawn bool
		err := tx.QueryRow(ctx, `SELECT owner_team, withdrawn_at IS NOT NULL FROM cases WHERE id = $1`, d.CaseID).Scan(&owner, &withdrawn)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err == nil && !withdrawn && !mayEditPublic(d.Team, a.Role, owner) {
			return ownerOnly(d.CaseID, owner)
		}
	}
	if s.publishCheck == nil {
		return errors.New("the store has no publish check configured (SetPublishCheck); nothing is published unchecked")
	}
	content, problems := s.publishCheck(d.Content, d.CaseID)
	if len(problems) > 0 {
		msg := fmt.Sprintf("the case file does not validate as %s: ", d.CaseID)
		for i, p := range problems {
			if i > 0 {
				msg += "; "
			}
			if p.Line > 0 {
				msg += fmt.Sprintf("line %d: ", p.Line)
			}
			msg += p.Message
		}
		return &incidentlib.Error{Code: incidentlib.EINVALID, Param: "content", Message: msg}
	}
	d.Content = content
	team := ""
	if d.Private {
		team = d.Team
	}
	hash := Hash(d.Content)
	var version int
	err := tx.QueryRow(ctx, `
		INSERT INTO cases (id, file_name, content, content_hash, version, updated_by, team, owner_team)
		VALUES ($1, $2, $3, $4, 1, $5, $6, $7)
		ON CONFLICT (id) DO UPDATE SET content = EXCLUDED.content, content_hash = EXCLUDED.content_hash,
			version = cases.version + 1, seq = nextval('change_seq'), updated_at = now(), updated_by = EXCLUDED.updated_by,
			withdrawn_at = NULL
		RETURNING version`, d.CaseID, d.CaseID+".yaml", d.Content, hash, d.Author, team, d.Team).Scan(&version)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO case_versions (case_id, version, content, content_hash, created_by) VALUES ($1, $2, $3, $4, $5)`,
		d.CaseID, version, d.Content, hash, d.Author+" (reviewed by "+a.Name+")"); err != nil {
		return err
	}
	d.State = incidentlib.DraftPublished
	_, err = tx.Exec(ctx, `UPDATE drafts SET state = 'published', case_id = $2, content = $3, reviewer = $4, review_note = $5, updated_at = now() WHERE id = $1`,
		d.ID, d.CaseID, d.Content, a.Name, d.ReviewNote)
	return err
}

func caseID(n int) string { return fmt.Sprintf("IL-%04d", n) }

// changeDraft runs one change to a draft in a transaction that holds the
// write lock and the draft's row, then records it in the audit log.
func (s *Store) changeDraft(ctx context.Context, a *incidentlib.Account, id int64, action string, change func(pgx.Tx, *incidentlib.Draft) error) (*incidentlib.Draft, error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	var d *incidentlib.Draft
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, writeLock); err != nil {
			return err
		}
		var err error
		if d, err = s.findDraft(ctx, tx, a, id, true); err != nil {
			return err
		}
		if err := change(tx, d); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO audit_log (actor, action, object, detail) VALUES ($1, $2, $3, $4)`,
			a.Name, action, draftName(d), d.CaseID)
		return err
	})
	if err != nil {
		return nil, writeError(err)
	}
	return d, nil
}

// CaseHistory implements incidentlib.Workflow.
func (s *Store) CaseHistory(ctx context.Context, a *incidentlib.Account, id string) ([]incidentlib.CaseVersion, error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	var team, owner string
	err := s.pool.QueryRow(ctx, `SELECT team, owner_team FROM cases WHERE id = $1`, id).Scan(&team, &owner)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && team != "" && (a == nil || team != a.Team)) {
		return nil, &incidentlib.Error{Code: incidentlib.ENOTFOUND, Param: "id", Message: fmt.Sprintf("no case %s in the library", id)}
	}
	if err != nil {
		return nil, writeError(err)
	}
	// Old versions may hold what an edit took out: a public case's history
	// is for the team that owns it and the maintainers.
	if team == "" && (a == nil || !mayEditPublic(a.Team, a.Role, owner)) {
		return nil, forbidden("the history of %s is for the team that published it and the maintainers", id)
	}
	rows, err := s.pool.Query(ctx, `SELECT version, content, created_by, created_at FROM case_versions WHERE case_id = $1 ORDER BY version`, id)
	if err != nil {
		return nil, writeError(err)
	}
	vs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (incidentlib.CaseVersion, error) {
		var v incidentlib.CaseVersion
		return v, row.Scan(&v.Version, &v.Content, &v.By, &v.At)
	})
	return vs, writeError(err)
}

var _ incidentlib.Workflow = (*Store)(nil)
