package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
)

// someCase returns a case of the shipped corpus with a root cause, the
// most components, and at least one related case, so tests do not depend on
// one ID.
func someCase(t *testing.T, lib incidentlib.Library) *incidentlib.Case {
	t.Helper()
	cases, err := lib.Cases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var best *incidentlib.Case
	for _, c := range cases {
		if c.RootCause != "" && (best == nil || len(c.Components) > len(best.Components)) {
			best = c
		}
	}
	if best == nil {
		t.Fatal("no case with a root cause in the corpus")
	}
	return best
}

func TestSearchIncidents(t *testing.T) {
	lib := testLibrary(t)
	cs := connect(t, lib, Config{})
	c := someCase(t, lib)
	// The case's own title words must find it.
	var page CasePage
	title := strings.Join(strings.Fields(c.Title)[:12], " ")
	res := call(t, cs, "search_incidents", map[string]any{"query": title, "limit": 5}, &page)
	if res.IsError {
		t.Fatalf("error: %s", text(res))
	}
	if page.Total == 0 || len(page.Cases) == 0 || len(page.Cases) > 5 {
		t.Fatalf("got %d of %d cases, want 1..5", len(page.Cases), page.Total)
	}
	if page.Cases[0].ID != c.ID {
		t.Errorf("searching %s's title ranked %s first", c.ID, page.Cases[0].ID)
	}
	for _, h := range page.Cases {
		if h.URL != testBaseURL+"/cases/"+h.ID {
			t.Errorf("hit %s: url %q", h.ID, h.URL)
		}
		if !strings.Contains(text(res), h.URL) {
			t.Errorf("text rendering lacks the URL of %s", h.ID)
		}
		// Why is in the text answer; the structured one says it in matched.
		if len(h.Matched) == 0 || h.Title == "" || h.Company == "" || h.Date == "" || h.Summary == "" {
			t.Errorf("hit %s lacks a field: %+v", h.ID, h)
		}
	}
	if page.Sort != "relevance" {
		t.Errorf("sort = %q, want relevance", page.Sort)
	}

	// A filter by the case's root cause keeps only cases with it.
	res = call(t, cs, "search_incidents", map[string]any{"query": title, "root_cause": []string{c.RootCause}, "limit": 50}, &page)
	if res.IsError {
		t.Fatalf("error: %s", text(res))
	}
	for _, h := range page.Cases {
		if h.RootCause != c.RootCause {
			t.Errorf("root_cause filter %s returned %s with %q", c.RootCause, h.ID, h.RootCause)
		}
	}
}

func TestListIncidentsPaging(t *testing.T) {
	lib := testLibrary(t)
	cs := connect(t, lib, Config{})
	c := someCase(t, lib)
	comp := c.Components[0]
	// Every page of the same listing, whatever the component's count.
	var want *incidentlib.SearchResult
	var wantIDs []string
	for page := 1; ; page++ {
		var err error
		want, err = lib.SearchCases(context.Background(), incidentlib.Query{Filters: incidentlib.Filters{Components: []string{comp}}, Page: page, PerPage: incidentlib.MaxPerPage})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range want.Hits {
			wantIDs = append(wantIDs, h.Case.ID)
		}
		if len(want.Hits) == 0 || len(wantIDs) >= want.Total {
			break
		}
	}
	args := map[string]any{"component": []string{comp}, "limit": 2}
	var got []string
	for range 200 {
		var page CasePage
		res := call(t, cs, "list_incidents", args, &page)
		if res.IsError {
			t.Fatalf("error: %s", text(res))
		}
		if page.Total != want.Total {
			t.Fatalf("total = %d, want %d", page.Total, want.Total)
		}
		for _, h := range page.Cases {
			got = append(got, h.ID)
		}
		if page.NextCursor == "" {
			break
		}
		if !strings.Contains(text(res), page.NextCursor) {
			t.Errorf("text rendering lacks the next cursor")
		}
		args["cursor"] = page.NextCursor
	}
	if diff := cmp.Diff(wantIDs, got); diff != "" {
		t.Errorf("paging through list_incidents (-want +got):\n%s", diff)
	}

	// The cursor of one query is refused for another.
	args["component"] = []string{c.Components[len(c.Components)-1], comp}
	res := call(t, cs, "list_incidents", args, nil)
	if !res.IsError || !strings.Contains(text(res), "cursor") {
		t.Errorf("cursor of another query: got %v %q, want a cursor error", res.IsError, text(res))
	}
}

