package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
)

// Paging limits of the tools. They are smaller than the JSON API's: a model
// pays for every token of a page it reads.
const (
	defaultSearchLimit  = 10
	defaultListLimit    = 20
	defaultTopicLimit   = 10
	defaultSimilarLimit = 5
	maxLimit            = 50
	maxSimilarLimit     = 20
)

// Filters narrow search_incidents and list_incidents. The JSON names are
// the facet names, so that what vocab returns can be passed back as is.
type Filters struct {
	RootCause          []string `json:"root_cause,omitempty" jsonschema:"root-cause slugs (e.g. config-change); a case matches if it has any of them. List them with vocab(facet=root_cause)"`
	Component          []string `json:"component,omitempty" jsonschema:"component or component-group slugs (e.g. database); a group matches all its members. List them with vocab(facet=component)"`
	Symptom            []string `json:"symptom,omitempty" jsonschema:"symptom slugs (e.g. high-error-rate). List them with vocab(facet=symptom)"`
	ContributingFactor []string `json:"contributing_factor,omitempty" jsonschema:"contributing-factor slugs (e.g. retry-amplification). List them with vocab(facet=contributing_factor)"`
	Company            []string `json:"company,omitempty" jsonschema:"company names as the cases spell them (case-insensitive), e.g. Cloudflare"`
	Severity           []string `json:"severity,omitempty" jsonschema:"severity slugs: critical (full outage, data lost or exposed), major (other failures) or minor (slow, late or degraded); a case's severity follows from its symptoms"`
	YearFrom           int      `json:"year_from,omitempty" jsonschema:"only incidents that started in this year or later"`
	YearTo             int      `json:"year_to,omitempty" jsonschema:"only incidents that started in this year or earlier"`
}

// SearchInput is the input of search_incidents.
type SearchInput struct {
	Query string `json:"query" jsonschema:"the question as asked, a pasted alert or symptoms, or a few words (e.g. 'our auth service fell over when a migration made a query slow and clients retried', 'bgp withdrawal'). Cases holding every meaningful word rank first, then those holding most; question words carry no weight; abbreviations, synonyms and vocabulary term names are understood. \"double quotes\" make a phrase, -word excludes, a OR b takes either"`
	Filters
	Sort   string `json:"sort,omitempty" jsonschema:"relevance (default), newest, oldest, or longest (longest time to resolve first)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"cases per page, 1 to 50; default 10"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous call with the same arguments, for the next page"`
	// Remediation adds each hit's remediation, saving a get_incident per
	// case when the question is what fixed them.
	Remediation bool `json:"remediation,omitempty" jsonschema:"true to include each case's remediation (what fixed it) in the hits"`
}

// ListInput is the input of list_incidents.
type ListInput struct {
	Filters
	Sort        string `json:"sort,omitempty" jsonschema:"newest (default), oldest, or longest (longest time to resolve first)"`
	Limit       int    `json:"limit,omitempty" jsonschema:"cases per page, 1 to 50; default 20"`
	Cursor      string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous call with the same arguments, for the next page"`
	Remediation bool   `json:"remediation,omitempty" jsonschema:"true to include each case's remediation (what fixed it) in the hits"`
}

// IDInput names one case.
type IDInput struct {
	ID string `json:"id" jsonschema:"the case ID, IL- and four digits, e.g. IL-0561"`
}

// SimilarInput is the input of similar_incidents.
type SimilarInput struct {
	ID    string `json:"id" jsonschema:"the case ID, IL- and four digits, e.g. IL-0561"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many related cases, 1 to 20; default 5"`
}

// TopicInput is the input of get_topic.
type TopicInput struct {
	Facet  string `json:"facet" jsonschema:"root_cause, component, symptom or contributing_factor"`
	Slug   string `json:"slug" jsonschema:"the term's slug as vocab lists it (e.g. config-change); for component, a group slug works too"`
	Limit  int    `json:"limit,omitempty" jsonschema:"cases per page, 1 to 50; default 10"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous call with the same facet and slug, for the next page"`
}

// VocabInput is the input of vocab.
type VocabInput struct {
	Facet       string `json:"facet,omitempty" jsonschema:"root_cause, component, symptom or contributing_factor; leave out for a compact overview of every facet"`
	Definitions bool   `json:"definitions,omitempty" jsonschema:"include each term's definition (always included when facet is given)"`
}

