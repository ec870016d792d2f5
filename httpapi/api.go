// Package httpapi serves the library as a JSON API under /api/v1/: cases,
// search with facet counts, similar cases, topics, the vocabulary, corpus
// statistics, kubegap's checks with the cases they cite, bulk export and the
// OpenAPI 3.1 document that describes them.
//
// Every route is declared once, in the table of routes.go; the same table
// registers the handlers and generates the OpenAPI document, so the two
// cannot disagree about paths or parameters, and the response schemas are
// generated from the Go types of types.go.
package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/httpx"
)

// apiPrefix is where the API lives; the version is in the path so that a
// later incompatible shape can live beside this one.
const apiPrefix = "/api/v1"

// Limits on requests. The API takes no request bodies, so a body is
// refused above a small size rather than read; URLs are capped well above
// the longest useful query (a 1000-byte q plus a dozen filters).
const (
	maxBodyBytes = 4 << 10
	maxURLBytes  = 8 << 10
)

// Config configures the API handler.
type Config struct {
	// BaseURL is prefixed to every link ("http://127.0.0.1:8080"); empty
	// makes links root-relative ("/api/v1/cases/IL-0561").
	BaseURL string
	// Logger receives internal errors, which are never shown to clients;
	// nil discards them.
	Logger *slog.Logger
	// MaxAge is how long clients and caches may reuse a response before
	// revalidating it with its ETag; 0 means 5 minutes. The corpus only
	// changes when the server restarts.
	MaxAge time.Duration
	// RateLimit is the sustained requests per second allowed per client,
	// RateBurst the burst on top; RateLimit 0 turns limiting off.
	RateLimit float64
	RateBurst int
	// Checks is kubegap's check catalogue, served at /api/v1/checks; each
	// check's citations are found in the library when asked. Empty serves
	// an empty list.
	Checks []incidentlib.Check
	// Limiter, when set, replaces the limiter built from RateLimit and
	// RateBurst, so the server can share one budget across protocols.
	Limiter *httpx.RateLimiter
}

// api holds what the handlers share.
type api struct {
	lib     incidentlib.Library
	checks  []incidentlib.Check
	log     *slog.Logger
	links   links
	cache   string // Cache-Control of successful responses
	routes  []*route
	openapi []byte
}