func TestGetIncident(t *testing.T) {
	lib := testLibrary(t)
	cs := connect(t, lib, Config{})
	c := someCase(t, lib)
	var d CaseDetail
	res := call(t, cs, "get_incident", map[string]any{"id": strings.ToLower(c.ID)}, &d)
	if res.IsError {
		t.Fatalf("error: %s", text(res))
	}
	if d.ID != c.ID || d.Title != c.Title || d.Summary != c.Summary || d.URL != testBaseURL+"/cases/"+c.ID {
		t.Errorf("detail = %+v", d)
	}
	if d.RootCause == nil || d.RootCause.Slug != c.RootCause {
		t.Errorf("root cause = %+v, want %s", d.RootCause, c.RootCause)
	}
	var comps []string
	for _, r := range d.Components {
		comps = append(comps, r.Slug)
	}
	if diff := cmp.Diff(c.Components, comps); diff != "" {
		t.Errorf("components (-want +got):\n%s", diff)
	}
	if len(d.Sources) != len(c.Sources) || len(d.Remediation) != len(c.Remediation) || len(d.ActionItems) != len(c.ActionItems) {
		t.Errorf("sources/remediation/action items lost: %+v", d)
	}
	md := text(res)
	for _, section := range []string{"## Key facts", "## Summary", "## Symptoms", "## Root cause", "## Detection", "## Remediation", "## Action items", "## Lessons", "## Sources", "Verification:", d.URL} {
		if !strings.Contains(md, section) {
			t.Errorf("Markdown lacks %q", section)
		}
	}
}

func TestSimilarIncidents(t *testing.T) {
	lib := testLibrary(t)
	cs := connect(t, lib, Config{})
	c := someCase(t, lib)
	want, err := lib.SimilarCases(context.Background(), c.ID, 3)
	if err != nil {
		t.Fatal(err)
	}
	var out SimilarOutput
	res := call(t, cs, "similar_incidents", map[string]any{"id": c.ID, "limit": 3}, &out)
	if res.IsError {
		t.Fatalf("error: %s", text(res))
	}
	if len(out.Similar) != len(want) {
		t.Fatalf("got %d similar, want %d", len(out.Similar), len(want))
	}
	for i, s := range out.Similar {
		if s.ID != want[i].Case.ID || s.Why == "" || strings.Contains(s.Why, "**") {
			t.Errorf("similar[%d] = %s %q, want %s with plain reasons", i, s.ID, s.Why, want[i].Case.ID)
		}
		if len(s.Shared) == 0 || len(s.Shared) != len(want[i].Shared) {
			t.Errorf("similar[%d]: shared %+v, want the %d terms behind %q", i, s.Shared, len(want[i].Shared), want[i].Reason())
		}
		for k, sh := range s.Shared {
			w := want[i].Shared[k]
			if sh.Slug != w.Slug || sh.Name != w.Name || sh.Facet == "" || sh.Reason == "" {
				t.Errorf("similar[%d].shared[%d] = %+v, want slug %s name %s", i, k, sh, w.Slug, w.Name)
			}
		}
		if !strings.Contains(text(res), s.URL) {
			t.Errorf("text lacks %s", s.URL)
		}
	}
}

