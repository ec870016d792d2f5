package server

import "runtime"

// runNiced runs f on an OS thread of its own, with the thread's
// scheduling priority lowered by nice where the system allows it
// (lowerPriority), and returns when f does. A panic in f is raised again
// in the caller, so that the HTTP server's own recovery still sees it.
//
// The goroutine keeps its thread locked and ends without unlocking it, so
// the Go runtime ends the thread too: a thread whose priority was lowered
// never goes back to the pool to serve a cheap request. That costs one
// thread start per expensive request, a few microseconds beside a search
// of milliseconds (docs/performance.md has the measurement).
func runNiced(nice int, f func()) {
	done := make(chan any, 1)
	go func() {
		runtime.LockOSThread()
		lowerPriority(nice)
		defer func() { done <- recover() }()
		f()
	}()
	if p := <-done; p != nil {
		panic(p)
	}
}
