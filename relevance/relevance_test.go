package relevance_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/engine/enginetest"
	"github.com/incidentlib/incidentlib/relevance"
)

// The floors recorded in docs/search.md: the scores the shipped corpus
// reaches (765 cases, the set judged at 184 and extended to the later cases
// on 1 December 2026, see there), rounded down. A change that ranks
// worse fails here; a change that ranks better should raise them.
// Re-recorded on 2 December 2026 with the error signatures and the learned
// word weights (issue 20): tuning 0.909 / 0.965 / 0.916 (was 0.907 / 0.945
// / 0.900), held out 0.918 / 0.949 / 0.910 (was 0.921 / 0.964 / 0.921);
// the held-out part fell a little and the floor records it as it is
// (docs/search.md). Re-recorded again the same day at 825 cases, after
// 60 new cases (judged into the set by reading them, where they answer a
// query) and the second readings' edits to the early cases, with no
// ranking change: tuning 0.909 / 0.942 / 0.899, held out 0.916 / 0.940 /
// 0.903. Raised on 2 December 2026 when a long text came to be searched
// word by word (docs/search.md): tuning 0.908 / 0.943 / 0.899, held out
// 0.912 / 0.958 / 0.905. Set again later that day when the corpus grew
// from 825 to 1,040 cases and reviewers judged the new cases into the set
// (more judged cases per query, so the share of them a page of ten holds
// fell): tuning 0.883 / 0.941 / 0.881, held out 0.886 / 0.967 / 0.894.
// Set again at 1,218 cases (178 more, judged into the set the same way):
// tuning 0.870 / 0.947 / 0.875, held out 0.877 / 0.982 / 0.903. Set again
// at 1,225 cases, after the third readings edited about 380 cases (terms
// dropped, lessons narrowed, hedges restored) and 7 were added, with no
// ranking change: tuning 0.864 / 0.947 / 0.873, held out 0.874 / 0.973 /
// 0.898.
var floors = map[string]struct{ recall, mrr, ndcg float64 }{
	"tuning":   {0.86, 0.94, 0.87},
	"held out": {0.87, 0.97, 0.89},
}

// blindFloors are the same for relevance/blind.yaml (half held out, seed
// 20261202), recorded on 2 December 2026 at 825 cases when a long text
// came to be searched word by word, rounded down: tuning 0.610 / 0.819 /
// 0.622, held out 0.607 / 0.798 / 0.632 (judged share, MRR, nDCG@10).
// Set again the same day at 1,040 cases, after blind reviewers judged the
// new cases into the set: tuning 0.555 / 0.853 / 0.612, held out 0.564 /
// 0.814 / 0.603 (MRR rose; the judged share fell because queries gained
// judged cases, up to ten of which count). Set again at 1,218 cases, the
// 178 new cases judged in by a blind reviewer: tuning 0.532 / 0.848 /
// 0.591, held out 0.544 / 0.786 / 0.583 (the held-out MRR fell from 0.814:
// new cases that answer a query rank above the judged ones more often).
// Set again at 1,225 cases after the third readings (see floors): tuning
// 0.527 / 0.851 / 0.591, held out 0.543 / 0.780 / 0.583.
var blindFloors = map[string]struct{ recall, mrr, ndcg float64 }{
	"tuning":   {0.52, 0.85, 0.59},
	"held out": {0.54, 0.77, 0.58},
}

