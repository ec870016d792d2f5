package httpapi

import (
	"net/http"
	"net/url"

	"github.com/incidentlib/incidentlib"
)

// checkCitations is how many cited cases getCheck returns, newest first.
const checkCitations = 50

func (l links) checkLinks(id string) Links {
	esc := url.PathEscape(id)
	return Links{Self: l.abs(apiPrefix + "/checks/" + esc), HTML: l.absPtr("/checks/" + esc)}
}

// guardRef is a guarded term; a component guard may name a group.
func (a *api) guardRef(g incidentlib.TermRef) TermRef {
	ref := a.termRef(g.Facet, g.Slug)
	ref.Name = incidentlib.TermName(a.vocab(), g)
	return ref
}

func (a *api) guardRefs(gs []incidentlib.TermRef) []TermRef {
	out := make([]TermRef, 0, len(gs))
	for _, g := range gs {
		out = append(out, a.guardRef(g))
	}
	return out
}

func (a *api) checkSummary(c incidentlib.Check) CheckSummary {
	return CheckSummary{ID: c.ID, Title: c.Title, Severity: string(c.Severity), Rule: c.Rule,
		Guards: a.guardRefs(c.Guards), Links: a.links.checkLinks(c.ID)}
}

func (a *api) handleChecks(w http.ResponseWriter, r *http.Request, _ url.Values) error {
	out := CheckList{Total: len(a.checks), Checks: make([]CheckSummary, 0, len(a.checks)),
		Links: Links{Self: a.links.abs(apiPrefix + "/checks"), HTML: a.links.absPtr("/checks")}}
	for _, c := range a.checks {
		out.Checks = append(out.Checks, a.checkSummary(c))
	}
	return a.writeJSON(w, out)
}

func (a *api) handleCheck(w http.ResponseWriter, r *http.Request, _ url.Values) error {
	c, err := incidentlib.FindCheck(a.checks, r.PathValue("id"))
	if err != nil {
		return err
	}
	cited, complete, err := incidentlib.CitingCases(r.Context(), a.lib, c, checkCitations)
	if err != nil {
		return err
	}
	out := Check{CheckSummary: a.checkSummary(c), Why: c.Why, Fix: c.Fix, FixYAML: c.FixYAML,
		Citations: make([]Citation, 0, len(cited)), CitationsComplete: complete}
	for _, cc := range cited {
		out.Citations = append(out.Citations, Citation{Case: a.caseSummary(cc.Case),
			Terms: a.guardRefs(cc.Terms), Reason: cc.Why})
	}
	return a.writeJSON(w, out)
}