func TestGetTopic(t *testing.T) {
	lib := testLibrary(t)
	cs := connect(t, lib, Config{})
	c := someCase(t, lib)
	term, _ := lib.Vocabulary().Term(incidentlib.FacetRootCause, c.RootCause)
	var out TopicOutput
	res := call(t, cs, "get_topic", map[string]any{"facet": "root_cause", "slug": c.RootCause, "limit": 3}, &out)
	if res.IsError {
		t.Fatalf("error: %s", text(res))
	}
	if out.Slug != term.Slug || out.Name != term.Name || out.Definition != term.Definition {
		t.Errorf("topic = %+v, want term %+v", out, term)
	}
	stats, _ := lib.Stats(context.Background())
	for _, fc := range stats.Terms[incidentlib.FacetRootCause] {
		if fc.Term.Slug == c.RootCause && fc.Count != out.Total {
			t.Errorf("total = %d, want %d", out.Total, fc.Count)
		}
	}
	if len(out.Cases) == 0 || len(out.Cases) > 3 || len(out.Components) == 0 {
		t.Errorf("cases %d, components %d", len(out.Cases), len(out.Components))
	}
	if len(out.RootCauses) != 1 || out.RootCauses[0].Slug != c.RootCause {
		t.Errorf("root causes of a root-cause topic = %+v", out.RootCauses)
	}
	if out.Total > 3 && out.NextCursor == "" {
		t.Errorf("no next cursor with %d cases", out.Total)
	}
	var next TopicOutput
	res = call(t, cs, "get_topic", map[string]any{"facet": "root_cause", "slug": c.RootCause, "cursor": out.NextCursor}, &next)
	if res.IsError || len(next.Cases) == 0 || next.Cases[0].ID == out.Cases[0].ID {
		t.Errorf("second page: %v %q", res.IsError, text(res))
	}
}

func TestVocab(t *testing.T) {
	lib := testLibrary(t)
	cs := connect(t, lib, Config{})
	v := lib.Vocabulary()
	var all VocabOutput
	if res := call(t, cs, "vocab", map[string]any{}, &all); res.IsError {
		t.Fatalf("error: %s", text(res))
	}
	if len(all.Facets) != len(incidentlib.Facets) || len(all.Severities) != len(v.Severities()) {
		t.Fatalf("got %d facets, %d severities", len(all.Facets), len(all.Severities))
	}
	stats, _ := lib.Stats(context.Background())
	for i, f := range incidentlib.Facets {
		got := all.Facets[i]
		if got.Facet != string(f) || len(got.Terms) != len(v.Terms(f)) {
			t.Errorf("facet %s: %d terms, want %d", got.Facet, len(got.Terms), len(v.Terms(f)))
		}
		counts := map[string]int{}
		for _, fc := range stats.Terms[f] {
			counts[fc.Term.Slug] = fc.Count
		}
		for _, term := range got.Terms {
			if term.Definition != "" || term.Cases != counts[term.Slug] {
				t.Errorf("%s %s: %d cases, want %d", f, term.Slug, term.Cases, counts[term.Slug])
			}
		}
	}
	for _, sev := range all.Severities {
		res, err := lib.SearchCases(context.Background(), incidentlib.Query{Filters: incidentlib.Filters{Severities: []string{sev.Slug}}, PerPage: 1})
		if err != nil || res.Total != sev.Cases {
			t.Errorf("severity %s: %d cases, want %d (%v)", sev.Slug, sev.Cases, res.Total, err)
		}
	}
	if len(all.Facets[1].Groups) != len(v.Groups()) {
		t.Errorf("component groups: %d, want %d", len(all.Facets[1].Groups), len(v.Groups()))
	}
	var one VocabOutput
	res := call(t, cs, "vocab", map[string]any{"facet": "symptom"}, &one)
	if len(one.Facets) != 1 || one.Facets[0].Facet != "symptom" || one.Severities != nil {
		t.Errorf("vocab(symptom) = %+v", one)
	}
	if !strings.Contains(text(res), "`"+v.Terms(incidentlib.FacetSymptom)[0].Slug+"`") {
		t.Errorf("text lacks the first symptom slug")
	}
}

