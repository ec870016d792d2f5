package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/httpx"
)

// NewHTTPHandler returns the Streamable HTTP endpoint, to mount at /mcp.
// It is stateless (any instance can answer any request, and nothing is kept
// between requests) and answers in plain JSON rather than event streams,
// since every tool answers in one result.
//
// In front of the protocol it checks the Host and Origin headers against
// cfg.AllowedHosts and cfg.AllowedOrigins (a web page a person visits must
// not be able to reach a server on their machine by DNS rebinding), limits
// each client's request rate and each request's size, and turns a panic
// into a logged error. Refusals are JSON-RPC error bodies, so MCP clients
// show their message.
func NewHTTPHandler(lib incidentlib.Library, cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	srv := NewServer(lib, cfg)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       quietLogger(cfg.Logger),
		// Replaced by checkHosts, which a deployment behind a proxy can
		// configure; the SDK's own check refuses every non-loopback Host
		// arriving on a loopback socket, which is what a local proxy does.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        cfg.MaxBodyBytes,
	})
	var next http.Handler = rpcShaped(cfg.MaxBodyBytes, h)
	next = httpx.MaxBody(cfg.MaxBodyBytes, next, refusal(http.StatusRequestEntityTooLarge,
		fmt.Sprintf("request body over %d bytes", cfg.MaxBodyBytes)))
	limiter := httpx.NewRateLimiter(cfg.RateLimit, cfg.RateBurst) // a rate of 0 limits nothing
	limiter.Key = cfg.ClientKey
	next = limiter.Wrap(next, refusal(http.StatusTooManyRequests, "too many requests from this client; wait for the number of seconds in Retry-After"))
	next = checkOrigin(cfg, next)
	return httpx.Recover(cfg.Logger, next, refusal(http.StatusInternalServerError, "An internal error occurred; it has been logged."))
}

// checkOrigin refuses requests whose Host or Origin header names a site not
// in the allowed lists: the defence against DNS rebinding, where a page on
// evil.example resolves its own name to 127.0.0.1 to reach a local server.
func checkOrigin(cfg Config, next http.Handler) http.Handler {
	hosts := cfg.AllowedHosts
	origins := cfg.AllowedOrigins
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, hosts) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Host %q is not allowed", truncate(r.Host, 100)))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, origins) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Origin %q is not allowed", truncate(o, 100)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed matches a Host header against entries that are a host name
// (any port) or a host:port.
func hostAllowed(hostport string, allowed []string) bool {
	host, port := splitHostPort(hostport)
	if host == "" {
		return false
	}
	for _, a := range allowed {
		if a == "*" {
			return true
		}
		ah, ap := splitHostPort(a)
		if ah == host && (ap == "" || ap == port) {
			return true
		}
	}
	return false
}

// originAllowed matches an Origin header against entries that are an
// origin; an entry without a port allows any port.
func originAllowed(origin string, allowed []string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return false
	}
	host, port := splitHostPort(u.Host)
	for _, a := range allowed {
		if a == "*" {
			return true
		}
		au, err := url.Parse(a)
		if err != nil || !strings.EqualFold(au.Scheme, u.Scheme) {
			continue
		}
		ah, ap := splitHostPort(au.Host)
		if ah == host && (ap == "" || ap == port) {
			return true
		}
	}
	return false
}

// splitHostPort splits "host", "host:port", "[::1]" or "[::1]:8080" into a
// lower-case host without brackets and a port.
func splitHostPort(s string) (host, port string) {
	s = strings.ToLower(strings.TrimSpace(s))
	if h, p, err := net.SplitHostPort(s); err == nil {
		if _, err := strconv.Atoi(p); err != nil {
			return "", ""
		}
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), ""
}

// refusal is an http.Handler answering status with a JSON-RPC error.
func refusal(status int, msg string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { refuse(w, status, msg) })
}

func refuse(w http.ResponseWriter, status int, msg string) {
	code := int64(jsonrpc.CodeInvalidRequest)
	if status >= 500 {
		code = jsonrpc.CodeInternalError
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(body)
}

// ServeStdio serves one client over newline-delimited JSON-RPC on in and
// out, as `incidentlib mcp` does on its standard input and output, until the
// client closes in or ctx is done. Nothing else may write to out: log to
// standard error.
func ServeStdio(ctx context.Context, lib incidentlib.Library, cfg Config, in io.Reader, out io.Writer) error {
	srv := NewServer(lib, cfg)
	pipe := newDrainingPipe()
	w := pipe.writer(out) // first: the reader may answer bad lines at once
	err := srv.Run(ctx, &mcp.IOTransport{Reader: pipe.reader(ctx, in), Writer: w})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