// CaseHit is one case in a list of cases. Everything in it is plain text:
// the Markdown is in the text content only.
type CaseHit struct {
	ID          string        `json:"id"`
	Title       string        `json:"title"`
	Company     string        `json:"company"`
	Date        string        `json:"date" jsonschema:"when impact began: a day (2026-08-24), or only a month or a year where the source gives no more"`
	Summary     string        `json:"summary" jsonschema:"the first sentence of the case's summary"`
	RootCause   string        `json:"root_cause,omitempty" jsonschema:"root-cause slug; absent when the source does not disclose one"`
	Why         string        `json:"why,omitempty" jsonschema:"why this case is in the list, in plain words: the query words it holds and where, or the reasons it is related"`
	Excerpt     string        `json:"excerpt,omitempty" jsonschema:"the case text around the first match, plain"`
	Matched     []MatchReason `json:"matched,omitempty" jsonschema:"each query word or phrase the case holds, how and in which fields"`
	Terms       []TermRef     `json:"terms,omitempty" jsonschema:"vocabulary terms the query names that this case is tagged with"`
	Shared      []SharedTerm  `json:"shared,omitempty" jsonschema:"similar_incidents only: the terms both cases carry, weightiest first"`
	URL         string        `json:"url,omitempty" jsonschema:"the case's page in the library; absent when the server was started without a base URL"`
	Source      string        `json:"source,omitempty" jsonschema:"the case's main public source: the company's own write-up or status page when there is one; cite it (get_incident lists every source)"`
	Remediation []string      `json:"remediation,omitempty" jsonschema:"what was done to fix it and prevent a recurrence; only when the call asked for remediation"`

	md string // the excerpt with matches in Markdown bold, for the text content
}

// MatchReason is one query word (or phrase) a hit holds.
type MatchReason struct {
	Word      string   `json:"word" jsonschema:"the word or phrase as the query wrote it"`
	Via       string   `json:"via,omitempty" jsonschema:"absent when it matched as typed; else the synonym, near spelling or vocabulary term that matched, or what a recognised error signature means"`
	Fields    []string `json:"fields" jsonschema:"case fields holding it (title, summary, trigger, quoted, …), a facet for a vocabulary term, started for a year"`
	Signature bool     `json:"signature,omitempty" jsonschema:"true when word is an error signature recognised in the query (OOMKilled) and via what it means (out of memory)"`
}

// SharedTerm is a vocabulary term two related cases both carry.
type SharedTerm struct {
	Facet  string `json:"facet" jsonschema:"root_cause, component_group, contributing_factor or symptom"`
	Slug   string `json:"slug"`
	Name   string `json:"name"`
	Reason string `json:"reason" jsonschema:"the reason in words: same root cause, shared …"`
}

// Suggestion is help for a query word that matched nothing or little.
type Suggestion struct {
	Word      string    `json:"word"`
	Spellings []string  `json:"spellings,omitempty" jsonschema:"words the library knows that are spelled like it"`
	Terms     []TermRef `json:"terms,omitempty" jsonschema:"vocabulary terms with a name like it; pass their slugs as filters or to get_topic"`
}

// CasePage is one page of cases.
type CasePage struct {
	Total       int          `json:"total" jsonschema:"cases in the whole result set"`
	Sort        string       `json:"sort"`
	Fuzzy       bool         `json:"fuzzy,omitempty" jsonschema:"true when a word the library does not know was matched by a near spelling (matched says which)"`
	Partial     bool         `json:"partial,omitempty" jsonschema:"true when few cases hold every meaningful word, so cases holding most of them follow"`
	Complete    *int         `json:"complete,omitempty" jsonschema:"search only: cases that hold every meaningful word"`
	Recognised  []TermCount  `json:"recognised_terms,omitempty" jsonschema:"vocabulary terms the query names, with the cases of the result set tagged with each; filter on them or call get_topic"`
	Unmatched   []string     `json:"unmatched,omitempty" jsonschema:"query words no case holds"`
	Suggestions []Suggestion `json:"suggestions,omitempty" jsonschema:"for words that matched nothing or little: near spellings and vocabulary terms"`
	NextCursor  string       `json:"next_cursor,omitempty" jsonschema:"pass as cursor, with the same other arguments, for the next page; absent on the last page"`
	Cases       []CaseHit    `json:"cases"`
	// notice says the query ran in a cheaper form than asked, and why; it
	// goes in the text answer only, leaving the output schema as it is.
	notice string
}

// SimilarOutput is the output of similar_incidents.
type SimilarOutput struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	URL     string    `json:"url,omitempty"`
	Similar []CaseHit `json:"similar" jsonschema:"the most related cases first; why gives the reasons"`
}

// TermRef names a vocabulary term.
type TermRef struct {
	Facet string `json:"facet,omitempty"`
	Slug  string `json:"slug"`
	Name  string `json:"name"`
}

