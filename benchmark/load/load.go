// Package load is the load harness: it starts `incidentlib serve` on the
// loopback interface, measures its capacity beside a minimal net/http
// handler serving the same bytes, overloads its search path, sends hostile
// queries, and injects faults into its data directory. Every phase is
// bounded in time and request count and stops by itself; it only ever
// connects to 127.0.0.1.
package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/incidentlib/incidentlib/synthetic"
)

type config struct {
	bin       string
	duration  time.Duration
	conns     int
	phases    string
	serverCPU string
	serverEnv envList
	// serveFlags are added to every server the harness starts, to measure
	// a setting ("--max-inflight 1").
	serveFlags []string
}

// Main runs the harness and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.bin, "bin", "", "path of the incidentlib binary to start (required)")
	fs.DurationVar(&cfg.duration, "duration", 5*time.Second, "length of each measured phase (at most 60s)")
	fs.IntVar(&cfg.conns, "conns", 32, "concurrent connections in the capacity phase (at most 256)")
	fs.StringVar(&cfg.phases, "phases", "capacity,overload,mcp-parallel,fair,hostile,faults", "phases to run, comma-separated (capacity, overload, mcp-parallel, fair, hostile, faults)")
	fs.StringVar(&cfg.serverCPU, "server-cpu", "", "start each server pinned to this CPU list (taskset -c), e.g. 1, with the harness itself run on another (taskset -c 0)")
	fs.Var(&cfg.serverEnv, "server-env", "KEY=VALUE added to each server's environment, e.g. GOMAXPROCS=1 (repeatable)")
	var serveFlags string
	fs.StringVar(&serveFlags, "serve-flags", "", "flags added to every server started, space-separated (e.g. \"--max-inflight 1\")")
	var minimalBody, minimalType, minimalAddr string
	fs.StringVar(&minimalBody, "minimal-body", "", "internal: serve this file's bytes as the minimal handler")
	fs.StringVar(&minimalType, "minimal-type", "", "internal: its Content-Type")
	fs.StringVar(&minimalAddr, "minimal-addr", "", "internal: its loopback address")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if minimalBody != "" {
		return serveMinimal(ctx, minimalBody, minimalType, minimalAddr, stderr)
	}
	if cfg.bin == "" || cfg.duration <= 0 || cfg.duration > time.Minute || cfg.conns < 1 || cfg.conns > 256 {
		fmt.Fprintln(stderr, "load: --bin is required; --duration must be in (0, 60s], --conns in [1, 256]")
		return 2
	}
	cfg.serveFlags = strings.Fields(serveFlags)
	h := &harness{cfg: cfg, out: stdout, log: stderr}
	fails := 0
	for _, p := range strings.Split(cfg.phases, ",") {
		var err error
		switch strings.TrimSpace(p) {
		case "capacity":
			err = h.capacity(ctx)
		case "overload":
			err = h.overload(ctx)
		case "hostile":
			err = h.hostile(ctx)
		case "faults":
			err = h.faults(ctx)
		case "mcp-parallel":
			err = h.mcpParallel(ctx)
		case "fair":
			err = h.fair(ctx)
		default:
			err = fmt.Errorf("unknown phase %q", p)
		}
		if err != nil {
			fmt.Fprintf(stdout, "FAIL %s: %v\n", p, err)
			fails++
		}
	}
	if fails > 0 {
		return 1
	}
	return 0
}

type harness struct {
	cfg      config
	out, log io.Writer
	// searchCapacity is the measured req/s of the broad search, for the
	// overload phase.
	searchCapacity float64
}

