package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// latencyBuckets are the upper bounds, in seconds, of the request-duration
// histogram.
var latencyBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

// metrics is the server's Prometheus registry: the request counts and
// latencies, the guards' figures, the library's own gauges, and the Go
// runtime and process collectors dashboards expect (go_*, process_*).
// The names of the incidentlib_* series are those of the hand-written
// exposition this replaced.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	mu     sync.Mutex
	gauges map[string]prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), gauges: map[string]prometheus.Gauge{}}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "incidentlib_http_requests_total", Help: "HTTP requests by part of the site and status.",
	}, []string{"group", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "incidentlib_http_request_duration_seconds", Help: "Time to answer a request.", Buckets: latencyBuckets,
	}, []string{"group"})
	started := time.Now()
	m.reg.MustRegister(m.requests, m.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "incidentlib_uptime_seconds", Help: "Seconds since the process started serving.",
		}, func() float64 { return time.Since(started).Seconds() }),
	)
	return m
}

func (m *metrics) observe(group string, status int, d time.Duration) {
	m.requests.WithLabelValues(group, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(group).Observe(d.Seconds())
}

// setGauge sets a gauge of the library's own (incidentlib_cases),
// registering it on first use.
func (m *metrics) setGauge(name, help string, v float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.gauges[name]
	if !ok {
		g = prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		if err := m.reg.Register(g); err != nil {
			return // a name taken by another collector: a programming error, kept off /metrics
		}
		m.gauges[name] = g
	}
	g.Set(v)
}

// registerGuard exposes the guards' figures, read at each scrape.
func (m *metrics) registerGuard(g *guard) {
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	cache := func(i int) func() float64 {
		return func() float64 {
			e, b, h, mi := g.cache.stats()
			return [4]float64{float64(e), float64(b), float64(h), float64(mi)}[i]
		}
	}
	m.reg.MustRegister(
		gauge("incidentlib_inflight_requests", "Requests being worked on (past the rate limit and cache).", func() float64 { return float64(g.inFlight.Load()) }),
		counter("incidentlib_rate_limited_total", "Requests refused with 429 by the per-client rate limits.", func() float64 { return float64(g.limited.Load()) }),
		counter("incidentlib_shed_total", "Requests refused with 503 by admission (every class).", func() float64 {
			var n uint64
			for _, a := range []*admission{g.expensive, g.write} {
				if a != nil {
					n += a.shed.Load()
				}
			}
			return float64(n)
		}),
		gauge("incidentlib_cache_entries", "Responses in the cache.", cache(0)),
		gauge("incidentlib_cache_bytes", "Memory held by the response cache, in bytes.", cache(1)),
		counter("incidentlib_cache_hits_total", "Requests answered from the response cache.", cache(2)),
		counter("incidentlib_cache_misses_total", "Cacheable requests the cache could not answer.", cache(3)),
	)
	for _, c := range []struct {
		name string
		a    *admission
	}{{"expensive", g.expensive}, {"write", g.write}} {
		a := c.a
		if a == nil {
			continue
		}
		p := "incidentlib_admission_" + c.name
		m.reg.MustRegister(
			gauge(p+"_in_use", "Slots of "+c.name+" work in use.", func() float64 { n, _ := a.stats(); return float64(n) }),
			gauge(p+"_queued", "Requests of "+c.name+" work waiting for a slot.", func() float64 { _, n := a.stats(); return float64(n) }),
			counter(p+"_admitted_total", "Requests of "+c.name+" work admitted.", func() float64 { return float64(a.admitted.Load()) }),
			counter(p+"_waited_total", "Requests of "+c.name+" work admitted after waiting in the queue.", func() float64 { return float64(a.waited.Load()) }),
			counter(p+"_shed_total", "Requests of "+c.name+" work refused with 503: the queue was full or no slot came free in time.", func() float64 { return float64(a.shed.Load()) }),
			counter(p+"_budget_held_total", "Times a request of "+c.name+" work was held in the queue because the class had used its share of slot time (sustained overload).", func() float64 { return float64(a.held.Load()) }),
		)
	}
}

// serveMetrics answers /metrics in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it).
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s.metricsHandler.ServeHTTP(w, r)
}
