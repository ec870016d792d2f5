package server

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/incidentlib/incidentlib/httpx"
)

// Limits configures the guards in front of the protocol handlers. Zero in
// any field turns that guard off.
type Limits struct {
	// RateLimit is the sustained requests per second one client may make
	// on each surface (web pages, JSON API, MCP), RateBurst how many it
	// may make at once. Each surface has its own budget.
	RateLimit float64
	RateBurst int
	// MaxExpensive bounds the expensive requests (searches, topic and
	// chart pages, exports, MCP tool calls that search) worked on at
	// once. More wait in a short, fair queue (Expensive) and are refused
	// with 503 and Retry-After when no slot comes free in time.
	MaxExpensive int
	// Expensive tunes that queue; its zero value takes
	// DefaultExpensive(MaxExpensive).
	Expensive ClassLimits
	// Write bounds the requests of the store's write path (drafts,
	// reviews, publishing, accounts): they have their own slots, so a
	// stuck database never holds a search slot, nor a search a write.
	// Its zero value takes DefaultWrite.
	Write ClassLimits
	// ExpensiveNice, above zero, runs each admitted expensive request on
	// an OS thread of its own whose scheduling priority is lowered by that
	// much (a nice value; Linux only, elsewhere it changes nothing). Under
	// overload the kernel then runs a thread answering a cheap request
	// (a probe, a cached page) ahead of the threads that search.
	ExpensiveNice int
	// WriteTimeout is the deadline given to each write-path request's
	// context; 0 means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// CacheBytes bounds the memory of the response cache.
	CacheBytes int64
}

// DefaultExpensive is the queue in front of slots of expensive work. One
// client holds at most all slots but one (when there are two or more), so
// that another client's search never waits behind a greedy client's slow
// queries. A burst waits up to 300 ms for a slot (an agent's eight parallel searches
// are all answered), but once the queue has not been empty for 150 ms
// (sustained overload, not a burst), and for a second after any request
// was refused, the clients with requests already
// running or waiting wait 50 ms at most, so that what is admitted is
// still answered fast and the rest are told to retry. At most 64 wait,
// 16 of them from one client. Under sustained overload the slots are
// kept busy at most 85% of the time (MaxBusy), so that a server with as
// many slots as processors keeps some of them for refusing what it cannot
// take and for cheap requests; a burst (200 ms of slot time) is never held.
func DefaultExpensive(slots int) ClassLimits {
	return ClassLimits{Slots: slots, MaxPerClient: max(1, slots-1), MaxWait: 300 * time.Millisecond, ShortWait: 50 * time.Millisecond,
		OverloadAfter: 150 * time.Millisecond, ShedMemory: time.Second, MaxQueue: 64, MaxQueuedPerClient: 16,
		MaxBusy: 0.85, BusyBurst: 200 * time.Millisecond}
}

// DefaultWrite is the write path's own budget: four at once (they wait
// on the database, not the processor), waiting up to a second for a slot.
var DefaultWrite = ClassLimits{Slots: 4, MaxWait: time.Second, MaxQueue: 32, MaxQueuedPerClient: 8}

// DefaultWriteTimeout bounds a write-path request: a database that does
// not answer in that time gets the request an error, not a hung client.
const DefaultWriteTimeout = 15 * time.Second

// guard holds the per-surface rate limiters, the admission queues and the
// response cache.
type guard struct {
	limiters     map[string]*httpx.RateLimiter // by surface
	expensive    *admission                    // nil: no bound
	write        *admission                    // nil: no bound
	writeTimeout time.Duration
	nice         int // ExpensiveNice
	cache        *responseCache

	// pending coalesces identical cacheable requests: while one builds
	// the answer, the others wait for it instead of each taking a slot
	// (a burst of the same broad search is one search, not thirty).
	pendingMu sync.Mutex
	pending   map[string]chan struct{}

	inFlight atomic.Int64
	limited  atomic.Uint64
}

