package main

import (
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An index damaged while the server runs: no search gets a 500 (a failing
// one gets 503 to retry), /readyz says not ready while the index is
// rebuilt in memory, and then every search is answered again (issue 22:
// 500 on 8–18% of searches until a restart, while /readyz said ready).
func TestIndexDamagedAtRunTime(t *testing.T) {
	data := t.TempDir()
	srv := serveForTest(t, "--data", data, "--log-level", "error", "--rate-limit", "0", "--max-inflight", "0")
	srv.waitReady()
	var files []string
	filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, "index-") && !strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("no index files")
	}
	// Overwrite every index file in place (the running process has them
	// open and mapped) with random bytes.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range files {
		fh, err := os.OpenFile(f, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := fh.Stat()
		junk := make([]byte, info.Size())
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		fh.WriteAt(junk, 0)
		fh.Close()
	}
	statuses := map[int]int{}
	sawUnready := false
	words := []string{"database", "dns", "kafka", "certificate", "retry", "memory", "disk", "config"}
	// The rebuild in the background takes a second or two; under the race
	// detector on a busy 2-core machine it took over 20 s at 1,218 cases.
	// The loop ends at the twentieth answer in a row, so the deadline only
	// bounds a rebuild that never ends.
	deadline := time.Now().Add(2 * time.Minute)
	ok := 0
	for i := 0; time.Now().Before(deadline) && ok < 20; i++ {
		resp, err := http.Get(srv.Base + "/api/v1/cases?q=" + words[i%len(words)] + "&per_page=50")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses[resp.StatusCode]++
		if resp.StatusCode == 200 {
			ok++
		} else {
			ok = 0
		}
		if r, err := http.Get(srv.Base + "/readyz"); err == nil {
			r.Body.Close()
			sawUnready = sawUnready || r.StatusCode == 503
		}
	}
	if statuses[500] > 0 || ok < 20 {
		t.Errorf("statuses after the damage %v; want no 500 and the last 20 answered", statuses)
	}
	if statuses[503] > 0 && !sawUnready {
		t.Errorf("searches failed (%v) but /readyz never said not ready", statuses)
	}
	t.Logf("statuses %v, /readyz said not ready: %v", statuses, sawUnready)
}
