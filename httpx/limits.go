package httpx

import (
	"errors"
	"log/slog"
	"net/http"
)

// MaxBody refuses request bodies over n bytes. A request that declares a
// larger Content-Length is handed to onTooLarge before next runs; a body
// that turns out larger while next reads it makes the read fail with an
// error IsTooLarge recognises. A nil onTooLarge answers a plain 413.
func MaxBody(n int64, next, onTooLarge http.Handler) http.Handler {
	if onTooLarge == nil {
		onTooLarge = plain(http.StatusRequestEntityTooLarge, "Request body too large.")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > n {
			onTooLarge.ServeHTTP(w, r)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, n)
		}
		next.ServeHTTP(w, r)
	})
}

// IsTooLarge reports whether err comes from reading a body over the limit
// MaxBody set.
func IsTooLarge(err error) bool {
	var m *http.MaxBytesError
	return errors.As(err, &m)
}

// MaxURL refuses requests whose target (path and query, as sent) is longer
// than n bytes, handing them to onTooLong; nil answers a plain 414. The
// server's own header limit is far larger than any URL this program needs.
func MaxURL(n int, next, onTooLong http.Handler) http.Handler {
	if onTooLong == nil {
		onTooLong = plain(http.StatusRequestURITooLong, "Request URL too long.")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.RequestURI) > n || len(r.URL.RawQuery)+len(r.URL.Path) > n {
			onTooLong.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Recover turns a panic in next into a logged error and a response from
// onPanic (a plain 500 when nil), so that a bug costs one request its answer
// and never shows a stack trace. http.ErrAbortHandler is re-raised: it is
// how a handler asks the server to drop the connection.
func Recover(log *slog.Logger, next, onPanic http.Handler) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if onPanic == nil {
		onPanic = plain(http.StatusInternalServerError, "Internal error; it has been logged.")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &headerTracker{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", v)
			if rw.wrote {
				// Too late for a clean answer: drop the connection so the
				// client sees a failure, not a truncated success.
				panic(http.ErrAbortHandler)
			}
			onPanic.ServeHTTP(w, r)
		}()
		next.ServeHTTP(rw, r)
	})
}

// headerTracker notes whether a response has started.
type headerTracker struct {
	http.ResponseWriter
	wrote bool
}

func (h *headerTracker) WriteHeader(code int) {
	if code >= 200 {
		h.wrote = true
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *headerTracker) Write(p []byte) (int, error) {
	h.wrote = true
	return h.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (h *headerTracker) Unwrap() http.ResponseWriter { return h.ResponseWriter }

func plain(code int, msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, msg, code)
	})
}
