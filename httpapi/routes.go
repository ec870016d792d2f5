package httpapi

import (
	"net/http"
	"net/url"
)

// route declares one GET endpoint: its handler, and everything the OpenAPI
// document says about it.
type route struct {
	ID      string // operationId
	Path    string // ServeMux pattern without method: "/api/v1/cases/{id}"
	Summary string
	Doc     string
	Params  []param
	// Body is a value of the 200 response's type; its schema is generated.
	// Nil for CSV.
	Body any
	// Media is the 200 response's media type; empty means application/json.
	Media string
	// NotFound says the route can answer 404 for an unknown ID or term.
	NotFound bool
	// Paged says the response carries Link headers to other pages.
	Paged  bool
	Handle func(w http.ResponseWriter, r *http.Request, q url.Values) error
}

func (rt *route) media() string {
	if rt.Media == "" {
		return "application/json"
	}
	return rt.Media
}

func (rt *route) param(name string) *param {
	for i := range rt.Params {
		if rt.Params[i].Name == name {
			return &rt.Params[i]
		}
	}
	return nil
}

// param declares a path or query parameter.
type param struct {
	Name    string
	In      string // "path" or "query"
	Type    string // "string" or "integer"
	Repeat  bool   // may be given more than once (values are ORed)
	Enum    []string
	Doc     string
	Example string // a value that works on the shipped corpus; the contract test calls it
	Min     *int
	Max     *int
	Pattern string
}

func intp(n int) *int { return &n }

// listParams are the parameters of a search: /cases and each topic.
func listParams() []param {
	return []param{
		{Name: "q", In: "query", Type: "string", Doc: "Full-text query over titles, summaries, symptoms, triggers and the rest. Words must all match; \"double quotes\" make a phrase. At most 1000 bytes (longer: 414)."},
		{Name: "root_cause", In: "query", Type: "string", Repeat: true, Doc: "Root-cause slug. Repeat or comma-separate to match any of several."},
		{Name: "component", In: "query", Type: "string", Repeat: true, Doc: "Component slug, or a component group slug (matches all its members). Repeatable, ORed."},
		{Name: "symptom", In: "query", Type: "string", Repeat: true, Doc: "Symptom slug. Repeatable, ORed."},
		{Name: "contributing_factor", In: "query", Type: "string", Repeat: true, Doc: "Contributing-factor slug. Repeatable, ORed."},
		{Name: "company", In: "query", Type: "string", Repeat: true, Doc: "Company name, case-insensitive, exact. Repeat (not comma-separate: names may hold commas) to match any."},
		{Name: "severity", In: "query", Type: "string", Repeat: true, Doc: "Severity slug. Repeatable, ORed."},
		{Name: "year_from", In: "query", Type: "integer", Min: intp(1), Max: intp(9999), Doc: "Earliest year the incident started, inclusive."},
		{Name: "year_to", In: "query", Type: "integer", Min: intp(1), Max: intp(9999), Doc: "Latest year the incident started, inclusive."},
		{Name: "sort", In: "query", Type: "string", Enum: []string{"relevance", "newest", "oldest", "longest"}, Doc: "Order: relevance (default with q), newest (default without), oldest, or longest time to resolve (unknown last)."},
		{Name: "page", In: "query", Type: "integer", Min: intp(1), Doc: "1-based page number; default 1."},
		{Name: "per_page", In: "query", Type: "integer", Min: intp(1), Max: intp(100), Doc: "Items per page, 1 to 100; default 20."},
	}
}