// server is a started incidentlib serve.
type server struct {
	cmd  *exec.Cmd
	base string
	pid  int
	logs *strings.Builder
	mu   sync.Mutex
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// start runs the binary with args and waits until /readyz answers 200.
func (h *harness) start(ctx context.Context, dataDir string, extra ...string) (*server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--addr", addr, "--data", dataDir, "--log-level", "warn"}, extra...)
	args = append(args, h.cfg.serveFlags...)
	// Pinned from its first instruction (taskset execs the binary), so
	// that the Go runtime sizes itself for the CPUs it is given, as it
	// does in a pod with a CPU limit; pinned after start it counted every
	// CPU of the machine.
	cmd := exec.CommandContext(ctx, h.cfg.bin, args...)
	if h.cfg.serverCPU != "" {
		cmd = exec.CommandContext(ctx, "taskset", append([]string{"-c", h.cfg.serverCPU, h.cfg.bin}, args...)...)
	}
	cmd.Env = append(os.Environ(), h.cfg.serverEnv...)
	s := &server{cmd: cmd, base: "http://" + addr, logs: &strings.Builder{}}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			s.mu.Lock()
			if s.logs.Len() < 1<<20 {
				s.logs.WriteString(sc.Text() + "\n")
			}
			s.mu.Unlock()
		}
	}()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.pid = cmd.Process.Pid
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop()
	return nil, fmt.Errorf("server not ready within 60s; log:\n%s", s.logs.String())
}

func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// rssMiB reads a process's resident set size.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// sampleRSS records the largest RSS of pid until stop is closed.
func sampleRSS(pid int, stop <-chan struct{}) *float64 {
	var peak float64
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if r := rssMiB(pid); r > peak {
				peak = r
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return &peak
}

// stats summarises one run of requests.
type stats struct {
	n        int
	byStatus map[int]int
	lat      []time.Duration
	took     time.Duration
	errs     int
}

func (s *stats) rps() float64 { return float64(s.n) / s.took.Seconds() }

func (s *stats) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	sort.Slice(s.lat, func(i, j int) bool { return s.lat[i] < s.lat[j] })
	return s.lat[min(len(s.lat)-1, int(float64(len(s.lat))*p))]
}

func newClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2, MaxConnsPerHost: conns * 2,
			DisableCompression: true,
		},
	}
}

// closedLoop sends requests from conns workers, each waiting for its
// answer before the next, for d.
func closedLoop(ctx context.Context, c *http.Client, conns int, d time.Duration, req func() *http.Request) *stats {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	st := &stats{byStatus: map[int]int{}}
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			codes := map[int]int{}
			errs := 0
			for ctx.Err() == nil {
				t := time.Now()
				r := req()
				resp, err := c.Do(r)
				if err != nil {
					if ctx.Err() == nil {
						errs++
					}
					continue
				}
				code := resp.StatusCode
				if r.URL.Path == "/mcp" && code == http.StatusOK && mcpShed(resp.Body) {
					// An MCP call the server shed is answered 200 with a
					// tool result saying so: counted as refused.
					code = http.StatusServiceUnavailable
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat = append(lat, time.Since(t))
				codes[code]++
			}
			mu.Lock()
			st.lat = append(st.lat, lat...)
			for k, v := range codes {
				st.byStatus[k] += v
				st.n += v
			}
			st.errs += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	st.took = time.Since(start)
	return st
}

// mcpShed reads an MCP answer and reports whether it is a tool result
// with isError (the server sheds a call that way, with a retry hint; the
// harness's queries are otherwise valid).
func mcpShed(body io.Reader) bool {
	b, _ := io.ReadAll(io.LimitReader(body, 4<<20))
	return bytes.Contains(b, []byte(`"isError":true`))
}

// openLoop sends rate requests per second for d whatever the answers do,
// with at most maxOut outstanding (beyond that a request counts as
// dropped by the client).
func openLoop(ctx context.Context, c *http.Client, rate float64, d time.Duration, maxOut int, req func() *http.Request) *stats {
	st := &stats{byStatus: map[int]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var out atomic.Int64
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	next := start
	for time.Since(start) < d && ctx.Err() == nil {
		if out.Load() >= int64(maxOut) {
			mu.Lock()
			st.errs++
			mu.Unlock()
		} else {
			out.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer out.Add(-1)
				t := time.Now()
				resp, err := c.Do(req())
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					st.errs++
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				st.n++
				st.byStatus[resp.StatusCode]++
				if resp.StatusCode == 200 {
					st.lat = append(st.lat, time.Since(t))
				} else {
					st.lat = append(st.lat, -time.Since(t)) // refused: kept apart below
				}
			}()
		}
		next = next.Add(interval)
		if w := time.Until(next); w > 0 {
			time.Sleep(w)
		}
	}
	wg.Wait()
	st.took = time.Since(start)
	return st
}

// mixPath is the n-th uncached search of a phase: phases take the same
// stream of searches (synthetic.SearchMix) at a stride that walks all of
// it, each from its own starting point, so that each phase draws its
// searches from one mix. Taken in order, the stream's page size grows by
// one every 120 requests: the capacity phase's first thousands of
// searches asked for 20 to 36 hits while the fair phase's asked for 81 to
// 100, so "half the capacity" was measured on cheaper searches than the
// ones it then sent.
func mixPath(phase, n int64) string {
	const cycle = 30 * 4 * 81 * 20 // the stream's period
	const stride = 7919            // a prime, coprime to the period
	return synthetic.SearchMix((phase*48_611 + n*stride) % cycle)
}

// envList is a repeatable KEY=VALUE flag.
type envList []string

func (e *envList) String() string { return strings.Join(*e, " ") }

func (e *envList) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	*e = append(*e, v)
	return nil
}

