// Package pgstore keeps the library in PostgreSQL, for several replicas
// that share one set of cases. Each replica still searches its own
// in-memory index; the store is where cases live and the change feed
// (a sequence number on every write, announced with NOTIFY) tells the
// replicas what to re-read.
package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/incidentlib/incidentlib"
)

// channel is the NOTIFY channel every write announces its sequence on.
const channel = "incidentlib_changes"

// writeLock serialises writers, so that sequence numbers commit in order
// and a replica asking for "after N" never skips a number committed late.
const writeLock = 0x696e6377 // "incw"

// Store is the library's PostgreSQL store. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool

	// closing ends a Wait in progress when the store closes.
	closing     context.Context
	closeNotify context.CancelFunc
	listenMu    sync.Mutex    // held by Wait while it uses listen
	listen      *pgxpool.Conn // LISTENing connection; nil until the first Wait

	publicRange   IDRange
	privateRanges map[string]IDRange
	publishCheck  func(content []byte, id string) ([]byte, []incidentlib.Problem)
	writeTimeout  time.Duration

	// beforeRow, set by tests, runs before each case an import writes.
	beforeRow func(i int)
}

var _ incidentlib.CaseFeed = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or key=value
// string). It does not migrate; call Migrate.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included; say only
		// what is wrong.
		return nil, &incidentlib.Error{Code: incidentlib.EINVALID, Param: "store", Message: "not a PostgreSQL connection URL (postgres://user@host/db)"}
	}
	cfg.MaxConns = 8
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	// The server ends a statement that runs, or waits for a lock, longer
	// than this, and a transaction left idle (its client gone): no write
	// holds the write lock for long. Import, migrations and snapshots set
	// their own, longer limits.
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	for k, v := range map[string]string{"statement_timeout": "10s", "lock_timeout": "5s", "idle_in_transaction_session_timeout": "60s"} {
		if _, set := cfg.ConnConfig.RuntimeParams[k]; !set {
			cfg.ConnConfig.RuntimeParams[k] = v
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, unavailable(err)
	}
	closing, cancel := context.WithCancel(context.Background())
	return &Store{pool: pool, closing: closing, closeNotify: cancel, writeTimeout: DefaultWriteTimeout}, nil
}

// DefaultWriteTimeout bounds each call of the write path (a draft saved,
// a sign-in, a publication) from start to commit.
const DefaultWriteTimeout = 5 * time.Second

// SetWriteTimeout sets how long one call of the write path may take in
// the database before it fails with EUNAVAILABLE (and nothing is saved).
func (s *Store) SetWriteTimeout(d time.Duration) {
	if d > 0 {
		s.writeTimeout = d
	}
}

// writeContext bounds a write path call: its caller's context (a request
// whose client leaves ends it) with the write timeout on top.
func (s *Store) writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.writeTimeout)
}

// Close ends a Wait in progress and releases every connection.
func (s *Store) Close() {
	s.closeNotify()
	s.listenMu.Lock()
	if s.listen != nil {
		s.listen.Release()
		s.listen = nil
	}
	s.listenMu.Unlock()
	s.pool.Close()
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return unavailable(err)
	}
	return nil
}

// ErrUnavailable is wrapped by every error that comes from the database not
// answering, so callers can tell "try later" from "wrong".
var ErrUnavailable = errors.New("the database is unavailable")

func unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// Hash is the content hash the store keeps for a file.
func Hash(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// Snapshot implements incidentlib.CaseFeed. It reads in one repeatable-read
// transaction so the cases and the sequence number agree.
func (s *Store) Snapshot(ctx context.Context) (vocab []byte, cases []incidentlib.StoredCase, seq int64, err error) {
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = '120s'`); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT content FROM vocabulary`).Scan(&vocab)
		if errors.Is(err, pgx.ErrNoRows) {
			vocab = nil
		} else if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT GREATEST(
			(SELECT COALESCE(max(seq), 0) FROM cases),
			(SELECT COALESCE(max(seq), 0) FROM vocabulary))`).Scan(&seq); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, file_name, content, content_hash, seq, team, false FROM cases WHERE withdrawn_at IS NULL ORDER BY id`)
		if err != nil {
			return err
		}
		cases, err = pgx.CollectRows(rows, scanCase)
		return err
	})
	if err != nil {
		return nil, nil, 0, classify(err)
	}
	return vocab, cases, seq, nil
}

// Since implements incidentlib.CaseFeed. A vocabulary change is reported as
// a case with the ID "vocabulary", so the follower rebuilds from a fresh
// snapshot.
func (s *Store) Since(ctx context.Context, after int64) ([]incidentlib.StoredCase, int64, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, file_name, CASE WHEN withdrawn_at IS NULL THEN content ELSE ''::bytea END,
			content_hash, seq, team, withdrawn_at IS NOT NULL FROM cases WHERE seq > $1
		UNION ALL
		SELECT 'vocabulary', 'vocabulary.yaml', content, content_hash, seq, '', false FROM vocabulary WHERE seq > $1
		ORDER BY seq`, after)
	if err != nil {
		return nil, after, classify(err)
	}
	cs, err := pgx.CollectRows(rows, scanCase)
	if err != nil {
		return nil, after, classify(err)
	}
	seq := after
	for _, c := range cs {
		seq = max(seq, c.Seq)
	}
	return cs, seq, nil
}

// VocabularyID is the ID Since gives a change of the vocabulary.
const VocabularyID = "vocabulary"

func scanCase(row pgx.CollectableRow) (incidentlib.StoredCase, error) {
	var c incidentlib.StoredCase
	err := row.Scan(&c.ID, &c.Name, &c.Content, &c.Hash, &c.Seq, &c.Team, &c.Withdrawn)
	return c, err
}

// Wait implements incidentlib.CaseFeed: it holds one connection that
// LISTENs on the change channel and returns at the next notification, or
// after at most maxWait so that a follower also polls (a notification sent
// while it was reconnecting is not lost: the follower asks Since anyway).
func (s *Store) Wait(ctx context.Context) error {
	const maxWait = 5 * time.Second
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if s.closing.Err() != nil {
		return errors.New("the store is closed")
	}
	if s.listen == nil {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return unavailable(err)
		}
		if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
			conn.Release()
			return unavailable(err)
		}
		s.listen = conn
		return nil // changes may have come before LISTEN: ask Since now
	}
	wctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	stop := context.AfterFunc(s.closing, cancel)
	defer stop()
	_, err := s.listen.Conn().WaitForNotification(wctx)
	switch {
	case err == nil, errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case s.closing.Err() != nil:
		return errors.New("the store is closed")
	}
	// The connection broke: drop it and listen again next time.
	s.listen.Conn().Close(context.Background()) //nolint:errcheck // already broken
	s.listen.Release()
	s.listen = nil
	return unavailable(err)
}

// classify marks connection failures as ErrUnavailable and leaves the
// rest (the domain's own errors, query errors) as they are.
func classify(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnavailable) {
		return err
	}
	var domain *incidentlib.Error
	if errors.As(err, &domain) || errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exceptions; 57P: the server is shutting down.
		if strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") {
			return unavailable(err)
		}
		return err
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return unavailable(err)
	}
	return err
}
