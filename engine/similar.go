package engine

import (
	"cmp"
	"context"
	"maps"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/incidentlib/incidentlib"
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
	rareShareDivisor    = 20   // terms held by at most n/20 cases count as rare for pruning
	maxPruneChecks      = 2    // a check that failed twice rarely succeeds later
	textTieBreakWeight  = 0.01 // text similarity only orders near-equal scores
	defaultSimilarCount = 10
	maxSimilarCount     = 50
)

// similarityIndex holds the per-term weights and each case's title words.
type similarityIndex struct {
	fi      *facetIndex
	weights [numDims][]float32
	// words holds, per case, the sorted hashes of the distinctive words of
	// its title and trigger: those in at most commonShare of the cases
	// (words everyone uses say nothing about likeness). byWord indexes them.
	words  [][]uint32
	byWord map[uint32][]int32
	// hashes, when set, holds every case's word hashes before pruning, by
	// case, for the engine Apply makes next.
	hashes map[*incidentlib.Case][]uint32
	// df counts the cases holding each word (before pruning), and maxDF is
	// the most a word may have and still be kept: with hashes, what the
	// next engine needs to change a few cases without counting them all
	// again (replacing). Only the newest engine's index holds them.
	df      map[uint32]int32
	maxDF   int32
	buffers sync.Pool // *similarBuffers, reused across calls
}

// similarBuffers are one call's working memory: scores by case number (all
// zero between uses) and the candidate list.
type similarBuffers struct {
	score  []float32
	cands  []scored
	pos    []int32 // by case number: 1 + position in the candidate list, or 0
	shared []uint8 // by case number: words shared with self
}

func newSimilarityIndex(v *incidentlib.Vocabulary, cases []*incidentlib.Case, fi *facetIndex) *similarityIndex {
	return newSimilarityIndexReusing(v, cases, fi, nil)
}

// newSimilarityIndexReusing is newSimilarityIndex reading each case's
// word hashes from hashes (what an engine before held: Apply) when they
// are there, and recording the ones it works out.
func newSimilarityIndexReusing(v *incidentlib.Vocabulary, cases []*incidentlib.Case, fi *facetIndex, hashes map[*incidentlib.Case][]uint32) *similarityIndex {
	si := &similarityIndex{fi: fi, hashes: hashes}
	n := float64(max(fi.n, 1))
	si.weights = termWeights(fi)
	si.words = make([][]uint32, len(cases))
	df := map[uint32]int32{}
	for i, c := range cases {
		if ws, ok := hashes[c]; ok {
			si.words[i] = ws
		} else {
			si.words[i] = wordHashes(c.Title, c.Trigger)
			if hashes != nil {
				hashes[c] = si.words[i]
			}
		}
		for _, w := range si.words[i] {
			df[w]++
		}
	}
	maxDF := int32(max(2, int(commonShare*n)))
	if hashes != nil {
		si.df, si.maxDF = df, maxDF
	}
	si.byWord = map[uint32][]int32{}
	for i, ws := range si.words {
		kept := ws[:0]
		if hashes != nil {
			kept = make([]uint32, 0, len(ws)) // ws is kept for the next engine
		}
		for _, w := range ws {
			if df[w] <= maxDF {
				kept = append(kept, w)
				si.byWord[w] = append(si.byWord[w], int32(i))
			}
		}
		si.words[i] = slices.Clip(kept)
	}
	si.buffers.New = func() any { return &similarBuffers{score: make([]float32, fi.n)} }
	return si
}

// termWeights weighs each vocabulary term by how many cases hold it:
// terms most cases share say less about likeness.
func termWeights(fi *facetIndex) [numDims][]float32 {
	var out [numDims][]float32
	n := float64(max(fi.n, 1))
	base := [numDims]float64{
		dimRootCause: weightRootCause, dimFactor: weightFactor, dimComponent: weightComponent,
		dimSymptom: weightSymptom, dimGroup: weightGroup,
	}
	for d := range fi.dims {
		w := make([]float32, len(fi.dims[d].terms))
		for t := range w {
			b := base[d]
			if share := float64(fi.dims[d].df[t]) / n; share > commonShare {
				b *= math.Pow(commonShare/share, commonDampingPower)
			}
			w[t] = float32(b)
		}
		out[d] = w
	}
	return out
}

