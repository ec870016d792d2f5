// Package benchmark measures the engine against SQLite FTS5 and PostgreSQL
// full-text search on a synthetic corpus: index build time and size,
// restart time, search and similar-cases latency, and peak memory. It
// backs the "incidentlib bench" command; docs/performance.md records a run.
package benchmark

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/incidentlib/incidentlib/synthetic"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/incidentlib/incidentlib/corpus"
)

// DefaultSeed makes every run generate the same corpus and queries.
const DefaultSeed = synthetic.DefaultSeed

// PostgresEnv names the environment variable that --postgres defaults to;
// scripts/bench-postgres.sh sets it.
const PostgresEnv = "INCIDENTLIB_BENCH_POSTGRES"

// Phases, each run in its own process by default so that peak memory is
// one engine's alone.
const (
	phaseEngineBuild = "engine-build"
	phaseEngineServe = "engine-serve"
	phaseSQLite      = "sqlite"
	phasePostgres    = "postgres"
)

// config is the parsed command line.
type config struct {
	sizes    []int
	queries  int
	warm     int
	sqlite   bool
	postgres string
	data     string
	seed     uint64
	separate bool
	// Set only in a child process: the phase to run and where to write
	// its result.
	phase string
	size  int
	out   string
}

// Main runs the benchmark with the given arguments (without the command
// name) and returns the process exit code: 0 when it ran, 1 when it
// failed, 2 for a bad command line.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	if cfg.phase != "" {
		return runChild(ctx, cfg, stderr)
	}
	results, err := run(ctx, cfg, args, stderr)
	if len(results) > 0 {
		writeReport(stdout, cfg, results)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("sizes", "1000,10000,100000", "corpus sizes to measure, comma-separated")
	fs.IntVar(&cfg.queries, "queries", 100, "queries of each kind (broad, narrow, similar) per engine and size")
	fs.IntVar(&cfg.warm, "warm", 5, "queries of each kind run untimed first")
	fs.BoolVar(&cfg.sqlite, "sqlite", true, "also measure SQLite FTS5")
	fs.StringVar(&cfg.postgres, "postgres", os.Getenv(PostgresEnv), "PostgreSQL connection string to also measure PostgreSQL full-text search; empty skips it (default $"+PostgresEnv+")")
	fs.StringVar(&cfg.data, "data", "", "directory for indexes and databases, kept afterwards (default: a temporary directory, removed)")
	seed := fs.Uint64("seed", DefaultSeed, "seed of the synthetic corpus and queries")
	fs.BoolVar(&cfg.separate, "separate", true, "run each engine and size in its own process, so peak memory is its own")
	fs.StringVar(&cfg.phase, "phase", "", "internal: run one phase in this process")
	fs.IntVar(&cfg.size, "size", 0, "internal: the phase's corpus size")
	fs.StringVar(&cfg.out, "out", "", "internal: file for the phase's result")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: incidentlib bench [flags]\n\nGenerates synthetic corpora and measures the engine, SQLite FTS5 and PostgreSQL on them.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.seed = *seed
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 10 || n > 1_000_000 {
			return cfg, fmt.Errorf("--sizes: %q is not a corpus size between 10 and 1000000", s)
		}
		cfg.sizes = append(cfg.sizes, n)
	}
	if cfg.queries < 1 || cfg.queries > 100_000 {
		return cfg, fmt.Errorf("--queries must be between 1 and 100000, got %d", cfg.queries)
	}
	if cfg.warm < 0 {
		return cfg, fmt.Errorf("--warm must be 0 or more, got %d", cfg.warm)
	}
	switch cfg.phase {
	case "", phaseEngineBuild, phaseEngineServe, phaseSQLite, phasePostgres:
	default:
		return cfg, fmt.Errorf("--phase: unknown phase %q", cfg.phase)
	}
	if cfg.phase != "" && (cfg.size < 10 || cfg.out == "" || cfg.data == "") {
		return cfg, errors.New("--phase needs --size, --out and --data")
	}
	return cfg, nil
}

