package httpx

import (
	"net/http"
)

// PublicCORS opens next to reads from any web origin. The library's data is
// public and no request carries credentials, so "*" is safe and lets a
// dashboard on another site call the API straight from the browser. It
// answers preflight requests itself (204, allowing GET and HEAD) and exposes
// the headers a script needs for caching and paging.
func PublicCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions && r.Header.Get("Origin") != "" &&
			r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Accept, Accept-Language, Cache-Control, If-None-Match, If-Modified-Since")
			h.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", "ETag, Link, Retry-After, Content-Disposition")
		next.ServeHTTP(w, r)
	})
}
