package server

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"
)

// latencyBuckets are the upper bounds, in seconds, of the request-duration
// histogram.
var latencyBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

// metrics keeps request counts and latencies in the Prometheus text format's
// terms, without a client library.
type metrics struct {
	mu       sync.Mutex
	requests map[[2]string]uint64 // {group, status} → count
	hist     map[string]*histogram
	gauges   map[string]gauge
	started  time.Time
}

type histogram struct {
	counts []uint64 // per bucket, cumulative at render time
	sum    float64
	n      uint64
}

// gauge is a single value: a gauge, or a counter when counter is set (a
// count that only rises, named *_total, whose rate is what one alerts on).
type gauge struct {
	help    string
	value   float64
	counter bool
}

func newMetrics() *metrics {
	return &metrics{requests: map[[2]string]uint64{}, hist: map[string]*histogram{}, gauges: map[string]gauge{}, started: time.Now()}
}

func (m *metrics) observe(group string, status int, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[[2]string{group, strconv.Itoa(status)}]++
	h := m.hist[group]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(latencyBuckets))}
		m.hist[group] = h
	}
	sec := d.Seconds()
	for i, b := range latencyBuckets {
		if sec <= b {
			h.counts[i]++
			break
		}
	}
	h.sum += sec
	h.n++
}

func (m *metrics) setGauge(name, help string, v float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gauges[name] = gauge{help: help, value: v}
}

func (m *metrics) setCounter(name, help string, v uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gauges[name] = gauge{help: help, value: float64(v), counter: true}
}

func (m *metrics) serve(w http.ResponseWriter, _ *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintln(w, "# HELP incidentlib_http_requests_total HTTP requests by part of the site and status.")
	fmt.Fprintln(w, "# TYPE incidentlib_http_requests_total counter")
	keys := make([][2]string, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		fmt.Fprintf(w, "incidentlib_http_requests_total{group=%q,status=%q} %d\n", k[0], k[1], m.requests[k])
	}
	fmt.Fprintln(w, "# HELP incidentlib_http_request_duration_seconds Time to answer a request.")
	fmt.Fprintln(w, "# TYPE incidentlib_http_request_duration_seconds histogram")
	groups := make([]string, 0, len(m.hist))
	for g := range m.hist {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		h := m.hist[g]
		var cum uint64
		for i, b := range latencyBuckets {
			cum += h.counts[i]
			fmt.Fprintf(w, "incidentlib_http_request_duration_seconds_bucket{group=%q,le=%q} %d\n", g, strconv.FormatFloat(b, 'g', -1, 64), cum)
		}
		fmt.Fprintf(w, "incidentlib_http_request_duration_seconds_bucket{group=%q,le=\"+Inf\"} %d\n", g, h.n)
		fmt.Fprintf(w, "incidentlib_http_request_duration_seconds_sum{group=%q} %g\n", g, h.sum)
		fmt.Fprintf(w, "incidentlib_http_request_duration_seconds_count{group=%q} %d\n", g, h.n)
	}
	names := make([]string, 0, len(m.gauges))
	for n := range m.gauges {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		g := m.gauges[n]
		typ := "gauge"
		if g.counter {
			typ = "counter"
		}
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %g\n", n, g.help, n, typ, n, g.value)
	}
	fmt.Fprintf(w, "# HELP incidentlib_uptime_seconds Seconds since the process started serving.\n# TYPE incidentlib_uptime_seconds gauge\nincidentlib_uptime_seconds %g\n", time.Since(m.started).Seconds())
}

// serveMetrics adds the guards' figures to the request metrics.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	entries, bytes, hits, misses := s.guard.cache.stats()
	s.metrics.setGauge("incidentlib_inflight_requests", "Requests being worked on (past the rate limit and cache).", float64(s.guard.inFlight.Load()))
	var shed uint64
	for _, c := range []struct {
		name string
		a    *admission
	}{{"expensive", s.guard.expensive}, {"write", s.guard.write}} {
		if c.a == nil {
			continue
		}
		inUse, queued := c.a.stats()
		shed += c.a.shed.Load()
		s.metrics.setGauge("incidentlib_admission_"+c.name+"_in_use", "Slots of "+c.name+" work in use.", float64(inUse))
		s.metrics.setGauge("incidentlib_admission_"+c.name+"_queued", "Requests of "+c.name+" work waiting for a slot.", float64(queued))
		s.metrics.setCounter("incidentlib_admission_"+c.name+"_admitted_total", "Requests of "+c.name+" work admitted.", c.a.admitted.Load())
		s.metrics.setCounter("incidentlib_admission_"+c.name+"_waited_total", "Requests of "+c.name+" work admitted after waiting in the queue.", c.a.waited.Load())
		s.metrics.setCounter("incidentlib_admission_"+c.name+"_shed_total", "Requests of "+c.name+" work refused with 503: the queue was full or no slot came free in time.", c.a.shed.Load())
	}
	s.metrics.setCounter("incidentlib_shed_total", "Requests refused with 503 by admission (every class).", shed)
	s.metrics.setCounter("incidentlib_rate_limited_total", "Requests refused with 429 by the per-client rate limits.", s.guard.limited.Load())
	s.metrics.setGauge("incidentlib_cache_entries", "Responses in the cache.", float64(entries))
	s.metrics.setGauge("incidentlib_cache_bytes", "Memory held by the response cache, in bytes.", float64(bytes))
	s.metrics.setCounter("incidentlib_cache_hits_total", "Requests answered from the response cache.", hits)
	s.metrics.setCounter("incidentlib_cache_misses_total", "Cacheable requests the cache could not answer.", misses)
	s.metrics.serve(w, r)
}
