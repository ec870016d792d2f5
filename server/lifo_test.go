package server

import (
	"context"
	"testing"
	"time"
)

// queueTwo holds the one slot for client "a" and queues two more of its
// requests, first then second; it returns the slot's release and the
// channels that say which waiter got a slot (nil: refused).
func queueTwo(t *testing.T, a *admission) (release func(), first, second chan func()) {
	t.Helper()
	release = a.acquire(context.Background(), "a")
	if release == nil {
		t.Fatal("the free slot was refused")
	}
	first, second = make(chan func(), 1), make(chan func(), 1)
	go func() { first <- a.acquire(context.Background(), "a") }()
	waitQueued(t, a, 1)
	go func() { second <- a.acquire(context.Background(), "a") }()
	waitQueued(t, a, 2)
	return release, first, second
}

func waitQueued(t *testing.T, a *admission, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, q := a.stats(); q == n {
			return
		}
	}
	t.Fatalf("the queue never held %d", n)
}

func granted(t *testing.T, ch chan func()) bool {
	t.Helper()
	select {
	case r := <-ch:
		if r != nil {
			r()
		}
		return r != nil
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
		return false
	}
}

// While the class keeps up, a freed slot goes to the client's oldest
// waiter.
func TestAdmissionInOrderWhileKeepingUp(t *testing.T) {
	a := newAdmission(ClassLimits{Slots: 1, MaxWait: 5 * time.Second, ShortWait: 5 * time.Second,
		OverloadAfter: time.Hour, ShedMemory: time.Hour, MaxQueue: 8, MaxQueuedPerClient: 2})
	release, first, second := queueTwo(t, a)
	release()
	if !granted(t, first) {
		t.Fatal("the oldest waiter was refused")
	}
	if !granted(t, second) {
		t.Fatal("the second waiter was refused")
	}
}

// Once the class has refused a request it is overloaded, and a freed slot
// goes to the newest waiter (issue 22: served in order, every admitted
// search had waited nearly the whole wait, p99 150–250 ms at twice the
// capacity; newest first, 23 ms).
func TestAdmissionNewestFirstUnderOverload(t *testing.T) {
	a := newAdmission(ClassLimits{Slots: 1, MaxWait: 5 * time.Second, ShortWait: 5 * time.Second,
		OverloadAfter: time.Hour, ShedMemory: time.Hour, MaxQueue: 8, MaxQueuedPerClient: 2})
	release, first, second := queueTwo(t, a)
	if r := a.acquire(context.Background(), "a"); r != nil {
		t.Fatal("a third waiter of one client was queued past MaxQueuedPerClient")
	}
	release()
	if !granted(t, second) {
		t.Fatal("the newest waiter was refused")
	}
	select {
	case r := <-first:
		t.Fatalf("the oldest waiter was answered (%v) before the newest gave its slot back", r != nil)
	default:
	}
	if !granted(t, first) {
		t.Fatal("the oldest waiter was refused although the slot came free")
	}
}

// After a refusal, a client with requests already running waits only the
// short wait, even while the queue keeps emptying: shedding empties it,
// and the long wait after each emptying kept admitted searches' p99 near
// the long wait at twice the capacity (issue 22).
func TestAdmissionRefusalMeansOverload(t *testing.T) {
	lim := ClassLimits{Slots: 1, MaxWait: 3 * time.Second, ShortWait: 20 * time.Millisecond,
		OverloadAfter: time.Hour, ShedMemory: time.Hour, MaxQueue: 8, MaxQueuedPerClient: 1}
	a := newAdmission(lim)
	release := a.acquire(context.Background(), "a")
	// Nothing refused yet: the client's next request may wait the long
	// wait, and is served when the slot comes free after 100 ms.
	go func() { time.Sleep(100 * time.Millisecond); release() }()
	r := a.acquire(context.Background(), "a")
	if r == nil {
		t.Fatal("refused before any overload")
	}
	// Now a refusal: the queue holds one of the client's requests, and a
	// second is turned away at once. The slot then goes to the waiter.
	ch := make(chan func(), 1)
	go func() { ch <- a.acquire(context.Background(), "a") }()
	waitQueued(t, a, 1)
	if a.acquire(context.Background(), "a") != nil {
		t.Fatal("queued past MaxQueuedPerClient")
	}
	r()
	select {
	case r = <-ch:
		if r == nil {
			t.Fatal("the waiter was refused although the slot came free")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was never answered")
	}
	// The queue is empty again, the slot still held: the next request of
	// the same client waits the short wait, not three seconds.
	start := time.Now()
	if a.acquire(context.Background(), "a") != nil {
		t.Fatal("admitted with the slot held")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("after a refusal a busy client's request waited %v before it was refused; want about %v", took, lim.ShortWait)
	}
	r()
}
