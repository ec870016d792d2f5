package engine

import (
	"context"
	"sort"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/incidentlib/incidentlib"
)

// maxPage bounds page numbers so page × per_page cannot overflow.
const maxPage = 1_000_000

// normalize checks a query's paging and sort and fills in defaults.
func normalize(q incidentlib.Query) (incidentlib.Query, error) {
	switch {
	case q.Page < 0:
		return q, incidentlib.InvalidParam("page", "must be 1 or more, got %d", q.Page)
	case q.Page > maxPage:
		return q, incidentlib.InvalidParam("page", "must be at most %d", maxPage)
	case q.Page == 0:
		q.Page = 1
	}
	switch {
	case q.PerPage < 0:
		return q, incidentlib.InvalidParam("per_page", "must be between 1 and %d, got %d", incidentlib.MaxPerPage, q.PerPage)
	case q.PerPage > incidentlib.MaxPerPage:
		return q, incidentlib.InvalidParam("per_page", "must be between 1 and %d, got %d", incidentlib.MaxPerPage, q.PerPage)
	case q.PerPage == 0:
		q.PerPage = incidentlib.DefaultPerPage
	}
	switch q.Sort {
	case "":
		q.Sort = incidentlib.SortNewest
	case incidentlib.SortRelevance, incidentlib.SortNewest, incidentlib.SortOldest, incidentlib.SortLongest:
	default:
		return q, incidentlib.InvalidParam("sort", "unknown sort %q; valid: relevance, newest, oldest, longest", truncate(string(q.Sort), 40))
	}
	return q, nil
}

// SearchCases implements incidentlib.Library.
func (e *Engine) SearchCases(ctx context.Context, q incidentlib.Query) (*incidentlib.SearchResult, error) {
	return e.search(ctx, q, nil)
}

// search runs q, keeping only cases in within when it is not nil.
func (e *Engine) search(ctx context.Context, q incidentlib.Query, within bitset) (*incidentlib.SearchResult, error) {
	text, err := e.parseQuery(q.Text)
	if err != nil {
		return nil, err
	}
	if err := checkCost(text); err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := e.withQueryDeadline(ctx)
	defer cancel()
	if q.Sort == "" && !text.empty() {
		q.Sort = incidentlib.SortRelevance
	}
	q, err = normalize(q)
	if err != nil {
		return nil, err
	}
	allowed, err := e.facets.filter(q.Filters, e.vocab)
	if err != nil {
		return nil, err
	}
	if within != nil {
		if allowed == nil {
			allowed = within
		} else {
			allowed.and(within)
		}
	}
	res := &incidentlib.SearchResult{Page: q.Page, PerPage: q.PerPage, Sort: q.Sort}

	var set []int       // case numbers in the result set
	var score []float64 // by case number; nil without text
	var pl *plan
	var mask []uint32 // by case number, the clauses it matched
	if text.empty() {
		set = e.allIn(allowed)
	} else {
		r, err := e.reader()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		if pl, err = e.newPlan(r, text); err != nil {
			return nil, e.queryError(parent, err)
		}
		if len(pl.clauses) == 0 && len(pl.exclude) == 0 {
			// Only stop words: nothing can match.
			e.facets.counts(nil, res)
			return res, nil
		}
		if len(pl.clauses) == 0 {
			// Only exclusions: every case but those.
			set, err = e.excluding(ctx, r, pl, allowed)
			if err != nil {
				return nil, e.queryError(parent, err)
			}
		} else {
			buf, complete, partial, err := e.runPlan(ctx, r, pl, allowed)
			if err != nil {
				return nil, e.queryError(parent, err)
			}
			defer e.releaseMatches(buf)
			set, score, res.Partial, res.Complete = buf.set, buf.score, partial, complete
			mask = buf.mask
		}
	}
	res.Total = len(set)
	if !res.Partial {
		res.Complete = res.Total
	}
	e.facets.counts(set, res)
	if score != nil {
		e.describe(pl, res)
	}
	if pl != nil {
		res.Notice = pl.notice
	}
	ordered := e.sortSet(set, score, q.Sort, q.Page*q.PerPage)

	from := (q.Page - 1) * q.PerPage
	if from < len(set) {
		to := min(from+q.PerPage, len(set))
		res.From, res.To = from+1, to
		for _, ci := range ordered[from:to] {
			h := incidentlib.Hit{Case: e.cases[ci]}
			if score != nil {
				h.Score = score[ci]
				// The hit's text is analyzed once for its snippets and
				// its reasons.
				terms := pl.snippetTerms()
				fields := e.analyzeHit(ci, pl, stemPrefixes(terms), mask[ci])
				h.Snippets = e.snippetsFrom(e.cases[ci], terms, false, true, fields)
				h.Matched, h.Terms = e.why(e.cases[ci], pl, fields)
			}
			res.Hits = append(res.Hits, h)
		}
	}
	return res, nil
}

