package httpx

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var bigJSON = `{"items":[` + strings.Repeat(`{"id":"IL-0001","title":"A case"},`, 100) + `{}]}`

func jsonHandler(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=60")
		io.WriteString(w, body)
	})
}

func serve(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestConditional(t *testing.T) {
	h := Conditional(jsonHandler(`{"a":1}`))
	first := serve(h, "GET", "/x")
	etag := first.Header().Get("ETag")
	if first.Code != 200 || !strings.HasPrefix(etag, `"`) || first.Body.String() != `{"a":1}` {
		t.Fatalf("GET: %d etag %q body %q", first.Code, etag, first.Body)
	}
	if got := first.Header().Get("Content-Length"); got != "7" {
		t.Errorf("Content-Length = %q, want 7", got)
	}
	if other := serve(Conditional(jsonHandler(`{"a":2}`)), "GET", "/x"); other.Header().Get("ETag") == etag {
		t.Errorf("different bodies share ETag %s", etag)
	}
	tests := []struct {
		name, method, inm string
		wantCode          int
		wantBody          string
	}{
		{"no validator", "GET", "", 200, `{"a":1}`},
		{"match", "GET", etag, 304, ""},
		{"weak match", "GET", "W/" + etag, 304, ""},
		{"in list", "GET", `"zzz", ` + etag, 304, ""},
		{"star", "GET", "*", 304, ""},
		{"no match", "GET", `"other"`, 200, `{"a":1}`},
		{"head", "HEAD", "", 200, ""},
		{"head match", "HEAD", etag, 304, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(h, tt.method, "/x", "If-None-Match", tt.inm)
			if w.Code != tt.wantCode || w.Body.String() != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Body, tt.wantCode, tt.wantBody)
			}
			if w.Header().Get("ETag") != etag {
				t.Errorf("ETag = %q, want %q", w.Header().Get("ETag"), etag)
			}
			if w.Header().Get("Cache-Control") == "" {
				t.Error("Cache-Control dropped")
			}
			if tt.wantCode == 304 && w.Header().Get("Content-Type") != "" {
				t.Error("304 carries Content-Type")
			}
			if tt.method == "HEAD" && tt.wantCode == 200 && w.Header().Get("Content-Length") != "7" {
				t.Errorf("HEAD Content-Length = %q, want the GET length 7", w.Header().Get("Content-Length"))
			}
		})
	}
}

func TestConditionalPassesOthers(t *testing.T) {
	notFound := Conditional(http.NotFoundHandler())
	if w := serve(notFound, "GET", "/x", "If-None-Match", "*"); w.Code != 404 || w.Header().Get("ETag") != "" {
		t.Errorf("404: got %d with ETag %q", w.Code, w.Header().Get("ETag"))
	}
	if w := serve(Conditional(jsonHandler("{}")), "POST", "/x", "If-None-Match", "*"); w.Code != 200 || w.Header().Get("ETag") != "" {
		t.Errorf("POST: got %d with ETag %q", w.Code, w.Header().Get("ETag"))
	}
}

func TestConditionalStreamsAfterFlush(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	h := Conditional(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		http.NewResponseController(w).Flush()
		close(started)
		<-release
		io.WriteString(w, "data: two\n\n")
	}))
	srv := httptest.NewServer(Gzip(h))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-started
	line := make([]byte, len("data: one\n\n"))
	if _, err := io.ReadFull(resp.Body, line); err != nil || string(line) != "data: one\n\n" {
		t.Fatalf("first event before handler finished: %q, %v", line, err)
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	if string(rest) != "data: two\n\n" || resp.Header.Get("ETag") != "" || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("rest %q, ETag %q, encoding %q", rest, resp.Header.Get("ETag"), resp.Header.Get("Content-Encoding"))
	}
}

