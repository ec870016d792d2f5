package main

import (
	"runtime"
	"testing"
)

// serve runs spare Go processors beyond the processors it may use, so
// that cheap requests are noticed while every processor searches; the
// bound on expensive work stays one per processor (issue 22).
func TestServeSparesProcessorsButBoundsSearchesByProcessors(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })

	t.Setenv("GOMAXPROCS", "")
	spareProcessors()
	if got, want := runtime.GOMAXPROCS(0), processors+spareProcs; got != want {
		t.Errorf("GOMAXPROCS after spareProcessors = %d, want %d (%d processors + %d)", got, want, processors, spareProcs)
	}
	if got := defaultMaxExpensive(); got != max(1, processors) {
		t.Errorf("--max-inflight default = %d with GOMAXPROCS %d, want one per processor (%d)", got, runtime.GOMAXPROCS(0), processors)
	}

	// An operator's GOMAXPROCS is kept.
	runtime.GOMAXPROCS(was)
	t.Setenv("GOMAXPROCS", "1")
	spareProcessors()
	if got := runtime.GOMAXPROCS(0); got != was {
		t.Errorf("with GOMAXPROCS set, spareProcessors changed it from %d to %d", was, got)
	}
}
