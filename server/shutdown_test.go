package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawGet writes a GET on conn and reads the answer, returning its status
// and body ("" and the error when there is none).
func rawGet(conn net.Conn, path string) (int, string, error) {
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: t\r\n\r\n"); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// On shutdown (SIGTERM) the server stops being ready, answers every
// request already sent (on new connections, on kept-alive ones, and in the
// listener's backlog), then stops accepting and returns nil (issue 22: 4
// of 12 in-flight requests got an empty reply or a reset).
func TestShutdownAnswersEverythingAccepted(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		io.WriteString(w, "answer "+r.URL.Path)
	})
	s := New(Config{ShutdownTimeout: 5 * time.Second, ShutdownDelay: 300 * time.Millisecond})
	s.SetReady(Handlers{Web: slow})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	addr := l.Addr().String()

	// Four kept-alive connections, each with one answer already.
	var kept []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if code, _, err := rawGet(c, "/warm"); code != 200 {
			t.Fatalf("warm-up: %d %v", code, err)
		}
		kept = append(kept, c)
	}
	// Twelve requests sent on new connections; shutdown starts at once,
	// before the server has read (or even accepted) most of them.
	var conns []net.Conn
	for range 12 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 32)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body, err := rawGet(c, "/new"); code != 200 || body != "answer /new" {
				errs <- "new connection " + string(rune('a'+i)) + ": " + errString(err) + " " + body
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	cancel()
	// The kept-alive clients send their next request just after.
	time.Sleep(20 * time.Millisecond)
	for i, c := range kept {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body, err := rawGet(c, "/again"); code != 200 || body != "answer /again" {
				errs <- "kept-alive connection " + string(rune('a'+i)) + ": " + errString(err) + " " + body
			}
		}()
	}
	// Not ready while draining, so a load balancer sends no more.
	time.Sleep(20 * time.Millisecond)
	if c, err := net.Dial("tcp", addr); err == nil {
		code, body, _ := rawGet(c, "/readyz")
		c.Close()
		if code != 503 || !strings.Contains(body, "shutting down") {
			t.Errorf("/readyz while draining: %d %q", code, body)
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("still accepting after shutdown")
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A request still running when the grace period ends is cut, the log says
// so at WARN, and Serve returns nil: the process exits 0 within the grace
// period, not 1 with an ERROR line.
func TestShutdownGraceEnds(t *testing.T) {
	started := make(chan struct{})
	download := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		for i := 0; i < 100 && r.Context().Err() == nil; i++ {
			io.WriteString(w, strings.Repeat("x", 1024))
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	})
	var logs bytes.Buffer
	var mu sync.Mutex
	s := New(Config{ShutdownTimeout: 300 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	s.SetReady(Handlers{Web: download})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	go func() {
		resp, err := http.Get("http://" + l.Addr().String() + "/export")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	<-started
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after the grace period: %v", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("took %v with a grace of 300ms", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	mu.Lock()
	defer mu.Unlock()
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "abandoned=1") || strings.Contains(out, "level=ERROR") {
		t.Errorf("log: %s", out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
