package benchmark

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/relevance"
)

// RelevanceMain is `incidentlib-bench relevance`: it scores the engine and
// a plain baseline (SQLite FTS5, BM25 over the same case text, the query's
// words OR-ed, nothing else) on a judged set, per split and per query kind.
func RelevanceMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("relevance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setPath := fs.String("set", "", "the judged set to score (YAML in the format of relevance/judged.yaml); required")
	den := fs.Int("held-out", 2, "hold out 1/N of the queries, drawn with the set's seed (2: half; 3: the third that relevance/judged.yaml holds out)")
	verbose := fs.Bool("v", false, "list, per engine, every tuning query whose first judged case is not at rank 1")
	leaning := fs.Bool("leaning", false, "turn on the engine's learned word-to-term relatedness (engine.Options.Leaning), to measure what it adds")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: incidentlib-bench relevance --set FILE [--held-out N] [-v]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *setPath == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if *den < 1 {
		fmt.Fprintf(stderr, "relevance: --held-out must be 1 or more, got %d\n", *den)
		return 2
	}
	data, err := os.ReadFile(*setPath)
	if err != nil {
		fmt.Fprintf(stderr, "relevance: %v\n", err)
		return 1
	}
	set, err := relevance.Parse(data)
	if err != nil {
		fmt.Fprintf(stderr, "relevance: %s: %v\n", *setPath, err)
		return 1
	}
	rep, err := scoreRelevance(ctx, set, *den, engine.Options{Leaning: *leaning})
	if err != nil {
		fmt.Fprintf(stderr, "relevance: %v\n", err)
		return 1
	}
	rep.set = filepath.Base(*setPath)
	rep.write(stdout, *verbose)
	return 0
}

// relevanceReport holds every query's result for both engines.
type relevanceReport struct {
	set       string
	seed      uint64
	den       int
	cases     int
	tune      map[string][]relevance.Result // by engine
	held      map[string][]relevance.Result
	engines   []string
	unknownID []string // judged IDs the corpus does not hold
}