// replacing returns the similarity index of cases, which are the cases
// before with those at positions pos replaced (the same IDs, so the same
// positions), changing only what the replaced cases' words touch: a
// change costs the copy of the word map rather than the words of every
// case counted and indexed again. It reports false, changing nothing,
// when that cannot be done exactly (this index keeps no counts, or a word
// the change touches would cross the pruning threshold, which changes
// other cases' words): build it whole then.
func (si *similarityIndex) replacing(cases, before []*incidentlib.Case, fi *facetIndex, pos []int) (*similarityIndex, bool) {
	if si.df == nil || si.hashes == nil || len(cases) != len(before) || len(si.words) != len(cases) || fi.n != len(cases) {
		return nil, false
	}
	maxDF := int32(max(2, int(commonShare*float64(max(fi.n, 1)))))
	if maxDF != si.maxDF {
		return nil, false
	}
	delta := map[uint32]int32{}
	raw := make([][]uint32, len(pos))
	for k, i := range pos {
		old, ok := si.hashes[before[i]]
		if !ok {
			return nil, false
		}
		raw[k] = wordHashes(cases[i].Title, cases[i].Trigger)
		for _, w := range old {
			delta[w]--
		}
		for _, w := range raw[k] {
			delta[w]++
		}
	}
	for w, d := range delta {
		if d != 0 && (si.df[w] <= maxDF) != (si.df[w]+d <= maxDF) {
			return nil, false
		}
	}
	// From here the counts belong to the new index: the engine before
	// answers from its words and byWord, never from df.
	n := &similarityIndex{fi: fi, df: si.df, maxDF: maxDF, weights: termWeights(fi)}
	si.df = nil
	for w, d := range delta {
		if d != 0 {
			if n.df[w] += d; n.df[w] <= 0 {
				delete(n.df, w)
			}
		}
	}
	n.hashes = make(map[*incidentlib.Case][]uint32, len(cases))
	for i, c := range cases {
		n.hashes[c] = si.hashes[before[i]]
	}
	n.words = slices.Clone(si.words)
	n.byWord = maps.Clone(si.byWord)
	for k, i := range pos {
		n.hashes[cases[i]] = raw[k]
		for _, w := range si.words[i] {
			if l := withoutCase(n.byWord[w], int32(i)); len(l) > 0 {
				n.byWord[w] = l
			} else {
				delete(n.byWord, w)
			}
		}
		kept := make([]uint32, 0, len(raw[k]))
		for _, w := range raw[k] {
			if n.df[w] <= maxDF {
				kept = append(kept, w)
				n.byWord[w] = withCase(n.byWord[w], int32(i))
			}
		}
		n.words[i] = slices.Clip(kept)
	}
	n.buffers.New = func() any { return &similarBuffers{score: make([]float32, fi.n)} }
	return n, true
}

// withoutCase returns a new list of l's cases but i (l is shared with
// the engine before and never changed).
func withoutCase(l []int32, i int32) []int32 {
	out := make([]int32, 0, len(l))
	for _, x := range l {
		if x != i {
			out = append(out, x)
		}
	}
	return out
}

// withCase returns a new list of l's cases and i, in order.
func withCase(l []int32, i int32) []int32 {
	at, found := slices.BinarySearch(l, i)
	if found {
		return l
	}
	out := make([]int32, 0, len(l)+1)
	out = append(out, l[:at]...)
	out = append(out, i)
	return append(out, l[at:]...)
}

