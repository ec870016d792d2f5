package incidentlib

import "context"

// Library answers every question the web pages, the JSON API, the MCP tools
// and kubegap ask. Package engine implements it over an in-memory corpus and
// a Bleve index.
type Library interface {
	// Vocabulary returns the controlled vocabulary.
	Vocabulary() *Vocabulary
	// FindCaseByID returns a case, or ENOTFOUND.
	FindCaseByID(ctx context.Context, id string) (*Case, error)
	// SearchCases runs a query: full-text, filtered, sorted and paged, with
	// facet counts over the whole result set.
	SearchCases(ctx context.Context, q Query) (*SearchResult, error)
	// SimilarCases returns up to k cases most like the given one, each with
	// the reason in words.
	SimilarCases(ctx context.Context, id string, k int) ([]Related, error)
	// FindTopic returns a vocabulary term with the cases tagged with it.
	FindTopic(ctx context.Context, facet Facet, slug string, q Query) (*Topic, error)
	// Cases returns every case, newest first.
	Cases(ctx context.Context) ([]*Case, error)
	// Stats counts cases per term and the share of cases where each field
	// is known.
	Stats(ctx context.Context) (*Stats, error)
}

// Sort orders a result set.
type Sort string

// The sort orders. Relevance is the default with query text, Newest without.
const (
	SortRelevance Sort = "relevance"
	SortNewest    Sort = "newest"
	SortOldest    Sort = "oldest"
	SortLongest   Sort = "longest" // longest time to resolve first; unknown last
)

// Sorts lists the valid sort orders.
var Sorts = []Sort{SortRelevance, SortNewest, SortOldest, SortLongest}

// Paging limits.
const (
	DefaultPerPage = 20
	MaxPerPage     = 100
	MaxQueryLength = 1000 // bytes of query text
)

// Query is a question to the library. The zero value lists every case,
// newest first, first page.
type Query struct {
	Text    string
	Filters Filters
	Sort    Sort // "" picks relevance with text, newest without
	Page    int  // 1-based; 0 means 1
	PerPage int  // 0 means DefaultPerPage
}

// Filters narrows a result set: AND across facets, OR within one. A
// component filter may name a group slug, which matches all its members.
type Filters struct {
	RootCauses          []string
	Components          []string
	Symptoms            []string
	ContributingFactors []string
	Companies           []string // exact company names, case-insensitive
	Severities          []string
	YearFrom, YearTo    int // inclusive; 0 means open
}

// Of returns the slugs filtered on for a tagging facet.
func (f Filters) Of(facet Facet) []string {
	switch facet {
	case FacetRootCause:
		return f.RootCauses
	case FacetComponent:
		return f.Components
	case FacetSymptom:
		return f.Symptoms
	case FacetContributingFactor:
		return f.ContributingFactors
	}
	return nil
}

// IsZero reports whether no filter is set.
func (f Filters) IsZero() bool {
	return len(f.RootCauses) == 0 && len(f.Components) == 0 && len(f.Symptoms) == 0 &&
		len(f.ContributingFactors) == 0 && len(f.Companies) == 0 && len(f.Severities) == 0 &&
		f.YearFrom == 0 && f.YearTo == 0
}