// split separates admitted (positive) and refused (negative) latencies.
func (s *stats) split() (admitted, refused *stats) {
	admitted, refused = &stats{}, &stats{}
	for _, l := range s.lat {
		if l >= 0 {
			admitted.lat = append(admitted.lat, l)
		} else {
			refused.lat = append(refused.lat, -l)
		}
	}
	return admitted, refused
}

func get(base, path string) func() *http.Request {
	return func() *http.Request {
		r, _ := http.NewRequest("GET", base+path, nil)
		return r
	}
}

func mcpSearch(base string) func() *http.Request {
	return func() *http.Request { return searchCall(base, map[string]any{"query": "database"}) }
}

// searchCall is an MCP tools/call of search_incidents with args, over the
// stateless HTTP transport.
func searchCall(base string, args map[string]any) *http.Request {
	a, _ := json.Marshal(args)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_incidents","arguments":` + string(a) + `}}`
	r, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	return r
}

// mcpSearchMix sends search_incidents with a new query each time: the
// n-th search of the mixed stream (mixPath), its words, year bound and
// page size (at most 50, the tool's limit) as tool arguments. The one
// repeated query of mcpSearch measures a path some layer caches.
func mcpSearchMix(base string, n *atomic.Int64) func() *http.Request {
	return func() *http.Request {
		u, _ := url.Parse(mixPath(4, n.Add(1)))
		q := u.Query()
		limit, _ := strconv.Atoi(q.Get("per_page"))
		year, _ := strconv.Atoi(q.Get("year_from"))
		return searchCall(base, map[string]any{"query": q.Get("q"), "limit": min(limit, 50), "year_from": year})
	}
}