// TestToolErrors checks that every kind of bad argument comes back as a
// tool result with isError, naming what was wrong and what is valid.
func TestToolErrors(t *testing.T) {
	lib := testLibrary(t)
	cs := connect(t, lib, Config{})
	v := lib.Vocabulary()
	cases, _ := lib.Cases(context.Background())
	firstRC := v.Slugs(incidentlib.FacetRootCause)[0]
	firstComp := v.Slugs(incidentlib.FacetComponent)[0]
	for _, tc := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"get_incident", map[string]any{"id": "IL-9999"}, []string{"no case IL-9999", cases[0].ID[:3], "search_incidents"}},
		{"get_incident", map[string]any{"id": "IL-12345"}, []string{"not a case ID", "IL-0561"}},
		{"get_incident", map[string]any{}, []string{"id"}},
		{"similar_incidents", map[string]any{"id": "IL-9998"}, []string{"no case IL-9998"}},
		{"similar_incidents", map[string]any{"id": cases[0].ID, "limit": 21}, []string{"limit must be between 1 and 20"}},
		{"search_incidents", map[string]any{"query": "  "}, []string{"query is empty", "list_incidents"}},
		{"search_incidents", map[string]any{"query": "x", "root_cause": []string{"nope"}}, []string{`unknown root_cause slug "nope"`, firstRC}},
		{"search_incidents", map[string]any{"query": "x", "component": []string{"databse"}}, []string{"unknown component slug", firstComp}},
		{"search_incidents", map[string]any{"query": "x", "severity": []string{"huge"}}, []string{"unknown severity", "critical"}},
		{"search_incidents", map[string]any{"query": "x", "sort": "best"}, []string{"sort", "relevance", "newest"}},
		{"search_incidents", map[string]any{"query": "x", "limit": 500}, []string{"limit must be between 1 and 50"}},
		{"search_incidents", map[string]any{"query": "x", "limit": "ten"}, []string{"limit must be a whole number from 1 to 50"}},
		{"search_incidents", map[string]any{"query": "x", "component": "database"}, []string{"component must be a list of strings"}},
		{"search_incidents", map[string]any{}, []string{"missing argument query"}},
		{"search_incidents", map[string]any{"query": strings.Repeat("a", 2000)}, []string{"query is longer than 1000 characters"}},
		{"search_incidents", map[string]any{"query": "x", "cursor": "garbage!"}, []string{"cursor", "next_cursor"}},
		{"search_incidents", map[string]any{"query": "x", "bogus": 1}, []string{"bogus"}},
		{"search_incidents", map[string]any{"query": "x", "year_from": 2020, "year_to": 2010}, []string{"year_from", "after year_to"}},
		{"list_incidents", map[string]any{"sort": "relevance"}, []string{"sort", "newest"}},
		{"list_incidents", map[string]any{"symptom": []string{"slow"}}, []string{"unknown symptom slug", v.Slugs(incidentlib.FacetSymptom)[0]}},
		{"list_incidents", map[string]any{"cursor": encodeCursor("other", 2, 10)}, []string{"other arguments"}},
		{"get_topic", map[string]any{"facet": "cause", "slug": "x"}, []string{"facet", "root_cause", "contributing_factor"}},
		{"get_topic", map[string]any{"facet": "root_cause", "slug": firstRC + "x"}, []string{"unknown root_cause slug", "did you mean", firstRC}},
		{"get_topic", map[string]any{"facet": "root_cause", "slug": firstRC, "cursor": "eyJ2IjoxfQ"}, []string{"cursor"}},
		{"vocab", map[string]any{"facet": "colour"}, []string{"facet", "root_cause"}},
	} {
		t.Run(fmt.Sprintf("%s%v", tc.tool, tc.args), func(t *testing.T) {
			res := call(t, cs, tc.tool, tc.args, nil)
			msg := text(res)
			if !res.IsError {
				t.Fatalf("no error; got %.200s", msg)
			}
			if res.StructuredContent != nil {
				t.Errorf("an error result carries structured content")
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "goroutine") || strings.Contains(msg, ".go:") || strings.Contains(msg, "validating") || strings.Contains(msg, "/properties/") {
				t.Errorf("message shows internals: %q", msg)
			}
			if len(msg) > 1500 || strings.Contains(msg, "aaaaaaaaaa") {
				t.Errorf("message echoes the input: %.100q (%d bytes)", msg, len(msg))
			}
		})
	}
	// An unknown tool is the one protocol error: the SDK answers it.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "drop_tables"}); err == nil {
		t.Errorf("unknown tool: no error")
	}
}

