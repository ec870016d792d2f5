package incidentlib

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// This file finds the cases a kubegap check cites. The web pages, the JSON
// API, the MCP server and kubegap itself all cite through it, so that a
// check cites the same cases wherever it is shown.

// MaxCitations bounds how many cases one check cites.
const MaxCitations = MaxPerPage

// CitedCase is a case a check cites, and how it shows the check's gap.
type CitedCase struct {
	Case *Case
	Why  string // one line: how the outage shows the gap
	// Terms is unused since citations are chosen by hand (Check.Cases),
	// not matched by vocabulary term; it stays for callers that read it.
	Terms []TermRef
}

// TeamCaseWhy is the reason given for a case cited because it names the
// check in its kubegap_checks field.
func TeamCaseWhy(checkID string) string {
	return "the case names " + checkID + " in kubegap_checks"
}

// CitingCases returns the cases a check cites, at most max (MaxCitations
// when max is 0 or larger): first the cases chosen for it (check.Cases, in
// their order) that the library holds, then the library's other cases that
// name the check in kubegap_checks, newest first. complete is true when
// none was cut. Vocabulary terms play no part: a case tagged with a check's
// guard may show something else entirely.
func CitingCases(ctx context.Context, lib Library, check Check, max int) (cases []CitedCase, complete bool, err error) {
	if max <= 0 || max > MaxCitations {
		max = MaxCitations
	}
	seen := map[string]bool{}
	for _, cc := range check.Cases {
		c, err := lib.FindCaseByID(ctx, cc.ID)
		if err != nil {
			if ErrorCode(err) == ENOTFOUND {
				continue // a library without the shipped cases (--no-builtin)
			}
			return nil, false, fmt.Errorf("citations of %s: %w", check.ID, err)
		}
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		cases = append(cases, CitedCase{Case: c, Why: cc.Why})
	}
	all, err := lib.Cases(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("citations of %s: %w", check.ID, err)
	}
	var named []CitedCase
	for _, c := range all {
		if !seen[c.ID] && slices.Contains(c.KubegapChecks, check.ID) {
			seen[c.ID] = true
			named = append(named, CitedCase{Case: c, Why: TeamCaseWhy(check.ID)})
		}
	}
	slices.SortStableFunc(named, func(a, b CitedCase) int { return newestFirst(a.Case, b.Case) })
	cases = append(cases, named...)
	complete = true
	if len(cases) > max {
		cases, complete = cases[:max], false
	}
	return cases, complete, nil
}

// CitedCases returns the citations of a check: CitingCases in the shape
// findings carry. baseURL, when not empty, makes each citation's URL the
// library's page for the case.
func CitedCases(ctx context.Context, lib Library, check Check, max int, baseURL string) ([]Citation, error) {
	cases, _, err := CitingCases(ctx, lib, check, max)
	if err != nil {
		return nil, err
	}
	out := make([]Citation, 0, len(cases))
	for _, cc := range cases {
		out = append(out, NewCitation(cc.Case, cc.Why, baseURL))
	}
	return out, nil
}

// NewCitation makes the citation of a case: its title, its first public
// source, and, when baseURL is set, the library's page for it.
func NewCitation(c *Case, why, baseURL string) Citation {
	ct := Citation{CaseID: c.ID, Title: c.Title, Reason: why}
	if baseURL != "" {
		ct.URL = CaseURL(baseURL, c.ID)
	}
	for _, s := range c.Sources {
		if s.URL != "" {
			ct.Source = s.URL
			break
		}
	}
	return ct
}

// CaseURL is the library's web page for a case under baseURL.
func CaseURL(baseURL, id string) string {
	return strings.TrimRight(baseURL, "/") + "/cases/" + url.PathEscape(id)
}

// newestFirst orders cases the way the engine's newest sort does: by start
// (or the date first made public, where no source gives the start),
// then by ID, both descending.
func newestFirst(a, b *Case) int {
	ta, tb := a.Timeline.Date().Time, b.Timeline.Date().Time
	switch {
	case ta.After(tb):
		return -1
	case tb.After(ta):
		return 1
	}
	return strings.Compare(b.ID, a.ID)
}

