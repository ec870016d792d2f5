package benchmark

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/incidentlib/incidentlib/synthetic"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/incidentlib/incidentlib"
)

// SQLite FTS5: the text in an FTS5 table (porter stemming, as the engine's
// English analyzer stems), ranked by bm25() with the engine's field
// weights; terms in a plain table for filters, facet counts and similar
// cases.
var sqliteSchema = []string{
	`CREATE TABLE cases (id INTEGER PRIMARY KEY, case_id TEXT NOT NULL UNIQUE, company TEXT NOT NULL, year INTEGER NOT NULL, severity TEXT NOT NULL)`,
	`CREATE VIRTUAL TABLE docs USING fts5(title, company, summary, body, tokenize = 'porter unicode61')`,
	`INSERT INTO docs(docs, rank) VALUES ('rank', 'bm25(4.0, 4.0, 2.0, 1.0)')`,
	`CREATE TABLE case_terms (case_row INTEGER NOT NULL, facet TEXT NOT NULL, term TEXT NOT NULL, weight REAL NOT NULL, PRIMARY KEY (case_row, facet, term)) WITHOUT ROWID`,
}

var sqliteIndexes = []string{
	`CREATE INDEX case_terms_term ON case_terms (facet, term, case_row, weight)`,
	`INSERT INTO docs(docs) VALUES ('optimize')`,
	`ANALYZE`,
}

func sqlitePath(data string, size int) string {
	return filepath.Join(data, fmt.Sprintf("sqlite-%d.db", size))
}

func openSQLite(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)&_pragma=cache_size(-262144)")
	if err != nil {
		return nil, err
	}
	// One connection: the harness asks one question at a time, and a
	// single connection keeps SQLite's page cache warm between them.
	db.SetMaxOpenConns(1)
	return db, nil
}

