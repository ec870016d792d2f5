package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The load loops stop by themselves, count every answer and keep refused
// latencies apart.
func TestLoopsAreBoundedAndCount(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			w.WriteHeader(503)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer ts.Close()
	start := time.Now()
	st := closedLoop(context.Background(), newClient(2), 2, 200*time.Millisecond, get(ts.URL, "/"))
	if time.Since(start) > 5*time.Second || st.n == 0 || st.byStatus[200] != st.n {
		t.Fatalf("closed loop: %d answers, %v", st.n, st.byStatus)
	}
	st = openLoop(context.Background(), newClient(4), 100, 200*time.Millisecond, 8, get(ts.URL, "/busy"))
	admitted, refused := st.split()
	if len(admitted.lat) != 0 || len(refused.lat) == 0 || st.byStatus[503] != len(refused.lat) {
		t.Fatalf("open loop: %d admitted, %d refused, %v", len(admitted.lat), len(refused.lat), st.byStatus)
	}
}
