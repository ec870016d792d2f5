package engine

import (
	"context"
	"sort"
	"strings"

	"incidentlib"
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
	known := func(name string, ok func(c *incidentlib.Case) bool) {
		n := 0
		for _, c := range e.cases {
			if ok(c) {
				n++
			}
		}
		st.Known = append(st.Known, incidentlib.FieldKnown{Field: name, Known: n})
	}
	set := func(s string) bool { return strings.TrimSpace(s) != "" }
	known("started (exact time)", func(c *incidentlib.Case) bool { return c.Timeline.Started.Exact() })
	known("started (day or better)", func(c *incidentlib.Case) bool {
		p := c.Timeline.Started.Precision
		return p == incidentlib.PrecisionTime || p == incidentlib.PrecisionDay
	})
	known("detected", func(c *incidentlib.Case) bool { return !c.Timeline.Detected.IsZero() })
	known("mitigated", func(c *incidentlib.Case) bool { return !c.Timeline.Mitigated.IsZero() })
	known("resolved", func(c *incidentlib.Case) bool { return !c.Timeline.Resolved.IsZero() })
	known("time_to_detect", func(c *incidentlib.Case) bool { _, ok := c.TimeToDetect(); return ok })
	known("time_to_resolve", func(c *incidentlib.Case) bool { _, ok := c.TimeToResolve(); return ok })
	known("severity", func(c *incidentlib.Case) bool { return set(c.Severity) })
	known("scope", func(c *incidentlib.Case) bool { return set(c.Scope) })
	known("users_affected", func(c *incidentlib.Case) bool { return set(c.UsersAffected) })
	known("region", func(c *incidentlib.Case) bool { return set(c.Region) })
	known("symptoms", func(c *incidentlib.Case) bool { return set(c.Symptoms) })
	known("symptom_terms", func(c *incidentlib.Case) bool { return len(c.SymptomTerms) > 0 })
	known("trigger", func(c *incidentlib.Case) bool { return set(c.Trigger) })
	known("root_cause", func(c *incidentlib.Case) bool { return set(c.RootCause) })
	known("components", func(c *incidentlib.Case) bool { return len(c.Components) > 0 })
	known("contributing_factors", func(c *incidentlib.Case) bool { return len(c.ContributingFactors) > 0 })
	known("detection", func(c *incidentlib.Case) bool { return set(c.Detection) })
	known("remediation", func(c *incidentlib.Case) bool { return len(c.Remediation) > 0 })
	known("action_items", func(c *incidentlib.Case) bool { return len(c.ActionItems) > 0 })
	known("lessons", func(c *incidentlib.Case) bool { return set(c.Lessons) })
	known("archived copy", func(c *incidentlib.Case) bool {
		for _, s := range c.Sources {
			if s.ArchivedURL != "" {
				return true
			}
		}
		return false
	})
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
