// Package server puts the library's protocols behind one HTTP listener:
// the web pages at /, the JSON API at /api/v1/, the MCP endpoint at /mcp,
// and the operational endpoints /healthz, /readyz and /metrics.
//
// The listener starts before the library is ready, so an orchestrator can
// tell a slow start (a large corpus being indexed) from a dead process:
// /healthz answers at once, /readyz and every other route answer 503 until
// SetReady is called.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handlers are the protocol handlers the server routes to.
type Handlers struct {
	Web http.Handler // everything not matched below
	API http.Handler // /api/v1/
	MCP http.Handler // /mcp
	// More maps further URL patterns to their handlers (the write path of
	// a shared library); a more specific pattern wins over the ones above.
	// Requests to them are admitted in the write class (Limits.Write),
	// with a deadline (Limits.WriteTimeout).
	More map[string]http.Handler
	// WebError, when set, writes the web surface's refusals (429, 503) as
	// pages in the site's layout.
	WebError WebErrorFunc
}

// Config configures a Server.
type Config struct {
	Addr   string
	Logger *slog.Logger
	// Degraded, when set, says why the server answers from stale data
	// ("" when it does not). /readyz still answers 200, so a replica that
	// lost its store stays in rotation for reads, and says why.
	Degraded func() string
	// Unready, when set, says why the library cannot take traffic for now
	// ("" when it can): /readyz answers 503 with the reason, while
	// requests are still served (a search index being rebuilt after a
	// failure).
	Unready func() string
	// Limits bounds what clients may ask of the server; the zero value
	// turns every guard off.
	Limits Limits
	// ShutdownTimeout is how long requests in flight get to finish at
	// shutdown; 0 means ten seconds.
	ShutdownTimeout time.Duration
	// ShutdownDelay is how long the server keeps accepting and answering
	// after it is told to stop, while /readyz says "shutting down", so
	// that a load balancer stops sending before the listener closes and
	// clients on kept-alive connections are told to close them; 0 stops
	// accepting at once.
	ShutdownDelay time.Duration
}

// Server is the HTTP front of the library.
type Server struct {
	cfg     Config
	log     *slog.Logger
	ready   atomic.Pointer[http.Handler]
	metrics *metrics
	guard   *guard
	http    *http.Server
	nextID  atomic.Uint64
	idBase  string
	// draining is set once shutdown has begun.
	draining       atomic.Bool
	metricsHandler http.Handler
}

// New returns a server that is live but not ready.
func New(cfg Config) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, metrics: newMetrics(), guard: newGuard(cfg.Limits)}
	s.metrics.registerGuard(s.guard)
	s.metricsHandler = promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)})
	s.idBase = strconv.FormatInt(time.Now().UnixNano()%(1<<30), 36) + "-"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if s.ready.Load() == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "starting: the library is being loaded")
			return
		}
		if s.draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "shutting down: send requests to another replica")
			return
		}
		if s.cfg.Unready != nil {
			if why := s.cfg.Unready(); why != "" {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintln(w, "not ready:", why)
				return
			}
		}
		if s.cfg.Degraded != nil {
			if why := s.cfg.Degraded(); why != "" {
				fmt.Fprintln(w, "ready, degraded:", why)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h := s.ready.Load()
		if h == nil {
			w.Header().Set("Retry-After", "5")
			http.Error(w, "The library is starting; try again in a few seconds.", http.StatusServiceUnavailable)
			return
		}
		(*h).ServeHTTP(w, r)
	})
	s.http = &http.Server{
		Addr:              cfg.Addr,
		Handler:           s.recoverer(s.logged(mux)),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s
}

// SetReady routes requests to the protocol handlers from now on.
func (s *Server) SetReady(h Handlers) {
	mux := http.NewServeMux()
	if h.API != nil {
		mux.Handle("/api/v1/", h.API)
		mux.Handle("/api/v1", http.RedirectHandler("/api/v1/", http.StatusMovedPermanently))
	}
	if h.MCP != nil {
		mux.Handle("/mcp", browserToAgentsPage(h.MCP))
		mux.Handle("/mcp/", h.MCP)
	}
	if h.Web != nil {
		mux.Handle("/", h.Web)
	}
	for pattern, handler := range h.More {
		mux.Handle(pattern, handler)
	}
	// A new library makes every cached response stale.
	s.guard.cache.clear()
	var isWrite func(*http.Request) bool
	if len(h.More) > 0 {
		more := http.NewServeMux()
		for pattern := range h.More {
			more.Handle(pattern, http.NotFoundHandler())
		}
		isWrite = func(r *http.Request) bool {
			_, p := more.Handler(r)
			return p != ""
		}
	}
	handler := s.guard.wrap(mux, isWrite, h.WebError)
	s.ready.Store(&handler)
}

