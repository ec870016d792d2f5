package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/pgstore"
	"github.com/incidentlib/incidentlib/pgstore/pgstoretest"
	"github.com/incidentlib/incidentlib/replica"
)

// newCase is a valid case file that is not in the shipped corpus.
const newCase = `id: IL-9700
title: A made-up test outage of the quokka scheduler, published through one replica
company: Example
timeline:
  started: 2026-01-02T03:04:00Z
summary: The quokka scheduler stopped placing jobs for an hour.
root_cause: software-bug
components: [app-service]
sources:
  - url: https://example.com/quokka
    type: official-blog
verification:
  status: checked
  against: The example report.
`

func TestImportCommand(t *testing.T) {
	url := pgstoretest.Database(t)
	code, _, errOut := run(t, "import", "--store", url)
	if code != 0 || !strings.Contains(errOut, "added") {
		t.Fatalf("import of the shipped corpus: exit %d, %s", code, errOut)
	}
	code, _, errOut = run(t, "import", "--store", url)
	if code != 0 || !strings.Contains(errOut, " 0 added, 0 updated") {
		t.Fatalf("second import: exit %d, %s; want nothing added or updated", code, errOut)
	}
	// A broken file anywhere means nothing is written, and says where.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "IL-9700.yaml"), []byte(newCase), 0o644)
	os.WriteFile(filepath.Join(dir, "IL-9701.yaml"), []byte(strings.Replace(strings.ReplaceAll(newCase, "IL-9700", "IL-9701"), "software-bug", "softwre-bug", 1)), 0o644)
	code, out, errOut := run(t, "import", "--store", url, dir)
	if code != 1 || !strings.Contains(out, "IL-9701.yaml:7:") || !strings.Contains(errOut, "nothing was imported") {
		t.Fatalf("import with a broken file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, cases, _, _ := st.Snapshot(context.Background()); hasCase(cases, "IL-9700") {
		t.Error("IL-9700 was written although the import failed")
	}
	if code, _, errOut := run(t, "import"); code != 2 || !strings.Contains(errOut, "no store") {
		t.Errorf("import without a store: exit %d, %s", code, errOut)
	}
}

func hasCase(cs []incidentlib.StoredCase, id string) bool {
	for _, c := range cs {
		if c.ID == id {
			return true
		}
	}
	return false
}

// Two replicas over one database: a case published through the store is
// found by both replicas' search (within a second on an idle machine, as
// docs/performance.md measures; the bound here leaves room for a loaded
// CI machine, since each change rebuilds the replica's index); when the database
// goes away, reads go on and the replica says it is degraded; when it
// comes back, the replica catches up without a restart.
func TestReplicasFollowTheStore(t *testing.T) {
	url := pgstoretest.Database(t)
	if code, _, errOut := run(t, "import", "--store", url); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	proxy, via := pgstoretest.NewProxy(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var replicas []*replica.Replica
	for range 2 {
		st, err := pgstore.Open(ctx, via)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		r, err := replica.Open(ctx, st, buildFromStore(discardLogger()), discardLogger())
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go r.Follow(ctx)
		replicas = append(replicas, r)
	}
	writer, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	publish := func(id, word string) time.Time {
		body := strings.ReplaceAll(strings.ReplaceAll(newCase, "IL-9700", id), "quokka", word)
		if _, err := writer.Import(ctx, nil, []incidentlib.StoredCase{{ID: id, Name: id + ".yaml", Content: []byte(body)}}, "test"); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	waitFound := func(r *replica.Replica, word string, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for time.Since(start) < within {
			res, err := r.SearchCases(ctx, incidentlib.Query{Text: word})
			if err == nil && !res.Fuzzy && res.Total == 1 {
				return time.Since(start)
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%q not found within %v", word, within)
		return 0
	}
	time.Sleep(200 * time.Millisecond) // both replicas are listening
	publish("IL-9700", "quokka")
	for i, r := range replicas {
		// Not a timing check (TestMeasureStore measures): a rebuild takes
		// seconds on a loaded 2-core machine.
		d := waitFound(r, "quokka", 15*time.Second)
		t.Logf("replica %d found the published case after %v", i+1, d.Round(time.Millisecond))
	}

	// The database goes away: reads keep answering from the last library.
	proxy.Cut()
	deadline := time.Now().Add(10 * time.Second)
	for !replicas[1].Status().Degraded && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := replicas[1].Status(); !st.Degraded || st.Problem == "" {
		t.Fatalf("status with the database cut off = %+v, want degraded with a reason", st)
	}
	if res, err := replicas[1].SearchCases(ctx, incidentlib.Query{Text: "quokka"}); err != nil || res.Total != 1 {
		t.Fatalf("search while the database is down = %v, %v", res, err)
	}
	// A case published while the replicas were cut off arrives when the
	// database comes back, with no restart.
	publish("IL-9701", "wombat")
	proxy.Restore(t)
	waitFound(replicas[1], "wombat", 10*time.Second)
	deadline = time.Now().Add(10 * time.Second)
	for replicas[1].Status().Degraded && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if replicas[1].Status().Degraded {
		t.Error("replica still degraded after the database came back")
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// startServe runs incidentlib serve with args on a free port until the
// test ends and returns its base URL once it is ready.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	s := serveForTest(t, append([]string{"--log-level", "warn"}, args...)...)
	s.waitReady()
	return s.Base
}

// fetch sends a request with an optional token and returns status and body.
func fetch(t *testing.T, method, url, token, body string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// serve --store serves the whole product from the store.
func TestServeFromStore(t *testing.T) {
	url := pgstoretest.Database(t)
	if code, _, errOut := run(t, "import", "--store", url); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	base := startServe(t, "--store", url)
	for path, want := range map[string]string{
		"/cases/IL-0561":                "DigitalOcean",
		"/api/v1/cases/IL-0561/similar": "same root cause",
		"/readyz":                       "ready",
	} {
		if code, body, _ := fetch(t, "GET", base+path, "", ""); code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, body lacks %q", path, code, want)
		}
	}
	if code, _, errOut := run(t, "serve", "--store", url, "--cases", "x"); code != 2 || !strings.Contains(errOut, "do not go with --store") {
		t.Errorf("serve --store --cases: exit %d, %s", code, errOut)
	}
}
