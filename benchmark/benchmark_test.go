package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/incidentlib/incidentlib/synthetic"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/vocabulary"
)

func testVocab(t *testing.T) *incidentlib.Vocabulary {
	t.Helper()
	v, ps := corpus.LoadVocabulary(vocabulary.FileName, vocabulary.YAML)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return v
}

func TestGeneratorIsDeterministic(t *testing.T) {
	v := testVocab(t)
	a := synthetic.NewGenerator(v, 7).Cases(30)
	b := synthetic.NewGenerator(v, 7).Cases(50)[:30] // case i does not depend on n
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different cases (-first +second):\n%s", diff)
	}
	c := synthetic.NewGenerator(v, 8).Cases(30)
	if cmp.Equal(a, c) {
		t.Error("seeds 7 and 8 generated the same cases")
	}
	qa, qb := synthetic.NewGenerator(v, 7).Queries(20, 30), synthetic.NewGenerator(v, 7).Queries(20, 30)
	if diff := cmp.Diff(qa, qb); diff != "" {
		t.Errorf("same seed, different queries:\n%s", diff)
	}
}

func TestGeneratedCasesLookReal(t *testing.T) {
	v := testVocab(t)
	const n = 1000
	cases := synthetic.NewGenerator(v, DefaultSeed).Cases(n)
	ids := map[string]bool{}
	termCount := map[string]int{}
	companies := map[string]int{}
	textBytes := 0
	for _, c := range cases {
		if ids[c.ID] {
			t.Fatalf("duplicate ID %s", c.ID)
		}
		ids[c.ID] = true
		if !regexp.MustCompile(`^IL-[0-9]{6}$`).MatchString(c.ID) {
			t.Fatalf("ID %q is not IL- and six digits", c.ID)
		}
		textBytes += len(c.Title) + len(c.Summary) + len(body(c))
		if y := c.Year(); y < synthetic.FirstYear || y > synthetic.LastYear {
			t.Errorf("%s: year %d outside %d–%d", c.ID, y, synthetic.FirstYear, synthetic.LastYear)
		}
		if len(c.Components) == 0 || len(c.SymptomTerms) == 0 {
			t.Errorf("%s: no components or no symptoms", c.ID)
		}
		check := func(f incidentlib.Facet, slugs []string) {
			for _, s := range slugs {
				if _, ok := v.Term(f, s); !ok {
					t.Errorf("%s: %s %q is not in the vocabulary", c.ID, f, s)
				}
				termCount[string(f)+"/"+s]++
			}
		}
		if c.RootCause != "" {
			check(incidentlib.FacetRootCause, []string{c.RootCause})
		}
		check(incidentlib.FacetComponent, c.Components)
		check(incidentlib.FacetSymptom, c.SymptomTerms)
		check(incidentlib.FacetContributingFactor, c.ContributingFactors)
		if c.Severity != "" {
			if _, ok := v.Severity(c.Severity); !ok {
				t.Errorf("%s: unknown severity %q", c.ID, c.Severity)
			}
		}
		companies[c.Company]++
	}
	if avg := textBytes / n; avg < 3300 || avg > 3700 {
		t.Errorf("average text per case is %d bytes, want about 3500", avg)
	} else {
		t.Logf("average text per case: %d bytes", avg)
	}
	// Skewed: the commonest component is on many times more cases than
	// the median one, and the commonest company has many cases while most
	// have one or two.
	var comp []int
	for k, c := range termCount {
		if strings.HasPrefix(k, string(incidentlib.FacetComponent)+"/") {
			comp = append(comp, c)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(comp)))
	if comp[0] < 8*comp[len(comp)/2] {
		t.Errorf("component counts are not skewed: top %d, median %d", comp[0], comp[len(comp)/2])
	}
	top := 0
	for _, c := range companies {
		top = max(top, c)
	}
	if top < 20 || len(companies) < 200 {
		t.Errorf("companies are not Zipf-like: top company has %d cases, %d companies", top, len(companies))
	}
}