func newGuard(l Limits) *guard {
	g := &guard{limiters: map[string]*httpx.RateLimiter{}, cache: newResponseCache(l.CacheBytes), pending: map[string]chan struct{}{}}
	if l.RateLimit > 0 {
		for _, s := range []string{"web", "api", "mcp"} {
			g.limiters[s] = httpx.NewRateLimiter(l.RateLimit, l.RateBurst)
		}
	}
	exp := l.Expensive
	if exp.Slots == 0 && l.MaxExpensive > 0 {
		exp = DefaultExpensive(l.MaxExpensive)
	}
	if exp.Slots > 0 {
		g.expensive = newAdmission(exp)
	}
	w := l.Write
	if w.Slots == 0 {
		w = DefaultWrite
	}
	g.write = newAdmission(w)
	g.nice = l.ExpensiveNice
	g.writeTimeout = l.WriteTimeout
	if g.writeTimeout <= 0 {
		g.writeTimeout = DefaultWriteTimeout
	}
	return g
}

// expensive reports whether a request may cost real work: everything but
// the pages and documents that are a lookup by ID or fixed.
func expensive(r *http.Request) bool {
	p := r.URL.Path
	switch routeGroup(p) {
	case "mcp":
		return r.Method == http.MethodPost
	case "static", "ops":
		return false
	case "api":
		rest := strings.TrimPrefix(p, "/api/v1")
		switch {
		case rest == "" || rest == "/" || rest == "/vocab" || rest == "/openapi.json":
			return false
		case strings.HasPrefix(rest, "/cases/"): // one case, or its similar cases
			return false
		}
		return true
	}
	switch {
	case p == "/" || p == "/robots.txt" || p == "/cases" || strings.HasPrefix(p, "/cases/"):
		return false
	}
	return true
}

// wrap puts the guards in front of next: the rate limit first (every
// request counts, cached or not), then the cache, then the admission
// bound for what the cache could not answer.
//
// Cheap requests (health, cached answers, a case by ID, MCP's initialize
// and lists) take no slot and never wait behind searches; the store's
// write path (isWrite) has slots of its own and a deadline.
func (g *guard) wrap(next http.Handler, isWrite func(*http.Request) bool, webError WebErrorFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		surface := routeGroup(r.URL.Path)
		if surface == "static" {
			surface = "web"
		}
		if l := g.limiters[surface]; l != nil {
			if ok, wait := l.Allow(httpx.ClientKey(r)); !ok {
				g.limited.Add(1)
				secs := max(1, int(wait.Seconds()+0.999))
				w.Header().Set("Retry-After", strconv.Itoa(secs))
				if surface == "mcp" {
					// A tool call over the limit is told so as a tool
					// result the model reads, like a shed one.
					refuseCallWith(w, peekRPC(r), http.StatusTooManyRequests, secs,
						"Too many requests from this client; this call was not run. Retry in "+strconv.Itoa(secs)+" seconds.")
					return
				}
				refuse(w, r, surface, http.StatusTooManyRequests, "rate_limited",
					"Too many requests from your address; wait for the number of seconds in Retry-After.", webError)
				return
			}
		}
		// A signed-in request (a bearer token or a cookie) may be answered
		// from a team's private library: it is never served from the
		// shared cache, nor stored in it.
		cacheable := g.cache != nil && surface != "mcp" && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
			r.Header.Get("Range") == "" && r.Header.Get("Authorization") == "" && r.Header.Get("Cookie") == ""
		var key string
		if cacheable {
			var ok bool
			if key, ok = cacheKey(r); ok {
				if c := g.cache.get(key); c != nil {
					serveCached(w, r, c)
					return
				}
				if r.Method == http.MethodGet {
					leader, wait := g.join(key)
					if !leader {
						// Wait (bounded by the client) for the leader,
						// then answer from the cache if it could.
						select {
						case <-wait:
						case <-r.Context().Done():
							return
						}
						if c := g.cache.get(key); c != nil {
							serveCached(w, r, c)
							return
						}
					} else {
						defer g.leave(key)
					}
				}
			} else {
				cacheable = false
			}
		}
		var class *admission
		var call rpcCall
		switch {
		case isWrite != nil && isWrite(r):
			class = g.write
			ctx, cancel := context.WithTimeout(r.Context(), g.writeTimeout)
			defer cancel()
			r = r.WithContext(ctx)
		case surface == "mcp":
			// Only a POST carries a call; the stateless endpoint answers
			// anything else at once.
			if r.Method == http.MethodPost {
				if call = peekRPC(r); !call.cheap() {
					class = g.expensive
				}
			}
		case expensive(r):
			class = g.expensive
		}
		if class != nil {
			release := class.acquire(r.Context(), httpx.ClientKey(r))
			if release == nil {
				if r.Context().Err() != nil && !errors.Is(r.Context().Err(), context.DeadlineExceeded) {
					return // the client left while it waited
				}
				w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
				if surface == "mcp" {
					refuseCall(w, call)
					return
				}
				msg := "The server is busy with other searches; retry in a second."
				if class == g.write {
					msg = "The server is busy with other changes; retry in a second."
				}
				refuse(w, r, surface, http.StatusServiceUnavailable, "busy", msg, webError)
				return
			}
			defer release()
		}
		g.inFlight.Add(1)
		defer g.inFlight.Add(-1)
		serve := func() {
			if !cacheable || r.Method != http.MethodGet {
				next.ServeHTTP(w, r)
				return
			}
			cw := &captureWriter{ResponseWriter: w, limit: g.cache.maxEntry}
			next.ServeHTTP(cw, r)
			if cc := cw.header.Get("Cache-Control"); cw.status == http.StatusOK && !cw.over && !cw.flushed && cw.header != nil && cw.header.Get("Set-Cookie") == "" &&
				!strings.Contains(cc, "private") && !strings.Contains(cc, "no-store") {
				g.cache.put(&cachedResponse{key: key, header: cw.header, body: cw.body, etag: cw.header.Get("ETag")})
			}
		}
		if class != nil && class == g.expensive && g.nice > 0 {
			runNiced(g.nice, serve)
			return
		}
		serve()
	})
}

