package engine

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
)

// Replacing a few cases changes the similar-case data exactly as building
// it whole from the new cases does: the same pruned words per case, the
// same word lists, the same counts; and the index it was made from is
// left as it was (the engine before still answers from it).
func TestSimilarityReplacingMatchesAWholeBuild(t *testing.T) {
	c, _, err := corpus.Load(corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := slices.Clone(c.Cases)
	v := c.Vocabulary
	build := func(cs []*incidentlib.Case) *similarityIndex {
		return newSimilarityIndexReusing(v, cs, newFacetIndex(v, cs), map[*incidentlib.Case][]uint32{})
	}
	r := rand.New(rand.NewPCG(7, 11))
	si := build(cases)
	replaced, whole := 0, 0
	for round := range 20 {
		next := slices.Clone(cases)
		var pos []int
		for _, i := range r.Perm(len(cases))[:1+r.IntN(3)] {
			x := *cases[i]
			switch r.IntN(3) {
			case 0: // a new word, and one every case holds dropped
				x.Title = fmt.Sprintf("Wombat%d %s", round, x.Title)
			case 1: // a word taken from another case
				x.Trigger = cases[r.IntN(len(cases))].Title + " " + x.Trigger
			default: // words removed
				x.Title, x.Trigger = "Outage", ""
			}
			next[i] = &x
			pos = append(pos, i)
		}
		beforeWords := slices.Clone(si.words)
		beforeByWord := maps.Clone(si.byWord)
		want := build(next)
		got, ok := si.replacing(next, cases, newFacetIndex(v, next), pos)
		if !ok {
			// A word crossed the pruning threshold: a whole build, which
			// is what the caller then does.
			whole++
			si, cases = want, next
			continue
		}
		replaced++
		if !slices.EqualFunc(got.words, want.words, slices.Equal) {
			t.Fatalf("round %d: pruned words differ from a whole build", round)
		}
		if !maps.EqualFunc(got.byWord, want.byWord, slices.Equal) {
			t.Fatalf("round %d: word lists differ from a whole build", round)
		}
		if !maps.Equal(got.df, want.df) {
			t.Fatalf("round %d: word counts differ from a whole build", round)
		}
		if !slices.EqualFunc(si.words, beforeWords, slices.Equal) || !maps.EqualFunc(si.byWord, beforeByWord, slices.Equal) {
			t.Fatalf("round %d: the index replaced from was changed", round)
		}
		si, cases = got, next
	}
	if replaced < 15 {
		t.Errorf("only %d of 20 changes were made in place (%d whole builds)", replaced, whole)
	}
}
