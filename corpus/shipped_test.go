package corpus_test

import (
	"testing"

	"incidentlib"
	"incidentlib/corpus"
)

// The shipped corpus is the product's heart. These are its floor: enough
// cases, every vocabulary term used by at least two of them (or merged or
// dropped), and every case resting on a source and saying how it was
// checked.
func TestShippedCorpusFloor(t *testing.T) {
	c, ps, err := corpus.Load(corpus.Options{Now: fixedNow})
	if err != nil || len(ps) > 0 {
		t.Fatalf("shipped corpus does not load cleanly: %v %v", err, ps)
	}
	if n := len(c.Cases); n < 150 {
		t.Errorf("%d shipped cases, want at least 150", n)
	}
	used := map[incidentlib.Facet]map[string]int{}
	for _, f := range incidentlib.Facets {
		used[f] = map[string]int{}
	}
	for _, k := range c.Cases {
		if len(k.Sources) == 0 {
			t.Errorf("%s has no source", k.ID)
		}
		if k.Verification.Status == "" {
			t.Errorf("%s does not say how its facts were checked", k.ID)
		}
		if k.RootCause != "" {
			used[incidentlib.FacetRootCause][k.RootCause]++
		}
		for _, s := range k.Components {
			used[incidentlib.FacetComponent][s]++
		}
		for _, s := range k.SymptomTerms {
			used[incidentlib.FacetSymptom][s]++
		}
		for _, s := range k.ContributingFactors {
			used[incidentlib.FacetContributingFactor][s]++
		}
	}
	for _, f := range incidentlib.Facets {
		for _, term := range c.Vocabulary.Terms(f) {
			if n := used[f][term.Slug]; n < 2 {
				t.Errorf("%s %q is used by %d cases; use it in two or more, or merge or drop it", f, term.Slug, n)
			}
		}
	}
	// The seed pages name these cases by ID; they must stay.
	seedIDs := []string{"IL-0561", "IL-0574", "IL-0366", "IL-0179", "IL-0487", "IL-0283", "IL-0528", "IL-0392", "IL-0367", "IL-0511", "IL-0331", "IL-0272", "IL-0292", "IL-0325"}
	have := map[string]bool{}
	for _, k := range c.Cases {
		have[k.ID] = true
	}
	for _, id := range seedIDs {
		if !have[id] {
			t.Errorf("seed case %s is missing", id)
		}
	}
}