// TermCount is a term and how many cases carry it.
type TermCount struct {
	Facet string `json:"facet,omitempty"`
	Slug  string `json:"slug"`
	Name  string `json:"name"`
	Cases int    `json:"cases"`
}

// TopicOutput is the output of get_topic.
type TopicOutput struct {
	Facet      string   `json:"facet"`
	Slug       string   `json:"slug"`
	Name       string   `json:"name"`
	Definition string   `json:"definition"`
	Group      *TermRef `json:"group,omitempty" jsonschema:"the component group the term belongs to"`
	// Components and the other counts describe the topic's whole case set.
	Components          []TermCount `json:"components" jsonschema:"components the topic's cases involve, most cases first"`
	RootCauses          []TermCount `json:"root_causes" jsonschema:"root causes of the topic's cases, most cases first (top 10)"`
	Symptoms            []TermCount `json:"symptoms" jsonschema:"symptoms of the topic's cases, most cases first (top 10)"`
	ContributingFactors []TermCount `json:"contributing_factors" jsonschema:"contributing factors of the topic's cases, most cases first (top 10)"`
	CasePage
}

// VocabTerm is one term of the vocabulary.
type VocabTerm struct {
	Slug       string `json:"slug"`
	Name       string `json:"name"`
	Definition string `json:"definition,omitempty" jsonschema:"with facet or definitions=true only"`
	Group      string `json:"group,omitempty" jsonschema:"component group slug; components only, with definitions"`
	Cases      int    `json:"cases" jsonschema:"how many cases carry the term"`
}

// VocabGroup is a family of components.
type VocabGroup struct {
	Slug       string `json:"slug"`
	Name       string `json:"name"`
	Definition string `json:"definition,omitempty"`
}

// VocabFacet is the terms of one facet.
type VocabFacet struct {
	Facet  string       `json:"facet"`
	Title  string       `json:"title"`
	Terms  []VocabTerm  `json:"terms"`
	Groups []VocabGroup `json:"groups,omitempty" jsonschema:"component groups; a group slug filters on all its members"`
}

// VocabOutput is the output of vocab.
type VocabOutput struct {
	Facets     []VocabFacet `json:"facets"`
	Severities []VocabTerm  `json:"severities,omitempty" jsonschema:"the severity slugs, most severe first; only when no facet is asked for"`
}

// readOnly is the annotation every tool carries: the library is a fixed
// corpus the tools only read, and nothing outside it is touched.
func readOnly(title string) *mcp.ToolAnnotations {
	f := false
	return &mcp.ToolAnnotations{
		Title:           title,
		ReadOnlyHint:    true,
		IdempotentHint:  true,
		DestructiveHint: &f,
		OpenWorldHint:   &f,
	}
}

var (
	facetEnum       = []any{"root_cause", "component", "symptom", "contributing_factor"}
	searchSortEnum  = []any{"relevance", "newest", "oldest", "longest"}
	listSortEnum    = []any{"newest", "oldest", "longest"}
	facetListing    = "The facets are root_cause, component, symptom and contributing_factor; vocab lists their slugs with definitions and case counts."
	citeInstruction = "Every case comes with its URL: cite it."
)

// schemaFor infers the JSON schema of T and lets edit add what Go types
// cannot say (enums, bounds). It panics on a type the inference rejects,
// which a test catches before any release.
func schemaFor[T any](edit func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	plainTypes(s)
	if edit != nil {
		edit(s.Properties)
	}
	return s
}

// plainTypes rewrites the inferred type ["null", "array"] of a slice as
// "array": an absent argument already means no filter, and several
// function-calling formats reject a list of types.
func plainTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		for _, t := range s.Types {
			if t != "null" {
				s.Type = t
			}
		}
		s.Types = nil
	}
	for _, p := range s.Properties {
		plainTypes(p)
	}
	plainTypes(s.Items)
}

// outputSchema is T's schema with plain types (no ["null","array"]: every
// list in an answer is a list, empty rather than null) and without the
// properties a tool never fills: drop names them, "cases.why" for a
// property of a list's items. So each tool declares what it returns.
func outputSchema[T any](drop ...string) *jsonschema.Schema {
	s := schemaFor[T](nil)
	for _, d := range drop {
		target, name := s, d
		if parent, child, ok := strings.Cut(d, "."); ok {
			target, name = s.Properties[parent].Items, child
		}
		delete(target.Properties, name)
		target.Required = slices.DeleteFunc(target.Required, func(r string) bool { return r == name })
	}
	return s
}

func bound(s *jsonschema.Schema, lo, hi float64) {
	s.Minimum, s.Maximum = &lo, &hi
}

