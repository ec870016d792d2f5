package engine

import (
	"testing"

	"github.com/incidentlib/incidentlib/corpus"
)

// Word weights are learned from the corpus: words that every kind of case
// writes weigh little, words concentrated on some terms weigh more.
func TestWordWeightsAreLearnedFromTheCorpus(t *testing.T) {
	e := openShipped(t)
	r, err := e.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	weight := func(w string) float64 { return e.wordTopicality(r, analyzedTerms(e.analyzer(), w)[0]) }
	for _, filler := range []string{"make", "kept", "worse", "fell", "outages", "made"} {
		if got := weight(filler); got >= meaningfulTopicality {
			t.Errorf("%s weighs %.2f; a word every kind of case writes must weigh under %.2f", filler, got, meaningfulTopicality)
		}
	}
	for _, topical := range []string{"retries", "certificate", "dns", "bgp", "environment", "cleanup", "replication"} {
		if got := weight(topical); got < meaningfulTopicality {
			t.Errorf("%s weighs %.2f; a word concentrated on some terms must weigh at least %.2f", topical, got, meaningfulTopicality)
		}
	}
	if w := weight("make"); w < minTopicality {
		t.Errorf("make weighs %.2f, under the floor %.2f: every word still counts a little", w, minTopicality)
	}
}

func openShipped(t *testing.T) *Engine {
	t.Helper()
	c, ps, err := corpus.Load(corpus.Options{})
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	e, err := Open(t.Context(), c.Vocabulary, c.Cases, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
