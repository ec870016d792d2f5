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
	lightest := 1.0
	for _, topical := range []string{"retries", "certificate", "dns", "bgp", "environment", "cleanup", "replication"} {
		got := weight(topical)
		if got < meaningfulTopicality {
			t.Errorf("%s weighs %.2f; a word concentrated on some terms must weigh at least %.2f", topical, got, meaningfulTopicality)
		}
		lightest = min(lightest, got)
	}
	for _, filler := range []string{"make", "kept", "fell", "outages", "made"} {
		if got := weight(filler); got >= meaningfulTopicality {
			t.Errorf("%s weighs %.2f; a word every kind of case writes must weigh under %.2f", filler, got, meaningfulTopicality)
		}
	}
	// "worse" is learned too: at 1,218 cases, after lessons that called
	// any outage worse were narrowed, the cases still writing it lean
	// towards retries and overload, and it weighs 0.31, just over the
	// line. It must still weigh less than every topical word.
	if got := weight("worse"); got >= lightest {
		t.Errorf("worse weighs %.2f, as much as a topical word (%.2f)", got, lightest)
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
