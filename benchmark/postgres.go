package benchmark

import (
	"context"
	"fmt"
	"github.com/incidentlib/incidentlib/synthetic"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgreSQL full-text search: a stored tsvector with title and company
// weighted A, summary B and the rest C, a GIN index, ts_rank with weights
// in the engine's proportions, ts_headline for the page's hits. The tables
// live in their own schema, dropped when the phase ends.
const pgSchema = "incidentlib_bench"

var pgSetup = []string{
	`DROP SCHEMA IF EXISTS ` + pgSchema + ` CASCADE`,
	`CREATE SCHEMA ` + pgSchema,
	`CREATE TABLE ` + pgSchema + `.cases (
		id integer PRIMARY KEY, case_id text NOT NULL UNIQUE,
		title text NOT NULL, company text NOT NULL, summary text NOT NULL, body text NOT NULL,
		year integer NOT NULL, severity text NOT NULL,
		tsv tsvector GENERATED ALWAYS AS (
			setweight(to_tsvector('english', title || ' ' || company), 'A') ||
			setweight(to_tsvector('english', summary), 'B') ||
			setweight(to_tsvector('english', body), 'C')) STORED)`,
	`CREATE TABLE ` + pgSchema + `.case_terms (
		case_row integer NOT NULL, facet text NOT NULL, term text NOT NULL, weight real NOT NULL,
		PRIMARY KEY (case_row, facet, term))`,
}

var pgIndexes = []string{
	`CREATE INDEX cases_tsv ON ` + pgSchema + `.cases USING gin (tsv)`,
	`CREATE INDEX case_terms_term ON ` + pgSchema + `.case_terms (facet, term, case_row, weight)`,
	`VACUUM ANALYZE ` + pgSchema + `.cases`,
	`VACUUM ANALYZE ` + pgSchema + `.case_terms`,
}

// tsRankWeights are ts_rank's weights for D, C, B, A: body 1, summary 2,
// title and company 4, as the engine boosts its fields.
const tsRankWeights = `'{0.1, 0.25, 0.5, 1.0}'`

const headlineOptions = `'MaxFragments=1, MaxWords=35, MinWords=15, StartSel=<b>, StopSel=</b>'`

// runPostgres loads the corpus into the server at dsn and answers the
// query set. Memory figures are those of the server process serving the
// connection, read from /proc, since the work happens there.
func runPostgres(ctx context.Context, p phaseInput) (res Result, err error) {
	res = Result{Engine: "postgres", Cases: len(p.cases), CorpusRSS: p.corpusRSS}
	conn, err := pgx.Connect(ctx, p.postgres)
	if err != nil {
		return res, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	defer func() {
		if _, derr := conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgSchema+` CASCADE`); derr != nil && err == nil {
			err = derr
		}
	}()
	var pid int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return res, err
	}
	resetPeak := func() { _ = os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0) }
	resetPeak()

	start := time.Now()
	if err := loadPostgres(ctx, conn, p); err != nil {
		return res, fmt.Errorf("load: %w", err)
	}
	res.BuildMS = ms(time.Since(start))
	res.BuildRSS = procStatus(pid, "VmHWM")
	if err := conn.QueryRow(ctx, `SELECT pg_total_relation_size('`+pgSchema+`.cases') + pg_total_relation_size('`+pgSchema+`.case_terms')`).Scan(&res.IndexBytes); err != nil {
		return res, err
	}
	resetPeak()
	if err := querySQL(ctx, &pgSearcher{conn: conn}, p, &res); err != nil {
		return res, err
	}
	res.ServeRSS = procStatus(pid, "VmHWM")
	if res.ServeRSS == 0 {
		res.RSSNote = "server process not readable from here"
	} else {
		res.RSSNote = "server backend process (includes the shared buffers it touched)"
	}
	return res, nil
}