func scoreRelevance(ctx context.Context, set *relevance.Set, den int, opts engine.Options) (*relevanceReport, error) {
	c, problems, err := corpus.Load(corpus.Options{})
	if err == nil && len(problems) > 0 {
		err = problems
	}
	if err != nil {
		return nil, err
	}
	e, err := engine.Open(ctx, c.Vocabulary, c.Cases, opts)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	dir, err := os.MkdirTemp("", "incidentlib-relevance-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "baseline.db")
	if err := loadSQLite(ctx, path, c.Vocabulary, c.Cases); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	db, err := openSQLite(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ids := map[int]string{}
	rows, err := db.QueryContext(ctx, `SELECT id, case_id FROM cases`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var n int
		var id string
		if err := rows.Scan(&n, &id); err != nil {
			rows.Close()
			return nil, err
		}
		ids[n] = id
	}
	rows.Close()

	rep := &relevanceReport{seed: set.Seed, den: den, cases: len(c.Cases),
		tune: map[string][]relevance.Result{}, held: map[string][]relevance.Result{},
		engines: []string{"incidentlib", "fts5-bm25"}}
	known := map[string]bool{}
	for _, cs := range c.Cases {
		known[cs.ID] = true
	}
	for _, q := range set.Queries {
		for _, id := range append(append([]string{}, q.Top3...), q.Top10...) {
			if !known[id] {
				rep.unknownID = append(rep.unknownID, id)
			}
		}
	}
	tune, held := set.SplitOut(den)
	rankers := map[string]relevance.Ranker{
		"incidentlib": relevance.LibraryRanker(e),
		"fts5-bm25":   baselineRanker(db, ids),
	}
	for name, rank := range rankers {
		_, tr, err := relevance.EvaluateRanker(ctx, rank, tune)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		_, hr, err := relevance.EvaluateRanker(ctx, rank, held)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rep.tune[name], rep.held[name] = tr, hr
	}
	return rep, nil
}

// baselineRanker is the plain keyword search the issue measures against:
// FTS5 BM25 (the columns weighted as the search benchmark weighs them:
// title and company 4, summary 2, the rest 1; porter stemming) over the
// same case text, the query's words OR-ed, nothing else.
func baselineRanker(db *sql.DB, ids map[int]string) relevance.Ranker {
	return func(ctx context.Context, text string) ([]string, error) {
		q := baselineQuery(text)
		if q == "" {
			return nil, nil
		}
		rows, err := db.QueryContext(ctx, `SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 10`, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n int
			if err := rows.Scan(&n); err != nil {
				return nil, err
			}
			out = append(out, ids[n])
		}
		return out, rows.Err()
	}
}

// baselineQuery writes a query's words (letters and digits, as FTS5's
// unicode61 tokenizer splits them) as quoted FTS5 strings joined by OR.
func baselineQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	seen := map[string]bool{}
	var parts []string
	for _, w := range words {
		w = strings.ToLower(w)
		if seen[w] {
			continue
		}
		seen[w] = true
		parts = append(parts, `"`+w+`"`)
	}
	return strings.Join(parts, " OR ")
}

func (rep *relevanceReport) write(w io.Writer, verbose bool) {
	fmt.Fprintf(w, "judged set %s: seed %d, %d queries held out (1/%d), %d tuning; corpus of %d cases\n\n",
		rep.set, rep.seed, len(rep.held[rep.engines[0]]), rep.den, len(rep.tune[rep.engines[0]]), rep.cases)
	if len(rep.unknownID) > 0 {
		sort.Strings(rep.unknownID)
		fmt.Fprintf(w, "warning: %d judged IDs are not in the corpus: %s\n\n", len(rep.unknownID), strings.Join(rep.unknownID, " "))
	}
	fmt.Fprintln(w, "recall@10: share of queries with a judged case in the top 10; judged share: share of each query's judged cases (at most 10) in its top 10")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| split | kind | queries | engine | recall@10 | MRR | nDCG@10 | judged share |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, part := range []struct {
		name string
		rs   map[string][]relevance.Result
	}{{"tuning", rep.tune}, {"held out", rep.held}} {
		kinds := map[string]bool{}
		for _, r := range part.rs[rep.engines[0]] {
			kinds[r.Kind] = true
		}
		var order []string
		for k := range kinds {
			order = append(order, k)
		}
		sort.Strings(order)
		order = append(order, "all")
		for _, kind := range order {
			for _, eng := range rep.engines {
				var rs []relevance.Result
				for _, r := range part.rs[eng] {
					if kind == "all" || r.Kind == kind {
						rs = append(rs, r)
					}
				}
				sc := relevance.Summarize(rs)
				label := kind
				if label == "" {
					label = "(none)"
				}
				anyJudged := 0.0
				if sc.Queries > 0 {
					anyJudged = float64(sc.Found) / float64(sc.Queries)
				}
				fmt.Fprintf(w, "| %s | %s | %d | %s | %.3f | %.3f | %.3f | %.3f |\n",
					part.name, label, sc.Queries, eng, anyJudged, sc.MRR, sc.NDCGAt10, sc.RecallAt10)
			}
		}
	}
	if !verbose {
		return
	}
	for _, eng := range rep.engines {
		fmt.Fprintf(w, "\n%s: tuning queries not answered perfectly (first judged case below rank 1, or a judged case missing from the top 10; held-out queries are not listed):\n", eng)
		for _, r := range rep.tune[eng] {
			if r.RR < 1 || r.Recall < 1 {
				fmt.Fprintf(w, "  [%s] %q rr=%.2f recall=%.2f top3=%v top10=%v got=%s\n", r.Kind, r.Text, r.RR, r.Recall, r.Top3, r.Top10, strings.Join(r.Got, " "))
			}
		}
	}
}

// compile-time check that the engine is a library the harness can score.
var _ incidentlib.Library = (*engine.Engine)(nil)
