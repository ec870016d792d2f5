package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema change.
type migration struct {
	Version int
	Name    string
	SQL     string
}

// migrations returns the embedded migrations in order. Their names are
// NNNN_words.sql; a gap or a repeated number is a build mistake.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its number", base)
		}
		body, err := fs.ReadFile(migrationFiles, n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{Version: v, Name: base, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected number %d", m.Name, i+1)
		}
	}
	return out, nil
}

// migrateLock is the advisory lock that lets one process migrate while the
// others wait, so replicas starting together do not race.
const migrateLock = 0x696e6369 // "inci"

// Migrate applies every migration the database has not had yet, each in its
// own transaction, and returns the versions it applied.
func (s *Store) Migrate(ctx context.Context) ([]int, error) {
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	defer conn.Release()
	// Another replica may be migrating, and a migration may run long.
	if _, err := conn.Exec(ctx, `SET statement_timeout = 0; SET lock_timeout = 0`); err != nil {
		return nil, unavailable(err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `RESET statement_timeout; RESET lock_timeout`) //nolint:errcheck // the connection is dropped if it fails
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return nil, unavailable(err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock) //nolint:errcheck // released with the session anyway
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, err
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		applied[v] = true
	}
	if len(versions) > 0 && versions[len(versions)-1] > len(ms) {
		return nil, fmt.Errorf("the database has schema version %d, newer than this binary knows (%d): upgrade incidentlib", versions[len(versions)-1], len(ms))
	}
	var done []int
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		done = append(done, m.Version)
	}
	return done, nil
}