// routeTable lists every endpoint. Order is the order of the OpenAPI
// document and of the index.
func (a *api) routeTable() []*route {
	caseID := param{Name: "id", In: "path", Type: "string", Pattern: "^IL-[0-9]{4}$", Example: "IL-0561", Doc: "Case ID, IL-NNNN."}
	return []*route{
		{
			ID: "getIndex", Path: apiPrefix + "/{$}", Summary: "List the endpoints",
			Doc:    "Links to every endpoint of the API and to its OpenAPI document.",
			Body:   Index{},
			Handle: a.handleIndex,
		},
		{
			ID: "listCases", Path: apiPrefix + "/cases", Summary: "Search and list cases",
			Doc: "Full-text search with facet filters (AND across facets, OR within one), sorted and paged, with facet counts " +
				"over the whole result set. Without q, lists every case newest first. Link headers point to first, prev, next and last pages.",
			Params: listParams(),
			Body:   CaseList{}, Paged: true,
			Handle: a.handleListCases,
		},
		{
			ID: "getCase", Path: apiPrefix + "/cases/{id}", Summary: "Get one case",
			Doc:    "Everything the library holds about one incident, including its sources and how they were verified.",
			Params: []param{caseID},
			Body:   Case{}, NotFound: true,
			Handle: a.handleCase,
		},
		{
			ID: "listSimilarCases", Path: apiPrefix + "/cases/{id}/similar", Summary: "Cases like one case, each with the reason",
			Doc: "The cases most like the given one (same root cause, shared components, symptoms, contributing factors), most similar first.",
			Params: []param{caseID,
				{Name: "limit", In: "query", Type: "integer", Min: intp(1), Max: intp(50), Doc: "How many cases, 1 to 50; default 10."}},
			Body: SimilarCases{}, NotFound: true,
			Handle: a.handleSimilar,
		},
		{
			ID: "getTopic", Path: apiPrefix + "/topics/{facet}/{slug}", Summary: "A vocabulary term with its cases",
			Doc: "A term's definition, how many cases carry it, the components those cases involve, and one page of the cases. " +
				"A component topic may name a component group, which gathers all its members. The search parameters narrow the cases further.",
			Params: append([]param{
				{Name: "facet", In: "path", Type: "string", Example: "root_cause", Enum: []string{"root_cause", "component", "symptom", "contributing_factor", "root-causes", "components", "symptoms", "contributing-factors"},
					Doc: "The facet, by name (root_cause) or URL segment (root-causes)."},
				{Name: "slug", In: "path", Type: "string", Example: "config-change", Doc: "The term's slug (see /api/v1/vocab)."},
			}, listParams()...),
			Body: Topic{}, NotFound: true, Paged: true,
			Handle: a.handleTopic,
		},
		{
			ID: "getVocabulary", Path: apiPrefix + "/vocab", Summary: "The controlled vocabulary",
			Doc:    "Every facet and term with its definition, group and case count; the component groups; severities and source types.",
			Body:   Vocab{},
			Handle: a.handleVocab,
		},
		{
			ID: "getStats", Path: apiPrefix + "/stats", Summary: "Corpus statistics",
			Doc:    "Cases per term (zero counts included), how many cases know each field, verification status and years.",
			Body:   Stats{},
			Handle: a.handleStats,
		},
		{
			ID: "listChecks", Path: apiPrefix + "/checks", Summary: "The kubegap checks",
			Doc: "Every check of kubegap, the read-only Kubernetes audit: ID, title, severity, the rule, and the vocabulary terms it guards against. " +
				"getCheck adds why it matters, the fix and the cases it cites.",
			Body:   CheckList{},
			Handle: a.handleChecks,
		},
		{
			ID: "getCheck", Path: apiPrefix + "/checks/{id}", Summary: "One kubegap check with the cases it cites",
			Doc: "A check's rule, why it matters, how to fix it (with a YAML snippet), its guarded terms, and the library's cases tagged with any of them, " +
				"newest first, each with the reason it is cited. The ID is matched without regard to case.",
			Params: []param{{Name: "id", In: "path", Type: "string", Example: "KG001", Doc: "Check ID, e.g. KG001 (see listChecks)."}},
			Body:   Check{}, NotFound: true,
			Handle: a.handleCheck,
		},
		{
			ID: "exportCasesJSONL", Path: apiPrefix + "/export/cases.jsonl", Summary: "Every case as JSON Lines",
			Doc:    "The whole corpus, one case per line in the shape of getCase, ordered by ID. The schema below is that of one line.",
			Body:   Case{},
			Media:  mediaJSONL,
			Handle: a.handleExportJSONL,
		},
		{
			ID: "exportCasesCSV", Path: apiPrefix + "/export/cases.csv", Summary: "Every case as CSV",
			Doc: "The whole corpus, one row per case, ordered by ID, with a header row. Unknown values are empty cells; lists " +
				"(components, remediation, sources, …) are joined with \" | \"; durations are in seconds.",
			Media:  mediaCSV,
			Handle: a.handleExportCSV,
		},
		{
			ID: "getOpenAPI", Path: apiPrefix + "/openapi.json", Summary: "This document",
			Doc:    "The OpenAPI 3.1 description of the API.",
			Handle: a.handleOpenAPI,
		},
	}
}
