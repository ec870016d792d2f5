package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/incidentlib/incidentlib"
)

// tokenPrefix marks the library's tokens, so a leaked one is recognisable
// in logs and secret scanners.
const tokenPrefix = "ilt_"

// Token lifetimes.
const (
	DefaultTokenTTL = 90 * 24 * time.Hour
	SessionTTL      = 12 * time.Hour
)

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// AddAccount creates an account. Team may be empty (public cases only).
func (s *Store) AddAccount(ctx context.Context, name, team string, role incidentlib.Role) (*incidentlib.Account, error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	if !namePattern.MatchString(name) {
		return nil, incidentlib.InvalidParam("name", "%q is not a valid account name: lower-case letters, digits, '.', '_' and '-', up to 63", name)
	}
	if team != "" && !namePattern.MatchString(team) {
		return nil, incidentlib.InvalidParam("team", "%q is not a valid team name: lower-case letters, digits, '.', '_' and '-', up to 63", team)
	}
	if !role.Allows(role) {
		return nil, incidentlib.InvalidParam("role", "unknown role %q: want reader, submitter, reviewer, admin or maintainer", role)
	}
	a := &incidentlib.Account{Name: name, Team: team, Role: role}
	err := s.pool.QueryRow(ctx, `INSERT INTO accounts (name, team, role) VALUES ($1, $2, $3) RETURNING id`, name, team, string(role)).Scan(&a.ID)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return nil, &incidentlib.Error{Code: incidentlib.ECONFLICT, Param: "name", Message: fmt.Sprintf("an account named %q exists already", name)}
	}
	if err != nil {
		return nil, classify(err)
	}
	s.audit(ctx, "admin", "account.add", name, fmt.Sprintf("team %q, role %s", team, role))
	return a, nil
}

// CreateToken makes a token for an account and returns it; only its hash
// is stored, so it is shown this once. kind is "api" or "session".
func (s *Store) CreateToken(ctx context.Context, account, kind, label string, ttl time.Duration) (string, time.Time, error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	token := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	expires := time.Now().Add(ttl).UTC().Truncate(time.Second)
	tag, err := s.pool.Exec(ctx, `INSERT INTO tokens (account_id, hash, kind, label, expires_at)
		SELECT id, $2, $3, $4, $5 FROM accounts WHERE name = $1 AND NOT disabled`, account, Hash([]byte(token)), kind, label, expires)
	if err != nil {
		return "", time.Time{}, classify(err)
	}
	if tag.RowsAffected() == 0 {
		return "", time.Time{}, &incidentlib.Error{Code: incidentlib.ENOTFOUND, Param: "account", Message: fmt.Sprintf("no account named %q", account)}
	}
	if kind == "api" {
		s.audit(ctx, account, "token.create", label, "expires "+expires.Format(time.RFC3339))
	}
	return token, expires, nil
}

// RevokeToken ends a token at once. It reports whether one was revoked.
func (s *Store) RevokeToken(ctx context.Context, token string) (bool, error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	var account string
	// The sessions it signed in end with it (they are checked against it
	// too; this records when).
	err := s.pool.QueryRow(ctx, `WITH t AS (
			UPDATE tokens SET revoked_at = now() WHERE hash = $1 AND revoked_at IS NULL RETURNING id, account_id),
		sessions AS (UPDATE tokens SET revoked_at = now() WHERE parent_id IN (SELECT id FROM t) AND revoked_at IS NULL)
		SELECT a.name FROM t JOIN accounts a ON a.id = t.account_id`, Hash([]byte(token))).Scan(&account)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, classify(err)
	}
	s.audit(ctx, account, "token.revoke", "", "")
	return true, nil
}

// Authenticate implements incidentlib.Workflow: API tokens only (a
// session token is not a Bearer token).
func (s *Store) Authenticate(ctx context.Context, token string) (*incidentlib.Account, error) {
	a, _, err := s.authenticate(ctx, token, "api")
	return a, err
}

// SessionAccount implements incidentlib.Workflow: a session is valid
// while it and the token that signed it in are, and its account is not
// disabled.
func (s *Store) SessionAccount(ctx context.Context, session string) (*incidentlib.Account, error) {
	a, _, err := s.authenticate(ctx, session, "session")
	return a, err
}

