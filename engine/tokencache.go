package engine

import (
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
)

// fieldTokens is one case field run through the analyzer, kept compact:
// each token's stem and its byte span in the field's text.
type fieldTokens struct {
	terms      []string
	start, end []int32
}

func compactTokens(ts analysis.TokenStream) *fieldTokens {
	ft := &fieldTokens{terms: make([]string, len(ts)), start: make([]int32, len(ts)), end: make([]int32, len(ts))}
	for i, t := range ts {
		ft.terms[i] = string(t.Term)
		ft.start[i] = int32(t.Start)
		ft.end[i] = int32(t.End)
	}
	return ft
}

// DefaultTokenCacheTokens bounds the token cache: about 24 bytes a token
// plus the stems' bytes, so roughly 40 MiB at most. It holds every field
// of a corpus of a few thousand cases, and the hits most often shown of a
// larger one.
const DefaultTokenCacheTokens = 1 << 20

// tokenCache keeps the analyzer's output for the fields of hits already
// shown. A field's tokens do not depend on the query, and analyzing the
// text of a page of hits for snippets and "why it matched" was most of the
// cost of an uncached search (73% of the CPU of a mixed stream of searches
// over the shipped corpus, measured with pprof). Entries leave in the order
// they came (first in, first out) once the cache holds more than max
// tokens; an engine and its cache serve one immutable corpus, so nothing
// in it goes stale.
type tokenCache struct {
	mu     sync.Mutex
	max    int
	held   int
	m      map[fieldKey]*fieldTokens
	order  []fieldKey // insertion order; order[head:] then order[:head] when wrapped
	head   int
	hits   uint64
	misses uint64
}

// fieldKey names a field of a case: the case's number and the field's
// position in caseFields.
type fieldKey struct {
	ci    int32
	field int32
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, m: map[fieldKey]*fieldTokens{}}
}

// get returns the tokens of a field, analyzing text with a on a miss.
func (tc *tokenCache) get(k fieldKey, text string, a analysis.Analyzer) *fieldTokens {
	if tc == nil || tc.max <= 0 {
		return compactTokens(a.Analyze([]byte(text)))
	}
	tc.mu.Lock()
	ft, ok := tc.m[k]
	if ok {
		tc.hits++
	} else {
		tc.misses++
	}
	tc.mu.Unlock()
	if ok {
		return ft
	}
	// Analyze outside the lock; two requests may analyze the same field
	// at once, and the second store is dropped.
	ft = compactTokens(a.Analyze([]byte(text)))
	n := max(1, len(ft.terms))
	if n > tc.max {
		return ft
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if _, ok := tc.m[k]; ok {
		return ft
	}
	for tc.held+n > tc.max && tc.head < len(tc.order) {
		old := tc.order[tc.head]
		tc.order[tc.head] = fieldKey{}
		tc.head++
		if o, ok := tc.m[old]; ok {
			tc.held -= max(1, len(o.terms))
			delete(tc.m, old)
		}
	}
	if tc.head > len(tc.order)/2 {
		tc.order = append(tc.order[:0], tc.order[tc.head:]...)
		tc.head = 0
	}
	tc.m[k] = ft
	tc.order = append(tc.order, k)
	tc.held += n
	return ft
}

// counts reports hits, misses and tokens held.
func (tc *tokenCache) counts() (hits, misses uint64, held int) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.hits, tc.misses, tc.held
}
