package httpx

import (
	"container/list"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultMaxClients bounds how many clients a RateLimiter remembers. At
// about a hundred bytes each, the table stays near a megabyte however many
// addresses send requests.
const DefaultMaxClients = 10000

// RateLimiter is a token bucket per client: each client may make burst
// requests at once and rate requests per second after that. The bucket is
// golang.org/x/time/rate's; what is ours is the table of clients, which
// that package does not have: it remembers at most MaxClients clients, and
// when full it forgets the one seen longest ago.
// Forgetting a client only ever gives it a fresh bucket, so eviction can
// make the limiter more lenient, never wrongly strict.
//
// It is safe for concurrent use. Set the exported fields before the first
// request.
type RateLimiter struct {
	// MaxClients bounds the table; 0 means DefaultMaxClients.
	MaxClients int
	// Key names the client of a request; nil means ClientKey.
	Key func(*http.Request) string

	rate  float64 // tokens per second
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	clients map[string]*list.Element // of *bucket
	lru     *list.List               // front: most recently seen
}

type bucket struct {
	key  string
	lim  *rate.Limiter
	last time.Time // last request, for eviction
}

// NewRateLimiter returns a limiter allowing rate requests per second per
// client, with bursts of up to burst requests. A rate of zero or less (or a
// nil limiter) limits nothing, so a configuration can turn it off.
func NewRateLimiter(rate float64, burst int) *RateLimiter {
	if burst < 1 {
		burst = 1
	}
	return &RateLimiter{
		rate:    rate,
		burst:   float64(burst),
		now:     time.Now,
		clients: map[string]*list.Element{},
		lru:     list.New(),
	}
}

// Wrap limits the requests that reach next. A request over the limit gets
// a Retry-After header (whole seconds) and is handed to onLimit, which
// writes the refusal in its protocol's shape; a nil onLimit answers a plain
// 429 Too Many Requests.
func (l *RateLimiter) Wrap(next, onLimit http.Handler) http.Handler {
	if l == nil || l.rate <= 0 {
		return next
	}
	if onLimit == nil {
		onLimit = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "Too many requests; retry later.", http.StatusTooManyRequests)
		})
	}
	key := l.Key
	if key == nil {
		key = ClientKey
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, wait := l.Allow(key(r))
		if !ok {
			secs := int(math.Ceil(wait.Seconds()))
			if secs < 1 {
				secs = 1
			}
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			onLimit.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Allow takes a token from key's bucket. When none is left it reports false
// and how long until the next one.
func (l *RateLimiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	if l == nil || l.rate <= 0 {
		return true, 0
	}
	// The clock is read under the lock: read before it, a request that
	// waited for the lock would carry an older time than the one before
	// it, and the bucket would go back in time.
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var b *bucket
	if e, found := l.clients[key]; found {
		l.lru.MoveToFront(e)
		b = e.Value.(*bucket)
		if now.After(b.last) {
			b.last = now
		}
	} else {
		b = &bucket{key: key, lim: rate.NewLimiter(rate.Limit(l.rate), int(l.burst)), last: now}
		l.clients[key] = l.lru.PushFront(b)
		l.evict(now)
	}
	// A clock that steps back takes nothing away and adds nothing: the
	// limiter reads a time before its last as its last.
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// evict drops clients whose bucket has refilled (they are no different from
// a client never seen), then the least recently seen ones over the bound.
func (l *RateLimiter) evict(now time.Time) {
	max := l.MaxClients
	if max <= 0 {
		max = DefaultMaxClients
	}
	refill := time.Duration(l.burst / l.rate * float64(time.Second))
	for e := l.lru.Back(); e != nil; e = l.lru.Back() {
		b := e.Value.(*bucket)
		if l.lru.Len() <= max && now.Sub(b.last) < refill {
			return
		}
		l.lru.Remove(e)
		delete(l.clients, b.key)
	}
}

// Len reports how many clients the limiter remembers.
func (l *RateLimiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}

// ClientIP returns the address of the peer that sent r, without its port.
// It trusts no forwarding header (X-Forwarded-For is set by whoever sends
// the request); behind a reverse proxy, give RateLimiter a Key that reads
// the header that proxy sets.
func ClientIP(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
			return a.Unmap().String()
		}
		return r.RemoteAddr
	}
	return ap.Addr().Unmap().String()
}

// ClientKey is the rate-limiting key of a request: the client's IPv4
// address, or the /64 network of an IPv6 address, since one host commonly
// holds a whole /64 and could otherwise rotate through it.
func ClientKey(r *http.Request) string {
	ip := ClientIP(r)
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Is6() {
		return ip
	}
	p, err := a.WithZone("").Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}
