package engine

import (
	"context"
	"encoding/binary"
	"math/bits"
	"sort"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"incidentlib"
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
	text, err := parseText(q.Text)
	if err != nil {
		return nil, err
	}
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
	var terms []string  // analyzed query terms, for snippets
	if text.empty() {
		set = e.allIn(allowed)
	} else {
		a := e.analyzer()
		bq, ts := buildQuery(a, text, false)
		if bq == nil {
			// Only stop words: nothing can match.
			e.facets.counts(nil, res)
			return res, nil
		}
		terms = ts
		set, score, err = e.run(ctx, bq, allowed)
		if err != nil {
			return nil, err
		}
		if len(set) == 0 {
			fq, _ := buildQuery(a, text, true)
			set, score, err = e.run(ctx, fq, allowed)
			if err != nil {
				return nil, err
			}
			res.Fuzzy = len(set) > 0
		}
	}
	e.sortSet(set, score, q.Sort)
	res.Total = len(set)
	e.facets.counts(set, res)

	from := (q.Page - 1) * q.PerPage
	if from < len(set) {
		to := min(from+q.PerPage, len(set))
		res.From, res.To = from+1, to
		for _, ci := range set[from:to] {
			h := incidentlib.Hit{Case: e.cases[ci]}
			if score != nil {
				h.Score = score[ci]
				h.Snippets = e.snippets(e.cases[ci], terms, res.Fuzzy)
			}
			res.Hits = append(res.Hits, h)
		}
	}
	return res, nil
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

// run executes a Bleve query and collects every match that passes the
// filters, with its BM25 score. It walks the searcher directly instead of
// using a top-N collector: facet counts need the whole result set, and a
// plain walk into two arrays is cheaper than a heap of every match.
func (e *Engine) run(ctx context.Context, q query.Query, allowed bitset) ([]int, []float64, error) {
	adv, err := e.idx.Advanced()
	if err != nil {
		return nil, nil, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	ctx = context.WithValue(ctx, search.GetScoringModelCallbackKey,
		search.GetScoringModelCallbackFn(func() string { return index.BM25Scoring }))
	s, err := q.Searcher(ctx, r, e.idx.Mapping(), search.SearcherOptions{})
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize(), 0), IndexReader: r}
	var set []int
	score := make([]float64, len(e.cases))
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		dm, err := s.Next(sctx)
		if err != nil {
			return nil, nil, err
		}
		if dm == nil {
			break
		}
		num := binary.BigEndian.Uint64(dm.IndexInternalID)
		if num < uint64(len(e.docNum)) {
			if ci := int(e.docNum[num]); ci >= 0 && (allowed == nil || allowed.has(ci)) {
				set = append(set, ci)
				score[ci] = dm.Score
			}
		}
		sctx.DocumentMatchPool.Put(dm)
	}
	return set, score, nil
}

// sortSet orders case numbers in place. Every order ends with the case ID,
// so results are deterministic.
func (e *Engine) sortSet(set []int, score []float64, s incidentlib.Sort) {
	rank := e.facets.rankNewest()
	switch s {
	case incidentlib.SortRelevance:
		if score == nil {
			sort.Slice(set, func(a, b int) bool { return rank[set[a]] < rank[set[b]] })
			return
		}
		sort.Slice(set, func(a, b int) bool {
			sa, sb := score[set[a]], score[set[b]]
			if sa != sb {
				return sa > sb
			}
			return rank[set[a]] < rank[set[b]]
		})
	case incidentlib.SortOldest:
		sort.Slice(set, func(a, b int) bool { return rank[set[a]] > rank[set[b]] })
	case incidentlib.SortLongest:
		ttr := e.facets.ttr
		sort.Slice(set, func(a, b int) bool {
			ta, tb := ttr[set[a]], ttr[set[b]]
			if ta != tb {
				return ta > tb
			}
			return rank[set[a]] < rank[set[b]]
		})
	default: // newest; normalize has rejected anything unknown
		sort.Slice(set, func(a, b int) bool { return rank[set[a]] < rank[set[b]] })
	}
}

// rankNewest returns each case's position in newest-first order.
func (fi *facetIndex) rankNewest() []int32 {
	fi.rankOnce.Do(func() {
		fi.rank = make([]int32, fi.n)
		for pos, ci := range fi.newest {
			fi.rank[ci] = int32(pos)
		}
	})
	return fi.rank
}

// setBits calls fn for every member of b.
func setBits(b bitset, fn func(int)) {
	for w, word := range b {
		for word != 0 {
			bit := bits.TrailingZeros64(word)
			word &^= 1 << uint(bit)
			fn(w*64 + bit)
		}
	}
}
