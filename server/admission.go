package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// ClassLimits configures the admission of one cost class of requests.
// Zero Slots turns the class's bound off (every request is admitted).
type ClassLimits struct {
	// Slots is how many requests of the class are worked on at once.
	Slots int
	// MaxPerClient is how many of them one client may hold; 0 means all.
	// Below Slots it keeps a slot for the other clients: one client's
	// slow queries (a second each) cannot make everyone else wait for
	// them. A client at its share waits, even with a slot free.
	MaxPerClient int
	// MaxWait is how long a request may wait for a slot before it is
	// refused with 503. A burst (an agent's eight parallel tool calls) is
	// absorbed by the wait; sustained overload is not (see ShortWait).
	MaxWait time.Duration
	// ShortWait replaces MaxWait for a request that arrives while the
	// queue has not been empty for OverloadAfter, from a client that
	// already has requests running or waiting: under sustained overload a
	// long wait would only turn overload into latency for every admitted
	// request, so the clients causing it wait briefly and are refused. A
	// client with nothing running or waiting still gets MaxWait: it is
	// next in line at the fair dispatch, so it waits about one request.
	ShortWait     time.Duration
	OverloadAfter time.Duration
	// MaxQueue bounds the requests waiting, MaxQueuedPerClient those of
	// one client, so one client cannot fill the queue.
	MaxQueue           int
	MaxQueuedPerClient int
}

// admission is a bounded, fair wait queue in front of a fixed number of
// slots. A request takes a free slot at once when nobody waits and its
// client holds less than its share; otherwise it joins the queue. When a slot comes free it goes to the waiting client
// with the fewest requests in flight, and among those to the one served
// longest ago: a client with eight queued searches gets every other slot
// when another client waits, never all eight first.
type admission struct {
	lim ClassLimits
	now func() time.Time

	mu        sync.Mutex
	inUse     int
	queued    int
	lastEmpty time.Time // when the queue was last empty
	seq       uint64    // grants so far, to order clients by last service
	clients   map[string]*admitClient

	admitted atomic.Uint64 // taken a slot (at once or after waiting)
	waited   atomic.Uint64 // of those, after waiting in the queue
	shed     atomic.Uint64 // refused: queue full or wait too long
}

type admitClient struct {
	inFlight  int
	lastGrant uint64
	waiters   []*waiter
}

type waiter struct {
	ch      chan struct{}
	granted bool
}

func newAdmission(l ClassLimits) *admission {
	if l.MaxQueue <= 0 {
		l.MaxQueue = 64
	}
	if l.MaxQueuedPerClient <= 0 || l.MaxQueuedPerClient > l.MaxQueue {
		l.MaxQueuedPerClient = l.MaxQueue
	}
	if l.MaxPerClient <= 0 || l.MaxPerClient > l.Slots {
		l.MaxPerClient = l.Slots
	}
	if l.ShortWait <= 0 || l.ShortWait > l.MaxWait {
		l.ShortWait = l.MaxWait
	}
	return &admission{lim: l, now: time.Now, clients: map[string]*admitClient{}, lastEmpty: time.Now()}
}

// acquire takes a slot for client, waiting as the limits allow. It returns
// the function that gives the slot back, or nil when the request is
// refused (or its context ended while it waited).
func (a *admission) acquire(ctx context.Context, client string) (release func()) {
	if a == nil || a.lim.Slots <= 0 {
		return func() {}
	}
	a.mu.Lock()
	c := a.clients[client]
	if c == nil {
		c = &admitClient{}
		a.clients[client] = c
	}
	if a.queued == 0 && a.inUse < a.lim.Slots && c.inFlight < a.lim.MaxPerClient {
		a.grantLocked(c)
		a.mu.Unlock()
		a.admitted.Add(1)
		return a.releaser(client)
	}
	if a.queued >= a.lim.MaxQueue || len(c.waiters) >= a.lim.MaxQueuedPerClient {
		a.forgetLocked(client, c)
		a.mu.Unlock()
		a.shed.Add(1)
		return nil
	}
	now := a.now()
	wait := a.lim.MaxWait
	if a.queued == 0 {
		a.lastEmpty = now
	} else if a.lim.OverloadAfter > 0 && now.Sub(a.lastEmpty) > a.lim.OverloadAfter && (c.inFlight > 0 || len(c.waiters) > 0) {
		wait = a.lim.ShortWait
	}
	w := &waiter{ch: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	a.queued++
	// A slot may be free that the clients waiting ahead may not take (they
	// hold their share): it may be this one's.
	a.dispatchLocked()
	a.mu.Unlock()

	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-w.ch:
	case <-t.C:
	case <-ctx.Done():
	}
	a.mu.Lock()
	if !w.granted {
		// Timed out or gone: leave the queue.
		for i, x := range c.waiters {
			if x == w {
				c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
				break
			}
		}
		a.queued--
		if a.queued == 0 {
			a.lastEmpty = a.now()
		}
		a.forgetLocked(client, c)
		a.mu.Unlock()
		a.shed.Add(1)
		return nil
	}
	a.mu.Unlock()
	a.admitted.Add(1)
	a.waited.Add(1)
	return a.releaser(client)
}

func (a *admission) grantLocked(c *admitClient) {
	a.inUse++
	c.inFlight++
	a.seq++
	c.lastGrant = a.seq
}

// forgetLocked drops a client with nothing in flight and nothing waiting.
func (a *admission) forgetLocked(key string, c *admitClient) {
	if c.inFlight == 0 && len(c.waiters) == 0 {
		delete(a.clients, key)
	}
}

func (a *admission) releaser(client string) func() {
	var once sync.Once
	return func() { once.Do(func() { a.release(client) }) }
}

func (a *admission) release(client string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inUse--
	if c := a.clients[client]; c != nil {
		c.inFlight--
		a.forgetLocked(client, c)
	}
	a.dispatchLocked()
}

// dispatchLocked hands free slots to waiters, fairly.
func (a *admission) dispatchLocked() {
	for a.inUse < a.lim.Slots && a.queued > 0 {
		var best *admitClient
		for _, c := range a.clients {
			if len(c.waiters) == 0 || c.inFlight >= a.lim.MaxPerClient {
				continue
			}
			if best == nil || c.inFlight < best.inFlight || (c.inFlight == best.inFlight && c.lastGrant < best.lastGrant) {
				best = c
			}
		}
		if best == nil {
			return
		}
		w := best.waiters[0]
		best.waiters = best.waiters[1:]
		a.queued--
		if a.queued == 0 {
			a.lastEmpty = a.now()
		}
		w.granted = true
		a.grantLocked(best)
		close(w.ch)
	}
}

// stats reports the slots in use and the requests waiting.
func (a *admission) stats() (inUse, queued int) {
	if a == nil {
		return 0, 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inUse, a.queued
}
