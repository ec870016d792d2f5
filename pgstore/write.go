package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/incidentlib/incidentlib"
)

// ImportResult counts what an import did. A case a maintainer withdrew
// is left as it is (withdrawn), counted as unchanged.
type ImportResult struct {
	Added, Updated, Unchanged int
	VocabularyChanged         bool
	Seq                       int64 // the last change number written; 0 when nothing changed
}

// Import writes the vocabulary file and the case files in one transaction:
// a case whose content hash is already stored is left alone, a new one is
// added at version 1, a changed one gets the next version, and every
// version is kept. Either all of it is written or, on any failure, none.
// The caller validates the files first (the store keeps what it is given).
func (s *Store) Import(ctx context.Context, vocabulary []byte, cases []incidentlib.StoredCase, actor string) (ImportResult, error) {
	var res ImportResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		res = ImportResult{}
		// An import of a large corpus may wait for the write lock and run
		// long; it is one transaction, run by an operator.
		if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = '10min'; SET LOCAL lock_timeout = '2min'`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, writeLock); err != nil {
			return err
		}
		if vocabulary != nil {
			tag, err := tx.Exec(ctx, `
				INSERT INTO vocabulary (content, content_hash, updated_by) VALUES ($1, $2, $3)
				ON CONFLICT (only_row) DO UPDATE SET content = EXCLUDED.content,
					content_hash = EXCLUDED.content_hash, updated_by = EXCLUDED.updated_by,
					seq = nextval('change_seq'), updated_at = now()
				WHERE vocabulary.content_hash <> EXCLUDED.content_hash`,
				vocabulary, Hash(vocabulary), actor)
			if err != nil {
				return fmt.Errorf("vocabulary: %w", err)
			}
			res.VocabularyChanged = tag.RowsAffected() > 0
		}
		for i, c := range cases {
			if s.beforeRow != nil {
				s.beforeRow(i)
			}
			hash := Hash(c.Content)
			var version int
			var seq int64
			err := tx.QueryRow(ctx, `
				INSERT INTO cases (id, file_name, content, content_hash, version, updated_by)
				VALUES ($1, $2, $3, $4, 1, $5)
				ON CONFLICT (id) DO UPDATE SET file_name = EXCLUDED.file_name,
					content = EXCLUDED.content, content_hash = EXCLUDED.content_hash,
					version = cases.version + 1, seq = nextval('change_seq'),
					updated_at = now(), updated_by = EXCLUDED.updated_by
				WHERE cases.content_hash <> EXCLUDED.content_hash AND cases.withdrawn_at IS NULL
				RETURNING version, seq`,
				c.ID, c.Name, c.Content, hash, actor).Scan(&version, &seq)
			if errors.Is(err, pgx.ErrNoRows) {
				res.Unchanged++
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			if version == 1 {
				res.Added++
			} else {
				res.Updated++
			}
			res.Seq = max(res.Seq, seq)
			if _, err := tx.Exec(ctx, `INSERT INTO case_versions (case_id, version, content, content_hash, created_by)
				VALUES ($1, $2, $3, $4, $5)`, c.ID, version, c.Content, hash, actor); err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO audit_log (actor, action, object, detail) VALUES ($1, 'import', 'cases', $2)`,
			actor, fmt.Sprintf("%d added, %d updated, %d unchanged, vocabulary changed: %t", res.Added, res.Updated, res.Unchanged, res.VocabularyChanged))
		return err
	})
	if err != nil {
		return ImportResult{}, classify(err)
	}
	return res, nil
}

// Version is one stored version of a case.
type Version struct {
	Version   int
	Content   []byte
	CreatedBy string
}

// Versions returns every version of a case, oldest first.
func (s *Store) Versions(ctx context.Context, id string) ([]Version, error) {
	rows, err := s.pool.Query(ctx, `SELECT version, content, created_by FROM case_versions WHERE case_id = $1 ORDER BY version`, id)
	if err != nil {
		return nil, classify(err)
	}
	vs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Version, error) {
		var v Version
		return v, row.Scan(&v.Version, &v.Content, &v.CreatedBy)
	})
	return vs, classify(err)
}

// Withdraw takes a published case out of the library: every replica drops
// it at its next change, and no surface serves it. Its versions stay until
// Purge. It reports ENOTFOUND for a case that is not there or is withdrawn
// already.
func (s *Store) Withdraw(ctx context.Context, id, actor, reason string) error {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, writeLock); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE cases SET withdrawn_at = now(), withdrawn_by = $2, withdraw_reason = $3,
			seq = nextval('change_seq'), updated_at = now() WHERE id = $1 AND withdrawn_at IS NULL`, id, actor, reason)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return &incidentlib.Error{Code: incidentlib.ENOTFOUND, Param: "id", Message: fmt.Sprintf("no published case %s (or it is withdrawn already)", id)}
		}
		_, err = tx.Exec(ctx, `INSERT INTO audit_log (actor, action, object, detail) VALUES ($1, 'case.withdraw', $2, $3)`, actor, id, reason)
		return err
	})
	return writeError(err)
}

// PurgeResult says what a purge removed.
type PurgeResult struct {
	Versions int  // old versions deleted
	Drafts   int  // published drafts whose text was emptied
	Case     bool // the withdrawn case's own text was emptied
}

// Purge deletes the old versions of a case, and the text of the drafts
// that published them, keeping the version served; for a withdrawn case
// it removes every version and empties the case itself, keeping only the
// record that it was withdrawn. It is for text that must not be kept (a
// redaction); the audit log says who purged what.
func (s *Store) Purge(ctx context.Context, id, actor string) (PurgeResult, error) {
	ctx, cancel := s.writeContext(ctx)
	defer cancel()
	var res PurgeResult
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		res = PurgeResult{}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, writeLock); err != nil {
			return err
		}
		var version int
		var withdrawn bool
		err := tx.QueryRow(ctx, `SELECT version, withdrawn_at IS NOT NULL FROM cases WHERE id = $1 FOR UPDATE`, id).Scan(&version, &withdrawn)
		if errors.Is(err, pgx.ErrNoRows) {
			return &incidentlib.Error{Code: incidentlib.ENOTFOUND, Param: "id", Message: fmt.Sprintf("no case %s in the store", id)}
		}
		if err != nil {
			return err
		}
		keep := version
		if withdrawn {
			keep = version + 1 // none
			if _, err := tx.Exec(ctx, `UPDATE cases SET content = '', content_hash = '' WHERE id = $1`, id); err != nil {
				return err
			}
			res.Case = true
		}
		tag, err := tx.Exec(ctx, `DELETE FROM case_versions WHERE case_id = $1 AND version < $2`, id, keep)
		if err != nil {
			return err
		}
		res.Versions = int(tag.RowsAffected())
		// The drafts that published the purged versions hold their text
		// too; the one that published the version kept may stay.
		q := `UPDATE drafts SET content = '' WHERE case_id = $1 AND state = 'published' AND content <> ''`
		if !withdrawn {
			q += ` AND content <> (SELECT content FROM cases WHERE id = $1)`
		}
		tag, err = tx.Exec(ctx, q, id)
		if err != nil {
			return err
		}
		res.Drafts = int(tag.RowsAffected())
		_, err = tx.Exec(ctx, `INSERT INTO audit_log (actor, action, object, detail) VALUES ($1, 'case.purge', $2, $3)`,
			actor, id, fmt.Sprintf("%d old versions deleted, %d drafts emptied, case emptied: %t", res.Versions, res.Drafts, res.Case))
		return err
	})
	if err != nil {
		return PurgeResult{}, writeError(err)
	}
	return res, nil
}
