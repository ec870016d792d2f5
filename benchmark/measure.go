package benchmark

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Latencies summarises the timings of one kind of query.
type Latencies struct {
	N        int     `json:"n"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	Mean     float64 `json:"mean_ms"`
	AvgTotal float64 `json:"avg_total"` // mean result-set size (searches) or results (similar)
}

// Result is what one engine measured at one corpus size. Durations are in
// milliseconds and sizes in bytes; zero means not measured.
type Result struct {
	Engine     string    `json:"engine"`
	Cases      int       `json:"cases"`
	BuildMS    float64   `json:"build_ms"`
	IndexBytes int64     `json:"index_bytes"`
	RestartMS  float64   `json:"restart_ms"`
	Broad      Latencies `json:"broad"`
	Narrow     Latencies `json:"narrow"`
	Similar    Latencies `json:"similar"`
	Question   Latencies `json:"question"` // the engine only
	// CorpusRSS is the process's resident memory with the generated corpus
	// alone in memory, before the engine under test starts.
	CorpusRSS int64 `json:"corpus_rss"`
	// BuildRSS and ServeRSS are peak resident memory while building and
	// while restarting and answering queries.
	BuildRSS int64 `json:"build_rss"`
	ServeRSS int64 `json:"serve_rss"`
	// RSSNote says whose memory the RSS figures are, when not the
	// process's own.
	RSSNote string `json:"rss_note,omitempty"`
}

// timeQueries runs each query once untimed for warm-up (at most warm of
// them), then every query once, timed, one after another.
func timeQueries[T any](ctx context.Context, qs []T, warm int, run func(context.Context, T) (int, error)) (Latencies, error) {
	for _, q := range qs[:min(warm, len(qs))] {
		if _, err := run(ctx, q); err != nil {
			return Latencies{}, err
		}
	}
	ds := make([]time.Duration, 0, len(qs))
	total := 0
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return Latencies{}, err
		}
		start := time.Now()
		n, err := run(ctx, q)
		ds = append(ds, time.Since(start))
		if err != nil {
			return Latencies{}, fmt.Errorf("query %v: %w", q, err)
		}
		total += n
	}
	return summarize(ds, total), nil
}

func summarize(ds []time.Duration, total int) Latencies {
	if len(ds) == 0 {
		return Latencies{}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return Latencies{
		N:        len(ds),
		P50:      ms(percentile(ds, 0.50)),
		P99:      ms(percentile(ds, 0.99)),
		Mean:     ms(sum / time.Duration(len(ds))),
		AvgTotal: float64(total) / float64(len(ds)),
	}
}

// percentile uses the nearest-rank method on sorted durations: the p99 of
// 100 samples is the 99th, not an interpolation.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(p*float64(len(sorted))+0.999999) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// procStatus reads a "kB" field (VmHWM, VmRSS) of /proc/PID/status in
// bytes; pid 0 means this process. It returns 0 where /proc is missing.
func procStatus(pid int, field string) int64 {
	path := "/proc/self/status"
	if pid != 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/status"
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb * 1024
	}
	return 0
}

// settle returns freed memory to the system and resets the process's
// peak-RSS mark to its current RSS (Linux clear_refs "5"), so that the
// next VmHWM reading covers only what runs after it. It returns the RSS
// it settled at.
func settle() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return procStatus(0, "VmRSS")
}

// dirSize adds up the sizes of the regular files under path.
func dirSize(path string) (int64, error) {
	var n int64
	err := filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}
