package benchmark

import (
	"math"
	"strings"

	"github.com/incidentlib/incidentlib"
)

// The SQL engines get the same content the engine indexes, flattened into
// rows: one row per case, and one row per case and term.

// caseRow is a case as both SQL engines store it.
type caseRow struct {
	id                            int // 1-based row number
	caseID                        string
	title, company, summary, body string
	year                          int
	severity                      string
}

// termRow ties a case to a term, with the weight the term carries when
// ranking similar cases. Facet "component_group" rows hold component
// groups: they serve similar cases only and are left out of facet counts.
type termRow struct {
	caseRow int
	facet   string
	term    string
	weight  float64
}

const groupFacet = "component_group"

// Similar-case weights, the same as the engine's, so that the SQL engines
// do the same arithmetic.
var facetWeight = map[string]float64{
	string(incidentlib.FacetRootCause):          3.0,
	string(incidentlib.FacetContributingFactor): 2.0,
	groupFacet:                         1.5,
	string(incidentlib.FacetComponent): 0.5,
	string(incidentlib.FacetSymptom):   0.25,
}

// body joins the text the engine indexes under "body", in the same order.
func body(c *incidentlib.Case) string {
	parts := []string{c.Symptoms, c.Trigger, c.Detection, c.Lessons, c.Scope}
	parts = append(parts, c.Remediation...)
	for _, a := range c.ActionItems {
		parts = append(parts, a.Text)
	}
	for _, q := range c.Quotes { // what people saw: the engine indexes it in a field of its own
		parts = append(parts, q.Text)
	}
	return strings.Join(parts, "\n")
}

// sqlRows flattens cases into rows, in the order given.
func sqlRows(v *incidentlib.Vocabulary, cases []*incidentlib.Case) ([]caseRow, []termRow) {
	rows := make([]caseRow, len(cases))
	var terms []termRow
	for i, c := range cases {
		rows[i] = caseRow{
			id: i + 1, caseID: c.ID, title: c.Title, company: c.Company,
			summary: c.Summary, body: body(c), year: c.Year(), severity: c.Severity,
		}
		add := func(facet, term string) { terms = append(terms, termRow{caseRow: i + 1, facet: facet, term: term}) }
		if c.RootCause != "" {
			add(string(incidentlib.FacetRootCause), c.RootCause)
		}
		groups := map[string]bool{}
		for _, s := range c.Components {
			add(string(incidentlib.FacetComponent), s)
			if t, ok := v.Term(incidentlib.FacetComponent, s); ok && t.Group != "" && !groups[t.Group] {
				groups[t.Group] = true
				add(groupFacet, t.Group)
			}
		}
		for _, s := range c.SymptomTerms {
			add(string(incidentlib.FacetSymptom), s)
		}
		for _, s := range c.ContributingFactors {
			add(string(incidentlib.FacetContributingFactor), s)
		}
	}
	// Terms held by more than 5% of cases weigh less, as in the engine.
	df := map[[2]string]int{}
	for _, t := range terms {
		df[[2]string{t.facet, t.term}]++
	}
	n := float64(max(len(cases), 1))
	for i := range terms {
		w := facetWeight[terms[i].facet]
		if share := float64(df[[2]string{terms[i].facet, terms[i].term}]) / n; share > 0.05 {
			w *= math.Sqrt(0.05 / share)
		}
		terms[i].weight = w
	}
	return rows, terms
}
