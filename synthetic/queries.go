package synthetic

import (
	"math/rand/v2"
	"strings"

	"github.com/incidentlib/incidentlib"
)

// Word ranks the two query kinds draw from. Broad queries use the commonest
// content words, each found in well over half of the cases; narrow queries
// use two words from the middle of the ranking, each in roughly a tenth of
// the cases, plus a component filter.
const (
	broadTop       = 40
	narrowFrom     = 150
	narrowTo       = 600
	narrowTopTerms = 12  // the filter's component is one of the commonest few
	questionWords  = 10  // a question's content words
	questionFrom   = 20  // drawn from the upper-middle of the ranking, so
	questionTo     = 400 // few cases hold all ten and most hold several
	// SimilarLimit is how many similar cases each query asks for.
	SimilarLimit = 10
)

// Search is one benchmark query: text, and optionally one component
// filter. It is the same question for every engine.
type Search struct {
	Text      string
	Component string // component slug, or ""
}

// Query is the engine's form of the search: facet counts over the whole
// result set and snippets for the first page come with every search.
func (s Search) Query() incidentlib.Query {
	q := incidentlib.Query{Text: s.Text, Sort: incidentlib.SortRelevance, PerPage: PageSize}
	if s.Component != "" {
		q.Filters.Components = []string{s.Component}
	}
	return q
}

// Words returns the query's words, lower-case.
func (s Search) Words() []string { return strings.Fields(strings.ToLower(s.Text)) }

// PageSize is the number of hits per page every engine returns, with
// highlights.
const PageSize = 20

// QuerySet is the fixed list of questions a run asks every engine.
type QuerySet struct {
	Broad   []Search
	Narrow  []Search
	Similar []string // case IDs
	// Questions are ten-word questions as an agent asks them, wrapped in
	// question words: almost no case holds every word, so the engine
	// ranks partial matches. Only the engine answers them (the SQL
	// engines' full-text search requires every word).
	Questions []Search
}

// Queries returns n queries of each kind for a corpus of size cases,
// drawn with their own seed so that they do not depend on the corpus
// size.
func (g *Generator) Queries(n, size int) QuerySet {
	r := rand.New(rand.NewPCG(g.seed, 0xbeef))
	var qs QuerySet
	content := func(lo, hi int) string {
		for {
			w := g.words[lo+r.IntN(hi-lo)]
			// Words with an apostrophe or hyphen are split differently by
			// each engine's tokenizer, which would compare different
			// questions.
			if !strings.ContainsAny(w, "'-") && len(w) > 2 {
				return w
			}
		}
	}
	for range n {
		words := []string{content(0, broadTop)}
		if r.IntN(2) == 0 {
			words = append(words, content(0, broadTop))
		}
		qs.Broad = append(qs.Broad, Search{Text: strings.Join(words, " ")})
	}
	comps := g.facetTerm[incidentlib.FacetComponent]
	top := min(narrowTopTerms, len(comps))
	for range n {
		s := Search{Text: content(narrowFrom, narrowTo) + " " + content(narrowFrom, narrowTo)}
		if top > 0 {
			s.Component = comps[r.IntN(top)]
		}
		qs.Narrow = append(qs.Narrow, s)
	}
	for range n {
		qs.Similar = append(qs.Similar, CaseID(r.IntN(size)))
	}
	for range n {
		words := []string{"have", "others", "seen"}
		for range questionWords {
			words = append(words, content(questionFrom, questionTo))
		}
		qs.Questions = append(qs.Questions, Search{Text: strings.Join(words, " ") + "?"})
	}
	return qs
}