func filterBounds(p map[string]*jsonschema.Schema) {
	bound(p["year_from"], 1900, 9999)
	bound(p["year_to"], 1900, 9999)
	for _, k := range []string{"root_cause", "component", "symptom", "contributing_factor", "company", "severity"} {
		n := 50
		p[k].MaxItems = &n
	}
}

// tool records a tool's input schema, so argument errors can be worded
// against it.
func (h *handlers) tool(t *mcp.Tool) *mcp.Tool {
	if in, ok := t.InputSchema.(*jsonschema.Schema); ok {
		h.inputSchemas[t.Name] = in
	}
	return t
}

// addTools registers the six tools. Their descriptions are written for a
// model: when to use the tool, the facets, and how to find their slugs.
func (h *handlers) addTools(s *mcp.Server) {
	mcp.AddTool(s, h.tool(&mcp.Tool{
		Name:  "search_incidents",
		Title: "Search incidents",
		Description: "Searches the library's public production incidents for the ones that failed like yours. " +
			"Use it first whenever you design, review or debug something: pass the question as you would ask it, a pasted alert or a description of the symptoms (e.g. 'our auth service fell over when a database migration made a query slow and clients retried'); no need to pick keywords. " +
			"Cases holding every meaningful word rank first, then those holding most of them; question words carry no weight; abbreviations and synonyms (auth, k8s, DB, OOM) and vocabulary term names (retry storm, thundering herd) are understood, and recognised_terms names the terms found. " +
			"Syntax: \"a phrase\", -word to exclude, a OR b. Narrow with facet filters (slugs, OR within a facet, AND across facets). " + facetListing + " " +
			"Each hit gives id, title, company, date, a one-line summary, what it matched (words and fields), the library URL when the server has one, and its main public source; remediation: true adds what fixed each case. " + citeInstruction +
			" For all of a case, call get_incident.",
		InputSchema: schemaFor[SearchInput](func(p map[string]*jsonschema.Schema) {
			p["sort"].Enum = searchSortEnum
			bound(p["limit"], 1, maxLimit)
			n := incidentlib.MaxQueryLength
			p["query"].MaxLength = &n
			filterBounds(p)
		}),
		OutputSchema: outputSchema[CasePage]("cases.shared", "cases.why"),
		Annotations:  readOnly("Search incidents"),
	}), h.searchIncidents)

	mcp.AddTool(s, h.tool(&mcp.Tool{
		Name:  "list_incidents",
		Title: "List incidents",
		Description: "Lists cases by facet filters alone, newest first by default: use it to browse everything with a given root cause, component, symptom, contributing factor, company, severity or year range, when there are no words to search for. " +
			facetListing + " " + citeInstruction,
		InputSchema: schemaFor[ListInput](func(p map[string]*jsonschema.Schema) {
			p["sort"].Enum = listSortEnum
			bound(p["limit"], 1, maxLimit)
			filterBounds(p)
		}),
		OutputSchema: outputSchema[CasePage]("fuzzy", "partial", "complete", "recognised_terms", "unmatched", "suggestions", "cases.why", "cases.excerpt", "cases.matched", "cases.terms", "cases.shared"),
		Annotations:  readOnly("List incidents"),
	}), h.listIncidents)

	mcp.AddTool(s, h.tool(&mcp.Tool{
		Name:  "get_incident",
		Title: "Get an incident",
		Description: "Returns one whole case by ID (IL-0561): timeline, impact, summary, symptoms, trigger, root cause, components, contributing factors, detection, remediation, action items, lessons and sources. " +
			"Use it after search_incidents, list_incidents or similar_incidents to read a case before you rely on it. The same text is the resource incident://<id>. " + citeInstruction,
		InputSchema:  schemaFor[IDInput](nil),
		OutputSchema: outputSchema[CaseDetail](),
		Annotations:  readOnly("Get an incident"),
	}), h.getIncident)

	mcp.AddTool(s, h.tool(&mcp.Tool{
		Name:  "similar_incidents",
		Title: "Similar incidents",
		Description: "Returns the cases most like a given case (IL-0561; il-561 and 561 work too), each with the terms both carry (root cause, contributing factors, component groups, or symptoms), by slug and name. " +
			"Use it to widen from one relevant case to the pattern behind it. " + citeInstruction,
		InputSchema: schemaFor[SimilarInput](func(p map[string]*jsonschema.Schema) {
			bound(p["limit"], 1, maxSimilarLimit)
		}),
		OutputSchema: outputSchema[SimilarOutput]("similar.excerpt", "similar.matched", "similar.terms", "similar.remediation"),
		Annotations:  readOnly("Similar incidents"),
	}), h.similarIncidents)

	mcp.AddTool(s, h.tool(&mcp.Tool{
		Name:  "get_topic",
		Title: "Get a topic",
		Description: "Returns one vocabulary term (a facet and a slug) with its definition, the number of cases, the components and other terms those cases involve, and a page of the cases. " +
			"Use it to study one failure pattern across the library, e.g. facet=contributing_factor slug=retry-amplification. " + facetListing + " " + citeInstruction,
		InputSchema: schemaFor[TopicInput](func(p map[string]*jsonschema.Schema) {
			p["facet"].Enum = facetEnum
			bound(p["limit"], 1, maxLimit)
		}),
		OutputSchema: outputSchema[TopicOutput]("fuzzy", "partial", "complete", "recognised_terms", "unmatched", "suggestions", "cases.why", "cases.excerpt", "cases.matched", "cases.terms", "cases.shared", "cases.remediation"),
		Annotations:  readOnly("Get a topic"),
	}), h.getTopic)

	mcp.AddTool(s, h.tool(&mcp.Tool{
		Name:  "vocab",
		Title: "Vocabulary",
		Description: "Lists the controlled vocabulary. Without arguments: a compact overview of every facet (root_cause, component, symptom, contributing_factor) with each term's slug, name and case count, and the component groups. " +
			"Give facet for one facet with each term's definition, or definitions=true for all of them. Call it to find the slugs the other tools' filters and get_topic take.",
		InputSchema: schemaFor[VocabInput](func(p map[string]*jsonschema.Schema) {
			p["facet"].Enum = facetEnum
		}),
		OutputSchema: outputSchema[VocabOutput](),
		Annotations:  readOnly("Vocabulary"),
	}), h.vocab)
}

