package engine

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync"

	index "github.com/blevesearch/bleve_index_api"

	"github.com/incidentlib/incidentlib"
)

// Word weights learned from the corpus. A word that carries meaning is
// rare (document frequency) and concentrated: the cases that write it
// lean towards some vocabulary terms ("retries" towards Retry
// amplification, "environment" towards operator and configuration
// errors). A word that carries little ("make", "kept", "worse", "fell",
// "outages") is spread over the vocabulary as the corpus is. Concentration
// is the divergence of the word's cases' terms from the corpus's, less
// what a random set of as many cases diverges by chance; it is learned
// anew whenever the corpus changes, never listed by hand.
const (
	// minTopicality is the share of its weight the most evenly spread
	// word keeps: it still counts, it just does not decide.
	minTopicality = 0.2
	// topicalScale is the divergence above chance (in nats) at which a
	// word counts as fully topical.
	topicalScale = 0.35
	// shrink is how many pseudo-cases, tagged as the corpus is, pull a
	// word's term distribution towards the corpus's: a word in few cases
	// is not taken as topical on the strength of one or two of them.
	shrink = 8
	// maxWeightCache bounds the words whose weights are kept.
	maxWeightCache = 1 << 16
	// nullSamples random case sets estimate the divergence of chance.
	nullSamples = 12
	// maxWeightSample bounds the cases a word's weight is learned from: a
	// word in tens of thousands of cases is judged on the first of them,
	// so that learning it costs a bounded walk on a large corpus.
	maxWeightSample = 500
)

// wordWeights computes and caches the topicality of analyzed words.
type wordWeights struct {
	caseTerms [][]uint16 // by case number: its terms, as term numbers
	prior     []float64  // by term number: share of all tags
	caseShare []float64  // by term number: share of cases tagged with it
	terms     []incidentlib.Term
	mu        sync.Mutex
	cache     map[string]wordWeight
	null      map[int]float64 // by size bucket: divergence of a random case set
}

// wordWeight is what the corpus says about a word: how topical it is, and
// the vocabulary term its cases lean towards most, if any leans clearly.
type wordWeight struct {
	topical float64
	term    int // term number, or -1
}

// A word leans towards a term when at least leanShare of the cases that
// write it (and leanCases of them) are tagged with the term, leanLift
// times as often as the corpus's cases are.
const (
	leanShare = 0.25
	leanCases = 3
	leanLift  = 4.0
)

func newWordWeights(v *incidentlib.Vocabulary, cases []*incidentlib.Case) *wordWeights {
	ww := &wordWeights{cache: map[string]wordWeight{}, null: map[int]float64{}}
	no := map[string]uint16{}
	for _, f := range incidentlib.Facets {
		for _, t := range v.Terms(f) {
			no[string(f)+"/"+t.Slug] = uint16(len(no))
			ww.terms = append(ww.terms, t)
		}
	}
	counts := make([]float64, len(no))
	total := 0.0
	ww.caseTerms = make([][]uint16, len(cases))
	for ci, c := range cases {
		for _, f := range incidentlib.Facets {
			for _, s := range termsOf(c, f) {
				if n, ok := no[string(f)+"/"+s]; ok {
					ww.caseTerms[ci] = append(ww.caseTerms[ci], n)
					counts[n]++
					total++
				}
			}
		}
	}
	ww.prior = make([]float64, len(counts))
	ww.caseShare = make([]float64, len(counts))
	for i, c := range counts {
		ww.prior[i] = (c + 0.5) / (total + 0.5*float64(len(counts)))
		ww.caseShare[i] = c / float64(max(len(cases), 1))
	}
	return ww
}

// divergence is how far the term distribution of the given cases is from
// the corpus's, in nats, after shrinking it towards the corpus's.
func (ww *wordWeights) divergence(cases []int32, counts []float64) float64 {
	clear(counts)
	tags := 0.0
	for _, c := range cases {
		for _, t := range ww.caseTerms[c] {
			counts[t]++
			tags++
		}
	}
	if tags == 0 {
		return 0
	}
	perCase := tags / float64(len(cases))
	pseudo := shrink * perCase
	kl := 0.0
	for t, p := range ww.prior {
		q := (counts[t] + pseudo*p) / (tags + pseudo)
		if q > 0 {
			kl += q * math.Log(q/p)
		}
	}
	return kl
}

// sizeBucket groups case-set sizes whose chance divergence is alike.
func sizeBucket(n int) int { return int(math.Round(4 * math.Log2(float64(max(n, 1))))) }

