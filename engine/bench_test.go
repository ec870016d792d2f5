package engine_test

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"testing"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/synthetic"
)

// benchCases sets the synthetic corpus size of the benchmarks below; the
// whole-system figures at 1k, 10k and 100k come from "incidentlib-bench search"
// (the benchmark module).
var benchCases = flag.Int("bench.cases", 2000, "synthetic cases in the engine benchmarks")

// benchQueries is how many distinct queries of each kind the benchmarks
// cycle through.
const benchQueries = 200

type benchFixture struct {
	vocab   *incidentlib.Vocabulary
	cases   []*incidentlib.Case
	queries synthetic.QuerySet
	engine  *engine.Engine
}

var (
	fixtureOnce sync.Once
	fixtureMemo *benchFixture
	fixtureErr  error
)

// sharedFixture builds the corpus and an in-memory engine once per test
// binary run: the search benchmarks measure queries, not set-up.
func sharedFixture(b *testing.B) *benchFixture {
	b.Helper()
	fixtureOnce.Do(func() {
		v := vocab(b)
		g := synthetic.NewGenerator(v, synthetic.DefaultSeed)
		f := &benchFixture{vocab: v, cases: g.Cases(*benchCases), queries: g.Queries(benchQueries, *benchCases)}
		f.engine, fixtureErr = engine.Open(context.Background(), v, f.cases, engine.Options{})
		fixtureMemo = f
	})
	if fixtureErr != nil {
		b.Fatal(fixtureErr)
	}
	return fixtureMemo
}

func benchSearch(b *testing.B, qs []synthetic.Search) {
	f := sharedFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res, err := f.engine.SearchCases(ctx, qs[i%len(qs)].Query())
		if err != nil {
			b.Fatal(err)
		}
		if res.Total > 0 && len(res.Hits) == 0 {
			b.Fatal("a result set without hits")
		}
	}
}

// BenchmarkSearchBroad: common words matching most cases, with facet
// counts over the whole set and snippets for the first page.
func BenchmarkSearchBroad(b *testing.B) { benchSearch(b, sharedFixture(b).queries.Broad) }

// BenchmarkSearchNarrow: two mid-frequency words and a component filter.
func BenchmarkSearchNarrow(b *testing.B) { benchSearch(b, sharedFixture(b).queries.Narrow) }

// BenchmarkSearchNoText lists a filtered set newest first, the topic pages'
// query.
func BenchmarkSearchNoText(b *testing.B) {
	f := sharedFixture(b)
	var qs []synthetic.Search
	for _, q := range f.queries.Narrow {
		qs = append(qs, synthetic.Search{Component: q.Component})
	}
	benchSearch(b, qs)
}

// BenchmarkSimilarCases ranks the ten cases most like a given one.
func BenchmarkSimilarCases(b *testing.B) {
	f := sharedFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := f.engine.SimilarCases(ctx, f.queries.Similar[i%len(f.queries.Similar)], 10); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenInMemory builds the whole engine from the cases, index
// included, as a start without a data directory does.
func BenchmarkOpenInMemory(b *testing.B) {
	f := sharedFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		e, err := engine.Open(ctx, f.vocab, f.cases, engine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

// BenchmarkRestart opens the engine on an index already on disk, as a
// restart does: hashing the corpus, opening the index, and building the
// in-memory facet and similarity structures.
func BenchmarkRestart(b *testing.B) {
	f := sharedFixture(b)
	ctx := context.Background()
	dir := b.TempDir()
	e, err := engine.Open(ctx, f.vocab, f.cases, engine.Options{DataDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	e.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e, err := engine.Open(ctx, f.vocab, f.cases, engine.Options{DataDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if !e.IndexReused() {
			b.Fatal("the index was rebuilt")
		}
		e.Close()
	}
}

// BenchmarkApply is what a replica pays to make one changed case
// searchable in place (engine.Apply): the case indexed, and the facet,
// similar-case and document-number data rebuilt from memory. Run it with
// -bench.cases 20000 for the larger corpus.
func BenchmarkApply(b *testing.B) {
	f := sharedFixture(b)
	ctx := context.Background()
	e, err := engine.Open(ctx, f.vocab, f.cases, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := *f.cases[i%len(f.cases)]
		c.Summary += fmt.Sprintf(" Edit %d.", i)
		next, err := e.Apply(ctx, []*incidentlib.Case{&c}, nil)
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
		e = next
	}
	e.Close()
}
