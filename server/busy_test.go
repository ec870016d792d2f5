package server

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Kept busy without a pause, a class with a slot-time budget holds its
// slot no more than its share of the time: the rest is left to the
// processors for refusing, cheap requests and accepting connections
// (issue 22: at twice the search capacity, cheap requests waited 2.7 s
// for a processor the admitted searches kept saturated).
func TestBusyBudgetLeavesHeadroomUnderSustainedLoad(t *testing.T) {
	a := newAdmission(ClassLimits{Slots: 1, MaxWait: 2 * time.Second, MaxQueue: 64, MaxBusy: 0.5, BusyBurst: 10 * time.Millisecond})
	const hold = 5 * time.Millisecond
	var mu sync.Mutex
	var busy time.Duration
	start := time.Now()
	var wg sync.WaitGroup
	for range 4 { // four workers keep the queue full
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < 400*time.Millisecond {
				release := a.acquire(context.Background(), "192.0.2.1")
				if release == nil {
					t.Error("refused with a wait of two seconds")
					return
				}
				t0 := time.Now()
				time.Sleep(hold)
				mu.Lock()
				busy += time.Since(t0)
				mu.Unlock()
				release()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	share := float64(busy) / float64(elapsed)
	// The budget allows 0.5 of the time plus the 10 ms saved at start.
	if most := 0.5 + float64(10*time.Millisecond)/float64(elapsed) + 0.05; share > most {
		t.Errorf("slot busy %.2f of %v, want at most %.2f", share, elapsed.Round(time.Millisecond), most)
	}
	if a.held.Load() == 0 {
		t.Error("the budget never held a request back")
	}
	if share < 0.2 {
		t.Errorf("slot busy only %.2f of the time: the held requests were not dispatched when the budget came back", share)
	}
}

// Below sustained overload the budget changes nothing: requests with
// pauses between them never wait.
func TestBusyBudgetIdleChangesNothing(t *testing.T) {
	a := newAdmission(DefaultExpensive(1))
	for range 20 {
		release := a.acquire(context.Background(), "192.0.2.1")
		if release == nil {
			t.Fatal("refused on an idle server")
		}
		time.Sleep(2 * time.Millisecond)
		release()
		time.Sleep(3 * time.Millisecond)
	}
	if n := a.waited.Load(); n != 0 {
		t.Errorf("%d requests waited at 40%% occupancy", n)
	}
	if n := a.held.Load(); n != 0 {
		t.Errorf("the budget held %d requests at 40%% occupancy", n)
	}
}

// A burst is never held: eight requests of 20 ms on one slot, after an
// idle spell, all start as soon as the one before ends.
func TestBusyBudgetLetsABurstThrough(t *testing.T) {
	a := newAdmission(DefaultExpensive(1))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release := a.acquire(context.Background(), "192.0.2.1")
			if release == nil {
				t.Error("a burst's request was refused")
				return
			}
			time.Sleep(20 * time.Millisecond)
			release()
		}()
	}
	wg.Wait()
	if n := a.held.Load(); n != 0 {
		t.Errorf("the budget held %d of a burst's requests", n)
	}
}
