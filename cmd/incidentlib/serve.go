package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/healing"
	"github.com/incidentlib/incidentlib/httpapi"
	"github.com/incidentlib/incidentlib/kubegap"
	"github.com/incidentlib/incidentlib/mcpserver"
	"github.com/incidentlib/incidentlib/replica"
	"github.com/incidentlib/incidentlib/server"
	"github.com/incidentlib/incidentlib/web"
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
	logFormat      string
	rateLimit      float64
	rateBurst      int
	maxExpensive   int
	searchNice     int
	cacheMB        int
	queryTimeout   time.Duration
	shutdownDelay  time.Duration
	shutdownGrace  time.Duration
	store          string
	publicIDs      string
	teamIDs        listFlag
	idRanges       idRanges // parsed from publicIDs and teamIDs
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
	fs.StringVar(&cfg.logFormat, "log-format", "text", "text or json")
	fs.Float64Var(&cfg.rateLimit, "rate-limit", 20, "requests per second allowed per client IP on each surface (web pages, JSON API, MCP) and per signed-in account on the write path; 0 turns the limit off")
	fs.IntVar(&cfg.rateBurst, "rate-burst", 60, "requests a client may make at once above --rate-limit")
	fs.IntVar(&cfg.maxExpensive, "max-inflight", defaultMaxExpensive(), "expensive requests (searches, topic pages, exports, MCP tool calls that search) worked on at once, one client holding at most all but one; more wait up to 300 ms in a fair queue, then get 503; 0 turns the bound off")
	fs.IntVar(&cfg.searchNice, "search-nice", expensiveNice, "how far below the process's priority admitted searches run (a nice value, Linux only), so that probes and cached pages run first under overload; 0 turns it off")
	fs.IntVar(&cfg.cacheMB, "cache-mb", 64, "memory for cached responses, in MiB; 0 turns the cache off")
	fs.DurationVar(&cfg.queryTimeout, "query-timeout", engine.DefaultQueryTimeout, "longest one search may run")
	fs.DurationVar(&cfg.shutdownDelay, "shutdown-delay", time.Second, "on SIGTERM, how long to go on accepting while /readyz says \"shutting down\", so a load balancer stops sending first")
	fs.DurationVar(&cfg.shutdownGrace, "shutdown-grace", 10*time.Second, "after that, how long requests in flight get to finish before they are cut")
	cfg.corpus.register(fs)
	storeFlag(fs, &cfg.store)
	fs.StringVar(&cfg.publicIDs, "public-ids", "5000-8999", "with --store: the case numbers public cases get when published (IL-5000 to IL-8999)")
	fs.Var(&cfg.teamIDs, "team-ids", "with --store: TEAM=FROM-TO, the case numbers a team's private cases get when published (repeatable; default 9000-9999)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	ranges, err := parseIDRanges(cfg.publicIDs, cfg.teamIDs)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib serve: %v\n", err)
		return exitUsage
	}
	cfg.idRanges = ranges
	if fs.NArg() > 0 {
		fmt.Fprintf(m.Stderr, "incidentlib serve: unexpected argument %q (case directories go after --cases)\n", fs.Arg(0))
		return exitUsage
	}
	if cfg.searchNice < 0 || cfg.searchNice > 19 {
		fmt.Fprintf(m.Stderr, "incidentlib serve: --search-nice %d: want 0 (off) to 19\n", cfg.searchNice)
		return exitUsage
	}
	if cfg.rateLimit < 0 || cfg.rateBurst < 0 || cfg.maxExpensive < 0 || cfg.cacheMB < 0 || cfg.queryTimeout < 0 || cfg.shutdownDelay < 0 || cfg.shutdownGrace < 0 {
		fmt.Fprintln(m.Stderr, "incidentlib serve: --rate-limit, --rate-burst, --max-inflight, --cache-mb, --query-timeout, --shutdown-delay and --shutdown-grace must not be negative (0 turns a limit off)")
		return exitUsage
	}
	log, err := m.logger(cfg.logLevel, cfg.logFormat)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib serve: %v\n", err)
		return exitUsage
	}
	l, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib serve: %v\n", err)
		return exitProblems
	}
	if cfg.baseURL == "" {
		// The address listened on, so that --addr with port 0 still
		// gives links that work.
		cfg.baseURL = "http://" + l.Addr().String()
	}
	cfg.baseURL = strings.TrimRight(cfg.baseURL, "/")
	// Listen first, load second: /healthz answers at once and /readyz says
	// "starting" while a large corpus is indexed.
	// The library is opened after the server listens; a replica over a
	// store tells /readyz when it serves stale data.
	var degraded atomic.Pointer[func() string]
	var unready atomic.Pointer[*healing.Library]
	srv := server.New(server.Config{Addr: cfg.addr, Logger: log, ShutdownDelay: cfg.shutdownDelay, ShutdownTimeout: cfg.shutdownGrace, Limits: server.Limits{
		RateLimit: cfg.rateLimit, RateBurst: cfg.rateBurst, MaxExpensive: cfg.maxExpensive, CacheBytes: int64(cfg.cacheMB) << 20,
		ExpensiveNice: cfg.searchNice,
	}, Unready: func() string {
		if h := unready.Load(); h != nil {
			return (*h).Problem()
		}
		return ""
	}, Degraded: func() string {
		if f := degraded.Load(); f != nil {
			return (*f)()
		}
		return ""
	}})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()
	log.Info("listening", "addr", l.Addr().String(), "url", cfg.baseURL, "processors", processors, "gomaxprocs", runtime.GOMAXPROCS(0), "max_inflight", cfg.maxExpensive)
	if m.OnListen != nil {
		m.OnListen(l.Addr().String())
	}

	eng, closeLib, code := m.openLibrary(ctx, "serve", cfg.store, cfg.corpus, cfg.dataDir, cfg.queryTimeout, log)
	if eng == nil {
		l.Close()
		return code
	}
	defer closeLib()
	if r, ok := eng.(*replica.Replica); ok {
		f := func() string { return r.Status().Warning() }
		degraded.Store(&f)
		var built atomic.Int64
		r.OnStatus(func(st *replica.Status) {
			// A new library: no cached answer of the old one may be served.
			if b := st.Built.UnixNano(); built.Swap(b) != b {
				srv.LibraryChanged()
			}
			srv.SetGauge("incidentlib_store_change", "The last change of the store this replica serves.", float64(st.Seq))
			srv.SetGauge("incidentlib_store_cases_left_out", "Cases in the store this replica cannot serve (see /readyz and the log).", float64(len(st.Skipped)))
			srv.SetGauge("incidentlib_store_changes_skipped", "Changes of the store this replica could not apply and skipped since it started.", float64(st.Rejected))
			srv.SetGauge("incidentlib_store_degraded", "1 while the store does not answer and the replica serves its last library.", map[bool]float64{true: 1}[st.Degraded])
		})
	}
	if h, ok := eng.(*healing.Library); ok {
		unready.Store(&h)
		// A data directory that could not take the index (a full disk)
		// costs a build at every start, not the service: say so on
		// /readyz and in a metric an alert can watch.
		inMemory := 0.0
		if loc := m.indexWhere; strings.HasPrefix(loc, "memory (data directory") {
			inMemory = 1
			f := func() string { return "index in " + loc }
			degraded.Store(&f)
		}
		srv.SetGauge("incidentlib_index_in_memory", "1 when the search index could not be kept in the data directory (full or not writable) and was built in memory.", inMemory)
	}
	// A library in a store people write to links its contributor pages.
	contributing := false
	if r, ok := eng.(*replica.Replica); ok {
		_, contributing = r.Feed().(incidentlib.Workflow)
	}
	// private: the handlers serve a team's library (its private cases too).
	makeHandlers := func(lib incidentlib.Library, private bool) (server.Handlers, error) {
		checks, auditor := kubegapFor(lib, cfg.baseURL)
		webHandler, err := web.New(lib, web.Config{BaseURL: cfg.baseURL, Logger: log, Checks: checks, Contribute: contributing})
		if err != nil {
			return server.Handlers{}, err
		}
		refusals, err := web.RefusalPages(web.Config{BaseURL: cfg.baseURL, Contribute: contributing})
		if err != nil {
			return server.Handlers{}, err
		}
		return server.Handlers{
			Web:      webHandler,
			WebError: refusals,
			// The server applies the rate limits in front of every surface,
			// so the protocol handlers' own limiters stay off.
			API: httpapi.New(lib, httpapi.Config{BaseURL: cfg.baseURL, Logger: log, Checks: checks}),
			MCP: mcpserver.NewHTTPHandler(lib, mcpserver.Config{BaseURL: cfg.baseURL, AllowedHosts: cfg.allowedHosts, AllowedOrigins: cfg.allowedOrigins,
				Version: version(), Logger: log, Auditor: auditor, Checks: checks, Private: private}),
		}, nil
	}
	handlers, err := makeHandlers(eng, false)
	if err != nil {
		log.Error("web pages", "err", err)
		return exitProblems
	}
	if r, ok := eng.(*replica.Replica); ok {
		handlers = m.withWritePath(handlers, r, cfg, log, makeHandlers)
	}
	srv.SetReady(handlers)
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