// runSQLite loads the corpus into a fresh database file, reopens it, and
// answers the query set.
func runSQLite(ctx context.Context, p phaseInput) (Result, error) {
	res := Result{Engine: "sqlite", Cases: len(p.cases), CorpusRSS: p.corpusRSS}
	path := sqlitePath(p.data, len(p.cases))
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
			return res, err
		}
	}
	start := time.Now()
	if err := loadSQLite(ctx, path, p.vocab, p.cases); err != nil {
		return res, fmt.Errorf("load: %w", err)
	}
	res.BuildMS = ms(time.Since(start))
	res.BuildRSS = procStatus(0, "VmHWM")
	for _, suffix := range []string{"", "-wal"} {
		if info, err := os.Stat(path + suffix); err == nil {
			res.IndexBytes += info.Size()
		}
	}
	settle()

	start = time.Now()
	db, err := openSQLite(path)
	if err != nil {
		return res, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM cases`).Scan(&n); err != nil {
		return res, err
	}
	res.RestartMS = ms(time.Since(start))
	if n != len(p.cases) {
		return res, fmt.Errorf("database holds %d cases, want %d", n, len(p.cases))
	}
	s := &sqliteSearcher{db: db}
	if err := querySQL(ctx, s, p, &res); err != nil {
		return res, err
	}
	res.ServeRSS = procStatus(0, "VmHWM")
	return res, nil
}

func loadSQLite(ctx context.Context, path string, v *incidentlib.Vocabulary, cases []*incidentlib.Case) error {
	db, err := openSQLite(path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range sqliteSchema {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	rows, terms := sqlRows(v, cases)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	insCase, err := tx.PrepareContext(ctx, `INSERT INTO cases (id, case_id, company, year, severity) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	insDoc, err := tx.PrepareContext(ctx, `INSERT INTO docs (rowid, title, company, summary, body) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	insTerm, err := tx.PrepareContext(ctx, `INSERT INTO case_terms (case_row, facet, term, weight) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if _, err := insCase.ExecContext(ctx, r.id, r.caseID, r.company, r.year, r.severity); err != nil {
			return err
		}
		if _, err := insDoc.ExecContext(ctx, r.id, r.title, r.company, r.summary, r.body); err != nil {
			return err
		}
	}
	for _, t := range terms {
		if _, err := insTerm.ExecContext(ctx, t.caseRow, t.facet, t.term, t.weight); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, q := range sqliteIndexes {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// sqlSearcher is one SQL engine's way to ask the benchmark's questions.
type sqlSearcher interface {
	search(ctx context.Context, s synthetic.Search) (int, error)
	similar(ctx context.Context, id string) (int, error)
}

func querySQL(ctx context.Context, s sqlSearcher, p phaseInput, res *Result) error {
	var err error
	if res.Broad, err = timeQueries(ctx, p.queries.Broad, p.warm, s.search); err != nil {
		return fmt.Errorf("broad: %w", err)
	}
	if res.Narrow, err = timeQueries(ctx, p.queries.Narrow, p.warm, s.search); err != nil {
		return fmt.Errorf("narrow: %w", err)
	}
	if res.Similar, err = timeQueries(ctx, p.queries.Similar, p.warm, s.similar); err != nil {
		return fmt.Errorf("similar: %w", err)
	}
	return nil
}

type sqliteSearcher struct{ db *sql.DB }

// ftsQuery writes the words as quoted FTS5 strings, which FTS5 ANDs.
func ftsQuery(s synthetic.Search) string {
	var parts []string
	for _, w := range s.Words() {
		parts = append(parts, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	return strings.Join(parts, " ")
}

// The matching set, as a SQL fragment over docs: the text match and, when
// the search has one, the component filter.
func sqliteMatch(s synthetic.Search) (string, []any) {
	where := `docs MATCH ?`
	args := []any{ftsQuery(s)}
	if s.Component != "" {
		where += ` AND docs.rowid IN (SELECT case_row FROM case_terms WHERE facet = 'component' AND term = ?)`
		args = append(args, s.Component)
	}
	return where, args
}

// search does what the engine's SearchCases does: the page of best hits
// with highlighted snippets, the total, and counts of every facet, company,
// year and severity over the whole matching set.
func (q *sqliteSearcher) search(ctx context.Context, s synthetic.Search) (int, error) {
	where, args := sqliteMatch(s)
	rows, err := q.db.QueryContext(ctx, `SELECT rowid FROM docs WHERE `+where+` ORDER BY rank LIMIT `+fmt.Sprint(synthetic.PageSize), args...)
	if err != nil {
		return 0, err
	}
	var page []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		page = append(page, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, id := range page {
		var sum, bod string
		err := q.db.QueryRowContext(ctx, `SELECT snippet(docs, 2, char(2), char(3), '…', 32), snippet(docs, 3, char(2), char(3), '…', 32) FROM docs WHERE docs MATCH ? AND rowid = ?`, args[0], id).Scan(&sum, &bod)
		if err != nil {
			return 0, fmt.Errorf("snippet: %w", err)
		}
	}
	return scanCounts(q.db.QueryContext(ctx, `WITH m(id) AS MATERIALIZED (SELECT rowid FROM docs WHERE `+where+`)
SELECT 'total', '', count(*) FROM m
UNION ALL SELECT ct.facet, ct.term, count(*) FROM m JOIN case_terms ct ON ct.case_row = m.id WHERE ct.facet <> 'component_group' GROUP BY ct.facet, ct.term
UNION ALL SELECT 'company', c.company, count(*) FROM m JOIN cases c ON c.id = m.id GROUP BY c.company
UNION ALL SELECT 'year', CAST(c.year AS TEXT), count(*) FROM m JOIN cases c ON c.id = m.id GROUP BY c.year
UNION ALL SELECT 'severity', c.severity, count(*) FROM m JOIN cases c ON c.id = m.id WHERE c.severity <> '' GROUP BY c.severity`, args...))
}

// scanCounts reads the facet-count rows and returns the total.
func scanCounts(rows *sql.Rows, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	total := -1
	for rows.Next() {
		var facet, value string
		var n int
		if err := rows.Scan(&facet, &value, &n); err != nil {
			return 0, err
		}
		if facet == "total" {
			total = n
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if total < 0 {
		return 0, fmt.Errorf("no total in the counts")
	}
	return total, nil
}

// similar ranks other cases by the summed weights of the terms they
// share with the case, as the engine does (without its text tie-break).
func (q *sqliteSearcher) similar(ctx context.Context, id string) (int, error) {
	rows, err := q.db.QueryContext(ctx, `SELECT o.case_row, sum(o.weight) AS score
FROM cases c JOIN case_terms me ON me.case_row = c.id
JOIN case_terms o ON o.facet = me.facet AND o.term = me.term AND o.case_row <> c.id
WHERE c.case_id = ?
GROUP BY o.case_row ORDER BY score DESC, o.case_row LIMIT ?`, id, synthetic.SimilarLimit)
	return countRows(rows, err)
}

func countRows(rows *sql.Rows, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}
