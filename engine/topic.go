package engine

import (
	"context"
	"sort"
	"strings"

	"github.com/incidentlib/incidentlib"
)

// FindTopic implements incidentlib.Library. A component topic may also be
// a component group ("database"), which gathers all its members.
func (e *Engine) FindTopic(ctx context.Context, facet incidentlib.Facet, slug string, q incidentlib.Query) (*incidentlib.Topic, error) {
	if facet.PathSegment() == "" {
		valid := make([]string, len(incidentlib.Facets))
		for i, f := range incidentlib.Facets {
			valid[i] = string(f)
		}
		return nil, incidentlib.InvalidParam("facet", "unknown facet %q; valid: %s", truncate(string(facet), 40), strings.Join(valid, ", "))
	}
	t := &incidentlib.Topic{}
	if term, ok := e.vocab.Term(facet, slug); ok {
		t.Term = term
		if g, ok := e.vocab.Group(term.Group); ok && facet == incidentlib.FacetComponent {
			t.Group = &g
		}
	} else if g, ok := e.vocab.Group(slug); ok && facet == incidentlib.FacetComponent {
		t.Term = incidentlib.Term{Facet: facet, Slug: g.Slug, Name: g.Name, Definition: g.Definition}
		t.Group = &g
	} else {
		err := unknownTerm(e.vocab, facet, slug).(*incidentlib.Error)
		err.Code = incidentlib.ENOTFOUND
		err.Param = "slug"
		return nil, err
	}
	// The topic's own term holds on top of whatever the caller filters
	// on, even on the same facet (where the caller's values are ORed).
	within, err := e.facets.filter(filtersOf(facet, []string{slug}), e.vocab)
	if err != nil {
		return nil, err
	}
	res, err := e.search(ctx, q, within)
	if err != nil {
		return nil, err
	}
	t.Results = res
	t.Components = res.Facets[incidentlib.FacetComponent]
	return t, nil
}

func filtersOf(facet incidentlib.Facet, slugs []string) incidentlib.Filters {
	var f incidentlib.Filters
	switch facet {
	case incidentlib.FacetRootCause:
		f.RootCauses = slugs
	case incidentlib.FacetComponent:
		f.Components = slugs
	case incidentlib.FacetSymptom:
		f.Symptoms = slugs
	case incidentlib.FacetContributingFactor:
		f.ContributingFactors = slugs
	}
	return f
}

// Stats implements incidentlib.Library. The corpus never changes once the
// engine is open, so the figures are computed once; callers must treat the
// result as read-only.
func (e *Engine) Stats(_ context.Context) (*incidentlib.Stats, error) {
	e.statsOnce.Do(func() { e.stats = e.computeStats() })
	return e.stats, nil
}

func (e *Engine) computeStats() *incidentlib.Stats {
	fi := e.facets
	st := &incidentlib.Stats{Cases: fi.n, Terms: map[incidentlib.Facet][]incidentlib.FacetCount{}}
	for _, f := range incidentlib.Facets {
		dim := &fi.dims[dimOf(f)]
		for t, term := range dim.terms {
			st.Terms[f] = append(st.Terms[f], incidentlib.FacetCount{Term: term, Count: dim.df[t]})
		}
		sort.SliceStable(st.Terms[f], func(a, b int) bool { return st.Terms[f][a].Count > st.Terms[f][b].Count })
	}
	for _, f := range incidentlib.CaseFields {
		n := 0
		for _, c := range e.cases {
			if f.Known(c) {
				n++
			}
		}
		st.Known = append(st.Known, incidentlib.FieldKnown{Field: f.Name, Known: n})
	}
	byStatus := map[string]int{}
	years := map[int]int{}
	for _, c := range e.cases {
		byStatus[c.Verification.Status]++
		years[c.Year()]++
	}
	for _, s := range []string{incidentlib.VerificationChecked, incidentlib.VerificationPartial, incidentlib.VerificationUnchecked} {
		st.Verification = append(st.Verification, incidentlib.ValueCount{Value: s, Count: byStatus[s]})
	}
	var ys []int
	for y := range years {
		ys = append(ys, y)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(ys)))
	for _, y := range ys {
		st.Years = append(st.Years, incidentlib.ValueCount{Value: itoa(y), Count: years[y]})
	}
	return st
}