// LibraryChanged empties the response cache: the library behind the
// handlers changed (a replica swapped in a new one). Responses of requests
// that began before it are not stored.
func (s *Server) LibraryChanged() { s.guard.cache.clear() }

// Handler returns the server's root handler, for tests.
func (s *Server) Handler() http.Handler { return s.http.Handler }

// Metrics exposes gauges for the library's own figures on /metrics.
func (s *Server) SetGauge(name, help string, value float64) { s.metrics.setGauge(name, help, value) }

// Serve accepts connections on l until ctx is done, then shuts down:
//
//  1. for Config.ShutdownDelay it goes on accepting and answering, with
//     /readyz answering 503 "shutting down" and every answer telling the
//     client to close its connection, so that neither a load balancer
//     that has not yet seen the replica leave nor a client about to reuse
//     a kept-alive connection meets a closed socket;
//  2. it stops accepting and gives the requests in flight up to
//     Config.ShutdownTimeout to finish;
//  3. what is still running then is cut, logged at WARN.
//
// It returns nil once it has shut down, however it ended, and an error
// only when serving itself failed.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	timeout := s.cfg.ShutdownTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	start := time.Now()
	s.draining.Store(true)
	s.log.Info("shutting down", "in_flight", s.guard.inFlight.Load(), "delay", s.cfg.ShutdownDelay, "grace", timeout)
	if s.cfg.ShutdownDelay > 0 {
		time.Sleep(s.cfg.ShutdownDelay)
	}
	inFlight := s.guard.inFlight.Load()
	shutdown, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := s.http.Shutdown(shutdown)
	if err != nil {
		// The grace period is over: cut what is left.
		s.http.Close()
	}
	if e := <-errc; e != nil && !errors.Is(e, http.ErrServerClosed) {
		return e
	}
	left := s.guard.inFlight.Load()
	if err != nil {
		s.log.Warn("shutdown: the grace period ended with requests running; they were cut", "drained", max(0, inFlight-left), "abandoned", left,
			"took", time.Since(start).Round(time.Millisecond))
	} else {
		s.log.Info("shutdown", "drained", inFlight, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Flush lets streaming handlers (the MCP transport) flush through.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// requestIDHeader carries the request's ID back to the client, so that a
// report of a failure can be matched with its log line.
const requestIDHeader = "X-Request-ID"

// requestID keeps a client's X-Request-ID when it is short and plain, and
// makes one otherwise.
func (s *Server) requestID(r *http.Request) string {
	if id := r.Header.Get(requestIDHeader); id != "" && len(id) <= 64 && strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") == "" {
		return id
	}
	return s.idBase + strconv.FormatUint(s.nextID.Add(1), 36)
}

// logged records each request in the log (one line) and the metrics. A
// request whose client hung up before the answer is logged as status 499
// at INFO: it is no fault of the server's.
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := s.requestID(r)
		w.Header().Set(requestIDHeader, id)
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		status := rec.status
		if r.Context().Err() != nil && (status >= 500 || status == 0) {
			status = 499
		}
		d := time.Since(start)
		group := routeGroup(r.URL.Path)
		s.metrics.observe(group, status, d)
		level := slog.LevelInfo
		switch {
		case group == "ops":
			level = slog.LevelDebug // probes every few seconds would drown the rest
		case status >= 500 && status != http.StatusServiceUnavailable:
			level = slog.LevelWarn
		}
		if !s.log.Enabled(r.Context(), level) {
			return
		}
		s.log.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method), slog.String("route", group), slog.String("path", r.URL.Path),
			slog.Int("status", status), slog.Duration("took", d.Round(time.Microsecond)),
			slog.String("id", id), slog.Int64("bytes", rec.bytes))
	})
}

// recoverer turns a panic in any handler into a plain 500 for the client
// and a logged stack for the operator: the stack never reaches the client.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panic", "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				http.Error(w, "An internal error occurred; it has been logged.", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// routeGroup names the part of the site a path belongs to, for metrics
// with a bounded number of labels.
func routeGroup(path string) string {
	switch {
	case strings.HasPrefix(path, "/api/"):
		return "api"
	case path == "/mcp" || strings.HasPrefix(path, "/mcp/"):
		return "mcp"
	case path == "/healthz" || path == "/readyz" || path == "/metrics":
		return "ops"
	case strings.HasPrefix(path, "/static/"):
		return "static"
	}
	return "web"
}

// browserToAgentsPage sends a person who opens /mcp in a browser to the
// page about connecting AI tools. MCP clients are not affected: they POST,
// or GET asking for an event stream, never for HTML.
func browserToAgentsPage(mcp http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept := r.Header.Get("Accept")
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && strings.Contains(accept, "text/html") && !strings.Contains(accept, "text/event-stream") {
			http.Redirect(w, r, "/agents", http.StatusSeeOther)
			return
		}
		mcp.ServeHTTP(w, r)
	})
}