func TestToolList(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		a := tool.Annotations
		if a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint || a.DestructiveHint == nil || *a.DestructiveHint {
			t.Errorf("%s: annotations %+v", tool.Name, a)
		}
		if tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s: no output schema or description", tool.Name)
		}
	}
	slices.Sort(names)
	want := []string{"get_incident", "get_topic", "list_incidents", "search_incidents", "similar_incidents", "vocab"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestResources(t *testing.T) {
	lib := testLibrary(t)
	cs := connect(t, lib, Config{})
	ctx := context.Background()
	cases, _ := lib.Cases(ctx)
	listed := map[string]*mcp.Resource{}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[r.URI] = r
	}
	if len(listed) != len(cases)+1 || listed[vocabularyURI] == nil {
		t.Fatalf("listed %d resources, want %d cases and the vocabulary", len(listed), len(cases))
	}
	for _, c := range cases {
		r := listed["incident://"+c.ID]
		if r == nil || r.Title != c.Title || r.MIMEType != "text/markdown" {
			t.Errorf("resource for %s: %+v", c.ID, r)
		}
	}
	var templates []string
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, rt.URITemplate)
	}
	if diff := cmp.Diff([]string{"incident://{id}"}, templates); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}

	c := someCase(t, lib)
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "incident://" + c.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || !strings.HasPrefix(res.Contents[0].Text, "# "+c.ID+": "+c.Title) || res.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("incident resource: %+v", res.Contents)
	}
	res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: vocabularyURI})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range incidentlib.Facets {
		if !strings.Contains(res.Contents[0].Text, "`"+string(f)+"`") {
			t.Errorf("vocabulary resource lacks facet %s", f)
		}
	}

	for uri, want := range map[string]string{
		"incident://IL-9999": "no case IL-9999",
		"incident://nope":    "IL-0561",
		"other://IL-0001":    "Resource not found",
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, want) {
			t.Errorf("read %s: %v, want resource-not-found mentioning %q", uri, err, want)
		}
	}
}

