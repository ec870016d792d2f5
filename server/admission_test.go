package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rpc sends one MCP request from client addr.
func rpc(h http.Handler, addr, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	r.RemoteAddr = addr + ":1234"
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

const searchCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_incidents","arguments":{"q":"dns"}}}`

// echoRPC answers any MCP request after d, as a tool result.
func echoRPC(d time.Duration, running *atomic.Int64, most *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		b, _ := io.ReadAll(r.Body)
		var m struct{ ID json.RawMessage }
		json.Unmarshal(b, &m)
		time.Sleep(d)
		running.Add(-1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"hits"}]}}`)
	})
}

// An agent's eight parallel searches with one slot are all answered: they
// wait their turn instead of being refused (issue 22: three of eight got a
// transport error).
func TestAdmissionAbsorbsAnAgentsBurst(t *testing.T) {
	var running, most atomic.Int64
	s := New(Config{Limits: Limits{MaxExpensive: 1}})
	s.SetReady(Handlers{MCP: echoRPC(20*time.Millisecond, &running, &most)})
	var wg sync.WaitGroup
	res := make([]*httptest.ResponseRecorder, 8)
	for i := range res {
		wg.Add(1)
		go func() { defer wg.Done(); res[i] = rpc(s.Handler(), "192.0.2.1", searchCall) }()
	}
	wg.Wait()
	for i, w := range res {
		if w.Code != 200 || strings.Contains(w.Body.String(), "isError") || !strings.Contains(w.Body.String(), `"id":7`) {
			t.Errorf("call %d: %d %s", i, w.Code, w.Body)
		}
	}
	if most.Load() != 1 {
		t.Errorf("%d searches ran at once with one slot", most.Load())
	}
}

// One client's queued searches cannot starve another: when a slot comes
// free it goes to the client with fewer in flight, served longest ago.
func TestAdmissionIsFairAcrossClients(t *testing.T) {
	var mu sync.Mutex
	var order []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, r.URL.Query().Get("who"))
		mu.Unlock()
		time.Sleep(15 * time.Millisecond)
		io.WriteString(w, "ok")
	})
	s := New(Config{Limits: Limits{MaxExpensive: 1}})
	s.SetReady(Handlers{API: h})
	get := func(addr, who string) int {
		r := httptest.NewRequest("GET", "/api/v1/cases?q=x&who="+who, nil)
		r.RemoteAddr = addr + ":1"
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		return w.Code
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); get("192.0.2.1", "a") }()
	}
	time.Sleep(5 * time.Millisecond) // a's searches are running and queued
	start := time.Now()
	if code := get("192.0.2.2", "b"); code != 200 {
		t.Errorf("b: %d", code)
	}
	took := time.Since(start)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	pos := strings.Index(strings.Join(order, ""), "b")
	if pos < 0 || pos > 2 {
		t.Errorf("b's search ran %dth of %v (took %v); want it next after the one running", pos, order, took)
	}
}

// Cheap requests never wait behind searches: with the only slot taken and
// the queue full, health, a case by ID and MCP's initialize, lists and
// get_incident are answered at once; a shed tool call is a tool result
// with isError and a retry hint, not a transport error.
func TestCheapRequestsNeverQueue(t *testing.T) {
	hold := make(chan struct{})
	var started sync.WaitGroup
	started.Add(1)
	var once sync.Once
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "search_incidents") || r.URL.Path == "/search" {
			once.Do(func() { started.Done(); <-hold })
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	})
	s := New(Config{Limits: Limits{Expensive: ClassLimits{Slots: 1, MaxWait: 50 * time.Millisecond, MaxQueue: 1}}})
	s.SetReady(Handlers{MCP: h, Web: h, API: h})
	go rpc(s.Handler(), "192.0.2.1", searchCall)
	started.Wait()
	defer close(hold)
	go rpc(s.Handler(), "192.0.2.1", searchCall) // fills the queue
	time.Sleep(10 * time.Millisecond)

	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"prompts/list"}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_incident","arguments":{"id":"IL-0001"}}}`,
	} {
		start := time.Now()
		if w := rpc(s.Handler(), "192.0.2.9", body); w.Code != 200 || time.Since(start) > 20*time.Millisecond {
			t.Errorf("%s: %d after %v", body, w.Code, time.Since(start))
		}
	}
	for _, path := range []string{"/healthz", "/cases/IL-0001", "/api/v1/cases/IL-0001"} {
		if w := do(s.Handler(), "GET", path); w.Code != 200 {
			t.Errorf("%s: %d", path, w.Code)
		}
	}
	w := rpc(s.Handler(), "192.0.2.9", searchCall)
	var out struct {
		ID     int `json:"id"`
		Result struct {
			IsError bool `json:"isError"`
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || w.Code != 200 || out.ID != 7 || !out.Result.IsError ||
		len(out.Result.Content) != 1 || !strings.Contains(out.Result.Content[0].Text, "retry in 1 second") || w.Header().Get("Retry-After") != "1" {
		t.Errorf("shed tool call: %d %s", w.Code, w.Body)
	}
	// The web says so in the site's layout when it is given one, the API
	// in JSON, both with Retry-After.
	if w := do(s.Handler(), "GET", "/api/v1/cases?q=x"); w.Code != 503 || w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Header().Get("Content-Type"), "json") {
		t.Errorf("API: %d %s %s", w.Code, w.Header(), w.Body)
	}
}