func (h *handlers) searchIncidents(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, *CasePage, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, nil, toolError{"query is empty: say in words what to look for, or use list_incidents to filter without words"}
	}
	filters, err := h.filters(in.Filters)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	q := incidentlib.Query{Text: in.Query, Filters: filters, Sort: incidentlib.Sort(in.Sort)}
	page, err := h.runQuery(ctx, "search_incidents", q, in.Limit, defaultSearchLimit, in.Cursor)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	if in.Remediation {
		h.withRemediation(ctx, page)
	}
	// The page's own result says what the query meant; runQuery kept it.
	text := renderPage(fmt.Sprintf("matching %q", in.Query), page, "search_incidents")
	// In the structured answer, matched says what why says in words (the
	// text answer keeps the words): once is enough.
	for i := range page.Cases {
		page.Cases[i].Why = ""
	}
	return textResult(text), page, nil
}

func (h *handlers) listIncidents(ctx context.Context, _ *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, *CasePage, error) {
	filters, err := h.filters(in.Filters)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	q := incidentlib.Query{Filters: filters, Sort: incidentlib.Sort(in.Sort)}
	page, err := h.runQuery(ctx, "list_incidents", q, in.Limit, defaultListLimit, in.Cursor)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	if in.Remediation {
		h.withRemediation(ctx, page)
	}
	what := "in the library"
	if !filters.IsZero() {
		what = "matching the filters"
	}
	return textResult(renderPage(what, page, "list_incidents")), page, nil
}

// runQuery runs q for the page the cursor names (or the first) and turns
// the result into a CasePage with the cursor of the next page.
func (h *handlers) runQuery(ctx context.Context, tool string, q incidentlib.Query, limit, def int, cur string) (*CasePage, error) {
	key := queryKey(tool, q)
	q.Page, q.PerPage = 1, pageSize(limit, def)
	if cur != "" {
		var err error
		if q.Page, q.PerPage, err = decodeCursor(cur, key); err != nil {
			return nil, err
		}
	}
	res, err := h.lib.SearchCases(ctx, q)
	if err != nil {
		return nil, err
	}
	page := h.casePage(res, key)
	if q.Text != "" {
		h.describeQuery(page, res)
	}
	return page, nil
}

// describeQuery adds what the query meant to a search page: the terms it
// names, the words that matched nothing, and suggestions.
func (h *handlers) describeQuery(page *CasePage, res *incidentlib.SearchResult) {
	complete := res.Complete
	page.Complete = &complete
	page.Partial = res.Partial
	page.Unmatched = res.Unmatched
	for _, fc := range res.Terms {
		page.Recognised = append(page.Recognised, TermCount{Facet: string(fc.Term.Facet), Slug: fc.Term.Slug, Name: fc.Term.Name, Cases: fc.Count})
	}
	for _, s := range res.Suggestions {
		sg := Suggestion{Word: s.Word, Spellings: s.Spellings}
		for _, t := range s.Terms {
			sg.Terms = append(sg.Terms, TermRef{Facet: string(t.Facet), Slug: t.Slug, Name: t.Name})
		}
		page.Suggestions = append(page.Suggestions, sg)
	}
}

