package httpapi

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine/enginetest"
)

func TestIssueQueriesFindTheirCaseInTheTop3(t *testing.T) {
	ta := newAPI(t, Config{BaseURL: "http://127.0.0.1:8080"})
	for _, q := range enginetest.IssueQueries {
		list, _ := getJSON[CaseList](t, ta, "/api/v1/cases?q="+url.QueryEscape(q.Text))
		var got []string
		for _, it := range list.Items {
			got = append(got, it.Case.ID)
		}
		if !q.InTop3(got) {
			t.Errorf("%q: neither %s nor %v in the top 3 of %v", q.Text, q.Want, q.Also, got)
		}
	}
}

func TestSearchSaysWhatTheQueryMeant(t *testing.T) {
	ta := newAPI(t, Config{BaseURL: "http://127.0.0.1:8080"})
	list, _ := getJSON[CaseList](t, ta, "/api/v1/cases?q=retry+amplification&per_page=5")
	if len(list.Terms) != 1 || list.Terms[0].Slug != "retry-amplification" || list.Terms[0].Count < 11 {
		t.Fatalf("terms %+v, want retry-amplification with its 11 cases", list.Terms)
	}
	f, err := url.Parse(list.Terms[0].Filter)
	if err != nil || f.Query().Get("contributing_factor") != "retry-amplification" || f.Query().Get("q") != "retry amplification" {
		t.Errorf("filter link %q does not narrow this search to the term", list.Terms[0].Filter)
	}
	narrowed, _ := getJSON[CaseList](t, ta, strings.TrimPrefix(list.Terms[0].Filter, "http://127.0.0.1:8080"))
	if narrowed.Total != list.Terms[0].Count {
		t.Errorf("the filter link gives %d cases, the term count says %d", narrowed.Total, list.Terms[0].Count)
	}
	hit := list.Items[0]
	if len(hit.Matched) == 0 || len(hit.Terms) == 0 || len(hit.Matched[0].Fields) == 0 {
		t.Errorf("first hit: matched %+v terms %+v; want reasons with fields and the term", hit.Matched, hit.Terms)
	}

	list, _ = getJSON[CaseList](t, ta, "/api/v1/cases?q=qwxzv+retries")
	if !slices.Contains(list.Unmatched, "qwxzv") {
		t.Errorf("unmatched %v, want qwxzv", list.Unmatched)
	}
	list, _ = getJSON[CaseList](t, ta, "/api/v1/cases?q=databse")
	if !list.Fuzzy || len(list.Suggestions) == 0 || !slices.Contains(list.Suggestions[0].Spellings, "database") {
		t.Errorf("databse: fuzzy %v suggestions %+v", list.Fuzzy, list.Suggestions)
	}
	list, _ = getJSON[CaseList](t, ta, "/api/v1/cases?q=hedged+retries+zookeeper+bgp")
	if !list.Partial || list.Complete >= list.Total {
		t.Errorf("partial %v complete %d total %d; want a partial result", list.Partial, list.Complete, list.Total)
	}
}

func TestCaseIDsAreNormalised(t *testing.T) {
	ta := newAPI(t, Config{BaseURL: "http://127.0.0.1:8080"})
	for _, id := range []string{"il-561", "IL-561", "561", "IL-0561"} {
		c, _ := getJSON[Case](t, ta, "/api/v1/cases/"+id)
		if c.ID != "IL-0561" {
			t.Errorf("/api/v1/cases/%s gave %s", id, c.ID)
		}
		s, _ := getJSON[SimilarCases](t, ta, "/api/v1/cases/"+id+"/similar")
		if s.Case.ID != "IL-0561" {
			t.Errorf("/api/v1/cases/%s/similar is about %s", id, s.Case.ID)
		}
	}
}

// A pasted error finds the cases that show it, and the first hit's reasons
// name the signature (signature: true, via what it means).
func TestPastedErrorsThroughTheAPI(t *testing.T) {
	ta := newAPI(t, Config{BaseURL: "http://127.0.0.1:8080"})
	for _, q := range enginetest.PastedQueries {
		list, _ := getJSON[CaseList](t, ta, "/api/v1/cases?q="+url.QueryEscape(q.Text))
		if len(list.Items) == 0 || !slices.Contains(q.Cases, list.Items[0].Case.ID) {
			t.Errorf("%q: first hit is not one of %v", q.Text, q.Cases)
			continue
		}
		if !slices.ContainsFunc(list.Items[0].Matched, func(m Match) bool {
			return m.Signature && m.Word == q.Signature && m.Via != nil && *m.Via == q.Means
		}) {
			t.Errorf("%q: reasons %+v do not name %s → %s", q.Text, list.Items[0].Matched, q.Signature, q.Means)
		}
	}
}

// A case's JSON carries what people saw, each quote with its kind and
// source; a case without quotes has an empty list, never null.
func TestCaseJSONCarriesQuotes(t *testing.T) {
	ta := newAPI(t, Config{BaseURL: "http://127.0.0.1:8080"})
	c, err := ta.a.lib.FindCaseByID(context.Background(), "IL-0216")
	if err != nil {
		t.Fatal(err)
	}
	if got := ta.a.fullCase(c).Quoted; got == nil {
		t.Error("quoted is null for a case without quotes; want []")
	}
	withQuotes := *c
	withQuotes.Quotes = []incidentlib.Quote{{Text: "Reason: OOMKilled", Kind: incidentlib.QuoteLog, Source: "https://example.com/pm"}}
	got := ta.a.fullCase(&withQuotes).Quoted
	if len(got) != 1 || got[0] != (Quote{Text: "Reason: OOMKilled", Kind: "log", Source: "https://example.com/pm"}) {
		t.Errorf("quoted %+v", got)
	}
}