// chance is the mean divergence of random sets of about n cases: of the
// size that stands for n's bucket, drawn with the bucket as the seed, so
// that it does not depend on which word asked first.
func (ww *wordWeights) chance(n int, counts []float64) float64 {
	b := sizeBucket(n)
	if v, ok := ww.null[b]; ok {
		return v
	}
	r := rand.New(rand.NewPCG(uint64(b), 0x5eed))
	all := len(ww.caseTerms)
	n = min(max(int(math.Round(math.Exp2(float64(b)/4))), 1), all)
	sum := 0.0
	set := make([]int32, n)
	for range nullSamples {
		for i := range set {
			set[i] = int32(r.IntN(all))
		}
		sum += ww.divergence(set, counts)
	}
	v := sum / nullSamples
	ww.null[b] = v
	return v
}

// topicality is how much of its weight a word keeps, from minTopicality
// (spread as the corpus is) to 1 (concentrated on some terms). cases
// lists the cases holding it.
func (ww *wordWeights) weigh(stem string, cases func() ([]int32, int)) wordWeight {
	ww.mu.Lock()
	v, ok := ww.cache[stem]
	ww.mu.Unlock()
	if ok {
		return v
	}
	set, df := cases()
	ww.mu.Lock()
	defer ww.mu.Unlock()
	v = wordWeight{topical: 1, term: -1}
	if len(set) > 0 && len(ww.prior) > 0 {
		counts := make([]float64, len(ww.prior))
		d := ww.divergence(set, counts) // fills counts with the set's tags
		bestLift := 0.0
		for t, c := range counts {
			if c < leanCases || c < leanShare*float64(len(set)) || ww.caseShare[t] == 0 {
				continue
			}
			if lift := c / float64(len(set)) / ww.caseShare[t]; lift >= leanLift && lift > bestLift {
				bestLift, v.term = lift, t
			}
		}
		above := d - ww.chance(len(set), counts)
		v.topical = minTopicality + (1-minTopicality)*math.Max(0, math.Min(1, above/topicalScale))
		v.topical = max(v.topical, rareFloor(df, len(ww.caseTerms)))
	}
	if len(ww.cache) >= maxWeightCache {
		clear(ww.cache)
	}
	ww.cache[stem] = v
	return v
}

// rareFloor keeps a rare word's weight: a name (DynamoDB, ProxySQL) or a
// precise word in a handful of cases is meaningful even when the cases
// holding it are tagged as the corpus is, and too few to tell. It is
// rareWeight up to 1% of the cases and falls to minTopicality at 5%.
func rareFloor(df, n int) float64 {
	const rareWeight = 0.6
	share := float64(df) / float64(max(n, 1))
	switch {
	case share <= 0.01:
		return rareWeight
	case share >= 0.05:
		return minTopicality
	}
	return rareWeight - (rareWeight-minTopicality)*(share-0.01)/0.04
}

// casesHolding lists up to limit cases whose text holds the analyzed
// term, and how many cases hold it (the largest count of one field when
// the list is cut short).
func (e *Engine) casesHolding(r index.IndexReader, stem string, limit int) ([]int32, int) {
	seen := newBitset(len(e.cases))
	var out []int32
	df := 0
	for _, f := range textFields {
		tfr, err := r.TermFieldReader(context.Background(), []byte(stem), f.name, false, false, false)
		if err != nil {
			continue
		}
		df = max(df, int(tfr.Count()))
		for len(out) < limit {
			d, err := tfr.Next(nil)
			if err != nil || d == nil {
				break
			}
			num := binary.BigEndian.Uint64(d.ID)
			if num >= uint64(len(e.docNum)) || e.docNum[num] < 0 {
				continue
			}
			ci := int(e.docNum[num])
			if !seen.has(ci) {
				seen.set(ci)
				out = append(out, int32(ci))
			}
		}
		tfr.Close()
	}
	if len(out) < limit {
		df = len(out) // the whole list: exact
	}
	return out, df
}

// wordTopicality is the topicality of an analyzed word in this corpus.
func (e *Engine) wordTopicality(r index.IndexReader, stem string) float64 {
	return e.weightOf(r, stem).topical
}

func (e *Engine) weightOf(r index.IndexReader, stem string) wordWeight {
	return e.weights.weigh(stem, func() ([]int32, int) { return e.casesHolding(r, stem, maxWeightSample) })
}

// leaning is the vocabulary term the cases writing a word lean towards,
// if they clearly do.
func (e *Engine) leaning(r index.IndexReader, stem string) (*incidentlib.Term, bool) {
	w := e.weightOf(r, stem)
	if w.term < 0 {
		return nil, false
	}
	return &e.weights.terms[w.term], true
}
