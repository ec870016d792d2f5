package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/pgstore"
	"github.com/incidentlib/incidentlib/pgstore/pgstoretest"
	"github.com/incidentlib/incidentlib/replica"
)

// TestMeasureStore prints the figures docs/performance.md reports for the
// PostgreSQL store: search latency on a replica beside the embedded engine,
// and how long a published case takes to be searchable on two replicas. It
// measures, it does not judge: run it with INCIDENTLIB_MEASURE=1 on a quiet
// machine (scripts/with-postgres.sh provides the database).
func TestMeasureStore(t *testing.T) {
	if os.Getenv("INCIDENTLIB_MEASURE") != "1" {
		t.Skip("a measurement, not a test: set INCIDENTLIB_MEASURE=1 (with INCIDENTLIB_POSTGRES_TESTS=1)")
	}
	url := pgstoretest.Database(t)
	if code, _, errOut := run(t, "import", "--store", url); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _, _ := corpus.Load(corpus.Options{})
	files, err := engine.Open(ctx, c.Vocabulary, c.Cases, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var replicas []*replica.Replica
	for range 2 {
		st, err := pgstore.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		// As serve does: changes applied to the index in place
		// (INCIDENTLIB_MEASURE_REBUILD=1 measures whole rebuilds).
		libs := newStoreLibraries(discardLogger())
		r, err := replica.Open(ctx, st, libs.build, nil)
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("INCIDENTLIB_MEASURE_REBUILD") != "1" {
			r.SetUpdater(libs.update)
		}
		go r.Follow(ctx)
		replicas = append(replicas, r)
	}
	queries := []incidentlib.Query{{Text: "database"}, {Text: "retry storm"}, {Text: "certificate expired"},
		{Filters: incidentlib.Filters{RootCauses: []string{"config-change"}}}, {Text: "dns", Sort: incidentlib.SortNewest}}
	latency := func(lib incidentlib.Library) (p50, p99 time.Duration) {
		var ds []time.Duration
		for i := range 500 {
			start := time.Now()
			if _, err := lib.SearchCases(ctx, queries[i%len(queries)]); err != nil {
				t.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2], ds[len(ds)*99/100]
	}
	f50, f99 := latency(files)
	r50, r99 := latency(replicas[0])
	fmt.Printf("search, %d cases, 500 queries: embedded p50 %v p99 %v; PostgreSQL replica p50 %v p99 %v\n",
		len(c.Cases), f50.Round(time.Microsecond), f99.Round(time.Microsecond), r50.Round(time.Microsecond), r99.Round(time.Microsecond))

	writer, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	time.Sleep(300 * time.Millisecond)
	var delays []time.Duration
	const publications = 40
	for i := range publications {
		id := fmt.Sprintf("IL-97%02d", i)
		word := fmt.Sprintf("zqmeasure%d", i)
		body := strings.ReplaceAll(strings.ReplaceAll(newCase, "IL-9700", id), "quokka", word)
		start := time.Now()
		if _, err := writer.Import(ctx, nil, []incidentlib.StoredCase{{ID: id, Name: id + ".yaml", Content: []byte(body)}}, "measure"); err != nil {
			t.Fatal(err)
		}
		for _, r := range replicas {
			for {
				res, err := r.SearchCases(ctx, incidentlib.Query{Text: word})
				if err == nil && !res.Fuzzy && len(res.Hits) == 1 && res.Hits[0].Case.ID == id {
					break
				}
				if time.Since(start) > 30*time.Second {
					t.Fatal("never searchable")
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
		delays = append(delays, time.Since(start))
		time.Sleep(100 * time.Millisecond)
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	fmt.Printf("publish to searchable on both of 2 replicas, %d publications: min %v p50 %v p90 %v max %v\n", publications,
		delays[0].Round(time.Millisecond), delays[len(delays)/2].Round(time.Millisecond), delays[len(delays)*9/10].Round(time.Millisecond), delays[len(delays)-1].Round(time.Millisecond))
}
