package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine/enginetest"
)

// connectAs is connect without the test base URL: cfg is used as given.
func connectAs(t *testing.T, cfg Config) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := NewServer(testLibrary(t), cfg)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func TestSearchIncidentsTakesTheQuestionAsAsked(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	for _, q := range enginetest.IssueQueries {
		var page CasePage
		res := call(t, cs, "search_incidents", map[string]any{"query": q.Text}, &page)
		if res.IsError {
			t.Fatalf("%q: %s", q.Text, text(res))
		}
		var got []string
		for _, c := range page.Cases {
			got = append(got, c.ID)
		}
		if !q.InTop3(got) {
			t.Errorf("%q: neither %s nor %v in the top 3 of %v", q.Text, q.Want, q.Also, got)
		}
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "search_incidents" {
			schema, _ := json.Marshal(tool.InputSchema)
			if !strings.Contains(tool.Description, "question as you would ask it") || strings.Contains(tool.Description, "every word must match") ||
				strings.Contains(string(schema), "Every word must match") {
				t.Errorf("search_incidents still tells models to use few words: %s", tool.Description)
			}
		}
	}
}

func TestSearchNamesRecognisedTermsAndHelps(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	var page CasePage
	res := call(t, cs, "search_incidents", map[string]any{"query": "retry storm"}, &page)
	if len(page.Recognised) != 1 || page.Recognised[0].Slug != "retry-amplification" || page.Recognised[0].Facet != "contributing_factor" || page.Recognised[0].Cases < 11 {
		t.Errorf("recognised %+v, want retry-amplification", page.Recognised)
	}
	if !strings.Contains(text(res), "Recognised contributing factor: Retry amplification") {
		t.Errorf("the text does not name the recognised term:\n%s", text(res))
	}
	if len(page.Cases) == 0 || len(page.Cases[0].Matched) == 0 || len(page.Cases[0].Terms) == 0 {
		t.Errorf("first hit lacks structured reasons: %+v", page.Cases)
	}
	page = CasePage{}
	call(t, cs, "search_incidents", map[string]any{"query": "databse qwxzv"}, &page)
	if !slices.Contains(page.Unmatched, "qwxzv") || len(page.Suggestions) == 0 {
		t.Errorf("unmatched %v suggestions %+v", page.Unmatched, page.Suggestions)
	}
}

func TestStructuredContentHasNoMarkdown(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search_incidents", map[string]any{"query": "retries database"}},
		{"similar_incidents", map[string]any{"id": "IL-0561"}},
		{"list_incidents", map[string]any{"limit": 5}},
	} {
		res := call(t, cs, c.tool, c.args, nil)
		b, _ := json.Marshal(res.StructuredContent)
		if strings.Contains(string(b), "**") || strings.Contains(string(b), "`") {
			t.Errorf("%s: structured content holds Markdown: %.300s", c.tool, b)
		}
	}
}

func TestHitsCarrySourceURLsAndNoDeadLinks(t *testing.T) {
	// With a base URL, hits link to the library's pages and the sources.
	var page CasePage
	call(t, connect(t, testLibrary(t), Config{}), "search_incidents", map[string]any{"query": "retry storm"}, &page)
	for _, c := range page.Cases {
		if !strings.HasPrefix(c.URL, testBaseURL+"/cases/") || !strings.HasPrefix(c.Source, "http") {
			t.Errorf("%s: url %q source %q", c.ID, c.URL, c.Source)
		}
	}
	// Without one (stdio with no --base-url), no page links at all.
	cs := connectAs(t, Config{})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search_incidents", map[string]any{"query": "retry storm"}},
		{"similar_incidents", map[string]any{"id": "IL-0561"}},
		{"get_incident", map[string]any{"id": "IL-0561"}},
		{"list_incidents", map[string]any{"limit": 3}},
	} {
		res := call(t, cs, c.tool, c.args, nil)
		b, _ := json.Marshal(res.StructuredContent)
		all := text(res) + string(b)
		if strings.Contains(all, "127.0.0.1") || strings.Contains(all, "/cases/IL-") {
			t.Errorf("%s without a base URL links to a page: %.300s", c.tool, all)
		}
		if c.tool != "get_incident" && !strings.Contains(string(b), `"source":"http`) {
			t.Errorf("%s: hits lack source URLs: %.300s", c.tool, b)
		}
	}
}

func TestCaseIDsAreNormalised(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	for _, id := range []string{"il-561", "IL-561", "561", " IL-0561 "} {
		var d CaseDetail
		if res := call(t, cs, "get_incident", map[string]any{"id": id}, &d); res.IsError || d.ID != "IL-0561" {
			t.Errorf("get_incident(%q) = %q %s", id, d.ID, text(res))
		}
		var s SimilarOutput
		if res := call(t, cs, "similar_incidents", map[string]any{"id": id, "limit": 2}, &s); res.IsError || s.ID != "IL-0561" {
			t.Errorf("similar_incidents(%q) = %q %s", id, s.ID, text(res))
		}
	}
	r, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "incident://il-561"})
	if err != nil || len(r.Contents) == 0 || !strings.Contains(r.Contents[0].Text, "IL-0561") {
		t.Errorf("incident://il-561: %v", err)
	}
}

