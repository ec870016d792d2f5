// Package web serves the Incident Library's pages for people: case pages,
// topic pages, search, charts, the Atom feed and the sitemap. Pages are
// rendered on the server from embedded html/template files and work fully
// without JavaScript; the only asset is one stylesheet.
//
// The JSON API (/api/v1/) and the MCP endpoint (/mcp) live in their own
// packages; this handler serves every other path.
package web

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/httpx"
)

// Config configures the web handler.
type Config struct {
	// BaseURL is the site's absolute URL ("https://incidents.example.com"),
	// used in the feed, the sitemap and the links for AI tools. Empty means
	// derive it from each request's Host.
	BaseURL string
	// Logger receives internal errors; nil discards them.
	Logger *slog.Logger
	// KubegapURL is where kubegap, the cluster audit that cites these
	// cases, is documented. Empty links the check index, /checks.
	KubegapURL string
	// Checks is kubegap's check catalogue, in the order pages list it. The
	// check pages (/checks) show it, each check with the library's cases
	// that carry a term it guards against; the "Check your cluster for
	// this" panel of a case or topic names the checks guarding its terms.
	// Empty means no checks are known, and the pages say so.
	Checks []incidentlib.Check
	// Contribute links the contributor pages of a shared library (sign in,
	// drafts, and "Propose an edit" on every case page). The links are the
	// same for everyone, so pages stay cacheable: signing in happens on the
	// contributor pages themselves.
	Contribute bool
}

// server holds what every page handler needs. It is built once by New and
// read-only afterwards.
type server struct {
	lib   incidentlib.Library
	vocab *incidentlib.Vocabulary
	cfg   Config
	log   *slog.Logger
	tmpl  *templates
}

// New returns the handler for every page path. It fails only when the
// embedded templates do not parse, which a test catches.
func New(lib incidentlib.Library, cfg Config) (http.Handler, error) {
	if lib == nil {
		return nil, errors.New("web: nil library")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	t, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	s := &server{lib: lib, vocab: lib.Vocabulary(), cfg: cfg, log: log, tmpl: t}
	// Conditional outside Gzip, so that the ETag names the bytes sent.
	onPanic := s.page(func(http.ResponseWriter, *http.Request) error { return errors.New("handler panicked") })
	h := httpx.Recover(log, s.routes(), onPanic)
	return securityHeaders(httpx.Conditional(httpx.Gzip(h))), nil
}

// routes is the one route table of the pages.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", s.page(s.showHomePage))
	mux.Handle("GET /cases/{id}", s.page(s.showCasePage))
	mux.Handle("GET /cases", http.RedirectHandler("/search", http.StatusMovedPermanently))
	mux.Handle("GET /search", s.page(s.showSearchPage))
	for _, f := range incidentlib.Facets {
		mux.Handle("GET /"+f.PathSegment(), s.page(s.facetIndexPage(f)))
		mux.Handle("GET /"+f.PathSegment()+"/{slug}", s.page(s.topicPage(f)))
	}
	mux.Handle("GET /checks", s.page(s.showCheckIndexPage))
	mux.Handle("GET /checks/{id}", s.page(s.showCheckPage))
	mux.Handle("GET /charts", s.page(s.showChartsPage))
	mux.Handle("GET /agents", s.page(s.showAgentsPage))
	mux.Handle("GET /feed.atom", s.page(s.showFeed))
	mux.Handle("GET /sitemap.xml", s.page(s.showSitemap))
	mux.Handle("GET /robots.txt", s.page(s.showRobots))
	mux.Handle("GET /static/{file}", s.page(s.showStatic))
	// Browsers ask for /favicon.ico whatever the page links; send them to
	// the icon.
	mux.Handle("GET /favicon.ico", http.RedirectHandler("/static/icon.svg", http.StatusMovedPermanently))
	mux.Handle("GET /", s.page(s.showNotFound))
	return mux
}

// pageFunc is a handler that returns its error instead of writing it, so
// that errors are turned into pages in one place.
type pageFunc func(w http.ResponseWriter, r *http.Request) error

func (s *server) page(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			s.showError(w, r, err)
		}
	})
}

