package main

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/pgstore"
	"github.com/incidentlib/incidentlib/pgstore/pgstoretest"
	"github.com/incidentlib/incidentlib/replica"
)

// libraryAnswers asks a library the questions every backend must answer
// alike, and returns the answers in comparable form.
func libraryAnswers(t *testing.T, lib incidentlib.Library) map[string]any {
	t.Helper()
	ctx := context.Background()
	out := map[string]any{}
	ids := func(r *incidentlib.SearchResult) []string {
		var s []string
		for _, h := range r.Hits {
			s = append(s, h.Case.ID)
		}
		return s
	}
	queries := map[string]incidentlib.Query{
		"all, newest":          {},
		"retries":              {Text: "retries"},
		"database outage":      {Text: "database outage", PerPage: 50},
		"config, page 2":       {Filters: incidentlib.Filters{RootCauses: []string{"config-change"}}, Page: 2},
		"database group, 2020": {Filters: incidentlib.Filters{Components: []string{"database"}, YearFrom: 2020}, Sort: incidentlib.SortLongest},
		"dns phrase":           {Text: `"DNS"`, Sort: incidentlib.SortOldest},
	}
	for name, q := range queries {
		r, err := lib.SearchCases(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		counts := map[string]int{}
		for f, fcs := range r.Facets {
			for _, fc := range fcs {
				counts[string(f)+":"+fc.Term.Slug] = fc.Count
			}
		}
		out["search "+name] = map[string]any{"total": r.Total, "ids": ids(r), "facets": counts, "years": r.Years}
	}
	for _, id := range []string{"IL-0561", "IL-0017", "IL-0601"} {
		rel, err := lib.SimilarCases(ctx, id, 8)
		if err != nil {
			t.Fatalf("similar %s: %v", id, err)
		}
		var s []string
		for _, r := range rel {
			s = append(s, r.Case.ID+" "+r.Reason())
		}
		out["similar "+id] = s
		c, err := lib.FindCaseByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		out["case "+id] = c.Title + " | " + c.Summary
	}
	topic, err := lib.FindTopic(ctx, incidentlib.FacetContributingFactor, "retry-amplification", incidentlib.Query{})
	if err != nil {
		t.Fatal(err)
	}
	out["topic retry-amplification"] = ids(topic.Results)
	st, err := lib.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out["stats"] = map[string]any{"cases": st.Cases, "known": st.Known, "years": st.Years}
	return out
}

// The same corpus answers the same questions the same way from the case
// files and from the PostgreSQL store.
func TestStoresConform(t *testing.T) {
	url := pgstoretest.Database(t)
	if code, _, errOut := run(t, "import", "--store", url); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	c, ps, err := corpus.Load(corpus.Options{})
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	files, err := engine.Open(context.Background(), c.Vocabulary, c.Cases, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fromStore, err := replica.Open(context.Background(), st, buildFromStore(discardLogger()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fromStore.Close()
	want, got := libraryAnswers(t, files), libraryAnswers(t, fromStore)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the store answers differently from the files (-files +store):\n%s", diff)
	}
}
