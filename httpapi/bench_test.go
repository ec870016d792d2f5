package httpapi

import (
	"fmt"
	"net/http/httptest"
	"testing"
)

// The search stream of the load harness (benchmark/load): a different
// query, sort, page size and year every request, so the server's response
// cache never answers and each request runs the engine and renders a page.
var mixWords = []string{"database", "dns", "certificate", "network", "configuration", "deploy", "cache", "storage",
	"latency", "region", "outage", "retry", "load", "timeout", "memory", "disk", "queue", "replication", "failover", "traffic",
	"error", "service", "cluster", "kubernetes", "proxy", "backup", "migration", "capacity", "monitoring", "alert"}
var mixSorts = []string{"relevance", "newest", "oldest", "longest"}

// BenchmarkListCasesNewQueries is the cost of one uncached
// /api/v1/cases search over the shipped corpus, through the API handler
// without the network. It showed that analyzing hits' text for snippets
// was most of it (8.5–9.6 ms → 2.7–3.1 ms a request once analysis is cached;
// docs/performance.md).
func BenchmarkListCasesNewQueries(b *testing.B) {
	ta := newAPI(b, Config{BaseURL: "http://x"})
	b.ReportAllocs()
	i := int64(1000000)
	for b.Loop() {
		i++
		j := i
		w := mixWords[j%int64(len(mixWords))]
		j /= int64(len(mixWords))
		so := mixSorts[j%4]
		j /= 4
		pp := 20 + j%81
		j /= 81
		y := 2000 + j%20
		r := httptest.NewRequest("GET", fmt.Sprintf("/api/v1/cases?q=%s&sort=%s&per_page=%d&year_from=%d", w, so, pp, y), nil)
		rec := httptest.NewRecorder()
		ta.h.ServeHTTP(rec, r)
		if rec.Code != 200 {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
}