func TestPrompts(t *testing.T) {
	lib := testLibrary(t)
	cs := connect(t, lib, Config{})
	ctx := context.Background()
	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range lp.Prompts {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"learn_from_incidents", "review_design"}, names); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	c := someCase(t, lib)
	rel, _ := lib.SimilarCases(ctx, c.ID, maxPromptCases-1)
	comp := c.Components[0]
	for _, tc := range []struct {
		name string
		args map[string]string
		want []string
	}{
		{"learn_from_incidents", map[string]string{"incident": c.ID, "context": "our payments API"}, []string{c.Title, testBaseURL + "/cases/" + c.ID, testBaseURL + "/cases/" + rel[0].Case.ID, "our payments API", "get_incident"}},
		{"learn_from_incidents", map[string]string{"incident": c.Title}, []string{testBaseURL + "/cases/" + c.ID, "closest cases"}},
		{"review_design", map[string]string{"design": "A queue in front of a Postgres primary, with retries.", "components": comp}, []string{"A queue in front of a Postgres primary", "involving " + comp, testBaseURL + "/cases/", "list_incidents"}},
		{"review_design", map[string]string{"design": c.Summary}, []string{testBaseURL + "/cases/" + c.ID}},
	} {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: tc.name, Arguments: tc.args})
		if err != nil {
			t.Errorf("%s %v: %v", tc.name, tc.args, err)
			continue
		}
		if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
			t.Fatalf("%s: messages %+v", tc.name, res.Messages)
		}
		txt := res.Messages[0].Content.(*mcp.TextContent).Text
		for _, w := range tc.want {
			if !strings.Contains(txt, w) {
				t.Errorf("%s %v: text lacks %q", tc.name, tc.args, w)
			}
		}
	}
	for _, tc := range []struct {
		name string
		args map[string]string
		want string
	}{
		{"learn_from_incidents", map[string]string{"incident": "IL-9999"}, "no case IL-9999"},
		{"learn_from_incidents", map[string]string{}, "incident"},
		{"review_design", map[string]string{"design": "x", "components": "databse"}, "unknown component slug"},
		{"review_design", map[string]string{"components": comp}, "design"},
	} {
		_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: tc.name, Arguments: tc.args})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: error %v, want one mentioning %q", tc.name, tc.args, err, tc.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	lib := testLibrary(t)
	cs := connect(t, lib, Config{})
	c := someCase(t, lib)
	for _, tc := range []struct {
		ref  *mcp.CompleteReference
		arg  mcp.CompleteParamsArgument
		want string
	}{
		{&mcp.CompleteReference{Type: "ref/prompt", Name: promptLearn}, mcp.CompleteParamsArgument{Name: "incident", Value: c.ID[:6]}, c.ID},
		{&mcp.CompleteReference{Type: "ref/resource", URI: incidentTemplate}, mcp.CompleteParamsArgument{Name: "id", Value: strings.ToLower(c.ID)}, c.ID},
		{&mcp.CompleteReference{Type: "ref/prompt", Name: promptReview}, mcp.CompleteParamsArgument{Name: "components", Value: "x," + c.Components[0][:3]}, c.Components[0]},
	} {
		res, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: tc.ref, Argument: tc.arg})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(res.Completion.Values, tc.want) {
			t.Errorf("complete %+v: %v lacks %s", tc.arg, res.Completion.Values, tc.want)
		}
	}
}

// faultyLibrary answers every search only after its deadline has passed, or
// fails with an internal error.
type faultyLibrary struct {
	incidentlib.Library
	block bool
}

func (f faultyLibrary) SearchCases(ctx context.Context, q incidentlib.Query) (*incidentlib.SearchResult, error) {
	if f.block {
		time.Sleep(500 * time.Millisecond) // ignores ctx, as a stuck backend would
		return nil, ctx.Err()
	}
	return nil, errors.New("index shard 7: checksum mismatch at /var/lib/secret")
}

func TestDeadlineAndInternalErrors(t *testing.T) {
	lib := testLibrary(t)
	start := time.Now()
	cs := connect(t, faultyLibrary{Library: lib, block: true}, Config{CallTimeout: 100 * time.Millisecond})
	res := call(t, cs, "search_incidents", map[string]any{"query": "x"}, nil)
	if !res.IsError || !strings.Contains(text(res), "longer than 100ms") {
		t.Errorf("slow call: %v %q", res.IsError, text(res))
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("slow call took %v; the deadline is 100ms", d)
	}

	var logs bytes.Buffer
	cs = connect(t, faultyLibrary{Library: lib}, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	res = call(t, cs, "list_incidents", map[string]any{}, nil)
	if !res.IsError || strings.Contains(text(res), "checksum") || !strings.Contains(text(res), "internal error") {
		t.Errorf("internal error shown as %q", text(res))
	}
	if !strings.Contains(logs.String(), "checksum mismatch") {
		t.Errorf("internal error not logged: %q", logs.String())
	}
}