func pageSize(limit, def int) int {
	if limit <= 0 {
		return def
	}
	return min(limit, maxLimit)
}

func (h *handlers) casePage(res *incidentlib.SearchResult, key string) *CasePage {
	page := &CasePage{Total: res.Total, Sort: string(res.Sort), Fuzzy: res.Fuzzy, Cases: []CaseHit{}, notice: res.Notice}
	for _, hit := range res.Hits {
		ch := h.caseHit(hit.Case)
		ch.Excerpt, ch.md = snippetText(hit.Snippets)
		var why []string
		for _, m := range hit.Matched {
			ch.Matched = append(ch.Matched, MatchReason{Word: m.Word, Via: m.Via, Fields: m.Fields, Signature: m.Signature})
			w := m.Word
			switch {
			case m.Signature:
				w = "matched: " + m.Word + " → " + m.Via
			case m.Via != "":
				w += " as " + m.Via
			}
			why = append(why, w+" in "+strings.Join(m.Fields, ", "))
		}
		ch.Why = strings.Join(why, "; ")
		for _, t := range hit.Terms {
			ch.Terms = append(ch.Terms, TermRef{Facet: string(t.Facet), Slug: t.Slug, Name: t.Name})
		}
		page.Cases = append(page.Cases, ch)
	}
	if res.To > 0 && res.To < res.Total {
		page.NextCursor = encodeCursor(key, res.Page+1, res.PerPage)
	}
	return page
}

func (h *handlers) caseHit(c *incidentlib.Case) CaseHit {
	ch := CaseHit{
		ID:        c.ID,
		Title:     c.Title,
		Company:   c.Company,
		Date:      caseDate(c),
		Summary:   firstSentence(c.Summary, 240),
		RootCause: c.RootCause,
		URL:       h.caseURL(c.ID),
		Source:    mainSource(c),
	}
	return ch
}

// mainSource is the source a hit cites: the company's own (status page,
// blog, report, forum), else the first listed. A hit carries one source, not
// every one (up to seven): get_incident lists them all.
func mainSource(c *incidentlib.Case) string {
	for _, s := range c.Sources {
		if s.URL != "" && strings.HasPrefix(s.Type, "official-") {
			return s.URL
		}
	}
	for _, s := range c.Sources {
		if s.URL != "" {
			return s.URL
		}
	}
	return ""
}

// withRemediation adds each hit's remediation.
func (h *handlers) withRemediation(ctx context.Context, page *CasePage) {
	for i := range page.Cases {
		if c, err := h.lib.FindCaseByID(ctx, page.Cases[i].ID); err == nil && len(c.Remediation) > 0 {
			page.Cases[i].Remediation = append([]string{}, c.Remediation...)
		}
	}
}

func (h *handlers) getIncident(ctx context.Context, _ *mcp.CallToolRequest, in IDInput) (*mcp.CallToolResult, *CaseDetail, error) {
	c, err := h.findCase(ctx, in.ID)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	return textResult(h.caseMarkdown(c)), h.caseDetail(c), nil
}

func (h *handlers) similarIncidents(ctx context.Context, _ *mcp.CallToolRequest, in SimilarInput) (*mcp.CallToolResult, *SimilarOutput, error) {
	c, err := h.findCase(ctx, in.ID)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	k := in.Limit
	if k <= 0 {
		k = defaultSimilarLimit
	}
	k = min(k, maxSimilarLimit)
	rel, err := h.lib.SimilarCases(ctx, c.ID, k)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	out := &SimilarOutput{ID: c.ID, Title: c.Title, URL: h.caseURL(c.ID), Similar: []CaseHit{}}
	for _, r := range rel {
		ch := h.caseHit(r.Case)
		ch.Shared = sharedTerms(r)
		var why []string
		for _, s := range ch.Shared {
			why = append(why, s.Reason)
		}
		ch.Why = strings.Join(why, "; ")
		out.Similar = append(out.Similar, ch)
	}
	return textResult(renderSimilar(out)), out, nil
}

