package kubegap

import (
	"context"
	"strings"
	"sync"

	"incidentlib"
)

// Citer finds the cases that show what a check's gap costs.
type Citer interface {
	Cite(ctx context.Context, c incidentlib.Check) []incidentlib.Citation
}

// LibraryCiter cites, for each check, up to max of the library's cases
// tagged with the check's guarded terms, newest first. The terms are
// resolved at run time, so a case added to the corpus (or loaded with
// --cases) is cited without a code change. Terms are read as the library's
// search filters read them: a case must carry one of the guarded terms of
// every facet the check names. baseURL, when set, makes each citation link
// to the case's page. Answers are cached per check for the citer's life.
func LibraryCiter(lib incidentlib.Library, baseURL string, max int) Citer {
	if max <= 0 {
		max = 5
	}
	return &libraryCiter{lib: lib, baseURL: strings.TrimRight(baseURL, "/"), max: max, cache: map[string][]incidentlib.Citation{}}
}

type libraryCiter struct {
	lib     incidentlib.Library
	baseURL string
	max     int

	mu    sync.Mutex
	cache map[string][]incidentlib.Citation
}

// GuardFilters turns a check's guarded terms into the library's search
// filters: the query whose results are the check's citations.
func GuardFilters(c incidentlib.Check) incidentlib.Filters {
	var f incidentlib.Filters
	for _, t := range c.Guards {
		switch t.Facet {
		case incidentlib.FacetRootCause:
			f.RootCauses = append(f.RootCauses, t.Slug)
		case incidentlib.FacetComponent:
			f.Components = append(f.Components, t.Slug)
		case incidentlib.FacetSymptom:
			f.Symptoms = append(f.Symptoms, t.Slug)
		case incidentlib.FacetContributingFactor:
			f.ContributingFactors = append(f.ContributingFactors, t.Slug)
		}
	}
	return f
}

func (l *libraryCiter) Cite(ctx context.Context, c incidentlib.Check) []incidentlib.Citation {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cs, ok := l.cache[c.ID]; ok {
		return cs
	}
	if len(c.Guards) == 0 {
		return nil
	}
	res, err := l.lib.SearchCases(ctx, incidentlib.Query{Filters: GuardFilters(c), Sort: incidentlib.SortNewest, PerPage: l.max})
	if err != nil {
		return nil // not cached: a cancelled audit must not poison later ones
	}
	cs := make([]incidentlib.Citation, 0, len(res.Hits))
	for _, h := range res.Hits {
		k := h.Case
		cit := incidentlib.Citation{CaseID: k.ID, Title: k.Title}
		if l.baseURL != "" {
			cit.URL = l.baseURL + "/cases/" + k.ID
		}
		for _, s := range k.Sources {
			if s.URL != "" {
				cit.Source = s.URL
				break
			}
		}
		cit.Terms = caseTerms(k, c.Guards)
		cs = append(cs, cit)
	}
	l.cache[c.ID] = cs
	return cs
}

// caseTerms returns the guarded slugs a case carries.
func caseTerms(k *incidentlib.Case, guards []incidentlib.TermRef) []string {
	var out []string
	for _, g := range guards {
		var has bool
		switch g.Facet {
		case incidentlib.FacetRootCause:
			has = k.RootCause == g.Slug
		case incidentlib.FacetComponent:
			has = contains(k.Components, g.Slug)
		case incidentlib.FacetSymptom:
			has = contains(k.SymptomTerms, g.Slug)
		case incidentlib.FacetContributingFactor:
			has = contains(k.ContributingFactors, g.Slug)
		}
		if has {
			out = append(out, g.Slug)
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
