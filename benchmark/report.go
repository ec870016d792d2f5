package benchmark

import (
	"fmt"
	"io"
	"runtime"
	"strings"
)

// Targets from the issue that set them, for the largest corpus measured.
const (
	targetBroadP99MS    = 100
	targetNarrowP50MS   = 10
	targetQuestionP99MS = 150
	targetSimilarP99MS  = 2
	targetRestartMS     = 3000
	targetBroadRatio    = 3
)

// writeReport prints the results as Markdown tables, ready to paste into
// docs/performance.md.
func writeReport(w io.Writer, cfg config, rs []Result) {
	fmt.Fprintf(w, "\n%d queries of each kind per engine and size, %d untimed first; seed %d; GOMAXPROCS %d.\n\n",
		cfg.queries, cfg.warm, cfg.seed, runtime.GOMAXPROCS(0))
	fmt.Fprintln(w, "| cases | engine | build | index size | restart | broad p50 | broad p99 | narrow p50 | narrow p99 | similar p50 | similar p99 | peak RSS build | peak RSS serve |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Cases, engineLabel(r), dur(r.BuildMS), size(r.IndexBytes), dur(r.RestartMS),
			dur(r.Broad.P50), dur(r.Broad.P99), dur(r.Narrow.P50), dur(r.Narrow.P99),
			dur(r.Similar.P50), dur(r.Similar.P99), size(r.BuildRSS), size(r.ServeRSS))
	}

	fmt.Fprintln(w, "\nMean result-set size (every engine should find about the same cases; tokenizers differ a little):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| cases | engine | broad | narrow | corpus alone in RSS |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %d | %s | %.0f | %.1f | %s |\n", r.Cases, engineLabel(r), r.Broad.AvgTotal, r.Narrow.AvgTotal, size(r.CorpusRSS))
	}

	fmt.Fprintln(w, "\nTen-word questions (the engine only; most hits match part of the question):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| cases | question p50 | question p99 | mean result-set size |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|")
	for _, r := range rs {
		if r.Engine == "engine" && r.Question.N > 0 {
			fmt.Fprintf(w, "| %d | %s | %s | %.0f |\n", r.Cases, dur(r.Question.P50), dur(r.Question.P99), r.Question.AvgTotal)
		}
	}

	fmt.Fprintln(w, "\nHow many times faster the engine is than the faster SQL engine:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| cases | broad p50 | broad p99 | narrow p50 | narrow p99 | similar p50 | similar p99 |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|")
	for _, n := range sizesOf(rs) {
		e, ok := find(rs, "engine", n)
		if !ok {
			continue
		}
		cells := []string{}
		for _, pick := range []func(Result) float64{
			func(r Result) float64 { return r.Broad.P50 }, func(r Result) float64 { return r.Broad.P99 },
			func(r Result) float64 { return r.Narrow.P50 }, func(r Result) float64 { return r.Narrow.P99 },
			func(r Result) float64 { return r.Similar.P50 }, func(r Result) float64 { return r.Similar.P99 },
		} {
			cells = append(cells, ratioCell(rs, n, e, pick))
		}
		fmt.Fprintf(w, "| %d | %s |\n", n, strings.Join(cells, " | "))
	}

	sizes := sizesOf(rs)
	if len(sizes) == 0 {
		return
	}
	n := sizes[len(sizes)-1]
	e, ok := find(rs, "engine", n)
	if !ok || e.Broad.N == 0 {
		return
	}
	fmt.Fprintf(w, "\nTargets at %d cases:\n\n", n)
	check := func(name string, got, limit float64, unit string, atMost bool) {
		pass := got <= limit
		if !atMost {
			pass = got >= limit
		}
		verdict := "met"
		if !pass {
			if atMost {
				verdict = fmt.Sprintf("MISSED by %.1f%s (%.1f× the target)", got-limit, unit, got/limit)
			} else {
				verdict = fmt.Sprintf("MISSED (%.2f× short)", limit/got)
			}
		}
		op := "≤"
		if !atMost {
			op = "≥"
		}
		fmt.Fprintf(w, "- %s: %.2f%s (target %s %g%s): %s\n", name, got, unit, op, limit, unit, verdict)
	}
	check("broad query p99", e.Broad.P99, targetBroadP99MS, " ms", true)
	check("narrow query p50", e.Narrow.P50, targetNarrowP50MS, " ms", true)
	check("10-word question p99", e.Question.P99, targetQuestionP99MS, " ms", true)
	check("similar cases p99", e.Similar.P99, targetSimilarP99MS, " ms", true)
	check("restart with the index reused", e.RestartMS, targetRestartMS, " ms", true)
	if sql, ok := fasterSQL(rs, n, func(r Result) float64 { return r.Broad.P50 }); ok {
		check("broad p50 speed-up over the faster SQL engine ("+sql.Engine+")", sql.Broad.P50/e.Broad.P50, targetBroadRatio, "×", false)
	}
	if sql, ok := fasterSQL(rs, n, func(r Result) float64 { return r.Broad.P99 }); ok {
		check("broad p99 speed-up over the faster SQL engine ("+sql.Engine+")", sql.Broad.P99/e.Broad.P99, targetBroadRatio, "×", false)
	}
}

func engineLabel(r Result) string {
	switch r.Engine {
	case "engine":
		return "incidentlib engine"
	case "sqlite":
		return "SQLite FTS5"
	case "postgres":
		return "PostgreSQL FTS"
	}
	return r.Engine
}

func ratioCell(rs []Result, n int, e Result, pick func(Result) float64) string {
	sql, ok := fasterSQL(rs, n, pick)
	if !ok || pick(e) <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f× (%s)", pick(sql)/pick(e), sql.Engine)
}

// fasterSQL returns the SQL engine with the lower figure at size n.
func fasterSQL(rs []Result, n int, pick func(Result) float64) (Result, bool) {
	var best Result
	found := false
	for _, r := range rs {
		if r.Cases != n || r.Engine == "engine" || pick(r) <= 0 {
			continue
		}
		if !found || pick(r) < pick(best) {
			best, found = r, true
		}
	}
	return best, found
}

func find(rs []Result, engine string, n int) (Result, bool) {
	for _, r := range rs {
		if r.Engine == engine && r.Cases == n {
			return r, true
		}
	}
	return Result{}, false
}

func sizesOf(rs []Result) []int {
	var out []int
	for _, r := range rs {
		if len(out) == 0 || out[len(out)-1] != r.Cases {
			out = append(out, r.Cases)
		}
	}
	return out
}

// dur prints milliseconds readably; zero is "–" (not measured).
func dur(msec float64) string {
	switch {
	case msec <= 0:
		return "–"
	case msec < 1:
		return fmt.Sprintf("%.0f µs", msec*1000)
	case msec < 100:
		return fmt.Sprintf("%.1f ms", msec)
	case msec < 10_000:
		return fmt.Sprintf("%.0f ms", msec)
	}
	return fmt.Sprintf("%.1f s", msec/1000)
}

func size(b int64) string {
	switch {
	case b <= 0:
		return "–"
	case b < 1<<20:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	case b < 1<<30:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
}
