package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string) (int, string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b), rec.Result().Header
}

func TestLiveBeforeReady(t *testing.T) {
	s := New(Config{})
	h := s.Handler()
	if code, _, _ := get(t, h, "/healthz"); code != 200 {
		t.Errorf("/healthz before ready: %d, want 200", code)
	}
	if code, body, _ := get(t, h, "/readyz"); code != 503 || !strings.Contains(body, "starting") {
		t.Errorf("/readyz before ready: %d %q, want 503 starting", code, body)
	}
	code, body, hdr := get(t, h, "/cases/IL-0561")
	if code != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(body, "starting") {
		t.Errorf("a page before ready: %d %q, want 503 with Retry-After", code, body)
	}

	web := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "web "+r.URL.Path) })
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "api "+r.URL.Path) })
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "mcp "+r.URL.Path) })
	s.SetReady(Handlers{Web: web, API: api, MCP: mcp})
	for path, want := range map[string]string{
		"/readyz":              "ready",
		"/":                    "web /",
		"/cases/IL-0561":       "web /cases/IL-0561",
		"/api/v1/cases":        "api /api/v1/cases",
		"/mcp":                 "mcp /mcp",
		"/metrics":             "incidentlib_http_requests_total",
		"/api/v1/openapi.json": "api /api/v1/openapi.json",
	} {
		if code, body, _ := get(t, h, path); code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %q, want 200 containing %q", path, code, body, want)
		}
	}
}

func TestMetricsCountRequests(t *testing.T) {
	s := New(Config{})
	s.SetReady(Handlers{Web: http.NotFoundHandler()})
	s.SetGauge("incidentlib_cases", "Cases in the library.", 184)
	h := s.Handler()
	get(t, h, "/nope")
	get(t, h, "/nope")
	_, body, _ := get(t, h, "/metrics")
	for _, want := range []string{
		`incidentlib_http_requests_total{group="web",status="404"} 2`,
		`incidentlib_http_request_duration_seconds_count{group="web"} 2`,
		"incidentlib_cases 184",
		"# TYPE incidentlib_cases gauge",
		"# TYPE incidentlib_shed_total counter",
		"# TYPE incidentlib_rate_limited_total counter",
		"# TYPE incidentlib_cache_hits_total counter",
		"# TYPE incidentlib_inflight_requests gauge",
		"# TYPE incidentlib_uptime_seconds gauge",
		// Through the Prometheus client library: the Go runtime and
		// process series dashboards expect, and admission's figures.
		"# TYPE go_goroutines gauge",
		"go_memstats_heap_alloc_bytes ",
		"process_resident_memory_bytes ",
		"process_cpu_seconds_total ",
		"# TYPE incidentlib_admission_write_shed_total counter",
		"incidentlib_admission_write_queued 0",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}

func TestPanicIsHiddenFromTheClient(t *testing.T) {
	s := New(Config{})
	s.SetReady(Handlers{Web: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret internal detail")
	})})
	code, body, _ := get(t, s.Handler(), "/boom")
	if code != 500 || strings.Contains(body, "secret") || strings.Contains(body, "goroutine") {
		t.Errorf("panic: %d %q, want a plain 500 without internals", code, body)
	}
}

// A replica that lost its store keeps serving reads: /readyz stays 200 and
// says why it is degraded.
func TestReadyWhileDegraded(t *testing.T) {
	why := "the store does not answer"
	s := New(Config{Degraded: func() string { return why }})
	s.SetReady(Handlers{Web: http.NotFoundHandler()})
	h := s.Handler()
	if code, body, _ := get(t, h, "/readyz"); code != 200 || !strings.Contains(body, "degraded: the store does not answer") {
		t.Errorf("/readyz while degraded: %d %q, want 200 naming the reason", code, body)
	}
	why = ""
	if code, body, _ := get(t, h, "/readyz"); code != 200 || strings.Contains(body, "degraded") {
		t.Errorf("/readyz after recovery: %d %q, want plain ready", code, body)
	}
}

// A person who opens /mcp in a browser lands on the page about connecting
// AI tools; MCP clients still reach the MCP handler.
func TestMCPInABrowser(t *testing.T) {
	s := New(Config{})
	s.SetReady(Handlers{Web: http.NotFoundHandler(), MCP: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "mcp") })})
	h := s.Handler()
	r := httptest.NewRequest("GET", "/mcp", nil)
	r.Header.Set("Accept", "text/html,application/xhtml+xml")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 303 || w.Header().Get("Location") != "/agents" {
		t.Errorf("a browser on /mcp: %d %q, want a redirect to /agents", w.Code, w.Header().Get("Location"))
	}
	for _, accept := range []string{"text/event-stream", "application/json, text/event-stream"} {
		r := httptest.NewRequest("GET", "/mcp", nil)
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Body.String() != "mcp" {
			t.Errorf("an MCP client (Accept %q) did not reach the MCP handler", accept)
		}
	}
}

// A library that cannot take traffic for now (its index being rebuilt
// after a failure) makes /readyz answer 503 with the reason, while
// requests are still served.
func TestUnreadyWhileRebuilding(t *testing.T) {
	why := "the search index failed; rebuilding it in memory"
	s := New(Config{Unready: func() string { return why }})
	s.SetReady(Handlers{Web: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })})
	if code, body, _ := get(t, s.Handler(), "/readyz"); code != 503 || !strings.Contains(body, why) {
		t.Errorf("/readyz: %d %q", code, body)
	}
	if code, _, _ := get(t, s.Handler(), "/cases/IL-0001"); code != 200 {
		t.Errorf("a page while rebuilding: %d", code)
	}
	why = ""
	if code, _, _ := get(t, s.Handler(), "/readyz"); code != 200 {
		t.Errorf("/readyz after: %d", code)
	}
}