func (h *handlers) getTopic(ctx context.Context, _ *mcp.CallToolRequest, in TopicInput) (*mcp.CallToolResult, *TopicOutput, error) {
	facet, ok := incidentlib.ParseFacet(in.Facet)
	if !ok {
		return nil, nil, toolError{fmt.Sprintf("facet: unknown facet %q; valid: root_cause, component, symptom, contributing_factor", truncate(in.Facet, 40))}
	}
	if err := h.checkSlugs(facet, []string{in.Slug}); err != nil {
		return nil, nil, h.toolErr(err)
	}
	key := queryKey("get_topic", struct{ F, S string }{string(facet), in.Slug})
	q := incidentlib.Query{Page: 1, PerPage: pageSize(in.Limit, defaultTopicLimit)}
	if in.Cursor != "" {
		var err error
		if q.Page, q.PerPage, err = decodeCursor(in.Cursor, key); err != nil {
			return nil, nil, h.toolErr(err)
		}
	}
	t, err := h.lib.FindTopic(ctx, facet, in.Slug, q)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	out := &TopicOutput{
		Facet:      string(facet),
		Slug:       t.Term.Slug,
		Name:       t.Term.Name,
		Definition: t.Term.Definition,
		Components: termCounts(t.Components, maxTopicTerms),
	}
	if t.Group != nil {
		out.Group = &TermRef{Slug: t.Group.Slug, Name: t.Group.Name}
	}
	if t.Results != nil {
		out.CasePage = *h.casePage(t.Results, key)
		out.RootCauses = termCounts(t.Results.Facets[incidentlib.FacetRootCause], maxTopicTerms)
		out.Symptoms = termCounts(t.Results.Facets[incidentlib.FacetSymptom], maxTopicTerms)
		out.ContributingFactors = termCounts(t.Results.Facets[incidentlib.FacetContributingFactor], maxTopicTerms)
	} else {
		out.CasePage = CasePage{Cases: []CaseHit{}}
	}
	for _, p := range []*[]TermCount{&out.RootCauses, &out.Symptoms, &out.ContributingFactors} {
		if *p == nil {
			*p = []TermCount{}
		}
	}
	return textResult(renderTopic(out)), out, nil
}

// sharedTerms names the terms behind a related case's reasons, by slug and
// name, each with its reason in words.
func sharedTerms(r incidentlib.Related) []SharedTerm {
	out := []SharedTerm{}
	for i, t := range r.Shared {
		facet := string(t.Facet)
		if t.IsGroup {
			facet = "component_group"
		}
		reason := ""
		if i < len(r.Reasons) {
			reason = r.Reasons[i]
		}
		if t.Facet == incidentlib.FacetRootCause {
			reason = "same root cause: " + t.Name
		}
		out = append(out, SharedTerm{Facet: facet, Slug: t.Slug, Name: t.Name, Reason: reason})
	}
	return out
}

// maxTopicTerms bounds each list of terms get_topic returns.
const maxTopicTerms = 10

func termCounts(fc []incidentlib.FacetCount, max int) []TermCount {
	out := []TermCount{}
	for _, c := range fc {
		if c.Count == 0 || (max > 0 && len(out) == max) {
			continue
		}
		out = append(out, TermCount{Slug: c.Term.Slug, Name: c.Term.Name, Cases: c.Count})
	}
	return out
}

func (h *handlers) vocab(ctx context.Context, _ *mcp.CallToolRequest, in VocabInput) (*mcp.CallToolResult, *VocabOutput, error) {
	out, err := h.vocabulary(ctx, in.Facet, in.Facet != "" || in.Definitions)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	return textResult(renderVocab(out)), out, nil
}

// vocabulary gathers the terms of one facet (or all when facet is "") with
// their case counts.
func (h *handlers) vocabulary(ctx context.Context, facet string, definitions bool) (*VocabOutput, error) {
	facets := incidentlib.Facets
	if facet != "" {
		f, ok := incidentlib.ParseFacet(facet)
		if !ok {
			return nil, incidentlib.InvalidParam("facet", "unknown facet %q; valid: root_cause, component, symptom, contributing_factor", truncate(facet, 40))
		}
		facets = []incidentlib.Facet{f}
	}
	stats, err := h.lib.Stats(ctx)
	if err != nil {
		return nil, err
	}
	v := h.lib.Vocabulary()
	out := &VocabOutput{Facets: []VocabFacet{}}
	for _, f := range facets {
		counts := map[string]int{}
		for _, c := range stats.Terms[f] {
			counts[c.Term.Slug] = c.Count
		}
		vf := VocabFacet{Facet: string(f), Title: f.Title(), Terms: []VocabTerm{}}
		for _, t := range v.Terms(f) {
			vt := VocabTerm{Slug: t.Slug, Name: t.Name, Cases: counts[t.Slug]}
			if definitions {
				vt.Definition, vt.Group = t.Definition, t.Group
			}
			vf.Terms = append(vf.Terms, vt)
		}
		if f == incidentlib.FacetComponent {
			for _, g := range v.Groups() {
				vg := VocabGroup{Slug: g.Slug, Name: g.Name}
				if definitions {
					vg.Definition = g.Definition
				}
				vf.Groups = append(vf.Groups, vg)
			}
		}
		out.Facets = append(out.Facets, vf)
	}
	if facet == "" {
		all, err := h.lib.SearchCases(ctx, incidentlib.Query{PerPage: 1})
		if err != nil {
			return nil, err
		}
		counts := map[string]int{}
		for _, c := range all.Severities {
			counts[c.Value] = c.Count
		}
		for _, t := range v.Severities() {
			vt := VocabTerm{Slug: t.Slug, Name: t.Name, Cases: counts[t.Slug]}
			if definitions {
				vt.Definition = t.Definition
			}
			out.Severities = append(out.Severities, vt)
		}
	}
	return out, nil
}