// retryAfterSeconds is what a refused client is told to wait: the queue
// turns over many times a second, so a second is enough.
const retryAfterSeconds = 1

// serveCached answers from the cache. A matching If-None-Match is
// answered 304 before any body is touched.
func serveCached(w http.ResponseWriter, r *http.Request, c *cachedResponse) {
	h := w.Header()
	for k, vs := range c.header {
		h[k] = vs
	}
	if etagMatches(r.Header.Get("If-None-Match"), c.etag) {
		h.Del("Content-Length")
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(c.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(c.body)
	}
}

// captureWriter passes a response through and keeps a copy of it, up to a
// limit, for the cache.
type captureWriter struct {
	http.ResponseWriter
	limit   int64
	status  int
	header  http.Header
	body    []byte
	over    bool
	flushed bool
}

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 && code >= 200 {
		c.status = code
		c.header = c.ResponseWriter.Header().Clone()
		c.header.Del(requestIDHeader)
		c.header.Del("Retry-After")
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.over {
		if int64(len(c.body)+len(b)) > c.limit {
			c.over, c.body = true, nil
		} else {
			c.body = append(c.body, b...)
		}
	}
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Flush() {
	c.flushed = true
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// refuse answers a request the guards turned away, in the shape of its
// surface: an RFC 9457 problem for the JSON API (as its own errors are), a
// JSON-RPC error for MCP, a short page for the web.
// WebErrorFunc writes a refusal of the web surface as a page in the site's
// layout.
type WebErrorFunc func(w http.ResponseWriter, r *http.Request, status int, msg string)

func refuse(w http.ResponseWriter, r *http.Request, surface string, status int, code, msg string, webError WebErrorFunc) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	switch surface {
	case "api":
		h.Set("Content-Type", "application/problem+json")
		h.Set("Access-Control-Allow-Origin", "*")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{
			"type": "about:blank", "title": http.StatusText(status), "status": status,
			"detail": msg, "code": code, "param": nil, "instance": r.URL.Path,
		})
	case "mcp":
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{
			"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": -32000, "message": msg},
		})
	default:
		if webError != nil {
			webError(w, r, status, msg)
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		w.Write([]byte("<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>" + http.StatusText(status) +
			"</title><h1>" + http.StatusText(status) + "</h1><p>" + html.EscapeString(msg) + "</p></html>\n"))
	}
}

// join registers a request for key. The first becomes the leader (it
// builds the answer); later ones get a channel closed when it is done.
func (g *guard) join(key string) (leader bool, wait <-chan struct{}) {
	g.pendingMu.Lock()
	defer g.pendingMu.Unlock()
	if ch, ok := g.pending[key]; ok {
		return false, ch
	}
	g.pending[key] = make(chan struct{})
	return true, nil
}

func (g *guard) leave(key string) {
	g.pendingMu.Lock()
	defer g.pendingMu.Unlock()
	if ch, ok := g.pending[key]; ok {
		close(ch)
		delete(g.pending, key)
	}
}