// New returns the handler for every path under /api/v1/. Mount it on the
// server's mux at "/api/v1/".
func New(lib incidentlib.Library, cfg Config) http.Handler {
	a := &api{
		lib:    lib,
		checks: cfg.Checks,
		log:    cfg.Logger,
		links:  links{base: strings.TrimRight(cfg.BaseURL, "/")},
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	maxAge := cfg.MaxAge
	if maxAge <= 0 {
		maxAge = 5 * time.Minute
	}
	a.cache = "public, max-age=" + strconv.Itoa(int(maxAge/time.Second))
	a.routes = a.routeTable()
	doc, err := json.MarshalIndent(a.openAPIDocument(), "", "  ")
	if err != nil {
		// The document is built from static Go types; failing to encode
		// it is a programming error caught by the tests.
		panic("httpapi: encoding the OpenAPI document: " + err.Error())
	}
	a.openapi = append(doc, '\n')

	mux := http.NewServeMux()
	for _, rt := range a.routes {
		mux.Handle("GET "+rt.Path, a.serve(rt))
		mux.Handle(rt.Path, a.problemHandler(errMethodNotAllowed))
	}
	mux.Handle("/", a.problemHandler(&incidentlib.Error{Code: incidentlib.ENOTFOUND,
		Message: "no such endpoint; the list is at " + apiPrefix + "/ and in " + apiPrefix + "/openapi.json"}))

	var h http.Handler = httpx.Conditional(httpx.Gzip(mux))
	h = httpx.MaxBody(maxBodyBytes, h, a.problemHandler(&incidentlib.Error{Code: incidentlib.ETOOLARGE,
		Message: "the API takes no request body; send at most " + strconv.Itoa(maxBodyBytes) + " bytes"}))
	h = httpx.MaxURL(maxURLBytes, h, a.problemHandler(&incidentlib.Error{Code: codeURITooLong,
		Message: "the URL is longer than " + strconv.Itoa(maxURLBytes) + " bytes"}))
	limiter := cfg.Limiter
	if limiter == nil {
		limiter = httpx.NewRateLimiter(cfg.RateLimit, cfg.RateBurst)
	}
	h = limiter.Wrap(h, a.problemHandler(&incidentlib.Error{Code: codeRateLimited,
		Message: "too many requests from your address; wait for the number of seconds in Retry-After"}))
	h = httpx.PublicCORS(h)
	return httpx.Recover(a.log, h, a.problemHandler(incidentlib.Errorf(incidentlib.EINTERNAL, "panic")))
}

// Protocol-level error codes, beside the library's own (invalid, not_found,
// too_large, internal). They are part of the contract: clients switch on
// them.
const (
	codeMethodNotAllowed = "method_not_allowed"
	codeNotAcceptable    = "not_acceptable"
	codeURITooLong       = "uri_too_long"
	codeRateLimited      = "rate_limited"
)

// statusClientClosed is logged for a request whose client went away before
// the answer was ready (the figure common proxies use); no one reads it.
const statusClientClosed = 499

var errMethodNotAllowed = &incidentlib.Error{Code: codeMethodNotAllowed,
	Message: "the API is read-only: use GET or HEAD"}

// statusOf maps an error to its HTTP status: the one place that does.
// too_large means a size limit: 414 when it names a URL parameter (all of
// this API's parameters are in the URL), 413 for a request body.
func statusOf(err error) int {
	switch incidentlib.ErrorCode(err) {
	case incidentlib.EINVALID:
		return http.StatusBadRequest
	case incidentlib.ENOTFOUND:
		return http.StatusNotFound
	case incidentlib.ETOOLARGE:
		if incidentlib.ErrorParam(err) != "" {
			return http.StatusRequestURITooLong
		}
		return http.StatusRequestEntityTooLarge
	case codeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case codeNotAcceptable:
		return http.StatusNotAcceptable
	case codeURITooLong:
		return http.StatusRequestURITooLong
	case codeRateLimited:
		return http.StatusTooManyRequests
	case incidentlib.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case incidentlib.ECANCELED:
		return statusClientClosed
	}
	return http.StatusInternalServerError
}

// writeError answers with an RFC 9457 problem. Internal errors are logged
// and replaced by a fixed sentence.
func (a *api) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	code := incidentlib.ErrorCode(err)
	if status == http.StatusInternalServerError && r.Context().Err() != nil {
		// The client hung up and the work was stopped: no fault of ours,
		// and no one reads the answer.
		status, code = statusClientClosed, incidentlib.ECANCELED
	}
	if status == http.StatusInternalServerError {
		a.log.Error("api internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		code = incidentlib.EINTERNAL
	}
	p := Problem{
		Type:     "about:blank",
		Title:    http.StatusText(status),
		Status:   status,
		Detail:   incidentlib.ErrorMessage(err),
		Code:     code,
		Param:    nullable(incidentlib.ErrorParam(err)),
		Instance: r.URL.Path,
	}
	h := w.Header()
	for _, k := range []string{"ETag", "Link", "Content-Disposition", "Content-Length", "Content-Encoding"} {
		h.Del(k)
	}
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusMethodNotAllowed {
		h.Set("Allow", "GET, HEAD, OPTIONS")
	}
	if status == http.StatusServiceUnavailable && h.Get("Retry-After") == "" {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	// Written for HEAD too: the server drops the body but keeps the
	// Content-Length it implies, so HEAD and GET headers agree.
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(p)
}

// problemHandler answers every request with err. For a method that is not
// allowed, OPTIONS gets the list of allowed methods instead.
func (a *api) problemHandler(err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err == errMethodNotAllowed && r.Method == http.MethodOptions {
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		a.writeError(w, r, err)
	})
}

// serve adapts a route's handler: it checks Accept and the query string
// against the route's declaration, and turns a returned error into a
// problem response.
func (a *api) serve(rt *route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !acceptable(r.Header.Get("Accept"), rt.media()) {
			a.writeError(w, r, &incidentlib.Error{Code: codeNotAcceptable,
				Message: "this endpoint answers only " + rt.media() + "; the Accept header rules it out"})
			return
		}
		vals, err := checkQuery(r.URL.RawQuery, rt)
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		if err := rt.Handle(w, r, vals); err != nil {
			a.writeError(w, r, err)
		}
	})
}

// checkQuery parses a query string and refuses parameters the route does
// not declare (a typo like "rootcause" would otherwise be silently ignored
// and return the wrong cases) and repeats of single-valued ones.
func checkQuery(raw string, rt *route) (url.Values, error) {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return nil, incidentlib.InvalidParam("query", "the query string is malformed: %s", strings.TrimPrefix(err.Error(), "invalid URL escape "))
	}
	for name, vs := range vals {
		p := rt.param(name)
		if p == nil || p.In != "query" {
			var known []string
			for _, p := range rt.Params {
				if p.In == "query" {
					known = append(known, p.Name)
				}
			}
			msg := "unknown parameter"
			if len(known) > 0 {
				msg += "; this endpoint takes " + strings.Join(known, ", ")
			} else {
				msg += "; this endpoint takes none"
			}
			return nil, incidentlib.InvalidParam(truncate(name, 40), "%s", msg)
		}
		if !p.Repeat && len(vs) > 1 {
			return nil, incidentlib.InvalidParam(name, "given %d times; it takes one value", len(vs))
		}
	}
	return vals, nil
}

// acceptable reports whether an Accept header admits media type mt. An
// absent header admits anything.
func acceptable(header, mt string) bool {
	if strings.TrimSpace(header) == "" {
		return true
	}
	mt, _, _ = strings.Cut(mt, ";")
	typ, _, _ := strings.Cut(mt, "/")
	best := -1.0 // quality of the most specific matching range
	spec := -1
	for _, rng := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(rng, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		s := -1
		switch {
		case name == mt:
			s = 2
		case name == typ+"/*":
			s = 1
		case name == "*/*":
			s = 0
		}
		if s < spec || s < 0 {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if s > spec || q > best {
			spec, best = s, q
		}
	}
	return best > 0
}

// writeJSON sends v as a successful, cacheable response.
func (a *api) writeJSON(w http.ResponseWriter, v any) error {
	h := w.Header()
	// Encode fully before writing, so a failure can still become a clean
	// problem response.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", a.cache)
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(buf.Bytes()) // a failed write means the client left
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