// run measures every size with every engine asked for.
func run(ctx context.Context, cfg config, args []string, log io.Writer) ([]Result, error) {
	if cfg.data == "" {
		dir, err := os.MkdirTemp("", "incidentlib-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		cfg.data = dir
	} else if err := os.MkdirAll(cfg.data, 0o755); err != nil {
		return nil, err
	}
	phases := []string{phaseEngineBuild, phaseEngineServe}
	if cfg.sqlite {
		phases = append(phases, phaseSQLite)
	}
	if cfg.postgres != "" {
		phases = append(phases, phasePostgres)
	} else {
		fmt.Fprintf(log, "bench: PostgreSQL skipped: no --postgres connection string (scripts/bench-postgres.sh starts a throwaway server and sets $%s)\n", PostgresEnv)
	}
	child := childCommand(args)
	if cfg.separate && child == nil {
		fmt.Fprintln(log, "bench: cannot re-run this program for each phase; measuring in one process, so peak memory figures overlap")
	}
	var results []Result
	for _, size := range cfg.sizes {
		for _, ph := range phases {
			fmt.Fprintf(log, "bench: %d cases: %s …\n", size, ph)
			start := time.Now()
			var r Result
			var err error
			if cfg.separate && child != nil {
				r, err = runInChild(ctx, child, cfg, ph, size, log)
			} else {
				r, err = runPhase(ctx, cfg, ph, size)
			}
			if err != nil {
				return mergeEngine(results), fmt.Errorf("%d cases, %s: %w", size, ph, err)
			}
			fmt.Fprintf(log, "bench: %d cases: %s done in %s\n", size, ph, time.Since(start).Round(time.Second))
			results = append(results, r)
		}
	}
	return mergeEngine(results), nil
}

// childCommand returns the command line that re-runs this program's bench
// command, or nil when the arguments did not come from this process's own
// command line (as in tests).
func childCommand(args []string) []string {
	exe, err := os.Executable()
	if err != nil || len(os.Args) < len(args)+1 {
		return nil
	}
	prefix := os.Args[1 : len(os.Args)-len(args)]
	if !slices.Equal(os.Args[len(os.Args)-len(args):], args) || strings.HasSuffix(exe, ".test") {
		return nil
	}
	return append([]string{exe}, prefix...)
}

func runInChild(ctx context.Context, child []string, cfg config, phase string, size int, log io.Writer) (Result, error) {
	out, err := os.CreateTemp(cfg.data, "result-*.json")
	if err != nil {
		return Result{}, err
	}
	out.Close()
	defer os.Remove(out.Name())
	argv := append(slices.Clone(child[1:]),
		"--phase", phase, "--size", strconv.Itoa(size), "--out", out.Name(), "--data", cfg.data,
		"--queries", strconv.Itoa(cfg.queries), "--warm", strconv.Itoa(cfg.warm),
		"--seed", strconv.FormatUint(cfg.seed, 10), "--postgres", cfg.postgres)
	cmd := exec.CommandContext(ctx, child[0], argv...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("child process: %w", err)
	}
	data, err := os.ReadFile(out.Name())
	if err != nil {
		return Result{}, err
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return Result{}, fmt.Errorf("child result: %w", err)
	}
	return r, nil
}

func runChild(ctx context.Context, cfg config, log io.Writer) int {
	r, err := runPhase(ctx, cfg, cfg.phase, cfg.size)
	if err != nil {
		fmt.Fprintf(log, "bench: %s: %v\n", cfg.phase, err)
		return 1
	}
	data, err := json.Marshal(r)
	if err == nil {
		err = os.WriteFile(cfg.out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintf(log, "bench: %v\n", err)
		return 1
	}
	return 0
}

// runPhase generates the corpus and runs one phase on it in this process.
func runPhase(ctx context.Context, cfg config, phase string, size int) (Result, error) {
	v, ps := corpus.LoadShippedVocabulary()
	if len(ps) > 0 {
		return Result{}, ps
	}
	g := synthetic.NewGenerator(v, cfg.seed)
	p := phaseInput{vocab: v, cases: g.Cases(size), queries: g.Queries(cfg.queries, size), data: cfg.data, warm: cfg.warm, postgres: cfg.postgres}
	p.corpusRSS = settle()
	switch phase {
	case phaseEngineBuild:
		return engineBuild(ctx, p)
	case phaseEngineServe:
		return engineServe(ctx, p)
	case phaseSQLite:
		return runSQLite(ctx, p)
	case phasePostgres:
		return runPostgres(ctx, p)
	}
	return Result{}, fmt.Errorf("unknown phase %q", phase)
}

// mergeEngine folds each size's engine-build result into its engine-serve
// result, so the engine has one row per size.
func mergeEngine(rs []Result) []Result {
	var out []Result
	for _, r := range rs {
		if r.Engine == "engine" {
			if i := slices.IndexFunc(out, func(o Result) bool { return o.Engine == "engine" && o.Cases == r.Cases }); i >= 0 {
				o := &out[i]
				o.BuildMS = max(o.BuildMS, r.BuildMS)
				o.IndexBytes = max(o.IndexBytes, r.IndexBytes)
				o.BuildRSS = max(o.BuildRSS, r.BuildRSS)
				o.RestartMS = max(o.RestartMS, r.RestartMS)
				o.ServeRSS = max(o.ServeRSS, r.ServeRSS)
				if r.Broad.N > 0 {
					o.Broad, o.Narrow, o.Similar, o.Question = r.Broad, r.Narrow, r.Similar, r.Question
				}
				continue
			}
		}
		out = append(out, r)
	}
	return out
}
