// Package relevance scores search against the judged relevance set: queries
// written the way engineers and agents ask, each with the cases that must
// appear in the top 3 or the top 10. A random third of the set, chosen by
// the seed the set records, is held out: ranking is tuned on the rest and
// judged on both.
package relevance

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"math"
	"math/rand/v2"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
)

//go:embed judged.yaml
var judgedYAML []byte

// Query is one judged query.
type Query struct {
	Text  string   `yaml:"q"`
	Kind  string   `yaml:"kind"`
	Top3  []string `yaml:"top3"`  // cases that must rank in the top 3
	Top10 []string `yaml:"top10"` // cases that must rank in the top 10
}

// Set is the judged set.
type Set struct {
	Seed    uint64  `yaml:"seed"`
	Queries []Query `yaml:"queries"`
}

// Load reads the judged set shipped with the package.
func Load() (*Set, error) { return Parse(judgedYAML) }

// Parse reads a judged set in the format of judged.yaml (seed, queries with
// q, kind, top3, top10): the shipped set, or another written apart from it.
func Parse(data []byte) (*Set, error) {
	var s Set
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("judged set: %w", err)
	}
	if len(s.Queries) == 0 {
		return nil, fmt.Errorf("judged set: no queries")
	}
	for i, q := range s.Queries {
		if q.Text == "" || len(q.Top3)+len(q.Top10) == 0 {
			return nil, fmt.Errorf("judged set: query %d (%q) needs text and at least one judged case", i+1, q.Text)
		}
	}
	return &s, nil
}

// Split returns the tuning part and the held-out part: a random third,
// drawn with the set's seed, so it is the same third on every run.
func (s *Set) Split() (tune, held []Query) { return s.SplitOut(3) }

// SplitOut returns the tuning part and the held-out part: a random
// len/den of the queries (den 2 holds out half, 3 a third), drawn with
// the set's seed, so it is the same part on every run.
func (s *Set) SplitOut(den int) (tune, held []Query) {
	den = max(den, 1)
	r := rand.New(rand.NewPCG(s.Seed, s.Seed))
	perm := r.Perm(len(s.Queries))
	heldOut := map[int]bool{}
	for _, i := range perm[:len(s.Queries)/den] {
		heldOut[i] = true
	}
	for i, q := range s.Queries {
		if heldOut[i] {
			held = append(held, q)
		} else {
			tune = append(tune, q)
		}
	}
	return tune, held
}

// Result is how one query fared.
type Result struct {
	Query
	Got    []string // the top 10, in order
	RR     float64  // 1 / rank of the first judged case; 0 when none is in the top 10
	Recall float64  // share of the judged cases in the top 10 (of at most 10 judged)
	NDCG   float64
	Top3OK bool // every top-3 case is in the top 3
}

// Scores summarises a part of the set.
type Scores struct {
	Queries    int
	RecallAt10 float64
	MRR        float64
	NDCGAt10   float64
	Found      int // queries with a judged case in the top 10
	Top3OK     int // queries whose top-3 cases all rank in the top 3 (of those that have any)
	Top3Judged int
}

// Ranker returns the IDs of the first ten cases a search engine ranks for
// a query's text.
type Ranker func(ctx context.Context, text string) ([]string, error)

// LibraryRanker ranks with a library's SearchCases.
func LibraryRanker(lib incidentlib.Library) Ranker {
	return func(ctx context.Context, text string) ([]string, error) {
		res, err := lib.SearchCases(ctx, incidentlib.Query{Text: text, PerPage: 10})
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.Case.ID)
		}
		return ids, nil
	}
}

// Evaluate runs every query against lib and scores it.
func Evaluate(ctx context.Context, lib incidentlib.Library, qs []Query) (Scores, []Result, error) {
	return EvaluateRanker(ctx, LibraryRanker(lib), qs)
}

// EvaluateRanker runs every query through rank and scores it.
func EvaluateRanker(ctx context.Context, rank Ranker, qs []Query) (Scores, []Result, error) {
	var out []Result
	for _, q := range qs {
		got, err := rank(ctx, q.Text)
		if err != nil {
			return Scores{}, nil, fmt.Errorf("%q: %w", q.Text, err)
		}
		r := Result{Query: q, Got: got}
		if len(r.Got) > 10 {
			r.Got = r.Got[:10]
		}
		score(&r)
		out = append(out, r)
	}
	return Summarize(out), out, nil
}

// Summarize averages the metrics of scored results.
func Summarize(rs []Result) Scores {
	var sc Scores
	for _, r := range rs {
		q := r.Query
		sc.Queries++
		sc.RecallAt10 += r.Recall
		sc.MRR += r.RR
		sc.NDCGAt10 += r.NDCG
		if r.RR > 0 {
			sc.Found++
		}
		if len(q.Top3) > 0 {
			sc.Top3Judged++
			if r.Top3OK {
				sc.Top3OK++
			}
		}
	}
	if sc.Queries > 0 {
		n := float64(sc.Queries)
		sc.RecallAt10 /= n
		sc.MRR /= n
		sc.NDCGAt10 /= n
	}
	return sc
}

// score fills in a result's metrics. A top-3 case has gain 2, a top-10
// case gain 1.
func score(r *Result) {
	gain := map[string]float64{}
	for _, id := range r.Top10 {
		gain[id] = 1
	}
	for _, id := range r.Top3 {
		gain[id] = 2
	}
	dcg, found := 0.0, 0
	for i, id := range r.Got {
		if g, ok := gain[id]; ok {
			if r.RR == 0 {
				r.RR = 1 / float64(i+1)
			}
			found++
			dcg += g / math.Log2(float64(i+2))
		}
	}
	var ideal []float64
	for range r.Top3 {
		ideal = append(ideal, 2)
	}
	for _, id := range r.Top10 {
		if gain[id] == 1 {
			ideal = append(ideal, 1)
		}
	}
	idcg := 0.0
	for i, g := range ideal {
		if i == 10 {
			break
		}
		idcg += g / math.Log2(float64(i+2))
	}
	if idcg > 0 {
		r.NDCG = dcg / idcg
	}
	// Recall at 10 counts against at most 10 judged cases: with more
	// judged than the page holds, a full page of them is a perfect page.
	r.Recall = float64(found) / float64(min(len(gain), 10))
	r.Top3OK = true
	for _, id := range r.Top3 {
		rank := -1
		for i, g := range r.Got {
			if g == id {
				rank = i
			}
		}
		if rank < 0 || rank >= 3 {
			r.Top3OK = false
		}
	}
}
