package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// served is `incidentlib serve` running in the test's process on a free
// loopback port, with its log kept.
type served struct {
	t      *testing.T
	Base   string // http://127.0.0.1:PORT
	Logs   *syncBuffer
	cancel context.CancelFunc
	done   chan int
	code   *int // set once it has exited
}

// serveForTest starts serve with "--addr 127.0.0.1:0" and args, and returns
// once it listens (not necessarily ready). It is stopped at the end of the
// test if the test has not stopped it.
func serveForTest(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{t: t, Logs: &syncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	addrc := make(chan string, 1)
	m := &Main{Stdin: strings.NewReader(""), Stdout: discard{}, Stderr: s.Logs, Now: time.Now, OnListen: func(a string) { addrc <- a }}
	go func() {
		s.done <- m.Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
	}()
	t.Cleanup(func() {
		if s.code == nil {
			s.stop()
		}
	})
	select {
	case a := <-addrc:
		s.Base = "http://" + a
	case code := <-s.done:
		s.code = &code
		t.Fatalf("serve exited %d: %s", code, s.Logs.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not listen")
	}
	return s
}

// waitReady waits until /readyz answers 200. Ready means the shipped
// corpus is indexed, which under the race detector on a busy 2-core
// machine took over 30 s at 1,218 cases: the wait is generous, since it
// only bounds a hang.
func (s *served) waitReady() {
	s.t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(s.Base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("never ready: %s", s.Logs.String())
		}
	}
}

// stop shuts the server down as SIGTERM would and returns its exit code.
func (s *served) stop() int {
	s.t.Helper()
	s.cancel()
	select {
	case code := <-s.done:
		s.code = &code
		return code
	case <-time.After(15 * time.Second):
		s.t.Error("serve did not shut down")
		code := -1
		s.code = &code
		return code
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