func TestBlindSetFloor(t *testing.T) {
	// Its own engine, with a deadline that a machine busy with other
	// work cannot reach: this measures the ranking, the benchmark and the
	// cost tests measure the time.
	c, problems, err := corpus.Load(corpus.Options{})
	if err != nil || len(problems) > 0 {
		t.Fatalf("loading the shipped corpus: %v %v", err, problems)
	}
	e, err := engine.Open(context.Background(), c.Vocabulary, c.Cases, engine.Options{QueryTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	data, err := os.ReadFile("blind.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set, err := relevance.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	tune, held := set.SplitOut(2)
	for name, qs := range map[string][]relevance.Query{"tuning": tune, "held out": held} {
		sc, _, err := relevance.Evaluate(context.Background(), e, qs)
		if err != nil {
			t.Fatal(err)
		}
		// Held-out queries are never listed one by one: only the figures.
		if f := blindFloors[name]; sc.RecallAt10 < f.recall || sc.MRR < f.mrr || sc.NDCGAt10 < f.ndcg {
			t.Errorf("blind set, %s: judged share %.3f, MRR %.3f, nDCG@10 %.3f; the floor is %.2f, %.2f, %.2f",
				name, sc.RecallAt10, sc.MRR, sc.NDCGAt10, f.recall, f.mrr, f.ndcg)
		}
	}
}

func TestRelevanceFloor(t *testing.T) {
	e := enginetest.Shipped(t)
	set, err := relevance.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Queries) < 120 {
		t.Errorf("the judged set has %d queries; it needs at least 120", len(set.Queries))
	}
	tune, held := set.Split()
	for name, qs := range map[string][]relevance.Query{"tuning": tune, "held out": held} {
		sc, results, err := relevance.Evaluate(context.Background(), e, qs)
		if err != nil {
			t.Fatal(err)
		}
		f := floors[name]
		if sc.RecallAt10 < f.recall || sc.MRR < f.mrr || sc.NDCGAt10 < f.ndcg {
			t.Errorf("%s: recall@10 %.3f, MRR %.3f, nDCG@10 %.3f; the floor is %.2f, %.2f, %.2f",
				name, sc.RecallAt10, sc.MRR, sc.NDCGAt10, f.recall, f.mrr, f.ndcg)
			for _, r := range results {
				if r.Recall < 1 || !r.Top3OK {
					t.Logf("  %q: judged top3 %v top10 %v, got %v", r.Text, r.Top3, r.Top10, r.Got)
				}
			}
		}
		if name == "held out" && sc.Found != sc.Queries {
			t.Errorf("held out: %d of %d queries find a judged case in the top 10; every one must", sc.Found, sc.Queries)
		}
	}
}

func TestSplitIsStableAndAThird(t *testing.T) {
	set, err := relevance.Load()
	if err != nil {
		t.Fatal(err)
	}
	t1, h1 := set.Split()
	t2, h2 := set.Split()
	if len(h1) != len(set.Queries)/3 || len(t1)+len(h1) != len(set.Queries) {
		t.Errorf("split %d + %d of %d", len(t1), len(h1), len(set.Queries))
	}
	for i := range h1 {
		if h1[i].Text != h2[i].Text {
			t.Fatalf("the held-out part changed between runs at %d", i)
		}
	}
	_ = t2
}

func TestMetrics(t *testing.T) {
	// A query whose only judged case ranks second: RR 0.5, recall 1.
	sc, rs, err := relevance.Evaluate(context.Background(), fakeLib{"IL-0002", "IL-0001"}, []relevance.Query{{Text: "x", Top3: []string{"IL-0001"}}})
	if err != nil {
		t.Fatal(err)
	}
	if sc.MRR != 0.5 || sc.RecallAt10 != 1 || !rs[0].Top3OK || sc.NDCGAt10 >= 1 || sc.NDCGAt10 <= 0.5 {
		t.Errorf("scores %+v", sc)
	}
	sc, _, _ = relevance.Evaluate(context.Background(), fakeLib{"IL-0002"}, []relevance.Query{{Text: "x", Top10: []string{"IL-0001"}}})
	if sc.MRR != 0 || sc.RecallAt10 != 0 || sc.Found != 0 {
		t.Errorf("a miss scores %+v", sc)
	}
	// Twelve judged cases, the ten on the page all judged: recall 1.
	var judged, page fakeLib
	for i := 1; i <= 12; i++ {
		id := fmt.Sprintf("IL-%04d", i)
		judged = append(judged, id)
		if i <= 10 {
			page = append(page, id)
		}
	}
	sc, _, _ = relevance.Evaluate(context.Background(), page, []relevance.Query{{Text: "x", Top10: judged}})
	if sc.RecallAt10 != 1 {
		t.Errorf("a page of ten judged cases of twelve: recall@10 %.3f, want 1", sc.RecallAt10)
	}
}
