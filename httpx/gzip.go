package httpx

import (
	"compress/gzip"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// gzipMinSize is the smallest body worth compressing: below about a kilobyte
// the gzip header and the CPU cost outweigh the bytes saved.
const gzipMinSize = 1024

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return w
}}

// Gzip compresses the responses of next with gzip when the client accepts
// it, the body is at least a kilobyte and its type is text-like (HTML, CSS,
// JavaScript, JSON, CSV, XML, SVG). It sets Vary: Accept-Encoding on every
// response, since any of them could have been compressed for another
// client. Event streams, partial content and bodies that already have a
// Content-Encoding pass untouched.
//
// A compressed response is a different representation from the identity
// one: put Conditional outside Gzip so its ETag is the hash of the gzip
// bytes. If an inner handler set a strong ETag, Gzip weakens it (W/"…"),
// which still revalidates with If-None-Match.
func Gzip(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw := &gzipWriter{w: w, accepts: AcceptsGzip(r.Header.Get("Accept-Encoding"))}
		defer gw.close()
		next.ServeHTTP(gw, r)
	})
}

// AcceptsGzip reports whether an Accept-Encoding header value allows gzip:
// it names gzip (or "*") with a quality above zero.
func AcceptsGzip(header string) bool {
	star, gz := false, false
	starSet, gzSet := false, false
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		ok := qualityAboveZero(params)
		switch name {
		case "gzip", "x-gzip":
			gz, gzSet = ok, true
		case "*":
			star, starSet = ok, true
		}
	}
	if gzSet {
		return gz
	}
	return starSet && star
}

func qualityAboveZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, found := strings.Cut(strings.TrimSpace(p), "=")
		if !found || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return err == nil && q > 0
	}
	return true
}

type gzipWriter struct {
	w           http.ResponseWriter
	accepts     bool
	status      int
	wroteHeader bool
	decided     bool
	buf         []byte
	gz          *gzip.Writer
}

func (g *gzipWriter) Header() http.Header { return g.w.Header() }

func (g *gzipWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		g.w.WriteHeader(code)
		return
	}
	if g.wroteHeader {
		return
	}
	g.wroteHeader, g.status = true, code
	if !g.compressible() {
		g.decide(false)
	}
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	if !g.wroteHeader {
		g.WriteHeader(http.StatusOK)
	}
	if !g.decided {
		g.buf = append(g.buf, p...)
		if len(g.buf) >= gzipMinSize {
			g.decide(true)
		}
		return len(p), nil
	}
	if g.gz != nil {
		return g.gz.Write(p)
	}
	return g.w.Write(p)
}

// compressible reports whether the response could still be compressed,
// from its status and headers alone.
func (g *gzipWriter) compressible() bool {
	if !g.accepts || g.status != http.StatusOK {
		return false
	}
	h := g.w.Header()
	if h.Get("Content-Encoding") != "" || h.Get("Content-Range") != "" {
		return false
	}
	if ct := h.Get("Content-Type"); ct != "" && !compressibleType(ct) {
		return false
	}
	return true
}

// decide fixes the response's encoding and sends its header. big says the
// body reached gzipMinSize.
func (g *gzipWriter) decide(big bool) {
	if g.decided {
		return
	}
	g.decided = true
	h := g.w.Header()
	addVary(h, "Accept-Encoding")
	if g.wroteHeader && g.status == http.StatusOK && h.Get("Content-Type") == "" && len(g.buf) > 0 {
		// net/http would sniff the type from the body; do it on the
		// identity bytes before they turn into gzip.
		h.Set("Content-Type", http.DetectContentType(g.buf))
	}
	compress := big && g.compressible()
	if g.accepts && g.status == http.StatusNotModified {
		weakenETag(h)
	}
	if compress {
		h.Del("Content-Length")
		h.Set("Content-Encoding", "gzip")
		weakenETag(h)
		g.w.WriteHeader(g.status)
		g.gz = gzipWriters.Get().(*gzip.Writer)
		g.gz.Reset(g.w)
		if len(g.buf) > 0 {
			g.gz.Write(g.buf)
		}
	} else {
		if g.wroteHeader {
			g.w.WriteHeader(g.status)
		}
		if len(g.buf) > 0 {
			g.w.Write(g.buf)
		}
	}
	g.buf = nil
}

// Flush sends what is buffered: a flushing handler wants its bytes now, so
// a body still under gzipMinSize goes out uncompressed.
func (g *gzipWriter) Flush() {
	if !g.decided && g.wroteHeader {
		g.decide(len(g.buf) >= gzipMinSize)
	}
	if g.gz != nil {
		g.gz.Flush()
	}
	http.NewResponseController(g.w).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.w }

func (g *gzipWriter) close() {
	if !g.decided {
		g.decide(false)
	}
	if g.gz != nil {
		g.gz.Close()
		g.gz.Reset(nil)
		gzipWriters.Put(g.gz)
		g.gz = nil
	}
}

func compressibleType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch {
	case mt == "text/event-stream":
		return false // compressing would hold events back
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/x-ndjson", "application/jsonl",
		"application/javascript", "application/xml", "image/svg+xml":
		return true
	}
	return false
}

// addVary adds a field name to the Vary header unless it is there already.
func addVary(h http.Header, field string) {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if f == "*" || strings.EqualFold(f, field) {
				return
			}
		}
	}
	h.Add("Vary", field)
}

func weakenETag(h http.Header) {
	if e := h.Get("ETag"); e != "" && !strings.HasPrefix(e, "W/") {
		h.Set("ETag", "W/"+e)
	}
}
