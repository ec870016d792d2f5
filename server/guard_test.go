package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func do(h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = "192.0.2.7:1234"
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// Repeated GETs are answered from the cache, whatever the order and
// spacing of the parameters; a matching ETag gets 304 without the handler
// running; SetReady (a new library) empties the cache.
func TestResponseCache(t *testing.T) {
	var built atomic.Int64
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		built.Add(1)
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"q":"`+r.URL.Query().Get("q")+`"}`)
	})
	s := New(Config{Limits: Limits{CacheBytes: 1 << 20}})
	s.SetReady(Handlers{API: api})
	h := s.Handler()
	first := do(h, "GET", "/api/v1/cases?q=dns&page=1")
	second := do(h, "GET", "/api/v1/cases?page=1&q=%20dns%20")
	if built.Load() != 1 || second.Body.String() != first.Body.String() || second.Header().Get("ETag") != `"v1"` {
		t.Fatalf("built %d times; bodies %q / %q", built.Load(), first.Body, second.Body)
	}
	if first.Header().Get(requestIDHeader) == second.Header().Get(requestIDHeader) {
		t.Error("the cached answer repeated the first request's ID")
	}
	nm := do(h, "GET", "/api/v1/cases?q=dns&page=1", "If-None-Match", `"v1"`)
	if nm.Code != http.StatusNotModified || nm.Body.Len() != 0 || built.Load() != 1 {
		t.Fatalf("revalidation: %d, %d bytes, built %d", nm.Code, nm.Body.Len(), built.Load())
	}
	do(h, "GET", "/api/v1/cases?q=dns", "Accept-Encoding", "gzip")
	if built.Load() != 2 {
		t.Error("a compressed and an uncompressed answer shared an entry")
	}
	s.SetReady(Handlers{API: api})
	do(h, "GET", "/api/v1/cases?q=dns&page=1")
	if built.Load() != 3 {
		t.Error("SetReady did not empty the cache")
	}
}

// Beyond the bound on expensive work, requests wait a short while and are
// then refused with 503 and Retry-After, while cheap requests still go
// through.
func TestAdmissionShedsExpensiveWorkOnly(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	var blocked atomic.Int64
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" && blocked.Add(1) <= 2 {
			started.Done()
			<-release
		}
		io.WriteString(w, "ok")
	})
	// Every request comes from one address here: let it hold both slots.
	s := New(Config{Limits: Limits{Expensive: ClassLimits{Slots: 2, MaxWait: 300 * time.Millisecond}}})
	s.SetReady(Handlers{Web: slow, API: slow})
	h := s.Handler()
	started.Add(2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); do(h, "GET", "/search?q=x") }()
	}
	started.Wait()
	start := time.Now()
	w := do(h, "GET", "/search?q=y")
	if w.Code != 503 || w.Header().Get("Retry-After") == "" || time.Since(start) > time.Second {
		t.Errorf("third search: %d, Retry-After %q, after %v; want 503 after a short wait", w.Code, w.Header().Get("Retry-After"), time.Since(start))
	}
	if w := do(h, "GET", "/api/v1/topics/root-causes/dns"); w.Code != 503 || !strings.Contains(w.Header().Get("Content-Type"), "problem+json") {
		t.Errorf("API refusal: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if w := do(h, "GET", "/cases/IL-0001"); w.Code != 200 {
		t.Errorf("a cheap page while searches are shed: %d", w.Code)
	}
	close(release)
	wg.Wait()
	if w := do(h, "GET", "/search?q=y"); w.Code != 200 {
		t.Errorf("after the load: %d", w.Code)
	}
}

// A client that asks again as soon as it has its answer is admitted, even
// with one slot: the slot of its previous request is released only when
// that handler returns, after the answer has reached the client.
func TestAdmissionSequentialClient(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2") // the client has it all once it is flushed
		io.WriteString(w, "ok")
		w.(http.Flusher).Flush()
		time.Sleep(5 * time.Millisecond) // the handler's own clean-up, after the answer is out
	})
	s := New(Config{Limits: Limits{MaxExpensive: 1}})
	s.SetReady(Handlers{Web: h, API: h, MCP: h})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	// A connection each, as curl in a loop does: on one kept-alive
	// connection the server would not read the next request before the
	// handler returned.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 20 {
		resp, err := client.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d of one sequential client: %d", i, resp.StatusCode)
		}
	}
}

// The rate limit covers the web pages too, and 0 turns it off everywhere.
func TestRateLimitEverySurface(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	for _, path := range []string{"/", "/api/v1/vocab", "/mcp"} {
		s := New(Config{Limits: Limits{RateLimit: 0.001, RateBurst: 2}})
		s.SetReady(Handlers{Web: ok, API: ok, MCP: ok})
		var codes []int
		for range 3 {
			codes = append(codes, do(s.Handler(), "GET", path).Code)
		}
		if codes[2] != 429 {
			t.Errorf("%s: %v, want the third refused", path, codes)
		}
		s = New(Config{Limits: Limits{RateLimit: 0, RateBurst: 2}})
		s.SetReady(Handlers{Web: ok, API: ok, MCP: ok})
		for range 100 {
			if c := do(s.Handler(), "GET", path).Code; c != 200 {
				t.Fatalf("%s with the limit off: %d", path, c)
			}
		}
	}
}

// One line per request, with its ID; a client that hung up is no error.
func TestRequestLogLine(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	s := New(Config{Logger: log})
	s.SetReady(Handlers{Web: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Err() != nil {
			http.Error(w, "canceled", 500)
			return
		}
		io.WriteString(w, "hello")
	})})
	do(s.Handler(), "GET", "/x", "X-Request-ID", "abc-1")
	line := buf.String()
	for _, want := range []string{`"method":"GET"`, `"route":"web"`, `"status":200`, `"id":"abc-1"`, `"bytes":5`, `"took"`} {
		if !strings.Contains(line, want) {
			t.Errorf("log line lacks %s: %s", want, line)
		}
	}
	if strings.Count(line, "\n") != 1 {
		t.Errorf("want one line, got %q", line)
	}
	buf.Reset()
	r := httptest.NewRequest("GET", "/x", nil)
	ctx, cancel := contextWithCancel(r)
	cancel()
	s.Handler().ServeHTTP(httptest.NewRecorder(), r.WithContext(ctx))
	if !strings.Contains(buf.String(), `"status":499`) || strings.Contains(buf.String(), "ERROR") || strings.Contains(buf.String(), "WARN") {
		t.Errorf("hang-up logged as %s", buf.String())
	}
}

func contextWithCancel(r *http.Request) (ctxT, func()) { return context.WithCancel(r.Context()) }

type ctxT = context.Context

// A burst of the same uncached search is built once: the others wait for
// it and are answered from the cache, not shed.
func TestIdenticalRequestsCoalesce(t *testing.T) {
	var built atomic.Int64
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		built.Add(1)
		time.Sleep(50 * time.Millisecond)
		io.WriteString(w, "results")
	})
	s := New(Config{Limits: Limits{MaxExpensive: 1, CacheBytes: 1 << 20}})
	s.SetReady(Handlers{Web: slow})
	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range codes {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i] = do(s.Handler(), "GET", "/search?q=database").Code }()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Errorf("request %d: %d", i, c)
		}
	}
	if built.Load() != 1 {
		t.Errorf("built %d times, want once", built.Load())
	}
}

// A signed-in request may be answered from a team's private library: the
// shared response cache never serves it nor keeps its answer, and an
// answer marked private is never kept for anyone.
func TestCacheKeepsPrivateAnswersOut(t *testing.T) {
	calls := 0
	s := New(Config{Limits: Limits{CacheBytes: 1 << 20}})
	s.SetReady(Handlers{Web: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.Header.Get("Authorization") != "" {
			w.Header().Set("Cache-Control", "private, no-store")
			io.WriteString(w, "team page")
			return
		}
		io.WriteString(w, "public page")
	})})
	h := s.Handler()
	do := func(auth string) string {
		r := httptest.NewRequest("GET", "/cases/IL-0001", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Body.String()
	}
	if got := do("Bearer team"); got != "team page" {
		t.Fatalf("signed in: %q", got)
	}
	if got := do(""); got != "public page" {
		t.Errorf("an anonymous reader after a signed-in one got %q", got)
	}
	if got := do("Bearer team"); got != "team page" {
		t.Errorf("a signed-in reader after an anonymous one got %q", got)
	}
	do("")
	if calls != 3 {
		t.Errorf("handler ran %d times; want the anonymous answer cached once and the signed-in ones never", calls)
	}
}
