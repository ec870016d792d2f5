package server

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// Admitted expensive requests run on a thread of lowered priority, so that
// under overload the kernel runs a cheap request's thread first (issue 22:
// cheap requests' p99 at twice the search capacity); cheap ones keep the
// process's priority, and the guard's caller still sees a handler's panic.
func TestExpensiveRequestsRunNiced(t *testing.T) {
	base, ok := threadNice()
	if !ok {
		t.Skip("thread priorities are not known on this system")
	}
	if base > 9 {
		t.Skipf("the test process already runs at nice %d", base)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "panic" {
			panic(http.ErrAbortHandler)
		}
		n, _ := threadNice()
		w.Write([]byte(strconv.Itoa(n)))
	})
	s := New(Config{Limits: Limits{MaxExpensive: 1, ExpensiveNice: 10}})
	s.SetReady(Handlers{API: h})
	get := func(path string) string {
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		return w.Body.String()
	}
	if got, want := get("/api/v1/cases?q=dns"), strconv.Itoa(base+10); got != want {
		t.Errorf("a search ran at nice %s, want %s", got, want)
	}
	if got, want := get("/api/v1/cases/IL-0001"), strconv.Itoa(base); got != want {
		t.Errorf("a case by ID ran at nice %s, want the process's %s", got, want)
	}
	// The lowered thread is not reused: the next cheap request is back at
	// the process's priority whichever thread it lands on.
	for range 20 {
		get("/api/v1/cases?q=x")
		if got, want := get("/api/v1/cases/IL-0002"), strconv.Itoa(base); got != want {
			t.Fatalf("a cheap request after searches ran at nice %s, want %s", got, want)
		}
	}
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Errorf("a search handler's panic reached the caller as %v, want http.ErrAbortHandler", p)
		}
	}()
	get("/api/v1/cases?q=panic")
}
