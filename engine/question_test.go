package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine/enginetest"
)

func search(t *testing.T, text string) *incidentlib.SearchResult {
	t.Helper()
	res, err := enginetest.Shipped(t).SearchCases(context.Background(), incidentlib.Query{Text: text, PerPage: 10})
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	return res
}

func rankOf(res *incidentlib.SearchResult, id string) int {
	for i, h := range res.Hits {
		if h.Case.ID == id {
			return i + 1
		}
	}
	return 0
}

func TestIssueQueriesFindTheirCaseInTheTop3(t *testing.T) {
	for _, q := range enginetest.IssueQueries {
		res := search(t, q.Text)
		if r := rankOf(res, q.Want); r < 1 || !q.InTop3(ids(res)) {
			t.Errorf("%q: %s ranks %d (0: not in the top 10), and the top 3 hold none of %v; got %v", q.Text, q.Want, r, q.Also, ids(res))
		}
	}
}

func TestAVocabularyTermNamedInAQueryBringsItsCases(t *testing.T) {
	tests := []struct {
		text, facet, slug string
		atLeast           int
	}{
		{"retry amplification", "contributing_factor", "retry-amplification", 11},
		{"retry storm", "contributing_factor", "retry-amplification", 11},
		{"thundering-herd", "contributing_factor", "thundering-herd", 11},
		{"auth", "component", "auth-service", 21},
		{"k8s", "component", "container-orchestration", 16},
	}
	for _, tt := range tests {
		res := search(t, tt.text)
		i := slices.IndexFunc(res.Terms, func(fc incidentlib.FacetCount) bool {
			return string(fc.Term.Facet) == tt.facet && fc.Term.Slug == tt.slug
		})
		if i < 0 {
			t.Errorf("%q: recognised terms %v, want %s/%s", tt.text, res.Terms, tt.facet, tt.slug)
			continue
		}
		if res.Terms[i].Count < tt.atLeast || res.Total < tt.atLeast {
			t.Errorf("%q: term count %d, total %d; want at least %d", tt.text, res.Terms[i].Count, res.Total, tt.atLeast)
		}
		tagged := 0
		for _, h := range res.Hits {
			for _, term := range h.Terms {
				if term.Slug == tt.slug {
					tagged++
				}
			}
		}
		if tagged == 0 {
			t.Errorf("%q: no hit names the term it is tagged with", tt.text)
		}
	}
}

func TestKnownWordsAreNeverRespelled(t *testing.T) {
	res := search(t, "auth")
	if res.Fuzzy {
		t.Errorf("auth is a word the corpus knows, but the result is fuzzy")
	}
	for _, h := range res.Hits {
		for _, m := range h.Matched {
			if strings.EqualFold(m.Via, "auto") {
				t.Errorf("auth was read as auto in %s", h.Case.ID)
			}
		}
	}
}

func TestTypoFallbackForUnknownWords(t *testing.T) {
	res := search(t, "databse")
	if !res.Fuzzy || res.Total == 0 {
		t.Fatalf("databse: fuzzy %v total %d", res.Fuzzy, res.Total)
	}
	if len(res.Suggestions) == 0 || !slices.Contains(res.Suggestions[0].Spellings, "database") {
		t.Errorf("databse: suggestions %+v, want the spelling database", res.Suggestions)
	}
	found := false
	for _, m := range res.Hits[0].Matched {
		if m.Word == "databse" && m.Via == "database" {
			found = true
		}
	}
	if !found {
		t.Errorf("the first hit's reasons %+v do not say databse was read as database", res.Hits[0].Matched)
	}
	// Short words, numbers and phrases are never respelled.
	for _, q := range []string{"xq", "zzz9000", `"databse replcation"`} {
		if res := search(t, q); res.Fuzzy {
			t.Errorf("%q was respelled", q)
		}
	}
}

func TestWordsThatMatchNothingAreNamedWithHelp(t *testing.T) {
	res := search(t, "qwxzv outage")
	if !slices.Contains(res.Unmatched, "qwxzv") {
		t.Errorf("unmatched %v, want qwxzv", res.Unmatched)
	}
	res = search(t, "retry amplificaton storms")
	if res.Total == 0 {
		t.Fatal("a misspelled term name found nothing")
	}
	res = search(t, "blorptastic")
	if res.Total != 0 || !slices.Contains(res.Unmatched, "blorptastic") {
		t.Errorf("blorptastic: total %d unmatched %v", res.Total, res.Unmatched)
	}
	res = search(t, "herd")
	if res.Total == 0 {
		t.Errorf("herd found nothing")
	}
	res = search(t, "loadbalancer")
	if len(res.Suggestions) == 0 {
		t.Errorf("loadbalancer: no suggestions (total %d)", res.Total)
	}
}

func TestWhyItMatchedNamesWordsAndFields(t *testing.T) {
	res := search(t, "k8s upgrade")
	if len(res.Hits) == 0 {
		t.Fatal("no hits")
	}
	h := res.Hits[0]
	var viaKubernetes, upgrade bool
	for _, m := range h.Matched {
		if m.Word == "k8s" && strings.EqualFold(m.Via, "kubernetes") && len(m.Fields) > 0 {
			viaKubernetes = true
		}
		if m.Word == "upgrade" && m.Via == "" && len(m.Fields) > 0 {
			upgrade = true
		}
	}
	if !viaKubernetes || !upgrade {
		t.Errorf("%s reasons %+v: want k8s via kubernetes and upgrade as typed, each with fields", h.Case.ID, h.Matched)
	}
}

func TestAYearMatchesCasesThatStartedInIt(t *testing.T) {
	res := search(t, "github 2018")
	for _, h := range res.Hits[:2] {
		if h.Case.Company != "GitHub" || h.Case.Year() != 2018 {
			t.Errorf("github 2018: %s is %s %d", h.Case.ID, h.Case.Company, h.Case.Year())
		}
	}
}

func TestLongPastedTextIsAQuery(t *testing.T) {
	text := strings.Repeat("Our control panel failed a quarter of requests while authorization calls timed out and upstream services hedged their requests after a migration. ", 8)
	text = text[:incidentlib.MaxQueryLength]
	res := search(t, text)
	if rankOf(res, "IL-0561") == 0 {
		t.Errorf("a pasted paragraph did not find IL-0561: %v", ids(res))
	}
}

// TestALongTextIsSearchedWordByWord: a sentence or a pasted line is
// searched for any of its words, the cases ranked by how much of it they
// hold, and a word joined by hyphens is taken apart: "iptables-restore"
// finds the case that writes iptables, where a phrase of its parts found
// no case, and the page is full.
func TestALongTextIsSearchedWordByWord(t *testing.T) {
	res := search(t, "our nodes logged iptables-restore errors and pods lost traffic")
	if len(res.Hits) < 10 {
		t.Errorf("%d hits; a long text should fill the page", len(res.Hits))
	}
	found := false
	for _, h := range res.Hits[:min(3, len(res.Hits))] {
		for _, m := range h.Matched {
			if m.Word == "iptables" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no case in the top 3 matched iptables: %v", ids(res))
	}
	// A few keywords keep a hyphenated word whole.
	if res := search(t, "iptables-restore"); res.Total != 0 {
		t.Errorf("iptables-restore alone: %d cases, want none (no case writes the phrase)", res.Total)
	}
}