func TestNoneMatch(t *testing.T) {
	tests := []struct {
		header, etag string
		want         bool
	}{
		{`"a"`, `"a"`, true},
		{`W/"a"`, `"a"`, true},
		{`"a"`, `W/"a"`, true},
		{`"b", "a"`, `"a"`, true},
		{`"a,b"`, `"a"`, false},
		{`"a,b"`, `"a,b"`, true},
		{`*`, `"a"`, true},
		{`"b"`, `"a"`, false},
		{`"unterminated`, `"a"`, false},
		{``, `"a"`, false},
	}
	for _, tt := range tests {
		if got := NoneMatch(tt.header, tt.etag); got != tt.want {
			t.Errorf("NoneMatch(%q, %q) = %v, want %v", tt.header, tt.etag, got, tt.want)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := map[string]bool{
		"":                      false,
		"gzip":                  true,
		"gzip, deflate, br":     true,
		"br;q=1.0, gzip;q=0.8":  true,
		"gzip;q=0":              false,
		"GZIP":                  true,
		"*":                     true,
		"*;q=0":                 false,
		"gzip;q=0, *":           false,
		"identity":              false,
		"deflate, x-gzip;q=0.5": true,
	}
	for header, want := range tests {
		if got := AcceptsGzip(header); got != want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

func TestGzip(t *testing.T) {
	png := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(bytes.Repeat([]byte{0}, 4000))
	})
	sniffed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<!DOCTYPE html><html>"+strings.Repeat("<p>x</p>", 400))
	})
	tests := []struct {
		name     string
		h        http.Handler
		accept   string
		wantGzip bool
		wantType string
	}{
		{"big json, accepted", jsonHandler(bigJSON), "gzip", true, "application/json"},
		{"big json, not accepted", jsonHandler(bigJSON), "", false, "application/json"},
		{"big json, refused", jsonHandler(bigJSON), "gzip;q=0", false, "application/json"},
		{"small json", jsonHandler(`{"a":1}`), "gzip", false, "application/json"},
		{"image", png, "gzip", false, "image/png"},
		{"sniffed html", sniffed, "gzip", true, "text/html; charset=utf-8"},
		{"404", http.NotFoundHandler(), "gzip", false, "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plainBody := serve(tt.h, "GET", "/").Body.Bytes()
			w := serve(Gzip(tt.h), "GET", "/", "Accept-Encoding", tt.accept)
			if got := w.Header().Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("Vary = %q", got)
			}
			if got := w.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
			}
			body := w.Body.Bytes()
			if gotGzip := w.Header().Get("Content-Encoding") == "gzip"; gotGzip != tt.wantGzip {
				t.Fatalf("gzip = %v, want %v", gotGzip, tt.wantGzip)
			}
			if tt.wantGzip {
				if len(body) >= len(plainBody) {
					t.Errorf("gzip body %d bytes, identity %d", len(body), len(plainBody))
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(string(plainBody), string(body)); diff != "" {
				t.Errorf("body differs (-identity +decoded):\n%s", diff)
			}
		})
	}
}

// TestConditionalGzip checks the documented order: the gzip and identity
// representations get different strong ETags, and each revalidates.
func TestConditionalGzip(t *testing.T) {
	h := Conditional(Gzip(jsonHandler(bigJSON)))
	gz := serve(h, "GET", "/", "Accept-Encoding", "gzip")
	id := serve(h, "GET", "/")
	if gz.Header().Get("ETag") == id.Header().Get("ETag") {
		t.Fatal("gzip and identity share an ETag")
	}
	if got := gz.Header().Get("Content-Length"); got != fmt.Sprint(gz.Body.Len()) {
		t.Errorf("Content-Length %s for %d gzip bytes", got, gz.Body.Len())
	}
	if w := serve(h, "GET", "/", "Accept-Encoding", "gzip", "If-None-Match", gz.Header().Get("ETag")); w.Code != 304 {
		t.Errorf("gzip revalidation: %d", w.Code)
	}
	if w := serve(h, "GET", "/", "If-None-Match", gz.Header().Get("ETag")); w.Code != 200 {
		t.Errorf("identity client sent the gzip ETag: %d, want 200", w.Code)
	}
	head := serve(h, "HEAD", "/", "Accept-Encoding", "gzip")
	if head.Body.Len() != 0 || head.Header().Get("Content-Length") != gz.Header().Get("Content-Length") ||
		head.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("HEAD headers differ from GET: %v", head.Header())
	}
	// The reverse order still revalidates, with a weak ETag.
	rev := Gzip(Conditional(jsonHandler(bigJSON)))
	first := serve(rev, "GET", "/", "Accept-Encoding", "gzip")
	etag := first.Header().Get("ETag")
	if !strings.HasPrefix(etag, "W/") {
		t.Errorf("compressed strong ETag not weakened: %q", etag)
	}
	if w := serve(rev, "GET", "/", "Accept-Encoding", "gzip", "If-None-Match", etag); w.Code != 304 || w.Header().Get("ETag") != etag {
		t.Errorf("reverse order revalidation: %d ETag %q", w.Code, w.Header().Get("ETag"))
	}
}

func TestRateLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := NewRateLimiter(2, 3) // 2/s, bursts of 3
	l.now = func() time.Time { return now }
	limited := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	})
	h := l.Wrap(jsonHandler("{}"), limited)
	from := func(addr string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	var codes []int
	for range 5 {
		codes = append(codes, from("192.0.2.1:1234").Code)
	}
	if diff := cmp.Diff([]int{200, 200, 200, 418, 418}, codes); diff != "" {
		t.Errorf("burst (-want +got):\n%s", diff)
	}
	if got := from("192.0.2.1:999").Header().Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1", got)
	}
	if got := from("192.0.2.2:1").Code; got != 200 {
		t.Errorf("another client was limited: %d", got)
	}
	// Two addresses in one IPv6 /64 share a bucket.
	for range 3 {
		from("[2001:db8::1]:1")
	}
	if got := from("[2001:db8::2]:1").Code; got != 418 {
		t.Errorf("same /64: %d, want limited", got)
	}
	now = now.Add(500 * time.Millisecond) // one token back
	if got := from("192.0.2.1:1").Code; got != 200 {
		t.Errorf("after refill: %d", got)
	}
	if got := from("192.0.2.1:1").Code; got != 418 {
		t.Errorf("refill gave more than one token: %d", got)
	}
}