// TestQueriesAreBroadAndNarrow checks on the engine itself that broad
// queries match a large share of the corpus and narrow ones a small one.
func TestQueriesAreBroadAndNarrow(t *testing.T) {
	v := testVocab(t)
	const n = 1000
	g := synthetic.NewGenerator(v, DefaultSeed)
	cases := g.Cases(n)
	e, err := engine.Open(context.Background(), v, cases, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	qs := g.Queries(20, n)
	share := func(ss []synthetic.Search) float64 {
		total := 0
		for _, s := range ss {
			res, err := e.SearchCases(context.Background(), s.Query())
			if err != nil {
				t.Fatalf("%+v: %v", s, err)
			}
			total += res.Complete // the cases that hold every word
		}
		return float64(total) / float64(len(ss)) / n
	}
	if s := share(qs.Broad); s < 0.4 {
		t.Errorf("broad queries match %.1f%% of cases on average, want at least 40%%", 100*s)
	}
	if s := share(qs.Narrow); s > 0.01 {
		t.Errorf("narrow queries match %.2f%% of cases on average, want at most 1%%", 100*s)
	}
	// A question: almost no case holds all ten words, many hold several.
	complete, total := 0, 0
	for _, s := range qs.Questions {
		res, err := e.SearchCases(context.Background(), s.Query())
		if err != nil {
			t.Fatal(err)
		}
		complete += res.Complete
		total += res.Total
	}
	if complete > len(qs.Questions) || total < 10*len(qs.Questions) {
		t.Errorf("questions: %d complete and %d partial matches in all; want mostly partial matches", complete, total)
	}
	for _, id := range qs.Similar {
		if _, err := e.FindCaseByID(context.Background(), id); err != nil {
			t.Errorf("similar-cases query names %s: %v", id, err)
		}
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{0.50, 50 * time.Millisecond},
		{0.99, 99 * time.Millisecond},
		{1.00, 100 * time.Millisecond},
		{0.001, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(ds, tt.p); got != tt.want {
			t.Errorf("p%g of 1..100 ms = %v, want %v", tt.p*100, got, tt.want)
		}
	}
	if got := percentile(ds[:1], 0.99); got != time.Millisecond {
		t.Errorf("p99 of one sample = %v, want the sample", got)
	}
}

func TestBadFlagsAreUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--sizes", "1000,abc"}, `--sizes: "abc" is not a corpus size`},
		{[]string{"--sizes", "5"}, `--sizes: "5" is not a corpus size`},
		{[]string{"--queries", "0"}, "--queries must be between 1 and 100000, got 0"},
		{[]string{"--warm", "-1"}, "--warm must be 0 or more"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--phase", "mystery", "--size", "100", "--out", "x", "--data", "y"}, `unknown phase "mystery"`},
		{[]string{"--phase", "sqlite"}, "--phase needs --size, --out and --data"},
		{[]string{"--nonsense"}, "flag provided but not defined: -nonsense"},
	}
	for _, tt := range tests {
		var out, errs bytes.Buffer
		if code := Main(context.Background(), tt.args, &out, &errs); code != 2 {
			t.Errorf("%q: exit %d, want 2", tt.args, code)
		}
		if !strings.Contains(errs.String(), tt.want) {
			t.Errorf("%q: stderr %q does not say %q", tt.args, errs.String(), tt.want)
		}
		if out.Len() != 0 {
			t.Errorf("%q: printed to stdout: %q", tt.args, out.String())
		}
	}
}

// TestSmokeRun runs the whole harness on a tiny corpus, engine and SQLite,
// in this process, and checks that both engines found the same result sets
// and that the report holds every figure.
func TestSmokeRun(t *testing.T) {
	data := t.TempDir()
	args := []string{"--sizes", "200", "--queries", "15", "--warm", "2", "--data", data, "--postgres", ""}
	var out, errs bytes.Buffer
	if code := Main(context.Background(), args, &out, &errs); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errs.String())
	}
	report := out.String()
	for _, want := range []string{
		"| 200 | incidentlib engine |", "| 200 | SQLite FTS5 |", "Targets at 200 cases:",
		"broad p50 speed-up over the faster SQL engine (sqlite)",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if !strings.Contains(errs.String(), "PostgreSQL skipped") {
		t.Errorf("stderr does not say PostgreSQL was skipped:\n%s", errs.String())
	}
	if _, err := os.Stat(filepath.Join(data, "engine-200")); err != nil {
		t.Errorf("the engine's index is not in --data: %v", err)
	}
	if _, err := os.Stat(filepath.Join(data, "sqlite-200.db")); err != nil {
		t.Errorf("the SQLite database is not in --data: %v", err)
	}
}

// TestEnginesAgree runs the engine and SQLite phases directly and compares
// what they found: the same questions must give the same result-set sizes
// (up to tokenizer differences), or the latency comparison is unfair.
func TestEnginesAgree(t *testing.T) {
	cfg := config{queries: 15, warm: 1, seed: DefaultSeed, data: t.TempDir()}
	phases := []string{phaseEngineBuild, phaseEngineServe, phaseSQLite}
	if dsn := os.Getenv(PostgresEnv); dsn != "" {
		cfg.postgres = dsn
		phases = append(phases, phasePostgres)
	} else {
		t.Logf("PostgreSQL not compared: $%s is not set (scripts/bench-postgres.sh sets it)", PostgresEnv)
	}
	var rs []Result
	for _, ph := range phases {
		r, err := runPhase(context.Background(), cfg, ph, 300)
		if err != nil {
			t.Fatalf("%s: %v", ph, err)
		}
		rs = append(rs, r)
	}
	rs = mergeEngine(rs)
	e := rs[0]
	if e.Engine != "engine" || e.BuildMS <= 0 || e.RestartMS <= 0 || e.IndexBytes <= 0 || e.Broad.N != 15 || e.Similar.AvgTotal != synthetic.SimilarLimit || e.Question.N != 15 || e.Question.AvgTotal <= e.Narrow.AvgTotal {
		data, _ := json.MarshalIndent(e, "", "  ")
		t.Fatalf("engine result incomplete:\n%s", data)
	}
	for _, r := range rs[1:] {
		if r.Broad.N != 15 || r.Narrow.N != 15 || r.Similar.N != 15 || r.BuildMS <= 0 || r.IndexBytes <= 0 {
			t.Errorf("%s: incomplete result %+v", r.Engine, r)
		}
		// The engine also matches synonyms and the cases tagged with a
		// vocabulary term a query names, so it may find more than a plain
		// full-text search, never less.
		if d := r.Broad.AvgTotal/e.Broad.AvgTotal - 1; d > 0.02 {
			t.Errorf("%s finds %.1f cases per broad query, the engine only %.1f", r.Engine, r.Broad.AvgTotal, e.Broad.AvgTotal)
		}
		if d := r.Narrow.AvgTotal - e.Narrow.AvgTotal; d > 0.5 {
			t.Errorf("%s finds %.2f cases per narrow query, the engine only %.2f", r.Engine, r.Narrow.AvgTotal, e.Narrow.AvgTotal)
		}
		if r.Similar.AvgTotal != synthetic.SimilarLimit {
			t.Errorf("%s returns %.1f similar cases, want %d", r.Engine, r.Similar.AvgTotal, synthetic.SimilarLimit)
		}
	}
}