// wordHashes returns the sorted, distinct FNV-1a hashes of the words of
// texts that are long enough to carry meaning (four bytes or more).
func wordHashes(texts ...string) []uint32 {
	var out []uint32
	for _, s := range texts {
		var h uint32
		n := 0
		flush := func() {
			if n >= 4 {
				out = append(out, h)
			}
			h, n = 2166136261, 0
		}
		h = 2166136261
		for _, r := range s {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				flush()
				continue
			}
			var buf [4]byte
			l := utf8.EncodeRune(buf[:], unicode.ToLower(r))
			for _, b := range buf[:l] {
				h ^= uint32(b)
				h *= 16777619
			}
			n += l
		}
		flush()
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// addTextSimilarity adds the text tie-break to each candidate's score. A
// few candidates are compared word list against word list; many (a case
// with few tags ties with thousands) are counted through the word index,
// touching only the candidates that share a word with self.
func (si *similarityIndex) addTextSimilarity(self int, cands []scored, buf *similarBuffers) {
	mine := si.words[self]
	if len(mine) == 0 {
		return
	}
	if len(cands) <= 256 {
		for i := range cands {
			cands[i].score += textTieBreakWeight * jaccard(mine, si.words[cands[i].ci])
		}
		return
	}
	if buf.pos == nil {
		buf.pos = make([]int32, si.fi.n)
		buf.shared = make([]uint8, si.fi.n)
	}
	for i, c := range cands {
		buf.pos[c.ci] = int32(i + 1)
	}
	var touched []int
	for _, w := range mine {
		for _, j := range si.byWord[w] {
			if buf.pos[j] != 0 {
				if buf.shared[j] == 0 {
					touched = append(touched, int(j))
				}
				if buf.shared[j] < 255 {
					buf.shared[j]++
				}
			}
		}
	}
	for _, j := range touched {
		common := float64(buf.shared[j])
		union := float64(len(mine)+len(si.words[j])) - common
		cands[buf.pos[j]-1].score += textTieBreakWeight * common / union
		buf.shared[j] = 0
	}
	for _, c := range cands {
		buf.pos[c.ci] = 0
	}
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

// related finds the k cases most like case self.
//
// A case's score is the sum of the weights of what it shares with self.
// Rare terms are few and weigh most, common ones are many and weigh least,
// so it first scores only the cases that share a rare term (walking those
// terms' posting lists, and testing membership in the common ones). Any
// other case can score at most the common terms' total; when the k-th best
// rare-sharing case beats that, no other case can enter the top k and the
// long posting lists of the common terms are never walked. Otherwise it
// walks every list.
func (si *similarityIndex) related(e *Engine, self, k int) []incidentlib.Related {
	fi := si.fi
	type term struct {
		d, t int
		w    float32
		df   int
	}
	var terms []term
	for d := range fi.dims {
		for _, t := range fi.dims[d].lists.of(self) {
			terms = append(terms, term{d, int(t), si.weights[d][t], fi.dims[d].df[t]})
		}
	}
	// Walk first what buys the most score for the least walking.
	slices.SortFunc(terms, func(a, b term) int {
		return cmp.Compare(float64(b.w)/float64(b.df+1), float64(a.w)/float64(a.df+1))
	})
	rareLimit := max(fi.n/rareShareDivisor, 64)

	buf := si.buffers.Get().(*similarBuffers)
	defer si.buffers.Put(buf)
	acc, cands := buf.score, buf.cands[:0]
	// walk adds a term's weight to every case that carries it.
	walk := func(t term) {
		p, w := fi.dims[t.d].postings[t.t], t.w
		for wi, word := range p {
			for word != 0 {
				bit := bits.TrailingZeros64(word)
				word &= word - 1
				j := wi<<6 | bit
				if j == self {
					continue
				}
				if acc[j] == 0 {
					cands = append(cands, scored{ci: j})
				}
				acc[j] += w
			}
		}
	}
	// exact sets each candidate's full score: what was walked, plus the
	// terms not walked that it carries.
	exact := func(rest []term) {
		for i := range cands {
			j := cands[i].ci
			s := acc[j]
			for _, t := range rest {
				if fi.dims[t.d].postings[t.t].has(j) {
					s += t.w
				}
			}
			cands[i].score = float64(s)
		}
	}
	walked := 0
	for walked < len(terms) && terms[walked].df <= rareLimit {
		walk(terms[walked])
		walked++
	}
	restCost := 0 // members of the posting lists not yet walked
	for _, t := range terms[walked:] {
		restCost += t.df
	}
	// Walk the common terms, rarest first, until the k-th best candidate
	// beats anything a case outside the candidates could still score.
	checks := 0
	for walked < len(terms) {
		rest := terms[walked:]
		if checks == maxPruneChecks || len(cands)*(len(rest)+4) > restCost {
			// Checking would cost more than walking what is left.
			for _, t := range rest {
				walk(t)
			}
			walked = len(terms)
			break
		}
		if len(cands) >= k {
			var bound float32
			for _, t := range rest {
				bound += t.w
			}
			exact(rest)
			checks++
			if selectKth(cands, k-1) > float64(bound)+textTieBreakWeight+1e-4 {
				break
			}
		}
		walk(terms[walked])
		restCost -= terms[walked].df
		walked++
	}
	if walked == len(terms) {
		exact(nil)
	}
	for _, c := range cands {
		acc[c.ci] = 0
	}
	buf.cands = cands
	if len(cands) == 0 {
		return nil
	}

	// Keep the k best, and every case close enough to the k-th that text
	// similarity could lift it past, then let text similarity decide.
	top := cands
	if len(top) > k {
		kth := selectKth(top, k-1)
		top = nil
		for _, c := range cands {
			if c.score >= kth-textTieBreakWeight-1e-4 {
				top = append(top, c)
			}
		}
	} else {
		top = slices.Clone(top)
	}
	si.addTextSimilarity(self, top, buf)
	// Case numbers follow IDs, so the number breaks the last ties by ID.
	better := func(a, b scored) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.ci < b.ci
	}
	if len(top) > 4*k {
		idx := make([]int, len(top))
		for i := range idx {
			idx[i] = i
		}
		picked := topN(idx, k, func(a, b int) bool { return better(top[a], top[b]) })
		best := make([]scored, k)
		for i, p := range picked {
			best[i] = top[p]
		}
		top = best
	} else {
		sort.Slice(top, func(a, b int) bool { return better(top[a], top[b]) })
		if len(top) > k {
			top = top[:k]
		}
	}
	out := make([]incidentlib.Related, len(top))
	for i, c := range top {
		reasons, shared := si.reasons(self, c.ci)
		out[i] = incidentlib.Related{Case: e.cases[c.ci], Score: math.Round(c.score*1000) / 1000, Reasons: reasons, Shared: shared}
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
func (si *similarityIndex) reasons(a, b int) ([]string, []incidentlib.SharedTerm) {
	fi := si.fi
	type reason struct {
		text   string
		term   incidentlib.SharedTerm
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
	d := &fi.dims
	shared(d[dimRootCause].lists.of(a), d[dimRootCause].lists.of(b), func(t uint16) {
		rs = append(rs, reason{"same root cause", incidentlib.SharedTerm{Term: d[dimRootCause].terms[t]}, si.weights[dimRootCause][t] + 1000}) // always first
	})
	shared(d[dimFactor].lists.of(a), d[dimFactor].lists.of(b), func(t uint16) {
		rs = append(rs, reason{"shared " + d[dimFactor].terms[t].Name, incidentlib.SharedTerm{Term: d[dimFactor].terms[t]}, si.weights[dimFactor][t]})
	})
	shared(d[dimGroup].lists.of(a), d[dimGroup].lists.of(b), func(g uint16) {
		rs = append(rs, reason{"shared " + d[dimGroup].terms[g].Name, incidentlib.SharedTerm{Term: d[dimGroup].terms[g], IsGroup: true}, si.weights[dimGroup][g]})
	})
	if len(rs) == 0 {
		shared(d[dimSymptom].lists.of(a), d[dimSymptom].lists.of(b), func(t uint16) {
			rs = append(rs, reason{"same symptom: " + d[dimSymptom].terms[t].Name, incidentlib.SharedTerm{Term: d[dimSymptom].terms[t]}, si.weights[dimSymptom][t]})
		})
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].weight > rs[j].weight })
	out := make([]string, 0, 3)
	var terms []incidentlib.SharedTerm
	for _, r := range rs {
		if len(out) == 3 {
			break
		}
		out = append(out, r.text)
		terms = append(terms, r.term)
	}
	return out, terms
}