func TestRateLimiterBoundedMemory(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := NewRateLimiter(1, 5)
	l.MaxClients = 100
	l.now = func() time.Time { return now }
	for i := range 10000 {
		l.Allow(fmt.Sprintf("10.0.%d.%d", i/256, i%256))
		if l.Len() > 100 {
			t.Fatalf("table grew to %d", l.Len())
		}
	}
	// Clients whose bucket refilled are forgotten on the next arrival.
	now = now.Add(10 * time.Second)
	l.Allow("new")
	if l.Len() != 1 {
		t.Errorf("idle clients kept: %d", l.Len())
	}
	if ok, _ := NewRateLimiter(0, 0).Allow("x"); !ok {
		t.Error("rate 0 should not limit")
	}
	var nilLimiter *RateLimiter
	if h := nilLimiter.Wrap(http.NotFoundHandler(), nil); serve(h, "GET", "/").Code != 404 {
		t.Error("nil limiter should pass through")
	}
}

func TestClientIP(t *testing.T) {
	tests := map[string][2]string{
		"192.0.2.1:80":          {"192.0.2.1", "192.0.2.1"},
		"[::ffff:192.0.2.1]:80": {"192.0.2.1", "192.0.2.1"},
		"[2001:db8::1]:80":      {"2001:db8::1", "2001:db8::/64"},
		"192.0.2.9":             {"192.0.2.9", "192.0.2.9"},
		"@":                     {"@", "@"},
	}
	for addr, want := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = addr
		r.Header.Set("X-Forwarded-For", "203.0.113.7")
		if got := [2]string{ClientIP(r), ClientKey(r)}; got != want {
			t.Errorf("%s: got %v, want %v", addr, got, want)
		}
	}
}

func TestLimits(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		if IsTooLarge(err) {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		w.WriteHeader(200)
	})
	h := MaxBody(10, echo, nil)
	post := func(body io.Reader) int {
		r := httptest.NewRequest("POST", "/", body)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if got := post(strings.NewReader("0123456789")); got != 200 {
		t.Errorf("10 bytes: %d", got)
	}
	if got := post(strings.NewReader("0123456789x")); got != 413 {
		t.Errorf("11 bytes declared: %d", got)
	}
	if got := post(io.MultiReader(strings.NewReader("0123456789x"))); got != 413 {
		t.Errorf("11 bytes undeclared: %d", got)
	}
	u := MaxURL(20, jsonHandler("{}"), nil)
	if got := serve(u, "GET", "/?q=short").Code; got != 200 {
		t.Errorf("short URL: %d", got)
	}
	if got := serve(u, "GET", "/?q="+strings.Repeat("x", 30)).Code; got != 414 {
		t.Errorf("long URL: %d", got)
	}
}

func TestRecover(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	h := Recover(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("secret internal detail")
	}), nil)
	w := serve(h, "GET", "/boom")
	if w.Code != 500 || strings.Contains(w.Body.String(), "secret") {
		t.Errorf("got %d %q", w.Code, w.Body)
	}
	if !strings.Contains(logged.String(), "secret internal detail") {
		t.Errorf("panic not logged: %s", logged.String())
	}
}

func TestPublicCORS(t *testing.T) {
	h := PublicCORS(jsonHandler("{}"))
	w := serve(h, "OPTIONS", "/api", "Origin", "https://example.org", "Access-Control-Request-Method", "GET")
	if w.Code != 204 || w.Header().Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(w.Header().Get("Access-Control-Allow-Methods"), "GET") {
		t.Errorf("preflight: %d %v", w.Code, w.Header())
	}
	w = serve(h, "GET", "/api", "Origin", "https://example.org")
	if w.Code != 200 || w.Header().Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(w.Header().Get("Access-Control-Expose-Headers"), "ETag") {
		t.Errorf("GET: %d %v", w.Code, w.Header())
	}
	if w.Header().Get("Access-Control-Allow-Credentials") != "" {
		t.Error("credentials allowed")
	}
}

// A clock reading older than the bucket's last one (a request that read
// the time, then waited for the lock) must not drain the bucket: at a
// high limit, every request is allowed whatever order they arrive in.
func TestRateLimiterClockOutOfOrder(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	readings := []time.Duration{10, 5, 12, 1, 30, 2, 2, 40}
	i := 0
	l := NewRateLimiter(1e9, 1000000)
	l.now = func() time.Time { r := readings[i%len(readings)]; i++; return base.Add(r * time.Millisecond) }
	for n := range 100000 {
		if ok, _ := l.Allow("c"); !ok {
			t.Fatalf("request %d refused at 1e9/s", n)
		}
	}
	// And a low limit is still a limit when the clock steps back.
	l = NewRateLimiter(1, 2)
	now := base
	l.now = func() time.Time { return now }
	l.Allow("c")
	l.Allow("c")
	now = base.Add(-time.Hour)
	if ok, _ := l.Allow("c"); ok {
		t.Fatal("a clock stepping back handed out a token")
	}
}
