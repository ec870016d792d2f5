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
	if !namePattern.MatchString(name) {
		return nil, incidentlib.InvalidParam("name", "%q is not a valid account name: lower-case letters, digits, '.', '_' and '-', up to 63", name)
	}
	if team != "" && !namePattern.MatchString(team) {
		return nil, incidentlib.InvalidParam("team", "%q is not a valid team name: lower-case letters, digits, '.', '_' and '-', up to 63", team)
	}
	if !role.Allows(role) {
		return nil, incidentlib.InvalidParam("role", "unknown role %q: want reader, submitter, reviewer or admin", role)
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
	var account string
	err := s.pool.QueryRow(ctx, `UPDATE tokens t SET revoked_at = now() FROM accounts a
		WHERE t.hash = $1 AND t.revoked_at IS NULL AND a.id = t.account_id RETURNING a.name`, Hash([]byte(token))).Scan(&account)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, classify(err)
	}
	s.audit(ctx, account, "token.revoke", "", "")
	return true, nil
}

// Authenticate implements incidentlib.Workflow.
func (s *Store) Authenticate(ctx context.Context, token string) (*incidentlib.Account, error) {
	unauthorized := &incidentlib.Error{Code: incidentlib.EUNAUTHORIZED, Message: "the token is not valid: unknown, revoked or expired"}
	if len(token) != len(tokenPrefix)+43 || token[:len(tokenPrefix)] != tokenPrefix {
		return nil, unauthorized
	}
	var a incidentlib.Account
	var role string
	err := s.pool.QueryRow(ctx, `SELECT a.id, a.name, a.team, a.role FROM tokens t JOIN accounts a ON a.id = t.account_id
		WHERE t.hash = $1 AND t.revoked_at IS NULL AND t.expires_at > now() AND NOT a.disabled`, Hash([]byte(token))).Scan(&a.ID, &a.Name, &a.Team, &role)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, unauthorized
	}
	if err != nil {
		return nil, writeError(err)
	}
	a.Role = incidentlib.Role(role)
	return &a, nil
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
	if errors.Is(err, ErrUnavailable) {
		return &incidentlib.Error{Code: incidentlib.EUNAVAILABLE, Message: "the library's database does not answer; reading works, writing does not: try again in a minute"}
	}
	var e *incidentlib.Error
	if errors.As(err, &e) {
		return e
	}
	return err
}

// StartSession implements incidentlib.Workflow.
func (s *Store) StartSession(ctx context.Context, a *incidentlib.Account) (string, time.Time, error) {
	tok, exp, err := s.CreateToken(ctx, a.Name, "session", "web", SessionTTL)
	if err != nil {
		return "", time.Time{}, writeError(err)
	}
	return tok, exp, nil
}

// EndSession implements incidentlib.Workflow.
func (s *Store) EndSession(ctx context.Context, token string) error {
	_, err := s.RevokeToken(ctx, token)
	return writeError(err)
}