func TestCapabilitiesClaimOnlyWhatCanHappen(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	caps := cs.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Tools.ListChanged || caps.Prompts == nil || caps.Prompts.ListChanged || caps.Resources == nil || caps.Resources.ListChanged {
		t.Errorf("capabilities claim list changes that never happen: %+v %+v %+v", caps.Tools, caps.Prompts, caps.Resources)
	}
	//lint:ignore SA1019 checking the deprecated capability is declared while setLevel is still answered
	if caps.Logging == nil {
		t.Errorf("logging/setLevel is accepted but logging is not declared")
	}
	//lint:ignore SA1019 the deprecated method is still answered, which is why logging is declared
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Errorf("logging/setLevel: %v", err)
	}
}

func TestFilterArgumentsAreTypedPlainly(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		json.Unmarshal(b, &s)
		for name, p := range s.Properties {
			if _, ok := p["type"].(string); !ok {
				t.Errorf("%s.%s: type %v is not one plain type", tool.Name, name, p["type"])
			}
		}
	}
}

func TestVocabOverviewIsCompact(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	var all VocabOutput
	res := call(t, cs, "vocab", map[string]any{}, &all)
	b, _ := json.Marshal(res.StructuredContent)
	// About four bytes a token: the text overview costs a model about 1k
	// tokens, the structured one under 2k, not the 5k of every definition.
	if len(b) > 7000 || len(text(res)) > 4000 {
		t.Errorf("vocab overview: %d bytes structured, %d text; want compact", len(b), len(text(res)))
	}
	var full VocabOutput
	call(t, cs, "vocab", map[string]any{"definitions": true}, &full)
	if full.Facets[0].Terms[0].Definition == "" {
		t.Errorf("definitions=true gives no definitions")
	}
}

func TestGetTopicListsAreBounded(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	var out TopicOutput
	call(t, cs, "get_topic", map[string]any{"facet": "root_cause", "slug": "config-change", "limit": 50}, &out)
	for name, l := range map[string][]TermCount{"components": out.Components, "root_causes": out.RootCauses, "symptoms": out.Symptoms, "contributing_factors": out.ContributingFactors} {
		if len(l) > maxTopicTerms {
			t.Errorf("%s: %d terms, want at most %d", name, len(l), maxTopicTerms)
		}
	}
	if len(out.Cases) > maxLimit {
		t.Errorf("%d cases on a page", len(out.Cases))
	}
}

func TestSearchIncidentsRecognisesPastedErrors(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	for _, q := range enginetest.PastedQueries {
		var page CasePage
		res := call(t, cs, "search_incidents", map[string]any{"query": q.Text}, &page)
		if res.IsError {
			t.Fatalf("%q: %s", q.Text, text(res))
		}
		if len(page.Cases) == 0 || !slices.Contains(q.Cases, page.Cases[0].ID) {
			t.Errorf("%q: first case is not one of %v", q.Text, q.Cases)
			continue
		}
		// The structured answer says why in matched; the text answer, which
		// a model reads, says it in words.
		first := page.Cases[0]
		if !strings.Contains(text(res), "matched: "+q.Signature+" → "+q.Means) ||
			!slices.ContainsFunc(first.Matched, func(m MatchReason) bool { return m.Signature && m.Word == q.Signature }) {
			t.Errorf("%q: the text answer / matched %+v do not name %s → %s", q.Text, first.Matched, q.Signature, q.Means)
		}
	}
}

// quotingLibrary serves IL-0216 with a quote, as a case that records what
// people saw would be served.
type quotingLibrary struct{ incidentlib.Library }

func (l quotingLibrary) FindCaseByID(ctx context.Context, id string) (*incidentlib.Case, error) {
	c, err := l.Library.FindCaseByID(ctx, id)
	if err != nil || c.ID != "IL-0216" {
		return c, err
	}
	q := *c
	q.Quotes = []incidentlib.Quote{{Text: "Reason: OOMKilled", Kind: incidentlib.QuoteLog, Source: "https://example.com/pm"}}
	return &q, nil
}

func TestGetIncidentCarriesWhatPeopleSaw(t *testing.T) {
	cs := connect(t, quotingLibrary{testLibrary(t)}, Config{})
	var d CaseDetail
	res := call(t, cs, "get_incident", map[string]any{"id": "IL-0216"}, &d)
	if res.IsError {
		t.Fatal(text(res))
	}
	if len(d.Quoted) != 1 || d.Quoted[0] != (Quote{Text: "Reason: OOMKilled", Kind: "log", Source: "https://example.com/pm"}) {
		t.Errorf("quoted %+v", d.Quoted)
	}
	if !strings.Contains(text(res), "## What people saw") {
		t.Errorf("the case text lacks what people saw:\n%s", text(res))
	}
}