// capacity measures each path beside a minimal handler returning the
// bytes of the cached case JSON.
func (h *harness) capacity(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "incidentlib-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := h.start(ctx, filepath.Join(dir, "data"), "--rate-limit", "0")
	if err != nil {
		return err
	}
	defer s.stop()
	c := newClient(h.cfg.conns)
	resp, err := c.Get(s.base + "/api/v1/cases/IL-0561")
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	ctype := resp.Header.Get("Content-Type")
	etag := resp.Header.Get("ETag")
	// The minimal handler runs in a process of its own, as the server
	// does, so that neither shares a heap with the load generator.
	bodyFile := filepath.Join(dir, "body")
	if err := os.WriteFile(bodyFile, body, 0o644); err != nil {
		return err
	}
	maddr, err := freePort()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	mcmd := exec.CommandContext(ctx, exe, "load", "--bin", h.cfg.bin, "--minimal-body", bodyFile, "--minimal-type", ctype, "--minimal-addr", maddr)
	mcmd.Stderr = h.log
	if err := mcmd.Start(); err != nil {
		return err
	}
	defer func() { mcmd.Process.Signal(os.Interrupt); mcmd.Wait() }()
	base := "http://" + maddr
	for i := 0; i < 200; i++ {
		if r, err := http.Get(base + "/"); err == nil {
			r.Body.Close()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	d := h.cfg.duration
	ref := closedLoop(ctx, c, h.cfg.conns, d, get(base, "/"))
	fmt.Fprintf(h.out, "\n## capacity (%d connections, %v each, rate limit off)\n\n", h.cfg.conns, d)
	fmt.Fprintf(h.out, "| request | answered/s (200 or 304) | ratio to minimal handler | p50 | p99 | refused (503) |\n|---|---|---|---|---|---|\n")
	row := func(name string, st *stats) {
		ok := float64(st.byStatus[200]+st.byStatus[304]) / st.took.Seconds()
		fmt.Fprintf(h.out, "| %s | %.0f | %.2f | %v | %v | %d |\n", name, ok, ok/ref.rps(), st.pct(0.5).Round(10*time.Microsecond), st.pct(0.99).Round(10*time.Microsecond), st.n-st.byStatus[200]-st.byStatus[304]+st.errs)
	}
	row(fmt.Sprintf("minimal handler (%d bytes)", len(body)), ref)
	row("case JSON /api/v1/cases/IL-0561 (cached)", closedLoop(ctx, c, h.cfg.conns, d, get(s.base, "/api/v1/cases/IL-0561")))
	row("case JSON, If-None-Match → 304", closedLoop(ctx, c, h.cfg.conns, d, func() *http.Request {
		r := get(s.base, "/api/v1/cases/IL-0561")()
		r.Header.Set("If-None-Match", etag)
		return r
	}))
	row("case page /cases/IL-0561", closedLoop(ctx, c, h.cfg.conns, d, get(s.base, "/cases/IL-0561")))
	broad := closedLoop(ctx, c, h.cfg.conns, d, get(s.base, "/api/v1/cases?q=database"))
	row("broad search /api/v1/cases?q=database (cached)", broad)
	row("topic page /root-causes/config-change", closedLoop(ctx, c, h.cfg.conns, d, get(s.base, "/root-causes/config-change")))

	// The uncached search path: a different query every time, from at
	// most 8 connections. They come from one address, and the server
	// queues at most 16 expensive requests of one client: with more
	// connections than that, each one refused at once is sent again at
	// once, and the row measures how fast the server refuses rather
	// than how fast it searches (32 connections: 109 searches a second
	// beside 123,327 refusals, against 290 with 8).
	var n atomic.Int64
	searchConns := min(h.cfg.conns, 8)
	uncached := closedLoop(ctx, c, searchConns, d, func() *http.Request {
		return get(s.base, mixPath(0, n.Add(1)))()
	})
	row(fmt.Sprintf("search, a new query each time (uncached; %d connections)", searchConns), uncached)
	// MCP calls are expensive whatever they ask (the response cache
	// holds no MCP answer), so they get the same 8 connections; a call
	// shed is a tool result with isError, counted as refused.
	row(fmt.Sprintf("MCP search_incidents, one query repeated (%d connections)", searchConns), closedLoop(ctx, c, searchConns, d, mcpSearch(s.base)))
	var m atomic.Int64
	row(fmt.Sprintf("MCP search_incidents, a new query each time (%d connections)", searchConns), closedLoop(ctx, c, searchConns, d, mcpSearchMix(s.base, &m)))
	h.searchCapacity = float64(uncached.byStatus[200]) / uncached.took.Seconds()
	fmt.Fprintf(h.out, "\npeak RSS of the server after capacity: %.0f MiB\n", rssMiB(s.pid))
	return nil
}

// overload sends the uncached search path twice its measured capacity,
// with cheap requests beside it, and checks the server recovers.
func (h *harness) overload(ctx context.Context) error {
	if h.searchCapacity == 0 {
		h.searchCapacity = 200
	}
	dir, err := os.MkdirTemp("", "incidentlib-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := h.start(ctx, filepath.Join(dir, "data"), "--rate-limit", "0")
	if err != nil {
		return err
	}
	defer s.stop()
	c := newClient(256)
	rate := 2 * h.searchCapacity
	stop := make(chan struct{})
	peak := sampleRSS(s.pid, stop)
	var n atomic.Int64
	var cheap *stats
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		cheap = openLoop(ctx, newClient(16), 50, h.cfg.duration, 16, get(s.base, "/api/v1/cases/IL-0561"))
	}()
	heavy := openLoop(ctx, c, rate, h.cfg.duration, 512, func() *http.Request {
		return get(s.base, mixPath(1, n.Add(1)))()
	})
	wg.Wait()
	close(stop)
	admitted, refused := heavy.split()
	// Back to normal: the first search after the load, and how long until
	// one is admitted.
	after := time.Now()
	var recovered time.Duration
	for time.Since(after) < 5*time.Second {
		resp, err := c.Get(s.base + "/api/v1/cases?q=retry")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				recovered = time.Since(after)
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(h.out, "\n## overload: uncached searches at %.0f/s (2x measured capacity) for %v, cheap case JSON at 50/s beside them\n\n", rate, h.cfg.duration)
	fmt.Fprintf(h.out, "| | count | p50 | p99 | max |\n|---|---|---|---|---|\n")
	fmt.Fprintf(h.out, "| searches admitted (200) | %d | %v | %v | %v |\n", len(admitted.lat), admitted.pct(0.5).Round(100*time.Microsecond), admitted.pct(0.99).Round(100*time.Microsecond), admitted.pct(1).Round(100*time.Microsecond))
	fmt.Fprintf(h.out, "| searches refused (%v) | %d | %v | %v | %v |\n", statusList(heavy.byStatus), len(refused.lat), refused.pct(0.5).Round(100*time.Microsecond), refused.pct(0.99).Round(100*time.Microsecond), refused.pct(1).Round(100*time.Microsecond))
	fmt.Fprintf(h.out, "| cheap requests | %d | %v | %v | %v |\n", len(cheap.lat), cheap.pct(0.5).Round(100*time.Microsecond), cheap.pct(0.99).Round(100*time.Microsecond), cheap.pct(1).Round(100*time.Microsecond))
	fmt.Fprintf(h.out, "\nclient-side drops/errors: %d; peak RSS %.0f MiB; first search admitted %v after the load stopped\n", heavy.errs, *peak, recovered.Round(time.Millisecond))
	return nil
}

func statusList(m map[int]int) string {
	var parts []string
	for k, v := range m {
		if k != 200 {
			parts = append(parts, fmt.Sprintf("%d×%d", k, v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// hostile sends the queries of issue 11 (and others like them) from 8
// clients at once on every surface.
func (h *harness) hostile(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "incidentlib-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := h.start(ctx, filepath.Join(dir, "data"), "--rate-limit", "0")
	if err != nil {
		return err
	}
	defer s.stop()
	letters := strings.Repeat("b c d f g h j k l m n p q r s t v w x y z ", 21)
	queries := []string{
		`"` + letters + `"`, `"b c d f g h j k"`, `"b c d f g h j k l m n p q r s"`,
		strings.Repeat("abcdefghijklmnopqrstuvwxyz", 30), strings.Repeat("x ", 31),
		"qwertyuiop asdfghjkl zxcvbnmq poiuytrewq lkjhgfdsa mnbvcxzq", "a* b* c* ~d ~e", `"` + strings.Repeat("database ", 15) + `"`,
	}
	var paths []string
	for _, q := range queries {
		paths = append(paths, "/api/v1/cases?q="+url.QueryEscape(q), "/search?q="+url.QueryEscape(q))
	}
	stop := make(chan struct{})
	peak := sampleRSS(s.pid, stop)
	var i atomic.Int64
	st := closedLoop(ctx, newClient(8), 8, h.cfg.duration, func() *http.Request {
		return get(s.base, paths[i.Add(1)%int64(len(paths))])()
	})
	close(stop)
	five := 0
	for k, v := range st.byStatus {
		if k >= 500 && k != 503 {
			five += v
		}
	}
	fmt.Fprintf(h.out, "\n## hostile queries: %d kinds on the API and the web, 8 clients, %v\n\n", len(queries), h.cfg.duration)
	fmt.Fprintf(h.out, "requests %d (%s), max latency %v, p99 %v, peak RSS %.0f MiB, 5xx other than 503: %d\n",
		st.n, statusList2(st.byStatus), st.pct(1).Round(time.Millisecond), st.pct(0.99).Round(time.Millisecond), *peak, five)
	if five > 0 {
		return fmt.Errorf("%d server errors", five)
	}
	return nil
}

func statusList2(m map[int]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%d×%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// faults kills the server during its index build, then starts it over the
// same directory; runs two servers on one directory; and checks no build
// directory is left behind.
func (h *harness) faults(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "incidentlib-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data")
	kills := 0
	for i := range 20 {
		addr, err := freePort()
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, h.cfg.bin, "serve", "--addr", addr, "--data", data, "--log-level", "error")
		if err := cmd.Start(); err != nil {
			return err
		}
		time.Sleep(time.Duration(20+i*15) * time.Millisecond)
		cmd.Process.Kill() // SIGKILL: no clean-up runs
		cmd.Wait()
		kills++
		// Every other time, remove the finished index too, so the next
		// start builds again and can be killed mid-build.
		if i%2 == 0 {
			m, _ := filepath.Glob(filepath.Join(data, "index-*"))
			for _, d := range m {
				if !strings.Contains(d, ".building-") {
					os.RemoveAll(d)
				}
			}
		}
	}
	leftBefore, _ := filepath.Glob(filepath.Join(data, "*.building-*"))
	a, err := h.start(ctx, data)
	if err != nil {
		return fmt.Errorf("start after %d kills: %w", kills, err)
	}
	defer a.stop()
	leftAfter, _ := filepath.Glob(filepath.Join(data, "*.building-*"))
	if err := checkSearch(a.base); err != nil {
		return fmt.Errorf("after kills: %w", err)
	}
	// A second server on the same directory starts and serves at once.
	t := time.Now()
	b, err := h.start(ctx, data)
	if err != nil {
		return fmt.Errorf("second server on one data directory: %w", err)
	}
	defer b.stop()
	second := time.Since(t)
	if err := checkSearch(b.base); err != nil {
		return fmt.Errorf("second server: %w", err)
	}
	if err := checkSearch(a.base); err != nil {
		return fmt.Errorf("first server, with the second running: %w", err)
	}
	fmt.Fprintf(h.out, "\n## faults\n\n%d kill -9 during start-up/build: build directories left before the next start %d, after it %d; the next start served correct results.\n", kills, len(leftBefore), len(leftAfter))
	fmt.Fprintf(h.out, "two servers on one data directory: the second was ready in %v; both served correct results.\n", second.Round(time.Millisecond))
	if len(leftAfter) > 0 {
		return errors.New("build directories left behind after a start")
	}
	return nil
}

// checkSearch checks a known query returns results.
func checkSearch(base string) error {
	resp, err := http.Get(base + "/api/v1/cases?q=database&per_page=1")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"total"`) || strings.Contains(string(b), `"total":0`) {
		return fmt.Errorf("search answered %d: %.200s", resp.StatusCode, b)
	}
	return nil
}

// serveMinimal is the reference: the least a Go net/http server can do to
// answer with the same bytes.
func serveMinimal(ctx context.Context, bodyFile, ctype, addr string, stderr io.Writer) int {
	body, err := os.ReadFile(bodyFile)
	if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
		fmt.Fprintln(stderr, "load: minimal handler needs a body file and a 127.0.0.1 address")
		return 2
	}
	srv := &http.Server{Addr: addr, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Write(body)
	})}
	go func() { <-ctx.Done(); srv.Close() }()
	// Stops by itself even if the harness dies.
	time.AfterFunc(10*time.Minute, func() { srv.Close() })
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "load:", err)
		return 1
	}
	return 0
}
