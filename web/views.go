package web

import (
	"context"
	"net/url"
	"strings"

	"incidentlib"
)

// termLink is a vocabulary term as pages link it.
type termLink struct {
	Facet incidentlib.Facet
	Slug  string
	Name  string
	URL   string
	Count int
}

// topicURL is a term's topic page.
func topicURL(f incidentlib.Facet, slug string) string {
	return "/" + f.PathSegment() + "/" + url.PathEscape(slug)
}

func (s *server) term(f incidentlib.Facet, slug string) termLink {
	name := slug
	if t, ok := s.vocab.Term(f, slug); ok {
		name = t.Name
	}
	return termLink{Facet: f, Slug: slug, Name: name, URL: topicURL(f, slug)}
}

func (s *server) terms(f incidentlib.Facet, slugs []string) []termLink {
	out := make([]termLink, 0, len(slugs))
	for _, sl := range slugs {
		out = append(out, s.term(f, sl))
	}
	return out
}

func (s *server) counted(fcs []incidentlib.FacetCount) []termLink {
	out := make([]termLink, 0, len(fcs))
	for _, fc := range fcs {
		l := s.term(fc.Term.Facet, fc.Term.Slug)
		l.Count = fc.Count
		out = append(out, l)
	}
	return out
}

// caseURL is a case's page.
func caseURL(id string) string { return "/cases/" + url.PathEscape(id) }

// caseView is a case with everything a template needs worked out: the
// dates at their precision, durations, term names and links.
type caseView struct {
	*incidentlib.Case
	URL          string
	Date         dateView // at the precision the source gives
	Day          dateView // cut to the day, for lists
	Year         string
	Severity     string
	TTD, TTR     string
	SymptomLinks []termLink
	RootCause    *termLink
	Components   []termLink
	Factors      []termLink
	Groups       []string // component group names, for the header tags
	Sources      []sourceView
}

type sourceView struct {
	incidentlib.Source
	TypeName  string
	Retrieved string
}

func (s *server) caseView(c *incidentlib.Case) caseView {
	v := caseView{
		Case:         c,
		URL:          caseURL(c.ID),
		Date:         formatTimestamp(c.Timeline.Started),
		Day:          formatDay(c.Timeline.Started),
		Year:         formatTimestamp(incidentlib.Timestamp{Time: c.Timeline.Started.Time, Precision: incidentlib.PrecisionYear}).Text,
		Severity:     "–",
		TTD:          "–",
		TTR:          "–",
		SymptomLinks: s.terms(incidentlib.FacetSymptom, c.SymptomTerms),
		Components:   s.terms(incidentlib.FacetComponent, c.Components),
		Factors:      s.terms(incidentlib.FacetContributingFactor, c.ContributingFactors),
	}
	if c.Timeline.Started.IsZero() {
		v.Year = "–"
	}
	if c.Severity != "" {
		v.Severity = c.Severity
		if t, ok := s.vocab.Severity(c.Severity); ok {
			v.Severity = t.Name
		}
	}
	if d, ok := c.TimeToDetect(); ok {
		v.TTD = incidentlib.FormatDuration(d)
	}
	if d, ok := c.TimeToResolve(); ok {
		v.TTR = incidentlib.FormatDuration(d)
	}
	if c.RootCause != "" {
		t := s.term(incidentlib.FacetRootCause, c.RootCause)
		v.RootCause = &t
	}
	seen := map[string]bool{}
	for _, slug := range c.Components {
		t, ok := s.vocab.Term(incidentlib.FacetComponent, slug)
		if !ok || t.Group == "" || seen[t.Group] {
			continue
		}
		seen[t.Group] = true
		if g, ok := s.vocab.Group(t.Group); ok {
			v.Groups = append(v.Groups, g.Name)
		}
	}
	for _, src := range c.Sources {
		sv := sourceView{Source: src, TypeName: src.Type}
		if t, ok := s.vocab.SourceType(src.Type); ok {
			sv.TypeName = t.Name
		}
		if !src.Retrieved.IsZero() {
			sv.Retrieved = formatDay(src.Retrieved).Text
		}
		v.Sources = append(v.Sources, sv)
	}
	return v
}

// hitView is a search or topic hit.
type hitView struct {
	caseView
	Snippets []snippetView
	Matched  []matchView
}

// matchView is one line of "why it matched".
type matchView struct {
	Word   string
	Via    string
	Fields string // "title, summary"
}

type snippetView struct {
	Field string
	Parts []incidentlib.SnippetPart
}

var fieldNames = map[string]string{
	"title": "Title", "summary": "Summary", "symptoms": "Symptoms", "trigger": "Trigger",
	"detection": "Detection", "remediation": "Remediation", "action_items": "Action items",
	"lessons": "Lessons", "scope": "Scope", "company": "Company",
	"root_cause": "Root cause", "component": "Component", "symptom": "Symptom", "contributing_factor": "Contributing factor",
	"started": "Year",
}

func (s *server) hits(hs []incidentlib.Hit) []hitView {
	out := make([]hitView, 0, len(hs))
	for _, h := range hs {
		hv := hitView{caseView: s.caseView(h.Case)}
		for _, sn := range h.Snippets {
			name := fieldNames[sn.Field]
			if name == "" {
				name = strings.ReplaceAll(sn.Field, "_", " ")
			}
			hv.Snippets = append(hv.Snippets, snippetView{Field: name, Parts: sn.Parts})
		}
		for _, m := range h.Matched {
			var fields []string
			for _, f := range m.Fields {
				name := fieldNames[f]
				if name == "" {
					name = strings.ReplaceAll(f, "_", " ")
				}
				fields = append(fields, strings.ToLower(name))
			}
			hv.Matched = append(hv.Matched, matchView{Word: m.Word, Via: m.Via, Fields: strings.Join(fields, ", ")})
		}
		out = append(out, hv)
	}
	return out
}

// kubegapView is the "Check your cluster for this" panel.
type kubegapView struct {
	Intro      string // "This case involves" / "These 2 cases involve"
	Components []termLink
	URL        string
	Checks     []KubegapCheck
}

func (s *server) kubegap(ctx context.Context, intro string, components []termLink, caseID string) kubegapView {
	k := kubegapView{Intro: intro, Components: components, URL: s.cfg.KubegapURL}
	if caseID != "" && s.cfg.KubegapChecks != nil {
		k.Checks = s.cfg.KubegapChecks(ctx, caseID)
	}
	return k
}
