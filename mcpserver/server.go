// Package mcpserver offers the library to AI agents as an MCP server: typed,
// read-only tools, each case as a resource, and prompts that put past
// incidents next to a design or a failure. It speaks to the rest of the
// program only through incidentlib.Library.
package mcpserver

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
)

// Defaults for the zero fields of Config.
const (
	DefaultCallTimeout  = 10 * time.Second
	DefaultMaxBodyBytes = 256 << 10 // room for a long design under review
	DefaultRateLimit    = 10        // requests per second per client
	DefaultRateBurst    = 40
)

// Config configures the MCP server. The zero value is usable: every zero
// field takes its default.
type Config struct {
	// BaseURL is the absolute URL of the web pages; case URLs are BaseURL +
	// "/cases/" + id, so a model can cite a page a person can open. Empty
	// means no web pages are known to be served (the stdio server alone):
	// answers then give case IDs and source URLs, never a dead link.
	BaseURL string

	// AllowedHosts are the Host header values (with or without a port)
	// the HTTP endpoint answers. Empty means localhost, 127.0.0.1, ::1 and
	// the host of BaseURL. Set it to the public host name when the server
	// runs behind a proxy; "*" turns the check off.
	AllowedHosts []string
	// AllowedOrigins are the browser origins ("https://example.org") the
	// HTTP endpoint accepts; a request without an Origin header (any
	// non-browser client) is always accepted. Empty means the origin of
	// BaseURL and loopback origins on any port.
	AllowedOrigins []string

	// Private marks a server over a team's library (its private cases
	// with the public ones): its cacheable answers say cacheScope
	// "private" with no time to live, so no shared cache keeps them.
	Private bool

	// CallTimeout bounds every request the server handles.
	CallTimeout time.Duration
	// MaxBodyBytes bounds the body of one HTTP request.
	MaxBodyBytes int64
	// RateLimit is the sustained number of HTTP requests per second one
	// client may make, and RateBurst how many it may make at once. A
	// RateLimit of 0 limits nothing (the serve command limits every
	// surface in front of this handler); DefaultRateLimit is a sensible
	// figure for a handler used on its own.
	RateLimit float64
	RateBurst int
	// ClientKey names the client of a request for the rate limit; nil
	// means the TCP peer's address (httpx.ClientKey). Behind a reverse
	// proxy, give a function that reads the header that proxy sets.
	ClientKey func(*http.Request) string

	// Auditor, when set, adds the audit_kubernetes tool, which audits
	// manifests passed as text with kubegap's checks. Nil leaves it out.
	Auditor incidentlib.Auditor
	// Checks is kubegap's check catalogue, for the kubegap_checks tool;
	// nil takes the Auditor's. Without either the tool is left out.
	Checks []incidentlib.Check
	// MaxConcurrentAudits bounds the audit_kubernetes calls that run at
	// once, across all clients: one audit of a 1 MiB manifest is about a
	// second of CPU. A call that finds every slot taken waits half its
	// CallTimeout, then gets a tool error saying the server is busy. 0 means
	// GOMAXPROCS.
	MaxConcurrentAudits int

	// Version is reported to clients in the initialize result.
	Version string
	// Logger receives internal errors; nil discards them.
	Logger *slog.Logger
}

// withDefaults returns a copy of cfg with every zero field filled in.
func (cfg Config) withDefaults() Config {
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
		if cfg.Auditor != nil {
			cfg.MaxBodyBytes = DefaultAuditBodyBytes
		}
	}
	if cfg.MaxConcurrentAudits <= 0 {
		cfg.MaxConcurrentAudits = runtime.GOMAXPROCS(0)
	}
	if cfg.Checks == nil && cfg.Auditor != nil {
		cfg.Checks = cfg.Auditor.Checks()
	}
	if cfg.RateLimit > 0 && cfg.RateBurst <= 0 {
		cfg.RateBurst = DefaultRateBurst
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.AllowedHosts) == 0 {
		cfg.AllowedHosts = []string{"localhost", "127.0.0.1", "::1"}
		if u, err := url.Parse(cfg.BaseURL); err == nil && u.Hostname() != "" {
			cfg.AllowedHosts = append(cfg.AllowedHosts, u.Hostname())
		}
	}
	if len(cfg.AllowedOrigins) == 0 {
		cfg.AllowedOrigins = []string{"http://localhost", "http://127.0.0.1", "http://[::1]"}
		if u, err := url.Parse(cfg.BaseURL); err == nil && u.Scheme != "" && u.Host != "" {
			cfg.AllowedOrigins = append(cfg.AllowedOrigins, u.Scheme+"://"+u.Host)
		}
	}
	return cfg
}

// serverName is what clients show for this server.
const serverName = "github.com/incidentlib/incidentlib"

// instructions tell a model what the server is for and where to start.
const instructions = `The Incident Library: public production incidents (outages, data loss, degradations) written up in one structure, with a controlled vocabulary of root causes, components, symptoms and contributing factors.

Use it while designing, reviewing or debugging a system to find real failures like the one at hand and cite them. Start with search_incidents (free text, optionally filtered by vocabulary slugs); call vocab to learn the slugs; get_incident for a whole case; similar_incidents to widen from one case; get_topic for everything on one root cause, component, symptom or contributing factor. Every case has a URL: cite it.`