// statusOf maps a library error code to its HTTP status. It is the only
// place that does.
func statusOf(err error) int {
	switch incidentlib.ErrorCode(err) {
	case incidentlib.ENOTFOUND:
		return http.StatusNotFound
	case incidentlib.EINVALID:
		return http.StatusBadRequest
	case incidentlib.ETOOLARGE:
		// A parameter of the URL (q) that is too long is the URL's fault,
		// as the API says too.
		var e *incidentlib.Error
		if errors.As(err, &e) && e.Param != "" {
			return http.StatusRequestURITooLong
		}
		return http.StatusRequestEntityTooLarge
	case incidentlib.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case incidentlib.ECANCELED:
		return statusClientClosed
	}
	return http.StatusInternalServerError
}

// statusClientClosed is logged for a request whose client went away before
// the answer was ready (the figure common proxies use); no one reads it.
const statusClientClosed = 499

// errorPage is the data of the error page.
type errorPage struct {
	Status  int
	Heading string
	Message string
}

// showError renders err as a page. Internal errors are logged and shown
// only as a fixed sentence.
func (s *server) showError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status == http.StatusInternalServerError && r.Context().Err() != nil {
		status = statusClientClosed // the client hung up: no fault of ours
	}
	if status == http.StatusInternalServerError {
		s.log.Error("page failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	heading := map[int]string{
		http.StatusNotFound:              "Not found",
		http.StatusBadRequest:            "That request is not valid",
		http.StatusRequestEntityTooLarge: "That request is too large",
		http.StatusRequestURITooLong:     "That search is too long",
		http.StatusServiceUnavailable:    "The library is busy",
	}[status]
	if heading == "" {
		heading = "Something went wrong"
	}
	p := s.newPage(r, heading)
	p.NoIndex = true
	p.Content = errorPage{Status: status, Heading: heading, Message: incidentlib.ErrorMessage(err)}
	var buf bytes.Buffer
	if terr := s.tmpl.execute(&buf, "error", p); terr != nil {
		s.log.Error("error page failed", "err", terr)
		http.Error(w, http.StatusText(status), status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// showNotFound answers every path no other route claims.
func (s *server) showNotFound(w http.ResponseWriter, r *http.Request) error {
	return incidentlib.Errorf(incidentlib.ENOTFOUND, "There is no page at %s.", truncate(r.URL.Path, 80))
}

// contentSecurityPolicy allows nothing but the site's own stylesheet,
// images and one script file (the theme toggle, which the pages do not
// need: without it they follow the system's light or dark setting). No
// inline script, no other origin.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// baseURL is the configured site URL, or one derived from the request.
func (s *server) baseURL(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return s.cfg.BaseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// truncate cuts s to at most n bytes on a rune boundary, for echoing
// user input back in messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// RefusalPages returns what writes the server's refusals of a page request
// (429: too many requests from one address; 503: busy) as a page in the
// site's layout, saying when to retry. The guard sets Retry-After first.
func RefusalPages(cfg Config) (func(w http.ResponseWriter, r *http.Request, status int, msg string), error) {
	t, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	s := &server{cfg: cfg, tmpl: t, log: slog.New(slog.DiscardHandler)}
	// The guard's message is for the API and MCP; a page says it in its
	// own words.
	return func(w http.ResponseWriter, r *http.Request, status int, _ string) {
		heading := "The library is busy"
		msg := "Many searches are running at once and this one could not start in time."
		if status == http.StatusTooManyRequests {
			heading = "Too many requests"
			msg = "Your address has sent more requests than the library answers for one reader."
		}
		msg += " Reload this page in " + plural(atoiOr(w.Header().Get("Retry-After"), 1), "second", "seconds") + "."
		p := s.newPage(r, heading)
		p.NoIndex = true
		p.Content = errorPage{Status: status, Heading: heading, Message: msg}
		var buf bytes.Buffer
		if err := s.tmpl.execute(&buf, "error", p); err != nil {
			http.Error(w, msg, status)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			w.Write(buf.Bytes())
		}
	}, nil
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n
	}
	return def
}