// SearchResult is one page of a result set.
type SearchResult struct {
	Hits    []Hit
	Total   int // cases in the whole result set
	From    int // 1-based position of the first hit; 0 when the page is empty
	To      int // 1-based position of the last hit; 0 when the page is empty
	Page    int
	PerPage int
	Sort    Sort
	// Fuzzy is true when some query word is unknown to the corpus and the
	// result holds cases that match a spelling close to it.
	Fuzzy bool
	// Notice, when not empty, tells the reader that the query was run in
	// a cheaper form than asked (for example without a typo-tolerant
	// retry) and why.
	Notice string
	// Partial is true when some hits match only part of the query: too
	// few cases matched every word, so cases matching most of the
	// meaningful words follow those that match all.
	Partial bool
	// Complete is how many cases of the result set match every
	// meaningful word of the query (all of them when Partial is false).
	Complete int
	// Terms are the vocabulary terms the query names (by name, slug or
	// alias), each with the number of cases in the result set tagged with
	// it: offered as one-click filters.
	Terms []FacetCount
	// Unmatched are the query words that matched nothing, in query order.
	Unmatched []string
	// Suggestions help a query with few or no results: spellings the
	// corpus knows and vocabulary terms near the words that matched
	// nothing or little.
	Suggestions []Suggestion
	// Facets counts the whole result set by each facet, most cases first.
	Facets map[Facet][]FacetCount
	// Companies counts the result set by company (the hundred with the
	// most cases), Years by year, newest first.
	Companies  []ValueCount
	Years      []ValueCount
	Severities []ValueCount
}

// Hit is one case in a result set.
type Hit struct {
	Case     *Case
	Score    float64 // relevance; 0 when the query had no text
	Snippets []Snippet
	// Matched says why the case matched: each query word or phrase it
	// holds, how (as typed, through a synonym or a near spelling) and in
	// which fields. Terms are the recognised query terms the case is
	// tagged with.
	Matched []Match
	Terms   []Term
}

// Match is one query word (or phrase) a hit holds.
type Match struct {
	Word   string   // as the query wrote it
	Via    string   // "" when matched as typed; else the synonym or spelling that matched
	Fields []string // case fields holding it: "title", "summary", "trigger", …
	// Signature is true when Word is an error signature recognised in the
	// query (OOMKilled) and Via what it means (out of memory): shown as
	// "OOMKilled → out of memory".
	Signature bool
}

// Suggestion is help for one query word that matched nothing (or little):
// spellings the corpus knows and vocabulary terms with a similar name.
type Suggestion struct {
	Word      string
	Spellings []string
	Terms     []Term
}

// Snippet is a short piece of a case's text around what matched. Parts
// alternate between plain text and matched text; each protocol marks the
// matches its own way and escapes the rest.
type Snippet struct {
	Field string // the case field it comes from: "summary", "trigger", …
	Parts []SnippetPart
}

// SnippetPart is a run of snippet text.
type SnippetPart struct {
	Text  string
	Match bool
}

// FacetCount is how many cases of a result set carry a term.
type FacetCount struct {
	Term  Term
	Count int
}

// ValueCount is how many cases of a result set have a value.
type ValueCount struct {
	Value string
	Count int
}

// Related is a case like another one, and why.
type Related struct {
	Case    *Case
	Score   float64
	Reasons []string // "same root cause", "shared Database", …
	// Shared are the terms behind the reasons, in the same order: the
	// root cause, contributing factors, component groups (Facet
	// component, a group's slug and name) or symptoms both cases carry.
	Shared []SharedTerm
}

// SharedTerm is a vocabulary term two related cases both carry.
type SharedTerm struct {
	Term
	IsGroup bool // a component group rather than a component
}

// Reason joins the reasons the way the pages print them.
func (r Related) Reason() string {
	out := ""
	for i, s := range r.Reasons {
		if i > 0 {
			out += " · "
		}
		out += s
	}
	return out
}

// Topic is a vocabulary term with its cases.
type Topic struct {
	Term    Term
	Group   *Group // the group of a component term
	Results *SearchResult
	// Components are the components the topic's cases involve, most cases
	// first.
	Components []FacetCount
}

// Stats describes the corpus for curators.
type Stats struct {
	Cases int
	// Terms counts cases per term, for every term of every facet (zero
	// counts included, so gaps show).
	Terms map[Facet][]FacetCount
	// Known is, per case field, the number of cases where it is known.
	Known []FieldKnown
	// Verification counts cases by verification status.
	Verification []ValueCount
	Years        []ValueCount
}

// FieldKnown is how many cases know one field.
type FieldKnown struct {
	Field string
	Known int
}