// auditInstructions are added when the server can audit manifests.
const auditInstructions = `

It can also audit Kubernetes manifests: audit_kubernetes takes their YAML as text and returns each gap with its fix and the incidents in the library where the same gap caused an outage; kubegap_checks lists the checks.`

// NewServer returns the MCP server over lib: the tools, the resources and
// the prompts. The same server may serve any number of sessions at once.
// resourcePageSize is how many items one list answer holds (resources,
// and the tool and prompt lists, which are far shorter).
const resourcePageSize = 100

func NewServer(lib incidentlib.Library, cfg Config) *mcp.Server {
	cfg = cfg.withDefaults()
	h := &handlers{lib: lib, cfg: cfg, log: cfg.Logger, checks: cfg.Checks, auditSlots: make(chan struct{}, cfg.MaxConcurrentAudits),
		inputSchemas: map[string]*jsonschema.Schema{}}
	instr := instructions
	if cfg.Auditor != nil {
		instr += auditInstructions
	}
	s := mcp.NewServer(&mcp.Implementation{
		Name:    serverName,
		Title:   "Incident Library",
		Version: cfg.Version,
	}, &mcp.ServerOptions{
		Instructions: instr,
		Logger:       quietLogger(cfg.Logger),
		// Only what can happen: the tool, prompt and resource lists never
		// change, so no listChanged; logging/setLevel is accepted (the
		// protocol library answers it), so logging is declared.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Prompts:   &mcp.PromptCapabilities{},
			Resources: &mcp.ResourceCapabilities{},
			//lint:ignore SA1019 the protocol library still answers logging/setLevel, so the capability must be declared
			Logging: &mcp.LoggingCapabilities{},
		},
		SchemaCache: mcp.NewSchemaCache(),
		// resources/list answers in pages of 100 (a case each, with its
		// title and description): the whole corpus in one answer was
		// 245 KB.
		PageSize: resourcePageSize,
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			if cfg.Private {
				c.CacheScope, c.TTLMs = "private", 0
			}
		},
		// Suggests case IDs and component slugs for prompt arguments.
		CompletionHandler: h.complete,
	})
	s.AddReceivingMiddleware(h.deadline, h.plainArgumentErrors)
	if cfg.Private {
		s.AddReceivingMiddleware(escapeMarkup)
	}
	h.addTools(s)
	h.addAuditTools(s)
	h.addResources(s)
	h.addPrompts(s)
	return s
}

// handlers holds what every tool, resource and prompt handler needs.
type handlers struct {
	lib    incidentlib.Library
	cfg    Config
	log    *slog.Logger
	checks []incidentlib.Check // kubegap's catalogue, possibly empty
	// auditSlots holds a token per running audit_kubernetes call.
	auditSlots chan struct{}
	// inputSchemas are the tools' input schemas by name, for wording
	// argument errors.
	inputSchemas map[string]*jsonschema.Schema
}

// caseURL is the web page of a case.
// It is empty when the server knows no base URL.
func (h *handlers) caseURL(id string) string {
	if h.cfg.BaseURL == "" {
		return ""
	}
	return h.cfg.BaseURL + "/cases/" + id
}

// deadline bounds every request by CallTimeout. The handler runs in its own
// goroutine so that a slow library call cannot hold the client past the
// deadline even if it ignores its context.
func (h *handlers) deadline(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctx, cancel := context.WithTimeout(ctx, h.cfg.CallTimeout)
		defer cancel()
		type answer struct {
			res mcp.Result
			err error
		}
		done := make(chan answer, 1)
		go func() {
			res, err := next(ctx, method, req)
			done <- answer{res, err}
		}()
		select {
		case a := <-done:
			return a.res, a.err
		case <-ctx.Done():
			h.log.Warn("mcp call over deadline", "method", method, "timeout", h.cfg.CallTimeout)
			msg := "the call took longer than " + h.cfg.CallTimeout.String() + "; try a narrower query or a smaller limit"
			if method == "tools/call" {
				r := &mcp.CallToolResult{}
				r.SetError(toolError{msg})
				return r, nil
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
		}
	}
}

// quietLogger passes on only warnings and errors: the protocol library
// logs several INFO lines for every request, and the HTTP server already
// logs one line per request.
func quietLogger(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{l.Handler(), slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.min}
}
func (m minLevel) WithGroup(n string) slog.Handler { return minLevel{m.Handler.WithGroup(n), m.min} }

// escapeMarkup keeps markup in case text out of a team server's markdown
// answers: a private case is written by any member of the team, and a
// client may render markdown as HTML. ('<' alone starts a tag; the
// curated public corpus holds none.)
func escapeMarkup(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		switch r := res.(type) {
		case *mcp.CallToolResult:
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					t.Text = strings.ReplaceAll(t.Text, "<", "&lt;")
				}
			}
		case *mcp.ReadResourceResult:
			for _, c := range r.Contents {
				c.Text = strings.ReplaceAll(c.Text, "<", "&lt;")
			}
		}
		return res, err
	}
}