// openLibrary opens the library from the store when one is named, from the
// case files otherwise.
func (m *Main) openLibrary(ctx context.Context, cmd, store string, cf corpusFlags, dataDir string, queryTimeout time.Duration, log *slog.Logger) (incidentlib.Library, func(), int) {
	if store != "" {
		if len(cf.dirs) > 0 || cf.noBuiltin {
			fmt.Fprintf(m.Stderr, "incidentlib %s: --cases and --no-builtin do not go with --store: import the cases into the store instead\n", cmd)
			return nil, nil, exitUsage
		}
		r, closeFn, code := m.openReplica(ctx, cmd, store, log)
		if r == nil {
			return nil, nil, code
		}
		return r, closeFn, exitOK
	}
	eng, code := m.openEngine(ctx, cmd, cf, dataDir, queryTimeout, log)
	if eng == nil {
		return nil, nil, code
	}
	// An index that fails at run time (damaged under the process) is
	// rebuilt in memory in the background while the rest is served.
	cases, err := eng.Cases(ctx)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib %s: %v\n", cmd, err)
		return nil, nil, exitProblems
	}
	vocab := eng.Vocabulary()
	healed := healing.New(eng, func() { eng.Close() }, func(ctx context.Context) (incidentlib.Library, func(), error) {
		e, err := engine.Open(ctx, vocab, cases, engine.Options{Logger: log, QueryTimeout: queryTimeout})
		if err != nil {
			return nil, nil, err
		}
		return e, func() { e.Close() }, nil
	}, log)
	m.indexWhere = eng.IndexLocation()
	return healed, healed.Close, exitOK
}

