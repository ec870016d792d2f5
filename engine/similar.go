package engine

import (
	"context"
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"

	"incidentlib"
)

// Weights of what two cases share. A shared root cause and a shared
// component group together outweigh one shared contributing factor, so a
// case's closest neighbours fail the same way in the same kind of system;
// symptoms, which most outages share, count least.
const (
	weightRootCause     = 3.0
	weightFactor        = 2.0
	weightGroup         = 1.5
	weightComponent     = 0.5 // the very same component, on top of its group
	weightSymptom       = 0.25
	commonShare         = 0.05 // terms held by more cases than this weigh less
	commonDampingPower  = 0.5
	textTieBreakWeight  = 0.01 // text similarity only orders near-equal scores
	defaultSimilarCount = 10
	maxSimilarCount     = 50
)

// similarityIndex holds the per-term weights and each case's title words.
type similarityIndex struct {
	fi      *facetIndex
	weights map[incidentlib.Facet][]float32
	groupW  []float32
	words   [][]uint32 // sorted hashes of each case's title and trigger words
	scores  sync.Pool  // *[]float32 of len n, all zero between uses
}

func newSimilarityIndex(v *incidentlib.Vocabulary, cases []*incidentlib.Case, fi *facetIndex) *similarityIndex {
	si := &similarityIndex{fi: fi, weights: map[incidentlib.Facet][]float32{}}
	n := float64(max(fi.n, 1))
	damp := func(base float64, df int) float32 {
		if share := float64(df) / n; share > commonShare {
			base *= math.Pow(commonShare/share, commonDampingPower)
		}
		return float32(base)
	}
	base := map[incidentlib.Facet]float64{
		incidentlib.FacetRootCause: weightRootCause, incidentlib.FacetContributingFactor: weightFactor,
		incidentlib.FacetComponent: weightComponent, incidentlib.FacetSymptom: weightSymptom,
	}
	for _, f := range incidentlib.Facets {
		w := make([]float32, len(fi.terms[f]))
		for t := range w {
			w[t] = damp(base[f], fi.postings[f][t].count())
		}
		si.weights[f] = w
	}
	for g := range fi.groups {
		si.groupW = append(si.groupW, damp(weightGroup, fi.groupPost[g].count()))
	}
	si.words = make([][]uint32, len(cases))
	for i, c := range cases {
		si.words[i] = wordHashes(c.Title + " " + c.Trigger)
	}
	si.scores.New = func() any { s := make([]float32, fi.n); return &s }
	return si
}

// wordHashes returns the sorted, distinct hashes of the words of s that are
// long enough to carry meaning.
func wordHashes(s string) []uint32 {
	seen := map[uint32]bool{}
	var out []uint32
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 4 {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		if v := h.Sum32(); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
	return out
}

// jaccard is |a∩b| / |a∪b| for sorted sets.
func jaccard(a, b []uint32) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	i, j, common := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(common) / float64(len(a)+len(b)-common)
}

// SimilarCases implements incidentlib.Library.
func (e *Engine) SimilarCases(ctx context.Context, id string, k int) ([]incidentlib.Related, error) {
	c, err := e.FindCaseByID(ctx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case k < 0 || k > maxSimilarCount:
		return nil, incidentlib.InvalidParam("limit", "must be between 1 and %d, got %d", maxSimilarCount, k)
	case k == 0:
		k = defaultSimilarCount
	}
	return e.similarity.related(e, e.byID[c.ID], k), nil
}

type scored struct {
	ci    int
	score float64
}

func (si *similarityIndex) related(e *Engine, self, k int) []incidentlib.Related {
	fi := si.fi
	sp := si.scores.Get().(*[]float32)
	score := *sp
	var touched []int
	add := func(b bitset, w float32) {
		setBits(b, func(j int) {
			if score[j] == 0 {
				touched = append(touched, j)
			}
			score[j] += w
		})
	}
	for _, f := range incidentlib.Facets {
		for _, t := range fi.caseTerms[f][self] {
			add(fi.postings[f][t], si.weights[f][t])
		}
	}
	for _, g := range fi.caseGroups[self] {
		add(fi.groupPost[g], si.groupW[g])
	}
	cands := make([]scored, 0, len(touched))
	for _, j := range touched {
		if j != self {
			cands = append(cands, scored{j, float64(score[j])})
		}
		score[j] = 0
	}
	si.scores.Put(sp)
	if len(cands) == 0 {
		return nil
	}

	// Keep the k best, and every case tied with the k-th, then let text
	// similarity order the ties.
	if len(cands) > k {
		kth := selectKth(cands, k-1)
		keep := cands[:0]
		for _, c := range cands {
			if c.score >= kth-1e-6 {
				keep = append(keep, c)
			}
		}
		cands = keep
	}
	mine := si.words[self]
	for i := range cands {
		cands[i].score += textTieBreakWeight * jaccard(mine, si.words[cands[i].ci])
	}
	sort.Slice(cands, func(a, b int) bool {
		if cands[a].score != cands[b].score {
			return cands[a].score > cands[b].score
		}
		return e.cases[cands[a].ci].ID < e.cases[cands[b].ci].ID
	})
	if len(cands) > k {
		cands = cands[:k]
	}
	out := make([]incidentlib.Related, len(cands))
	for i, c := range cands {
		out[i] = incidentlib.Related{Case: e.cases[c.ci], Score: math.Round(c.score*1000) / 1000, Reasons: si.reasons(self, c.ci)}
	}
	return out
}

// selectKth returns the (k+1)-th largest score, reordering cands.
func selectKth(cands []scored, k int) float64 {
	lo, hi := 0, len(cands)-1
	for lo < hi {
		pivot := cands[(lo+hi)/2].score
		i, j := lo, hi
		for i <= j {
			for cands[i].score > pivot {
				i++
			}
			for cands[j].score < pivot {
				j--
			}
			if i <= j {
				cands[i], cands[j] = cands[j], cands[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return cands[k].score
		}
	}
	return cands[k].score
}

// reasons says in words what two cases share, weightiest first, as the
// case page prints it: "same root cause · shared Database". Shared
// symptoms are named only when nothing else is shared.
func (si *similarityIndex) reasons(a, b int) []string {
	fi := si.fi
	type reason struct {
		text   string
		weight float32
	}
	var rs []reason
	shared := func(x, y []uint16, fn func(t uint16)) {
		for _, t := range x {
			for _, u := range y {
				if t == u {
					fn(t)
				}
			}
		}
	}
	rc, cf := incidentlib.FacetRootCause, incidentlib.FacetContributingFactor
	shared(fi.caseTerms[rc][a], fi.caseTerms[rc][b], func(t uint16) {
		rs = append(rs, reason{"same root cause", si.weights[rc][t] + 1000}) // always first
	})
	shared(fi.caseTerms[cf][a], fi.caseTerms[cf][b], func(t uint16) {
		rs = append(rs, reason{"shared " + fi.terms[cf][t].Name, si.weights[cf][t]})
	})
	shared(fi.caseGroups[a], fi.caseGroups[b], func(g uint16) {
		rs = append(rs, reason{"shared " + fi.groups[g].Name, si.groupW[g]})
	})
	if len(rs) == 0 {
		sy := incidentlib.FacetSymptom
		shared(fi.caseTerms[sy][a], fi.caseTerms[sy][b], func(t uint16) {
			rs = append(rs, reason{"same symptom: " + fi.terms[sy][t].Name, si.weights[sy][t]})
		})
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].weight > rs[j].weight })
	out := make([]string, 0, 3)
	for _, r := range rs {
		if len(out) == 3 {
			break
		}
		out = append(out, r.text)
	}
	return out
}