func loadPostgres(ctx context.Context, conn *pgx.Conn, p phaseInput) error {
	for _, q := range pgSetup {
		if _, err := conn.Exec(ctx, q); err != nil {
			return err
		}
	}
	rows, terms := sqlRows(p.vocab, p.cases)
	_, err := conn.CopyFrom(ctx, pgx.Identifier{pgSchema, "cases"},
		[]string{"id", "case_id", "title", "company", "summary", "body", "year", "severity"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			return []any{r.id, r.caseID, r.title, r.company, r.summary, r.body, r.year, r.severity}, nil
		}))
	if err != nil {
		return err
	}
	_, err = conn.CopyFrom(ctx, pgx.Identifier{pgSchema, "case_terms"},
		[]string{"case_row", "facet", "term", "weight"},
		pgx.CopyFromSlice(len(terms), func(i int) ([]any, error) {
			t := terms[i]
			return []any{t.caseRow, t.facet, t.term, float32(t.weight)}, nil
		}))
	if err != nil {
		return err
	}
	for _, q := range pgIndexes {
		if _, err := conn.Exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

type pgSearcher struct{ conn *pgx.Conn }

func pgMatch(s synthetic.Search) (string, []any) {
	where := `c.tsv @@ plainto_tsquery('english', $1)`
	args := []any{s.Text}
	if s.Component != "" {
		where += ` AND c.id IN (SELECT case_row FROM ` + pgSchema + `.case_terms WHERE facet = 'component' AND term = $2)`
		args = append(args, s.Component)
	}
	return where, args
}

// search asks what sqliteSearcher.search asks: the ranked page with
// highlights, then the total and the counts over the whole matching set.
func (q *pgSearcher) search(ctx context.Context, s synthetic.Search) (int, error) {
	where, args := pgMatch(s)
	rows, err := q.conn.Query(ctx, `SELECT t.id, ts_headline('english', t.summary, t.q, `+headlineOptions+`), ts_headline('english', t.body, t.q, `+headlineOptions+`)
FROM (SELECT c.id, c.summary, c.body, plainto_tsquery('english', $1) AS q, ts_rank(`+tsRankWeights+`, c.tsv, plainto_tsquery('english', $1)) AS r
      FROM `+pgSchema+`.cases c WHERE `+where+` ORDER BY r DESC, c.id LIMIT `+fmt.Sprint(synthetic.PageSize)+`) t
ORDER BY t.r DESC, t.id`, args...)
	if _, err := countPgRows(rows, err); err != nil {
		return 0, fmt.Errorf("page: %w", err)
	}
	rows, err = q.conn.Query(ctx, `WITH m AS MATERIALIZED (SELECT c.id FROM `+pgSchema+`.cases c WHERE `+where+`)
SELECT 'total', '', count(*) FROM m
UNION ALL SELECT ct.facet, ct.term, count(*) FROM m JOIN `+pgSchema+`.case_terms ct ON ct.case_row = m.id WHERE ct.facet <> 'component_group' GROUP BY ct.facet, ct.term
UNION ALL SELECT 'company', c.company, count(*) FROM m JOIN `+pgSchema+`.cases c ON c.id = m.id GROUP BY c.company
UNION ALL SELECT 'year', c.year::text, count(*) FROM m JOIN `+pgSchema+`.cases c ON c.id = m.id GROUP BY c.year
UNION ALL SELECT 'severity', c.severity, count(*) FROM m JOIN `+pgSchema+`.cases c ON c.id = m.id WHERE c.severity <> '' GROUP BY c.severity`, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	total := -1
	for rows.Next() {
		var facet, value string
		var n int64
		if err := rows.Scan(&facet, &value, &n); err != nil {
			return 0, err
		}
		if facet == "total" {
			total = int(n)
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

func (q *pgSearcher) similar(ctx context.Context, id string) (int, error) {
	rows, err := q.conn.Query(ctx, `SELECT o.case_row, sum(o.weight) AS score
FROM `+pgSchema+`.cases c JOIN `+pgSchema+`.case_terms me ON me.case_row = c.id
JOIN `+pgSchema+`.case_terms o ON o.facet = me.facet AND o.term = me.term AND o.case_row <> c.id
WHERE c.case_id = $1
GROUP BY o.case_row ORDER BY score DESC, o.case_row LIMIT $2`, id, synthetic.SimilarLimit)
	return countPgRows(rows, err)
}

func countPgRows(rows pgx.Rows, err error) (int, error) {
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
