package engine_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/engine/enginetest"
)

// A typo is corrected to the corpus word nearest to what was typed, the
// most written first: "replcation" is replication (written by dozens of
// cases), not a stem that happens to be close to its stem.
func TestTypoPicksTheCorpusWordByEditDistanceAndFrequency(t *testing.T) {
	res := search(t, "replcation")
	if len(res.Suggestions) == 0 || len(res.Suggestions[0].Spellings) == 0 || res.Suggestions[0].Spellings[0] != "replication" {
		t.Fatalf("suggestions %+v, want replication first", res.Suggestions)
	}
	if !res.Fuzzy || len(res.Hits) == 0 {
		t.Fatalf("no hits through the correction")
	}
	if !slices.ContainsFunc(res.Hits[0].Matched, func(m incidentlib.Match) bool { return m.Word == "replcation" && m.Via == "replication" }) {
		t.Errorf("first hit's reasons %+v do not say replcation as replication", res.Hits[0].Matched)
	}
}

// Other forms of a word match it, irregular verbs too: withdrawn finds
// the cases that write withdrew (IL-0043, on the first page) or only
// withdrawals and withdrawing (IL-0272, which a word-for-word match never
// returns; since 1,040 cases, on the third page).
func TestMorphologicalVariantsMatch(t *testing.T) {
	res := search(t, "withdrawn")
	if rankOf(res, "IL-0043") == 0 {
		t.Errorf("withdrawn: IL-0043 (withdrew) not in the top 10 %v", ids(res))
	}
	if all := searchAll(t, "withdrawn", 30); !slices.Contains(all, "IL-0272") {
		t.Errorf("withdrawn: IL-0272 (withdrawals, withdrawing) not in the first 30 %v", all)
	}
}

// Words spread over every kind of case ("make", "outages", "worse") do
// not decide which cases are returned: "why do retries make outages
// worse" keeps the DynamoDB retry storm (IL-0021), which the old filler
// weight dropped, and ranks by what the question is about.
func TestFillerWordsDoNotDecide(t *testing.T) {
	res := search(t, "why do retries make outages worse")
	if res.Total < 20 {
		t.Errorf("only %d cases returned; every case about retries should be", res.Total)
	}
	all := searchAll(t, "why do retries make outages worse", 30)
	if !slices.Contains(all, "IL-0021") {
		t.Errorf("IL-0021 (the DynamoDB retry storm) not in the first 30: %v", all)
	}
}

// A vocabulary term recognised in a query adds candidates without
// drowning its other words: in "a cleanup script deleted production data
// because it ran against the wrong environment", "cleanup script deleted"
// names the automation-error term, and it scores as one idea, not three
// words. The case run by mistake against production (IL-0023) ranked 23rd
// before; it must stay within the first 15 (the issue asks for the first
// page, which word weights alone do not reach: docs/search.md).
//
// Since 1,040 cases the library also holds IL-1439, a script meant to
// delete a test cluster run against production; either counts.
func TestATermDoesNotDrownTheOtherWords(t *testing.T) {
	all := searchAll(t, "a cleanup script deleted production data because it ran against the wrong environment", 15)
	if !slices.Contains(all, "IL-0023") && !slices.Contains(all, "IL-1439") {
		t.Errorf("neither IL-0023 nor IL-1439 in the top 15: %v", all)
	}
}

func searchAll(t *testing.T, text string, n int) []string {
	t.Helper()
	res, err := enginetest.Shipped(t).SearchCases(context.Background(), incidentlib.Query{Text: text, PerPage: n})
	if err != nil {
		t.Fatal(err)
	}
	return ids(res)
}

// Learned weights and the spelling list are built on first use; queries
// asking for them at once must agree and not race.
func TestLearnedDataIsSafeForConcurrentQueries(t *testing.T) {
	v, ps := corpus.LoadShippedVocabulary()
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	e, err := engine.Open(context.Background(), v, fixture(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	queries := []string{"why do hedged retries make a slow query worse", "databse migration retreis", "Reason: OOMKilled", "withdrawn primary database deleted"}
	want := map[string][]string{}
	for _, q := range queries {
		res, err := e.SearchCases(context.Background(), incidentlib.Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		want[q] = ids(res)
	}
	e2, err := engine.Open(context.Background(), v, fixture(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := queries[i%len(queries)]
			res, err := e2.SearchCases(context.Background(), incidentlib.Query{Text: q})
			if err != nil {
				t.Error(err)
				return
			}
			if got := ids(res); !slices.Equal(got, want[q]) {
				t.Errorf("%q: %v at once, %v alone", q, got, want[q])
			}
		}()
	}
	wg.Wait()
}
