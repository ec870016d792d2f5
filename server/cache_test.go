package server

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
)

// Issue 21: a replica that swapped in a new library went on answering
// from the cache built on the old one (27 minutes after a redaction).
// LibraryChanged empties it, and an answer built on the old library while
// the change happened is not stored afterwards.
func TestLibraryChangedEmptiesTheCache(t *testing.T) {
	var library atomic.Int64
	library.Store(1)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := library.Load()
		if r.URL.Query().Get("slow") != "" {
			started <- struct{}{}
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"library":`+string(rune('0'+v))+`}`)
	})
	s := New(Config{Limits: Limits{CacheBytes: 1 << 20}})
	s.SetReady(Handlers{API: api})
	h := s.Handler()
	if b := do(h, "GET", "/api/v1/cases/IL-0001").Body.String(); b != `{"library":1}` {
		t.Fatalf("first answer %q", b)
	}
	library.Store(2)
	if b := do(h, "GET", "/api/v1/cases/IL-0001").Body.String(); b != `{"library":1}` {
		t.Fatalf("the cache did not answer before the change: %q", b)
	}
	s.LibraryChanged()
	if b := do(h, "GET", "/api/v1/cases/IL-0001").Body.String(); b != `{"library":2}` {
		t.Errorf("after LibraryChanged: %q, want the new library's answer", b)
	}

	// A request that read the old library and finishes after the change.
	done := make(chan string)
	go func() { done <- do(h, "GET", "/api/v1/cases?slow=1").Body.String() }()
	<-started
	library.Store(3)
	s.LibraryChanged()
	close(release)
	if b := <-done; b != `{"library":2}` {
		t.Fatalf("the slow request answered %q", b)
	}
	go func() { <-started }()
	if b := do(h, "GET", "/api/v1/cases?slow=1").Body.String(); b != `{"library":3}` {
		t.Errorf("an answer of the old library was stored after the change: %q", b)
	}
}
