package engine_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/synthetic"
	"github.com/incidentlib/incidentlib/vocabulary"
)

// syntheticEngine opens an in-memory engine on a generated corpus large
// enough for the paths that only large result sets take (partial sorting,
// pruned similar cases).
func syntheticEngine(t *testing.T, n int) (*engine.Engine, []*incidentlib.Case, synthetic.QuerySet) {
	t.Helper()
	v, ps := corpus.LoadVocabulary(vocabulary.FileName, vocabulary.YAML)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	g := synthetic.NewGenerator(v, synthetic.DefaultSeed)
	cases := g.Cases(n)
	e, err := engine.Open(context.Background(), v, cases, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, cases, g.Queries(20, n)
}

// TestLargeResultSetsPageAndCountExactly checks the partial sort and the
// one-pass counts against ground truth: every page read in turn must give
// each case once, in order, and the counts must equal a tally of the cases'
// own tags.
func TestLargeResultSetsPageAndCountExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 1,500-case index")
	}
	e, _, qs := syntheticEngine(t, 1500)
	ctx := context.Background()
	for _, s := range []incidentlib.Sort{incidentlib.SortRelevance, incidentlib.SortNewest, incidentlib.SortOldest, incidentlib.SortLongest} {
		q := qs.Broad[0].Query()
		q.Sort = s
		q.PerPage = 20
		first, err := e.SearchCases(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if first.Total < 400 {
			t.Fatalf("broad query matched only %d cases", first.Total)
		}
		// The same order, read through pages small enough to take the
		// heap path and pages large enough to take the full sort.
		var paged []string
		for p := 1; ; p++ {
			q.Page = p
			res, err := e.SearchCases(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				paged = append(paged, h.Case.ID)
			}
			if res.To >= res.Total {
				break
			}
		}
		q.Page, q.PerPage = 1, 100
		var big []string
		for p := 1; ; p++ {
			q.Page = p
			res, _ := e.SearchCases(ctx, q)
			for _, h := range res.Hits {
				big = append(big, h.Case.ID)
			}
			if res.To >= res.Total {
				break
			}
		}
		if !slices.Equal(paged, big) || len(paged) != first.Total {
			t.Fatalf("sort %s: 20-per-page order differs from 100-per-page order (%d vs %d cases)", s, len(paged), len(big))
		}
		seen := map[string]bool{}
		for _, id := range paged {
			if seen[id] {
				t.Fatalf("sort %s: %s listed twice", s, id)
			}
			seen[id] = true
		}
		// Ground truth for the counts.
		want := map[string]int{}
		for id := range seen {
			c, _ := e.FindCaseByID(ctx, id)
			for _, f := range incidentlib.Facets {
				for _, slug := range engine.TermsOf(c, f) {
					want[string(f)+"/"+slug]++
				}
			}
		}
		got := map[string]int{}
		for f, fcs := range first.Facets {
			for _, fc := range fcs {
				got[string(f)+"/"+fc.Term.Slug] = fc.Count
			}
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("sort %s: count %s = %d, want %d", s, k, got[k], n)
			}
		}
	}
}

// TestPrunedSimilarMatchesBruteForce scores every case against the others
// the slow way and checks that the engine's answer, pruned or not, has the
// same scores and leaves out no case that scores better than its last.
func TestPrunedSimilarMatchesBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 1,500-case index")
	}
	e, cases, _ := syntheticEngine(t, 1500)
	ctx := context.Background()
	const k = 10
	for i := 0; i < len(cases); i += 7 {
		id := cases[i].ID
		scores := e.BruteForceSimilarity(id)
		got, err := e.SimilarCases(ctx, id, k)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != k {
			t.Fatalf("%s: %d neighbours, want %d", id, len(got), k)
		}
		kept := map[string]bool{}
		for _, r := range got {
			kept[r.Case.ID] = true
			if math.Abs(scores[r.Case.ID]-r.Score) > 2e-3 {
				t.Fatalf("%s: neighbour %s scored %.4f, brute force %.4f", id, r.Case.ID, r.Score, scores[r.Case.ID])
			}
		}
		last := got[len(got)-1].Score
		for other, s := range scores {
			if !kept[other] && s > last+2e-3 {
				t.Fatalf("%s: %s scores %.4f but was left out for one at %.4f", id, other, s, last)
			}
		}
	}
}

// TestSnippetPrefilterChangesNothing runs every query of the synthetic set
// and a list of real ones over every hit, with and without the filter that
// skips fields, and wants the very same snippets.
func TestSnippetPrefilterChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 1,500-case index")
	}
	e, _, qs := syntheticEngine(t, 1500)
	ctx := context.Background()
	texts := []string{"retries amplified", "database failover", "dying nodes", "happily generalization", "configurations relational"}
	for _, s := range append(qs.Broad, qs.Narrow...) {
		texts = append(texts, s.Text)
	}
	hits := 0
	for _, text := range texts {
		res, err := e.SearchCases(ctx, incidentlib.Query{Text: text, PerPage: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range res.Hits {
			with, without := e.SnippetsWithAndWithoutPrefilter(h.Case, text)
			if diff := cmp.Diff(without, with); diff != "" {
				t.Fatalf("%q on %s: the filter changed the snippets (-without +with):\n%s", text, h.Case.ID, diff)
			}
			hits++
		}
	}
	if hits < 500 {
		t.Fatalf("only %d hits compared", hits)
	}
}
