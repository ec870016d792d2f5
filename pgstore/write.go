package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/incidentlib/incidentlib"
)

// ImportResult counts what an import did.
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
				WHERE cases.content_hash <> EXCLUDED.content_hash
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
