package contribute

import (
	"net/http"
	"strings"
)

// ByTeam routes read requests: a request signed in (bearer token or session
// cookie) by an account of a team goes to that team's handler, which shows
// its private cases; every other request goes to public. A team's answers
// are marked private and uncacheable, so no shared cache hands them to
// anyone else. A bearer token that is not valid is refused, not quietly
// served the public library; a stale session cookie reads as signed out.
func (h *Handler) ByTeam(public http.Handler, forTeam func(team string) http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Authorization, Cookie")
		hasBearer := r.Header.Get("Authorization") != ""
		hasCookie := false
		if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
			hasCookie = true
		}
		if !hasBearer && !hasCookie {
			public.ServeHTTP(w, r)
			return
		}
		a, _, err := h.authenticate(r)
		if err != nil && hasBearer {
			if strings.HasPrefix(r.URL.Path, "/mcp") || strings.HasPrefix(r.URL.Path, "/api/") {
				writeProblem(w, err)
				return
			}
		}
		if a == nil || a.Team == "" {
			public.ServeHTTP(w, r)
			return
		}
		forTeam(a.Team).ServeHTTP(&privateWriter{ResponseWriter: w}, r)
	})
}

// privateWriter makes every response uncacheable by shared caches,
// whatever the handler behind it set.
type privateWriter struct {
	http.ResponseWriter
	wrote bool
}

func (p *privateWriter) WriteHeader(code int) {
	if !p.wrote {
		p.wrote = true
		p.Header().Set("Cache-Control", "private, no-store")
		p.Header().Del("ETag")
	}
	p.ResponseWriter.WriteHeader(code)
}

func (p *privateWriter) Write(b []byte) (int, error) {
	if !p.wrote {
		p.WriteHeader(http.StatusOK)
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (p *privateWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// Flush passes a streamed response's flush on.
func (p *privateWriter) Flush() {
	if f, ok := p.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
