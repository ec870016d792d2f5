package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
)

// A page of hits is the same whether its fields come from the token cache
// or are analyzed afresh, on the first search and on the repeat, and with a
// cache too small to hold them.
func TestTokenCacheChangesNoResult(t *testing.T) {
	e := openFixture(t)
	queries := []string{"database", "retry storm", "auth outage slow query retries", `"expired certificate"`, "dns -aws", "k8s OR kubernetes"}
	search := func(q string) *incidentlib.SearchResult {
		t.Helper()
		res, err := e.SearchCases(context.Background(), incidentlib.Query{Text: q, PerPage: 50})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		return res
	}
	fresh := map[string]*incidentlib.SearchResult{}
	e.tokens = newTokenCache(0) // off
	for _, q := range queries {
		fresh[q] = search(q)
	}
	for _, size := range []int{DefaultTokenCacheTokens, 50} {
		e.tokens = newTokenCache(size)
		for round := 0; round < 2; round++ {
			for _, q := range queries {
				if d := cmp.Diff(fresh[q], search(q)); d != "" {
					t.Errorf("cache of %d tokens, round %d, %q: results differ (-fresh +cached):\n%s", size, round, q, d)
				}
			}
		}
		hits, misses, held := e.tokens.counts()
		if held > size {
			t.Errorf("cache of %d tokens holds %d", size, held)
		}
		if size == DefaultTokenCacheTokens && hits == 0 {
			t.Errorf("repeated searches never hit the cache (%d misses)", misses)
		}
	}
}

// The cache keeps at most its bound, evicting the oldest fields first.
func TestTokenCacheBound(t *testing.T) {
	e := openFixture(t)
	a := e.analyzer()
	tc := newTokenCache(10)
	for i := range 20 {
		ft := tc.get(fieldKey{ci: int32(i)}, fmt.Sprintf("word%d other%d", i, i), a)
		if len(ft.terms) != 2 {
			t.Fatalf("field %d: %v", i, ft.terms)
		}
		if _, _, held := tc.counts(); held > 10 {
			t.Fatalf("after %d fields the cache holds %d tokens, bound 10", i+1, held)
		}
	}
	if _, ok := tc.m[fieldKey{ci: 0}]; ok {
		t.Error("the oldest field is still held")
	}
	if _, ok := tc.m[fieldKey{ci: 19}]; !ok {
		t.Error("the newest field was evicted")
	}
	// A field larger than the whole cache is analyzed but not kept.
	big := tc.get(fieldKey{ci: 99}, "a b c d e f g h i j k l m n o p", a)
	if _, ok := tc.m[fieldKey{ci: 99}]; ok || len(big.terms) == 0 {
		t.Errorf("an oversized field: kept %v, %d tokens", ok, len(big.terms))
	}
}
