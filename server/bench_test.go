package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkCachedHit measures what the server's layers (log, metrics,
// routing, guard, cache) add to a request answered from the cache, without
// the network: compare with BenchmarkBareHandler.
func BenchmarkCachedHit(b *testing.B) {
	body := strings.Repeat("x", 7000)
	s := New(Config{Limits: Limits{CacheBytes: 1 << 20, MaxExpensive: 4, RateLimit: 1e9, RateBurst: 1e9}})
	s.SetReady(Handlers{API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"x"`)
		io.WriteString(w, body)
	})})
	h := s.Handler()
	r := httptest.NewRequest("GET", "/api/v1/cases/IL-0561", nil)
	h.ServeHTTP(httptest.NewRecorder(), r)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
}

// BenchmarkBareHandler is the floor: the handler alone.
func BenchmarkBareHandler(b *testing.B) {
	body := []byte(strings.Repeat("x", 7000))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	r := httptest.NewRequest("GET", "/api/v1/cases/IL-0561", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
}