// openEngine loads the corpus and opens the engine over it, printing why
// when it cannot.
func (m *Main) openEngine(ctx context.Context, cmd string, cf corpusFlags, dataDir string, queryTimeout time.Duration, log *slog.Logger) (*engine.Engine, int) {
	c, code := m.loadCorpus(cmd, cf)
	if c == nil {
		return nil, code
	}
	dir, why := resolveDataDir(dataDir)
	if why != "" {
		log.Warn("no usable cache directory; the index is built in memory on every start (use --data DIR to keep it)", "reason", why)
	}
	start := time.Now()
	eng, err := engine.Open(ctx, c.Vocabulary, c.Cases, engine.Options{DataDir: dir, Logger: log, QueryTimeout: queryTimeout})
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib %s: %v\n", cmd, err)
		return nil, exitProblems
	}
	log.Info("library loaded", "cases", len(c.Cases), "index", eng.IndexLocation(), "index_reused", eng.IndexReused(), "took", time.Since(start).Round(time.Millisecond))
	return eng, exitOK
}

// resolveDataDir picks where the index lives: the flag, else the user
// cache directory, else (no writable cache directory, as in a read-only
// container) memory, with the reason. A directory the user named is used
// as given: the engine serves a valid index from it even when it is
// read-only, and says so when it has to build in memory.
func resolveDataDir(flagValue string) (dir, whyMemory string) {
	switch flagValue {
	case "-":
		return "", ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err.Error()
		}
		dir := filepath.Join(base, "github.com/incidentlib/incidentlib")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err.Error()
		}
		return dir, ""
	}
	return flagValue, ""
}

