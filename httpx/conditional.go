package httpx

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
)

// Conditional makes GET and HEAD responses of next cacheable and cheap to
// revalidate. It buffers the response; for a 200 without an ETag it sets a
// strong ETag from a hash of the body, answers a matching If-None-Match with
// 304 Not Modified, and always sets Content-Length. A HEAD request gets the
// same headers as GET and no body, whatever next wrote.
//
// Other methods pass straight through. A handler that flushes (a stream of
// server-sent events, say) switches the response to streaming: what was
// buffered is sent and the rest goes out as written, without an ETag.
//
// Buffering suits the bounded responses of this program (a page, a JSON
// document, the corpus export of a few megabytes); it is not meant for
// unbounded bodies.
func Conditional(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		rec := &bufferedWriter{w: w}
		next.ServeHTTP(rec, r)
		if rec.streaming {
			return
		}
		rec.finish(r)
	})
}

// bufferedWriter holds a response until the handler returns.
type bufferedWriter struct {
	w           http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
	streaming   bool // the handler flushed; writes now go straight to w
}

func (b *bufferedWriter) Header() http.Header { return b.w.Header() }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.streaming {
		b.w.WriteHeader(code)
		return
	}
	if code >= 100 && code < 200 {
		// Informational responses (103 Early Hints) are not the final
		// status; pass them on and keep waiting.
		b.w.WriteHeader(code)
		return
	}
	if b.wroteHeader {
		return
	}
	b.wroteHeader, b.status = true, code
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.streaming {
		return b.w.Write(p)
	}
	if !b.wroteHeader {
		b.WriteHeader(http.StatusOK)
	}
	return b.body.Write(p)
}

// Flush gives up on buffering: the handler wants its bytes on the wire now.
func (b *bufferedWriter) Flush() {
	if !b.streaming {
		b.streaming = true
		if !b.wroteHeader {
			b.wroteHeader, b.status = true, http.StatusOK
		}
		b.w.WriteHeader(b.status)
		if b.body.Len() > 0 {
			b.w.Write(b.body.Bytes())
			b.body.Reset()
		}
	}
	http.NewResponseController(b.w).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (b *bufferedWriter) Unwrap() http.ResponseWriter { return b.w }

func (b *bufferedWriter) finish(r *http.Request) {
	h := b.w.Header()
	if !b.wroteHeader {
		b.status = http.StatusOK
	}
	if b.status == http.StatusOK {
		etag := h.Get("ETag")
		if etag == "" {
			sum := sha256.Sum256(b.body.Bytes())
			etag = `"` + hex.EncodeToString(sum[:16]) + `"`
			h.Set("ETag", etag)
		}
		if inm := r.Header.Get("If-None-Match"); inm != "" && NoneMatch(inm, etag) {
			// RFC 9110 §15.4.5: a 304 carries the validators and caching
			// headers, not the representation's metadata.
			h.Del("Content-Type")
			h.Del("Content-Length")
			h.Del("Content-Encoding")
			b.w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if b.status != http.StatusNoContent && b.status != http.StatusNotModified {
		h.Set("Content-Length", strconv.Itoa(b.body.Len()))
	}
	b.w.WriteHeader(b.status)
	if r.Method != http.MethodHead {
		b.w.Write(b.body.Bytes())
	}
}

// NoneMatch reports whether an If-None-Match header value matches etag,
// using the weak comparison RFC 9110 §13.1.2 prescribes for it: W/"x"
// matches "x". "*" matches any current representation.
func NoneMatch(header, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, tag := range splitETags(header) {
		if tag == "*" || strings.TrimPrefix(tag, "W/") == want {
			return true
		}
	}
	return false
}

// splitETags splits a comma-separated list of entity tags; a quoted tag may
// itself contain a comma.
func splitETags(s string) []string {
	var out []string
	for {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			return out
		}
		weak := strings.HasPrefix(s, "W/")
		rest := s
		if weak {
			rest = s[2:]
		}
		if !strings.HasPrefix(rest, `"`) {
			// "*" or a malformed tag: take up to the next comma.
			i := strings.IndexByte(s, ',')
			if i < 0 {
				i = len(s)
			}
			out = append(out, strings.TrimSpace(s[:i]))
			s = s[i:]
			continue
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return out // unterminated: ignore the remainder
		}
		n := len(s) - len(rest) + end + 2
		out = append(out, s[:n])
		s = s[n:]
	}
}