// authenticate finds the account of a token of one kind, and the token's
// row ID.
func (s *Store) authenticate(ctx context.Context, token, kind string) (*incidentlib.Account, int64, error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	unauthorized := &incidentlib.Error{Code: incidentlib.EUNAUTHORIZED, Message: "the token is not valid: unknown, revoked or expired"}
	if kind == "session" {
		unauthorized.Message = "the session has ended: sign in again"
	}
	if len(token) != len(tokenPrefix)+43 || token[:len(tokenPrefix)] != tokenPrefix {
		return nil, 0, unauthorized
	}
	var a incidentlib.Account
	var role string
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT t.id, a.id, a.name, a.team, a.role FROM tokens t JOIN accounts a ON a.id = t.account_id
		LEFT JOIN tokens p ON p.id = t.parent_id
		WHERE t.hash = $1 AND t.kind = $2 AND t.revoked_at IS NULL AND t.expires_at > now() AND NOT a.disabled
		AND (t.parent_id IS NULL OR (p.revoked_at IS NULL AND p.expires_at > now() AND p.account_id = t.account_id))
		AND (t.kind = 'api' OR t.parent_id IS NOT NULL)`,
		Hash([]byte(token)), kind).Scan(&id, &a.ID, &a.Name, &a.Team, &role)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, unauthorized
	}
	if err != nil {
		return nil, 0, writeError(err)
	}
	a.Role = incidentlib.Role(role)
	return &a, id, nil
}

// audit records an action; a failure to record is not the caller's
// failure, so it is dropped (the action itself was written).
func (s *Store) audit(ctx context.Context, actor, action, object, detail string) {
	s.pool.Exec(ctx, `INSERT INTO audit_log (actor, action, object, detail) VALUES ($1, $2, $3, $4)`, actor, action, object, detail) //nolint:errcheck
}

// writeError turns a store failure into the domain's error: unavailable
// (503, try again) when the database does not answer, internal otherwise.
func writeError(err error) error {
	err = classify(err)
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, ErrUnavailable):
		return &incidentlib.Error{Code: incidentlib.EUNAVAILABLE, Message: "the library's database does not answer; reading works, writing does not: try again in a minute"}
	case errors.Is(err, context.DeadlineExceeded),
		// 57014: a statement timeout; 55P03: a lock timeout.
		errors.As(err, &pgErr) && (pgErr.Code == "57014" || pgErr.Code == "55P03"):
		return &incidentlib.Error{Code: incidentlib.EUNAVAILABLE, Message: "the library's database did not answer in time; nothing was saved: try again in a minute"}
	case errors.Is(err, context.Canceled):
		return &incidentlib.Error{Code: incidentlib.EUNAVAILABLE, Message: "the request ended before the database answered; nothing was saved"}
	}
	var e *incidentlib.Error
	if errors.As(err, &e) {
		return e
	}
	return err
}

// MaxSessionsPerAccount bounds the sessions an account holds at once;
// signing in again past it ends the oldest.
const MaxSessionsPerAccount = 10

// StartSession implements incidentlib.Workflow: an API token signs in to
// the web pages, and the session is bound to it (it ends when the token
// is revoked or expires, and never outlives it). A session cannot start
// another. Every sign-in is in the audit log.
func (s *Store) StartSession(ctx context.Context, token string) (*incidentlib.Account, string, time.Time, error) {
	a, parent, err := s.authenticate(ctx, token, "api")
	if err != nil {
		return nil, "", time.Time{}, err
	}
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	raw := make([]byte, 32)
	rand.Read(raw)
	session := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	var expires time.Time
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO tokens (account_id, hash, kind, label, expires_at, parent_id)
			SELECT account_id, $2, 'session', 'web', LEAST(date_trunc('second', now() + make_interval(secs => $3)), expires_at), id
			FROM tokens WHERE id = $1 RETURNING expires_at`, parent, Hash([]byte(session)), SessionTTL.Seconds()).Scan(&expires)
		if err != nil {
			return err
		}
		// The oldest sessions past the limit end.
		if _, err := tx.Exec(ctx, `UPDATE tokens SET revoked_at = now() WHERE id IN (
			SELECT id FROM tokens WHERE account_id = $1 AND kind = 'session' AND revoked_at IS NULL AND expires_at > now()
			ORDER BY created_at DESC, id DESC OFFSET $2)`, a.ID, MaxSessionsPerAccount); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO audit_log (actor, action, object, detail) VALUES ($1, 'session.start', 'web', $2)`,
			a.Name, "until "+expires.UTC().Format(time.RFC3339))
		return err
	})
	if err != nil {
		return nil, "", time.Time{}, writeError(err)
	}
	return a, session, expires, nil
}

// EndSession implements incidentlib.Workflow.
func (s *Store) EndSession(ctx context.Context, session string) error {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, `UPDATE tokens SET revoked_at = now() WHERE hash = $1 AND kind = 'session' AND revoked_at IS NULL`, Hash([]byte(session)))
	return writeError(err)
}

// DisableAccount stops an account: it can no longer sign in, and every
// token and session it holds is revoked. It reports ENOTFOUND for no such
// account.
func (s *Store) DisableAccount(ctx context.Context, name, actor string) (revoked int, err error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `UPDATE accounts SET disabled = true WHERE name = $1 RETURNING id`, name).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return &incidentlib.Error{Code: incidentlib.ENOTFOUND, Param: "name", Message: fmt.Sprintf("no account named %q", name)}
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE tokens SET revoked_at = now() WHERE account_id = $1 AND revoked_at IS NULL`, id)
		if err != nil {
			return err
		}
		revoked = int(tag.RowsAffected())
		_, err = tx.Exec(ctx, `INSERT INTO audit_log (actor, action, object, detail) VALUES ($1, 'account.disable', $2, $3)`,
			actor, name, fmt.Sprintf("%d tokens and sessions revoked", revoked))
		return err
	})
	return revoked, writeError(err)
}
