package httpapi

import (
	"net/http/httptest"
	"testing"

	"github.com/incidentlib/incidentlib/synthetic"
)

// BenchmarkListCasesNewQueries is the cost of one uncached
// /api/v1/cases search over the shipped corpus, through the API handler
// without the network, on the load harness's search stream (a different
// query, sort, page size and year every request, so no cache answers). It
// showed that analyzing hits' text for snippets was most of it (8.5–9.6 ms
// → 2.7–3.1 ms a request once analysis is cached; docs/performance.md).
func BenchmarkListCasesNewQueries(b *testing.B) {
	ta := newAPI(b, Config{BaseURL: "http://x"})
	b.ReportAllocs()
	i := int64(1000000)
	for b.Loop() {
		i++
		rec := httptest.NewRecorder()
		ta.h.ServeHTTP(rec, httptest.NewRequest("GET", synthetic.SearchMix(i), nil))
		if rec.Code != 200 {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
}