// parseQuery recognises the error signatures and drops the noise of a
// pasted text, then parses what is left by the query syntax.
func (e *Engine) parseQuery(s string) (parsedText, error) {
	if len(s) > incidentlib.MaxQueryLength || !utf8.ValidString(s) {
		return parseText(s) // refused, with the reason
	}
	clean, sigs := e.signatures.recognize(s)
	p, err := parseText(clean)
	p.signatures = sigs
	if err == nil && p.empty() {
		// Nothing but noise (a bare id or address): search it as written
		// rather than answer as if no text had been given.
		return parseText(s)
	}
	return p, err
}

func (e *Engine) analyzer() analysis.Analyzer {
	return e.idx.Mapping().AnalyzerNamed(en.AnalyzerName)
}

// allIn lists the case numbers in allowed (all cases when nil), newest
// first.
func (e *Engine) allIn(allowed bitset) []int {
	if allowed == nil {
		return append([]int(nil), e.facets.newest...)
	}
	out := make([]int, 0, allowed.count())
	for _, ci := range e.facets.newest {
		if allowed.has(ci) {
			out = append(out, ci)
		}
	}
	return out
}

// reader opens a reader of the index; the caller closes it.
func (e *Engine) reader() (index.IndexReader, error) {
	if r, ok := e.snap.(refCounted); ok {
		r.AddRef()
		return e.snap, nil
	}
	adv, err := e.idx.Advanced()
	if err != nil {
		return nil, err
	}
	return adv.Reader()
}

// excluding lists the allowed cases that hold none of the plan's excluded
// words, newest first.
func (e *Engine) excluding(ctx context.Context, r index.IndexReader, pl *plan, allowed bitset) ([]int, error) {
	out := newBitset(len(e.cases))
	for _, q := range pl.exclude {
		if err := e.walk(ctx, r, q, allowed, func(c int, _ float64) { out.set(c) }); err != nil {
			return nil, err
		}
	}
	var set []int
	for _, ci := range e.facets.newest {
		if (allowed == nil || allowed.has(ci)) && !out.has(ci) {
			set = append(set, ci)
		}
	}
	return set, nil
}

// matchBuffers hands out a result-set list and a score array (all zero)
// sized for the corpus. A broad query on a large corpus matches tens of
// thousands of cases; allocating their arrays anew each time makes every
// search pay for garbage collection of a heap that holds the whole corpus.
func (e *Engine) matchBuffers() *matchBuffers {
	if b, ok := e.matches.Get().(*matchBuffers); ok {
		return b
	}
	return &matchBuffers{set: make([]int, 0, 1024), score: make([]float64, len(e.cases)), mask: make([]uint32, len(e.cases)), text: make([]uint32, len(e.cases))}
}

// releaseMatches zeroes the scores and clause masks of the result set and
// returns the buffers. runPlan has zeroed those of the cases it dropped.
func (e *Engine) releaseMatches(b *matchBuffers) {
	for _, ci := range b.set {
		b.score[ci], b.mask[ci], b.text[ci] = 0, 0, 0
	}
	b.set = b.set[:0]
	e.matches.Put(b)
}

// matchBuffers are the per-query arrays of a search: the result set, and
// by case number the score and the clauses matched (bit i: clause i).
type matchBuffers struct {
	set   []int
	score []float64
	mask  []uint32
	text  []uint32 // the clauses matched through the case's own text
}

// sortSet returns the first n case numbers of set in order (all of them
// when n is larger); set itself is left a permutation of what it held.
// Every order ends with newest first, so results are deterministic. A page
// near the front of a large result set does not pay for sorting all of it:
// the best n are picked with a bounded heap.
func (e *Engine) sortSet(set []int, score []float64, s incidentlib.Sort, n int) []int {
	rank := e.facets.rankNewest()
	var less func(a, b int) bool
	switch s {
	case incidentlib.SortRelevance:
		if score == nil {
			less = func(a, b int) bool { return rank[a] < rank[b] }
			break
		}
		less = func(a, b int) bool {
			if score[a] != score[b] {
				return score[a] > score[b]
			}
			return rank[a] < rank[b]
		}
	case incidentlib.SortOldest:
		less = func(a, b int) bool { return rank[a] > rank[b] }
	case incidentlib.SortLongest:
		ttr := e.facets.ttr
		less = func(a, b int) bool {
			if ttr[a] != ttr[b] {
				return ttr[a] > ttr[b]
			}
			return rank[a] < rank[b]
		}
	default: // newest; normalize has rejected anything unknown
		less = func(a, b int) bool { return rank[a] < rank[b] }
	}
	if n <= 0 || n >= len(set)/4 {
		sort.Slice(set, func(i, j int) bool { return less(set[i], set[j]) })
		return set
	}
	return topN(set, n, less)
}

// topN returns the n smallest elements of set (by less), in order, using a
// bounded max-heap: O(len(set) · log n). set is not changed.
func topN(set []int, n int, less func(a, b int) bool) []int {
	h := make([]int, n)
	copy(h, set[:n])
	// heapify: the root is the worst of the kept n.
	worse := func(i, j int) bool { return less(h[j], h[i]) }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			m := l
			if r := l + 1; r < len(h) && worse(r, l) {
				m = r
			}
			if !worse(m, i) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, x := range set[n:] {
		if less(x, h[0]) {
			h[0] = x
			down(0)
		}
	}
	sort.Slice(h, func(i, j int) bool { return less(h[i], h[j]) })
	return h
}