// GuardsCarriedBy returns the check's guards the case is tagged with. A
// component guard that names a group is carried by a case tagged with any
// of the group's members.
func (c Check) GuardsCarriedBy(v *Vocabulary, cs *Case) []TermRef {
	var out []TermRef
	for _, g := range c.Guards {
		if caseCarries(v, cs, g) && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

func caseCarries(v *Vocabulary, cs *Case, g TermRef) bool {
	switch g.Facet {
	case FacetRootCause:
		return cs.RootCause == g.Slug
	case FacetSymptom:
		return slices.Contains(cs.SymptomTerms, g.Slug)
	case FacetContributingFactor:
		return slices.Contains(cs.ContributingFactors, g.Slug)
	case FacetComponent:
		for _, comp := range cs.Components {
			if comp == g.Slug {
				return true
			}
			if t, ok := v.Term(FacetComponent, comp); ok && t.Group != "" && t.Group == g.Slug {
				return true
			}
		}
	}
	return false
}

// GuardsTerm reports whether the check guards against a term: it names the
// term itself, or, for components, the term's group or (when slug is a
// group) one of the group's members.
func (c Check) GuardsTerm(v *Vocabulary, f Facet, slug string) bool {
	for _, g := range c.Guards {
		if g.Facet != f {
			continue
		}
		if g.Slug == slug {
			return true
		}
		if f != FacetComponent {
			continue
		}
		if t, ok := v.Term(f, slug); ok && t.Group != "" && t.Group == g.Slug {
			return true
		}
		if t, ok := v.Term(f, g.Slug); ok && t.Group != "" && t.Group == slug {
			return true
		}
	}
	return false
}

// ChecksForCase returns the checks, in catalogue order, that cite the
// case: those that chose it, and those the case names in kubegap_checks.
func ChecksForCase(checks []Check, v *Vocabulary, cs *Case) []Check {
	var out []Check
	for _, c := range checks {
		cites := slices.Contains(cs.KubegapChecks, c.ID)
		for _, cc := range c.Cases {
			cites = cites || cc.ID == cs.ID
		}
		if cites {
			out = append(out, c)
		}
	}
	return out
}

// ChecksForTerm returns the checks, in catalogue order, that guard against
// a term (see Check.GuardsTerm).
func ChecksForTerm(checks []Check, v *Vocabulary, f Facet, slug string) []Check {
	var out []Check
	for _, c := range checks {
		if c.GuardsTerm(v, f, slug) {
			out = append(out, c)
		}
	}
	return out
}

// FindCheck returns the check with the given ID from a catalogue, or
// ENOTFOUND naming the IDs that exist.
func FindCheck(checks []Check, id string) (Check, error) {
	for _, c := range checks {
		if c.ID == id {
			return c, nil
		}
	}
	for _, c := range checks {
		if strings.EqualFold(c.ID, id) {
			return c, nil
		}
	}
	e := &Error{Code: ENOTFOUND, Param: "id"}
	switch {
	case len(checks) == 0:
		e.Message = "there are no kubegap checks"
	default:
		e.Message = fmt.Sprintf("there is no kubegap check %q; the checks are %s to %s", truncateText(id, 40), checks[0].ID, checks[len(checks)-1].ID)
	}
	return Check{}, e
}

// TermName is a guard's display name: the term's or group's name, else its
// slug.
func TermName(v *Vocabulary, t TermRef) string {
	if term, ok := v.Term(t.Facet, t.Slug); ok {
		return term.Name
	}
	if t.Facet == FacetComponent {
		if g, ok := v.Group(t.Slug); ok {
			return g.Name
		}
	}
	return t.Slug
}

// CitationReason says in words why a case is cited: "tagged Retry
// amplification" or "tagged Retry amplification and Application database".
func CitationReason(v *Vocabulary, terms []TermRef) string {
	if len(terms) == 0 {
		return ""
	}
	names := make([]string, len(terms))
	for i, t := range terms {
		names[i] = TermName(v, t)
	}
	if len(names) == 1 {
		return "tagged " + names[0]
	}
	return "tagged " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// truncateText cuts s to at most n bytes on a rune boundary, for echoing
// input back in messages.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