// filters checks every slug against the vocabulary before the query runs,
// so that a model learns all of what is valid in one error.
func (h *handlers) filters(in Filters) (incidentlib.Filters, error) {
	f := incidentlib.Filters{
		RootCauses:          in.RootCause,
		Components:          in.Component,
		Symptoms:            in.Symptom,
		ContributingFactors: in.ContributingFactor,
		Companies:           in.Company,
		Severities:          in.Severity,
		YearFrom:            in.YearFrom,
		YearTo:              in.YearTo,
	}
	for _, facet := range incidentlib.Facets {
		if err := h.checkSlugs(facet, f.Of(facet)); err != nil {
			return f, err
		}
	}
	v := h.lib.Vocabulary()
	for _, s := range f.Severities {
		if _, ok := v.Severity(s); !ok {
			var valid []string
			for _, t := range v.Severities() {
				valid = append(valid, t.Slug)
			}
			return f, incidentlib.InvalidParam("severity", "unknown severity %q; valid: %s", truncate(s, 40), strings.Join(valid, ", "))
		}
	}
	if f.YearFrom != 0 && f.YearTo != 0 && f.YearFrom > f.YearTo {
		return f, incidentlib.InvalidParam("year_from", "year_from %d is after year_to %d", f.YearFrom, f.YearTo)
	}
	return f, nil
}

// checkSlugs reports the first slug that is not a term of facet (or, for
// components, a group), listing the valid ones.
func (h *handlers) checkSlugs(facet incidentlib.Facet, slugs []string) error {
	v := h.lib.Vocabulary()
	for _, s := range slugs {
		if _, ok := v.Term(facet, s); ok {
			continue
		}
		if _, ok := v.Group(s); ok && facet == incidentlib.FacetComponent {
			continue
		}
		valid := v.Slugs(facet)
		if facet == incidentlib.FacetComponent {
			for _, g := range v.Groups() {
				valid = append(valid, g.Slug)
			}
			slices.Sort(valid)
		}
		msg := fmt.Sprintf("unknown %s slug %q", facet, truncate(s, 60))
		if near := nearest(s, valid); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return incidentlib.InvalidParam(string(facet), "%s; valid: %s", msg, strings.Join(valid, ", "))
	}
	return nil
}

// findCase looks a case up, turning a malformed or unknown ID into an error
// that says what IDs look like and which exist nearby.
func (h *handlers) findCase(ctx context.Context, id string) (*incidentlib.Case, error) {
	norm, ok := incidentlib.NormalizeCaseID(id)
	if !ok {
		return nil, incidentlib.InvalidParam("id", "%q is not a case ID; IDs are IL- and four digits, e.g. IL-0561 (il-561 and 561 work too); find them with search_incidents or list_incidents", truncate(strings.TrimSpace(id), 40))
	}
	id = norm
	c, err := h.lib.FindCaseByID(ctx, id)
	if incidentlib.ErrorCode(err) == incidentlib.ENOTFOUND {
		return nil, h.unknownCase(ctx, id)
	}
	return c, err
}

// unknownCase is the error for a well-formed ID the library does not hold:
// it names the IDs on either side, so a model that guessed can recover.
func (h *handlers) unknownCase(ctx context.Context, id string) error {
	msg := fmt.Sprintf("the library has no case %s", id)
	cases, err := h.lib.Cases(ctx)
	if err == nil && len(cases) > 0 {
		ids := make([]string, 0, len(cases))
		for _, c := range cases {
			ids = append(ids, c.ID)
		}
		slices.Sort(ids)
		i, _ := slices.BinarySearch(ids, id)
		lo, hi := max(0, i-2), min(len(ids), i+2)
		msg += fmt.Sprintf("; it holds %d cases from %s to %s (IDs are not contiguous); the nearest are %s",
			len(ids), ids[0], ids[len(ids)-1], strings.Join(ids[lo:hi], ", "))
	}
	return incidentlib.Errorf(incidentlib.ENOTFOUND, "%s; find IDs with search_incidents or list_incidents", msg)
}

func textResult(md string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: md}}}
}