// The web's refusal is the site's own page when the web handler gives one.
func TestWebRefusalPage(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	started := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { started <- struct{}{}; <-hold })
	s := New(Config{Limits: Limits{Expensive: ClassLimits{Slots: 1, MaxWait: 10 * time.Millisecond}}})
	s.SetReady(Handlers{Web: h, WebError: func(w http.ResponseWriter, r *http.Request, status int, msg string) {
		w.WriteHeader(status)
		io.WriteString(w, "<main>layout "+msg+"</main>")
	}})
	go do(s.Handler(), "GET", "/search?q=a")
	<-started
	w := do(s.Handler(), "GET", "/search?q=b")
	if w.Code != 503 || !strings.Contains(w.Body.String(), "layout") || w.Header().Get("Retry-After") != "1" {
		t.Errorf("%d %s", w.Code, w.Body)
	}
}

// The store's write path has its own slots and a deadline: stuck writes
// never hold up searches, and searches never hold up writes.
func TestWritesHaveTheirOwnClass(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	var deadline atomic.Bool
	stuck := make(chan struct{}, 8)
	write := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, ok := r.Context().Deadline()
		deadline.Store(ok)
		if r.Header.Get("X-Stuck") != "" {
			stuck <- struct{}{}
			<-hold
		}
		io.WriteString(w, "saved")
	})
	read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "stuck" {
			stuck <- struct{}{}
			<-hold
		}
		io.WriteString(w, "hits")
	})
	s := New(Config{Limits: Limits{MaxExpensive: 1, Write: ClassLimits{Slots: 2, MaxWait: 20 * time.Millisecond}}})
	s.SetReady(Handlers{Web: read, API: read, More: map[string]http.Handler{"/api/v1/drafts": write, "/api/v1/drafts/": write}})
	// Both write slots stuck on the database: searches still run.
	for range 2 {
		go do(s.Handler(), "PUT", "/api/v1/drafts/IL-5000", "X-Stuck", "1")
		<-stuck
	}
	if w := do(s.Handler(), "GET", "/api/v1/cases?q=dns"); w.Code != 200 {
		t.Errorf("a search while writes are stuck: %d", w.Code)
	}
	if w := do(s.Handler(), "POST", "/api/v1/drafts"); w.Code != 503 || w.Header().Get("Retry-After") == "" {
		t.Errorf("a third write with two stuck: %d", w.Code)
	}
	// The only search slot stuck: a write still goes through, with a
	// deadline on its context.
	go do(s.Handler(), "GET", "/api/v1/cases?q=stuck")
	<-stuck
	s2 := New(Config{Limits: Limits{MaxExpensive: 1}})
	s2.SetReady(Handlers{API: read, More: map[string]http.Handler{"/api/v1/drafts": write}})
	go do(s2.Handler(), "GET", "/api/v1/cases?q=stuck")
	<-stuck
	if w := do(s2.Handler(), "POST", "/api/v1/drafts"); w.Code != 200 || !deadline.Load() {
		t.Errorf("a write while the search slot is stuck: %d, deadline %v", w.Code, deadline.Load())
	}
}

