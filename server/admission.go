package server

import (
	"context"
	"errors"
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
	// class is overloaded, from a client that already has requests
	// running or waiting: under sustained overload a long wait would only
	// turn overload into latency for every admitted request, so the
	// clients causing it wait briefly and are refused. A client with
	// nothing running or waiting still gets MaxWait: it is next in line at
	// the fair dispatch, so it waits about one request. The class is
	// overloaded while the queue has not been empty for OverloadAfter, and
	// for ShedMemory after it last refused a request: shedding empties the
	// queue again and again, and without that memory each emptying would
	// give the next arrivals the long wait (issue 22: admitted searches'
	// p99 stayed near MaxWait at twice the capacity).
	ShortWait     time.Duration
	OverloadAfter time.Duration
	ShedMemory    time.Duration
	// MaxQueue bounds the requests waiting, MaxQueuedPerClient those of
	// one client, so one client cannot fill the queue.
	MaxQueue           int
	MaxQueuedPerClient int
	// MaxBusy, when above zero, is the share of its slots' time the class
	// may hold when it is kept busy for long: a budget of slot time earned
	// at MaxBusy × Slots per second (up to BusyBurst saved), spent by each
	// request for as long as it holds its slot. A request finds the budget
	// spent waits in the queue as for a slot. With slots as many as the
	// processors, admitted searches alone would otherwise saturate them
	// under overload, leaving no processor time to refuse the rest, to
	// answer cheap requests or even to accept connections: the kernel's
	// queues grow and every latency with them. Below sustained overload
	// the budget is never spent and changes nothing.
	MaxBusy   float64
	BusyBurst time.Duration
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
	lastShed  time.Time // when a request was last refused
	seq       uint64    // grants so far, to order clients by last service
	clients   map[string]*admitClient

	// The slot-time budget (MaxBusy): what is left, when it was last
	// brought up to date, and whether a dispatch is armed for when it is
	// positive again.
	budget   time.Duration
	budgetAt time.Time
	retry    bool

	admitted atomic.Uint64 // taken a slot (at once or after waiting)
	waited   atomic.Uint64 // of those, after waiting in the queue
	shed     atomic.Uint64 // refused: queue full or wait too long
	held     atomic.Uint64 // times the slot-time budget held a request back
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
	if l.MaxBusy > 0 && l.BusyBurst <= 0 {
		l.BusyBurst = 200 * time.Millisecond
	}
	now := time.Now()
	return &admission{lim: l, now: time.Now, clients: map[string]*admitClient{}, lastEmpty: now,
		budget: time.Duration(float64(l.BusyBurst) * float64(max(1, l.Slots))), budgetAt: now}
}

// earnLocked brings the slot-time budget up to now.
func (a *admission) earnLocked(now time.Time) {
	rate := a.lim.MaxBusy * float64(a.lim.Slots)
	a.budget += time.Duration(float64(now.Sub(a.budgetAt)) * rate)
	if most := time.Duration(float64(a.lim.BusyBurst) * float64(a.lim.Slots)); a.budget > most {
		a.budget = most
	}
	a.budgetAt = now
}

// spentLocked reports whether the slot-time budget holds new work back;
// when it does, a dispatch is armed for when the budget is positive
// again, so that the waiters are served then even if nothing else
// happens.
func (a *admission) spentLocked() bool {
	if a.lim.MaxBusy <= 0 {
		return false
	}
	a.earnLocked(a.now())
	if a.budget > 0 {
		return false
	}
	a.held.Add(1)
	if !a.retry {
		a.retry = true
		after := time.Duration(float64(-a.budget)/(a.lim.MaxBusy*float64(a.lim.Slots))) + 100*time.Microsecond
		time.AfterFunc(after, func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.retry = false
			a.dispatchLocked()
		})
	}
	return true
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
	if a.queued == 0 && a.inUse < a.lim.Slots && c.inFlight < a.lim.MaxPerClient && !a.spentLocked() {
		a.grantLocked(c)
		a.mu.Unlock()
		a.admitted.Add(1)
		return a.releaser(client)
	}
	if a.queued >= a.lim.MaxQueue || len(c.waiters) >= a.lim.MaxQueuedPerClient {
		a.lastShed = a.now()
		a.forgetLocked(client, c)
		a.mu.Unlock()
		a.shed.Add(1)
		return nil
	}
	now := a.now()
	wait := a.lim.MaxWait
	if a.queued == 0 {
		a.lastEmpty = now
	}
	if a.overloadedLocked(now) && (c.inFlight > 0 || len(c.waiters) > 0) {
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
		if !errors.Is(ctx.Err(), context.Canceled) {
			a.lastShed = a.now()
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

// overloadedLocked reports whether the class is under sustained
// overload: its queue has not been empty for OverloadAfter, or it refused
// a request within ShedMemory.
func (a *admission) overloadedLocked(now time.Time) bool {
	if a.lim.OverloadAfter <= 0 {
		return false
	}
	if a.queued > 0 && now.Sub(a.lastEmpty) > a.lim.OverloadAfter {
		return true
	}
	return !a.lastShed.IsZero() && now.Sub(a.lastShed) < a.lim.ShedMemory
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
	start := a.now()
	return func() { once.Do(func() { a.release(client, start) }) }
}

func (a *admission) release(client string, start time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lim.MaxBusy > 0 {
		now := a.now()
		a.earnLocked(now)
		a.budget -= now.Sub(start)
	}
	a.inUse--
	if c := a.clients[client]; c != nil {
		c.inFlight--
		a.forgetLocked(client, c)
	}
	a.dispatchLocked()
}

// dispatchLocked hands free slots to waiters, fairly.
func (a *admission) dispatchLocked() {
	for a.inUse < a.lim.Slots && a.queued > 0 && !a.spentLocked() {
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
		// In order while the class keeps up; newest first under overload
		// (adaptive LIFO): the oldest waiters are the ones that will
		// time out anyway, and serving them first would make every
		// admitted request wait nearly the whole wait.
		var w *waiter
		if a.overloadedLocked(a.now()) {
			w = best.waiters[len(best.waiters)-1]
			best.waiters = best.waiters[:len(best.waiters)-1]
		} else {
			w = best.waiters[0]
			best.waiters = best.waiters[1:]
		}
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
