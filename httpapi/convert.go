package httpapi

import (
	"net/url"
	"strconv"
	"time"

	"github.com/incidentlib/incidentlib"
)

// links builds URLs: absolute under Config.BaseURL when set, else
// root-relative.
type links struct {
	base string
}

func (l links) abs(path string) string { return l.base + path }

func (l links) absPtr(path string) *string {
	s := l.abs(path)
	return &s
}

func (l links) withQuery(path string, v url.Values) string {
	if enc := v.Encode(); enc != "" {
		return l.abs(path + "?" + enc)
	}
	return l.abs(path)
}

func (l links) caseLinks(id string) Links {
	esc := url.PathEscape(id)
	return Links{
		Self:    l.abs(apiPrefix + "/cases/" + esc),
		HTML:    l.absPtr("/cases/" + esc),
		Similar: l.absPtr(apiPrefix + "/cases/" + esc + "/similar"),
	}
}

func (l links) termLinks(f incidentlib.Facet, slug string) Links {
	esc := url.PathEscape(slug)
	return Links{
		Self: l.abs(apiPrefix + "/topics/" + string(f) + "/" + esc),
		HTML: l.absPtr("/" + f.PathSegment() + "/" + esc),
	}
}

// nullable turns "" into null: the API never prints a placeholder.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func precisionName(p incidentlib.Precision) string {
	switch p {
	case incidentlib.PrecisionYear:
		return "year"
	case incidentlib.PrecisionMonth:
		return "month"
	case incidentlib.PrecisionDay:
		return "day"
	}
	return "time"
}

// timestamp renders t and its precision, both null when unknown.
func timestamp(t incidentlib.Timestamp) (value, precision *string) {
	if t.IsZero() {
		return nil, nil
	}
	v, p := t.String(), precisionName(t.Precision)
	return &v, &p
}

func duration(d time.Duration, ok bool) *Duration {
	if !ok {
		return nil
	}
	return &Duration{Seconds: int64(d / time.Second), Human: incidentlib.FormatDuration(d)}
}

func (a *api) termRef(f incidentlib.Facet, slug string) TermRef {
	t, ok := a.vocab().Term(f, slug)
	if !ok {
		// A case names only known terms (the loader checks); fall back to
		// the slug rather than fail a whole response.
		t = incidentlib.Term{Facet: f, Slug: slug, Name: slug}
	}
	return TermRef{Facet: string(f), Slug: slug, Name: t.Name, Group: nullable(t.Group), Links: a.links.termLinks(f, slug)}
}

func (a *api) termRefs(f incidentlib.Facet, slugs []string) []TermRef {
	out := make([]TermRef, 0, len(slugs))
	for _, s := range slugs {
		out = append(out, a.termRef(f, s))
	}
	return out
}

func (a *api) caseSummary(c *incidentlib.Case) CaseSummary {
	tl := c.Timeline
	var t Timeline
	t.Started, t.StartedPrecision = timestamp(tl.Started)
	t.Detected, t.DetectedPrecision = timestamp(tl.Detected)
	t.Mitigated, t.MitigatedPrecision = timestamp(tl.Mitigated)
	t.Resolved, t.ResolvedPrecision = timestamp(tl.Resolved)
	t.Reported, t.ReportedPrecision = timestamp(tl.Reported)
	tags := Tags{
		Components:          a.termRefs(incidentlib.FacetComponent, c.Components),
		Symptoms:            a.termRefs(incidentlib.FacetSymptom, c.SymptomTerms),
		ContributingFactors: a.termRefs(incidentlib.FacetContributingFactor, c.ContributingFactors),
	}
	if c.RootCause != "" {
		rc := a.termRef(incidentlib.FacetRootCause, c.RootCause)
		tags.RootCause = &rc
	}
	return CaseSummary{
		ID:            c.ID,
		Title:         c.Title,
		Company:       c.Company,
		Year:          c.Year(),
		Timeline:      t,
		Severity:      nullable(c.Severity),
		Summary:       c.Summary,
		Tags:          tags,
		TimeToDetect:  duration(c.TimeToDetect()),
		TimeToResolve: duration(c.TimeToResolve()),
		Links:         a.links.caseLinks(c.ID),
	}
}

func (a *api) fullCase(c *incidentlib.Case) Case {
	out := Case{
		CaseSummary:   a.caseSummary(c),
		Scope:         nullable(c.Scope),
		UsersAffected: nullable(c.UsersAffected),
		Region:        nullable(c.Region),
		Symptoms:      nullable(c.Symptoms),
		Trigger:       nullable(c.Trigger),
		Detection:     nullable(c.Detection),
		Remediation:   append([]string{}, c.Remediation...),
		ActionItems:   make([]ActionItem, 0, len(c.ActionItems)),
		Lessons:       nullable(c.Lessons),
		Quoted:        make([]Quote, 0, len(c.Quotes)),
		Sources:       make([]Source, 0, len(c.Sources)),
		Verification: Verification{
			Status:  c.Verification.Status,
			Against: nullable(c.Verification.Against),
			Note:    nullable(c.Verification.Note),
		},
	}
	if out.Verification.Status == "" {
		out.Verification.Status = incidentlib.VerificationUnchecked
	}
	for _, ai := range c.ActionItems {
		out.ActionItems = append(out.ActionItems, ActionItem{Text: ai.Text, Estimate: nullable(ai.Estimate)})
	}
	for _, q := range c.Quotes {
		out.Quoted = append(out.Quoted, Quote{Text: q.Text, Kind: q.Kind, Source: q.Source})
	}
	for _, s := range c.Sources {
		src := Source{URL: nullable(s.URL), Type: s.Type, Title: nullable(s.Title), ArchivedURL: nullable(s.ArchivedURL)}
		src.Retrieved, src.RetrievedPrecision = timestamp(s.Retrieved)
		out.Sources = append(out.Sources, src)
	}
	return out
}

func (a *api) snippets(ss []incidentlib.Snippet) []Snippet {
	out := make([]Snippet, 0, len(ss))
	for _, s := range ss {
		sn := Snippet{Field: s.Field, Parts: make([]SnippetPart, 0, len(s.Parts))}
		for _, p := range s.Parts {
			sn.Text += p.Text
			sn.Parts = append(sn.Parts, SnippetPart{Text: p.Text, Match: p.Match})
		}
		out = append(out, sn)
	}
	return out
}

func (a *api) termCounts(f incidentlib.Facet, fcs []incidentlib.FacetCount) []TermCount {
	out := make([]TermCount, 0, len(fcs))
	for _, fc := range fcs {
		out = append(out, TermCount{
			Facet: string(f), Slug: fc.Term.Slug, Name: fc.Term.Name, Group: nullable(fc.Term.Group),
			Count: fc.Count, Links: a.links.termLinks(f, fc.Term.Slug),
		})
	}
	return out
}

func valueCounts(vcs []incidentlib.ValueCount) []ValueCount {
	out := make([]ValueCount, 0, len(vcs))
	for _, vc := range vcs {
		out = append(out, ValueCount{Value: vc.Value, Count: vc.Count})
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