func (m *Main) logger(level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text", "":
		return slog.New(slog.NewTextHandler(m.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(m.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// processors is the number of processors the runtime found it may use
// (CPU affinity and a container's CPU quota honoured), read before
// spareProcessors raises GOMAXPROCS above it. A GOMAXPROCS set in the
// environment counts only up to the CPUs the process may run on, so that
// a raised GOMAXPROCS does not raise the bound on searches with it.
var processors = min(runtime.NumCPU(), runtime.GOMAXPROCS(0))

// spareProcs is how many more Go processors than processors serve runs
// (unless GOMAXPROCS is set). With exactly one per processor, every one
// of them is busy with searches under overload, and a new request is
// noticed only when the runtime polls the network (every 10 ms at worst)
// and then waits in the run queue behind the searches: cheap requests'
// p99 was 0.8–1.3 s at twice the search capacity on one core. With spare
// ones a thread always waits in the network poller; the kernel wakes it
// when a request arrives and schedules it beside the searching threads,
// so a health check or a cached page no longer waits for a search to
// finish. Expensive work stays bounded by processors (the --max-inflight
// default), not by GOMAXPROCS. docs/performance.md has the measurements
// (one core: GOMAXPROCS 2, 3, 4, 6 and 8).
const spareProcs = 3

// expensiveNice is the --search-nice default: how far below the
// process's own priority admitted searches run (server.Limits.ExpensiveNice;
// Linux only). With spare Go
// processors a cheap request gets a thread at once, but the kernel still
// shares the processor evenly among the runnable threads; at nice +10 the
// searching threads weigh about a tenth as much, so a probe or a cached
// page runs first. Measured on one core at twice the search capacity:
// cheap requests' p99 6.2 and 7.6 ms against 12.8 and 8.3 ms without,
// for about 10% less search capacity (docs/performance.md).
const expensiveNice = 10

// spareProcessors raises GOMAXPROCS to processors + spareProcs, unless
// the environment sets it.
func spareProcessors() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(processors + spareProcs)
	}
}

// defaultMaxExpensive bounds expensive work at one request per processor.
// A search is CPU work, so more at once only makes each slower. One client
// holds at most all the slots but one (server.DefaultExpensive), so on two
// processors one client's searches run one at a time and the other slot is
// there for everyone else's: a greedy client's second-long queries no
// longer make the others wait (issue 22), and a single heavy client still
// leaves a processor for cheap requests, as the earlier default of
// processors − 1 did (docs/performance.md).
func defaultMaxExpensive() int { return max(1, processors) }

func (m *Main) runMCP(ctx context.Context, args []string) int {
	fs := newFlagSet("mcp", m.Stderr)
	var cf corpusFlags
	var dataDir, baseURL, logLevel, logFormat, store string
	cf.register(fs)
	storeFlag(fs, &store)
	fs.StringVar(&dataDir, "data", "", "directory for the search index (default: the user cache directory; \"-\" keeps it in memory)")
	fs.StringVar(&baseURL, "base-url", "", "public URL of the library's web pages (as given to serve), for case links in answers; without it answers give case IDs and source URLs, never a link to a page that may not be served")
	fs.StringVar(&logLevel, "log-level", "warn", "debug, info, warn or error (logs go to standard error)")
	fs.StringVar(&logFormat, "log-format", "text", "text or json")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	log, err := m.logger(logLevel, logFormat)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib mcp: %v\n", err)
		return exitUsage
	}
	eng, closeLib, code := m.openLibrary(ctx, "mcp", store, cf, dataDir, 0, log)
	if eng == nil {
		return code
	}
	defer closeLib()
	baseURL = strings.TrimRight(baseURL, "/")
	checks, auditor := kubegapFor(eng, baseURL)
	err = mcpserver.ServeStdio(ctx, eng, mcpserver.Config{BaseURL: baseURL, Version: version(), Logger: log, Auditor: auditor, Checks: checks}, m.Stdin, m.Stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("mcp", "err", err)
		return exitProblems
	}
	return exitOK
}

// auditCitations is how many cases each finding of audit_kubernetes cites,
// newest first; the check's page lists them all.
const auditCitations = 5

// kubegapFor is kubegap as the library's pages, API and MCP server offer
// it: the check catalogue, and an auditor whose findings cite lib's cases
// with links under baseURL. Every check runs; no policy applies.
func kubegapFor(lib incidentlib.Library, baseURL string) ([]incidentlib.Check, incidentlib.Auditor) {
	return kubegap.Checks(), kubegap.NewAuditor(kubegap.LibraryCiter(lib, baseURL, auditCitations), kubegap.Policy{})
}

// version is the module version the binary was built from, for MCP's
// initialize answer.
func version() string { return buildVersion() }
