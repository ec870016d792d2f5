package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"incidentlib/engine"
	"incidentlib/httpapi"
	"incidentlib/mcpserver"
	"incidentlib/server"
	"incidentlib/web"
)

// serveConfig is everything `incidentlib serve` is told on its command line.
type serveConfig struct {
	addr           string
	baseURL        string
	corpus         corpusFlags
	dataDir        string
	allowedHosts   listFlag
	allowedOrigins listFlag
	logLevel       string
	rateLimit      float64
	rateBurst      int
}

// listFlag is a repeatable flag that also takes comma-separated values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

func (m *Main) runServe(ctx context.Context, args []string) int {
	fs := newFlagSet("serve", m.Stderr)
	var cfg serveConfig
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&cfg.baseURL, "base-url", "", "the site's public URL, for links in the API, feeds and MCP answers (default http://ADDR)")
	fs.StringVar(&cfg.dataDir, "data", "", "directory for the search index (default: the user cache directory; \"-\" keeps it in memory)")
	fs.Var(&cfg.allowedHosts, "allowed-host", "Host header the MCP endpoint accepts, behind a proxy (repeatable)")
	fs.Var(&cfg.allowedOrigins, "allowed-origin", "browser origin the MCP endpoint accepts (repeatable)")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.Float64Var(&cfg.rateLimit, "rate-limit", 20, "JSON API and MCP requests per second allowed per client IP")
	fs.IntVar(&cfg.rateBurst, "rate-burst", 60, "requests a client may make at once above --rate-limit")
	cfg.corpus.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(m.Stderr, "incidentlib serve: unexpected argument %q (case directories go after --cases)\n", fs.Arg(0))
		return exitUsage
	}
	log, err := m.logger(cfg.logLevel)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib serve: %v\n", err)
		return exitUsage
	}
	if cfg.baseURL == "" {
		cfg.baseURL = "http://" + cfg.addr
	}
	cfg.baseURL = strings.TrimRight(cfg.baseURL, "/")

	l, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib serve: %v\n", err)
		return exitProblems
	}
	// Listen first, load second: /healthz answers at once and /readyz says
	// "starting" while a large corpus is indexed.
	srv := server.New(server.Config{Addr: cfg.addr, Logger: log})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	log.Info("listening", "addr", l.Addr().String(), "url", cfg.baseURL)
	if m.OnListen != nil {
		m.OnListen(l.Addr().String())
	}

	eng, code := m.openEngine(ctx, "serve", cfg.corpus, cfg.dataDir, log)
	if eng == nil {
		l.Close()
		return code
	}
	defer eng.Close()
	webHandler, err := web.New(eng, web.Config{BaseURL: cfg.baseURL, Logger: log})
	if err != nil {
		log.Error("web pages", "err", err)
		return exitProblems
	}
	srv.SetReady(server.Handlers{
		Web: webHandler,
		API: httpapi.New(eng, httpapi.Config{BaseURL: cfg.baseURL, Logger: log, RateLimit: cfg.rateLimit, RateBurst: cfg.rateBurst}),
		MCP: mcpserver.NewHTTPHandler(eng, mcpserver.Config{BaseURL: cfg.baseURL, AllowedHosts: cfg.allowedHosts, AllowedOrigins: cfg.allowedOrigins,
			RateLimit: cfg.rateLimit, RateBurst: cfg.rateBurst, Version: version(), Logger: log}),
	})
	st, _ := eng.Stats(ctx)
	if st != nil {
		srv.SetGauge("incidentlib_cases", "Cases in the library.", float64(st.Cases))
	}
	log.Info("ready", "url", cfg.baseURL)
	if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
		log.Error("server", "err", err)
		return exitProblems
	}
	return exitOK
}

// openEngine loads the corpus and opens the engine over it, printing why
// when it cannot.
func (m *Main) openEngine(ctx context.Context, cmd string, cf corpusFlags, dataDir string, log *slog.Logger) (*engine.Engine, int) {
	c, code := m.loadCorpus(cmd, cf)
	if c == nil {
		return nil, code
	}
	dir, err := resolveDataDir(dataDir)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib %s: %v\n", cmd, err)
		return nil, exitUsage
	}
	start := time.Now()
	eng, err := engine.Open(ctx, c.Vocabulary, c.Cases, engine.Options{DataDir: dir, Logger: log})
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib %s: %v\n", cmd, err)
		return nil, exitProblems
	}
	log.Info("library loaded", "cases", len(c.Cases), "index_dir", dir, "index_reused", eng.IndexReused(), "took", time.Since(start).Round(time.Millisecond))
	return eng, exitOK
}

// resolveDataDir picks where the index lives: the flag, else the user
// cache directory, else (no writable cache directory, as in a read-only
// container) memory. A directory the user named must work or it is an
// error; the default only has to be tried.
func resolveDataDir(flagValue string) (string, error) {
	switch flagValue {
	case "-":
		return "", nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return "", nil
		}
		dir := filepath.Join(base, "incidentlib")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil
		}
		return dir, nil
	}
	return flagValue, nil
}

func (m *Main) logger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: l})), nil
}

func (m *Main) runMCP(ctx context.Context, args []string) int {
	fs := newFlagSet("mcp", m.Stderr)
	var cf corpusFlags
	var dataDir, baseURL, logLevel string
	cf.register(fs)
	fs.StringVar(&dataDir, "data", "", "directory for the search index (default: the user cache directory; \"-\" keeps it in memory)")
	fs.StringVar(&baseURL, "base-url", "", "public URL of the library's web pages (as given to serve), for case links in answers; without it answers give case IDs and source URLs, never a link to a page that may not be served")
	fs.StringVar(&logLevel, "log-level", "warn", "debug, info, warn or error (logs go to standard error)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	log, err := m.logger(logLevel)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib mcp: %v\n", err)
		return exitUsage
	}
	eng, code := m.openEngine(ctx, "mcp", cf, dataDir, log)
	if eng == nil {
		return code
	}
	defer eng.Close()
	err = mcpserver.ServeStdio(ctx, eng, mcpserver.Config{BaseURL: strings.TrimRight(baseURL, "/"), Version: version(), Logger: log}, m.Stdin, m.Stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("mcp", "err", err)
		return exitProblems
	}
	return exitOK
}

// version is the module version the binary was built from, for MCP's
// initialize answer.
func version() string { return buildVersion() }