// Under sustained overload from one client, the short wait applies to that
// client only: another client with nothing running is next in line and
// is served (issue 22: a client within its rate limit sending expensive
// queries made another's searches fail half the time).
func TestOverloadShedsTheHeavyClientNotTheLightOne(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(30 * time.Millisecond)
		io.WriteString(w, "ok")
	})
	s := New(Config{Limits: Limits{Expensive: ClassLimits{Slots: 1, MaxWait: 300 * time.Millisecond, ShortWait: 5 * time.Millisecond,
		OverloadAfter: 40 * time.Millisecond, MaxQueue: 64, MaxQueuedPerClient: 8}}})
	s.SetReady(Handlers{API: h})
	get := func(addr string) int {
		r := httptest.NewRequest("GET", "/api/v1/cases?q=x", nil)
		r.RemoteAddr = addr + ":1"
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		return w.Code
	}
	stop := make(chan struct{})
	var heavy sync.WaitGroup
	var heavyShed atomic.Int64
	for range 8 {
		heavy.Add(1)
		go func() {
			defer heavy.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if get("192.0.2.1") == 503 {
					heavyShed.Add(1)
				}
			}
		}()
	}
	time.Sleep(100 * time.Millisecond) // a standing queue: overload
	var refused int
	for range 10 {
		if get("192.0.2.2") != 200 {
			refused++
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	heavy.Wait()
	if refused > 0 || heavyShed.Load() == 0 {
		t.Errorf("light client refused %d of 10; heavy client shed %d times", refused, heavyShed.Load())
	}
}

// With two slots, one client holds at most one: its slow queries leave
// the other slot to another client, who is served at once.
func TestOneClientKeepsASlotFree(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "slow" {
			<-release
		}
		io.WriteString(w, "ok")
	})
	s := New(Config{Limits: Limits{MaxExpensive: 2}})
	s.SetReady(Handlers{API: h})
	get := func(addr, q string) int {
		r := httptest.NewRequest("GET", "/api/v1/cases?q="+q, nil)
		r.RemoteAddr = addr + ":1"
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		return w.Code
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); get("192.0.2.1", "slow") }()
	}
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	if code := get("192.0.2.2", "fast"); code != 200 || time.Since(start) > 100*time.Millisecond {
		t.Errorf("another client beside a greedy one: %d after %v", code, time.Since(start))
	}
	if inUse, queued := s.guard.expensive.stats(); inUse != 1 || queued != 1 {
		t.Errorf("the greedy client holds %d slots with %d waiting; want 1 and 1", inUse, queued)
	}
	close(release)
	wg.Wait()
}

// A tool call over the rate limit is told so in a tool result, as a shed
// one is; Retry-After still says when.
func TestRateLimitedToolCallIsAToolResult(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{}}`)
	})
	s := New(Config{Limits: Limits{RateLimit: 0.001, RateBurst: 1}})
	s.SetReady(Handlers{MCP: ok})
	rpc(s.Handler(), "192.0.2.1", searchCall)
	w := rpc(s.Handler(), "192.0.2.1", searchCall)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"isError":true`) || !strings.Contains(w.Body.String(), `"id":7`) ||
		!strings.Contains(w.Body.String(), "Too many requests") || w.Header().Get("Retry-After") == "" {
		t.Errorf("%d %s %v", w.Code, w.Body, w.Header())
	}
}
