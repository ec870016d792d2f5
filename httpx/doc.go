// Package httpx holds the HTTP middleware every protocol of the library
// shares: conditional GET with ETags, gzip, per-client rate limiting, size
// limits on requests, open CORS for public reads, and panic recovery.
//
// Each middleware is a plain func(http.Handler) composition that knows
// nothing of the library's domain. Where a middleware must refuse a request
// (too large, rate limited, panicked) it takes an http.Handler to write the
// refusal, so that the JSON API can answer in application/problem+json, the
// pages in HTML and the MCP endpoint in its own error shape.
//
// Order matters for two of them: wrap as Conditional(Gzip(h)) so that the
// ETag names the bytes actually sent (a gzip body and an identity body are
// different representations and get different strong ETags).
package httpx
