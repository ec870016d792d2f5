package load

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// clientFrom is an HTTP client whose connections come from a loopback
// address of its own (127.0.0.N), so that the server tells the clients
// apart as it tells apart hosts.
func clientFrom(ip string, conns int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext:  d.DialContext,
			MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2, MaxConnsPerHost: conns * 2,
			DisableCompression: true,
		},
	}
}

// mcpCall is a search_incidents call for query.
func mcpCall(base, query string) *http.Request {
	return searchCall(base, map[string]any{"query": query})
}

// mcpParallel sends, from one agent, rounds of 8 search_incidents calls at
// once (as agents do), and counts those answered with results rather than
// refused (an HTTP error, a JSON-RPC error or a tool result with isError).
func (h *harness) mcpParallel(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "incidentlib-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := h.start(ctx, filepath.Join(dir, "data"))
	if err != nil {
		return err
	}
	defer s.stop()
	c := clientFrom("127.0.0.1", 8)
	queries := []string{"database failover", "dns outage", "certificate expired", "retry storm",
		"config push took down", "disk full", "memory leak", "bgp route leak"}
	const rounds = 20
	var answered, refused int
	st := &stats{byStatus: map[int]int{}}
	// A round every 500 ms: 16 calls a second, within the default rate
	// limit of 20 a second (bursts of 60), as an agent working through a
	// task sends them.
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for round := range rounds {
		if round > 0 {
			<-tick.C
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i, q := range queries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t := time.Now()
				resp, err := c.Do(mcpCall(s.base, fmt.Sprintf("%s %d", q, round*8+i)))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					refused++
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				st.lat = append(st.lat, time.Since(t))
				st.byStatus[resp.StatusCode]++
				if resp.StatusCode == 200 && strings.Contains(string(b), `"result"`) && !strings.Contains(string(b), `"isError":true`) {
					answered++
				} else {
					refused++
				}
			}()
		}
		wg.Wait()
	}
	fmt.Fprintf(h.out, "\n## mcp-parallel: one agent, %d rounds of 8 search_incidents calls at once (default limits)\n\n", rounds)
	fmt.Fprintf(h.out, "answered %d of %d, refused %d (HTTP %s); latency p50 %v, p99 %v, max %v\n", answered, rounds*8, refused, statusList2(st.byStatus),
		st.pct(0.5).Round(100*time.Microsecond), st.pct(0.99).Round(100*time.Microsecond), st.pct(1).Round(100*time.Microsecond))
	if refused > 0 {
		return fmt.Errorf("%d of %d parallel calls refused", refused, rounds*8)
	}
	return nil
}

// fair runs two trials against the default limits (the rate limit raised
// only as far as the first trial's rate needs):
//
//   - four clients, each from its own address, send uncached searches at
//     together half the measured search capacity: none should be refused;
//   - one client sends expensive queries (eight misspelled words) at 20/s,
//     within its rate limit, while another searches at 5/s: the second
//     should not be refused.
func (h *harness) fair(ctx context.Context) error {
	if h.searchCapacity == 0 {
		h.searchCapacity = 200
	}
	dir, err := os.MkdirTemp("", "incidentlib-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// Four clients at half capacity together. When an eighth of the
	// capacity is above the default per-address rate limit (20/s), the
	// server's limit is raised above it, so that the trial measures
	// admission, not the rate limit; it is printed with the results.
	per := h.searchCapacity / 2 / 4
	args := []string{}
	limit := "the default rate limit (20/s per address)"
	if per > 18 {
		rl := math.Ceil(per) + 10
		args = append(args, "--rate-limit", strconv.Itoa(int(rl)), "--rate-burst", strconv.Itoa(int(rl)))
		limit = fmt.Sprintf("--rate-limit %.0f (the default 20/s is below an eighth of the capacity)", rl)
	}
	s, err := h.start(ctx, filepath.Join(dir, "data"), args...)
	if err != nil {
		return err
	}
	defer s.stop()
	var n atomic.Int64
	var wg sync.WaitGroup
	results := make([]*stats, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clientFrom(fmt.Sprintf("127.0.0.%d", 2+i), 8)
			results[i] = openLoop(ctx, c, per, h.cfg.duration, 64, func() *http.Request {
				return get(s.base, mixPath(2, n.Add(1)))()
			})
		}()
	}
	wg.Wait()
	fmt.Fprintf(h.out, "\n## fair: four clients (own addresses) at %.1f uncached searches/s each (%.0f/s together, measured capacity %.0f/s), %v, %s\n\n",
		per, 4*per, h.searchCapacity, h.cfg.duration, limit)
	fmt.Fprintf(h.out, "| client | requests | statuses | refused %% | p50 | p99 |\n|---|---|---|---|---|---|\n")
	var refusedAll int
	for i, st := range results {
		admitted, _ := st.split()
		ref := st.n - st.byStatus[200] + st.errs
		refusedAll += ref
		fmt.Fprintf(h.out, "| 127.0.0.%d | %d | %s | %.1f | %v | %v |\n", 2+i, st.n, statusList2(st.byStatus), pctOf(ref, st.n+st.errs),
			admitted.pct(0.5).Round(100*time.Microsecond), admitted.pct(0.99).Round(100*time.Microsecond))
	}
	// A greedy client within its rate limit beside a modest one.
	misspelled := "databse failovr replicaton timout certficate expird netwrk partiton"
	var greedy, modest *stats
	wg.Add(2)
	go func() {
		defer wg.Done()
		var k atomic.Int64
		greedy = openLoop(ctx, clientFrom("127.0.0.10", 8), 20, h.cfg.duration, 64, func() *http.Request {
			return get(s.base, "/api/v1/cases?q="+url.QueryEscape(misspelled)+fmt.Sprintf("&per_page=%d", 20+k.Add(1)%80))()
		})
	}()
	go func() {
		defer wg.Done()
		modest = openLoop(ctx, clientFrom("127.0.0.11", 8), 5, h.cfg.duration, 64, func() *http.Request {
			return get(s.base, mixPath(3, n.Add(1)))()
		})
	}()
	wg.Wait()
	ga, _ := greedy.split()
	ma, _ := modest.split()
	fmt.Fprintf(h.out, "\ngreedy client (8 misspelled words at 20/s): %d requests, %s, p99 %v; modest client (5/s) beside it: %d requests, %s, refused %.1f%%, p99 %v\n",
		greedy.n, statusList2(greedy.byStatus), ga.pct(0.99).Round(100*time.Microsecond),
		modest.n, statusList2(modest.byStatus), pctOf(modest.n-modest.byStatus[200]+modest.errs, modest.n+modest.errs), ma.pct(0.99).Round(100*time.Microsecond))
	if refusedAll > 0 {
		return fmt.Errorf("%d searches refused at half capacity", refusedAll)
	}
	return nil
}

func pctOf(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
