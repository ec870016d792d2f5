package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
)

// answers asks an engine what the conformance suite asks a library, in a
// form two engines can be compared by.
func answers(t *testing.T, e *engine.Engine) map[string]any {
	t.Helper()
	ctx := context.Background()
	out := map[string]any{}
	for _, q := range []incidentlib.Query{
		{Text: "database"}, {Text: "retry storm"}, {Text: "certificate expired"}, {Text: "wombatapply"},
		{Filters: incidentlib.Filters{RootCauses: []string{"config-change"}}, Sort: incidentlib.SortNewest},
		{Text: "dns", PerPage: 50},
	} {
		res, err := e.SearchCases(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, fmt.Sprintf("%s %.6f", h.Case.ID, h.Score))
		}
		out["search "+q.Text+fmt.Sprint(q.Filters.RootCauses)] = ids
		out["total "+q.Text+fmt.Sprint(q.Filters.RootCauses)] = res.Total
		out["facets "+q.Text+fmt.Sprint(q.Filters.RootCauses)] = res.Facets
	}
	sim, err := e.SimilarCases(ctx, "IL-0561", 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range sim {
		ids = append(ids, r.Case.ID)
	}
	out["similar"] = ids
	st, err := e.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out["stats"] = st
	return out
}

// Apply answers as an engine opened on the same cases does, and the
// engine it was applied to answers as before.
func TestApplyAnswersAsAFreshEngine(t *testing.T) {
	c, problems, err := corpus.Load(corpus.Options{})
	if err != nil || len(problems) > 0 {
		t.Fatalf("corpus: %v %v", err, problems)
	}
	ctx := context.Background()
	base := c.Cases[:len(c.Cases)-5]
	before, err := engine.Open(ctx, c.Vocabulary, base, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := answers(t, before)

	added := *c.Cases[len(c.Cases)-1]
	edited := *base[10]
	edited.Summary += " The wombatapply scheduler was involved."
	removed := base[20].ID
	after, err := before.Apply(ctx, []*incidentlib.Case{&added, &edited}, []string{removed})
	if err != nil {
		t.Fatal(err)
	}
	var final []*incidentlib.Case
	for _, x := range base {
		switch x.ID {
		case removed:
		case edited.ID:
			final = append(final, &edited)
		default:
			final = append(final, x)
		}
	}
	final = append(final, &added)
	fresh, err := engine.Open(ctx, c.Vocabulary, final, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if diff := cmp.Diff(answers(t, fresh), answers(t, after)); diff != "" {
		t.Errorf("the applied engine answers otherwise than a fresh one (-fresh +applied):\n%s", diff)
	}
	if _, err := after.FindCaseByID(ctx, removed); incidentlib.ErrorCode(err) != incidentlib.ENOTFOUND {
		t.Errorf("the removed case is still found: %v", err)
	}
	if diff := cmp.Diff(want, answers(t, before)); diff != "" {
		t.Errorf("the engine Apply was called on changed its answers (-before +now):\n%s", diff)
	}
	if _, err := before.Apply(ctx, nil, nil); err == nil {
		t.Error("Apply on an engine that is no longer the newest succeeded")
	}
	// Closing the older engine leaves the newer one working.
	before.Close()
	if res, err := after.SearchCases(ctx, incidentlib.Query{Text: "wombatapply"}); err != nil || res.Total != 1 || res.Hits[0].Case.ID != edited.ID {
		t.Errorf("after closing the old engine: %+v, %v", res, err)
	}
	after.Close()
}
