package web

import (
	"net/url"
	"strings"

	"github.com/incidentlib/incidentlib"
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
	Groups       []termLink // component groups, for the header tags
	Sources      []sourceView
	// Quotes are what people saw: the error messages, statuses and alerts
	// the sources quote, each with the source it is quoted in.
	Quotes []quoteView
	// Facts are the key facts the sources give, in the page's order;
	// Unknown names those they do not, so the page says it once.
	Facts   []fact
	Unknown []string
}

// fact is one known key fact.
type fact struct {
	Name, Value string
}

// quoteView is one quoted error message, status or alert.
type quoteView struct {
	Text       string
	Kind       string // "error message", "status", "alert", "log line"
	SourceURL  string
	SourceName string // the source's title, or its site
}

// quoteKinds name the quote kinds on the page.
var quoteKinds = map[string]string{
	incidentlib.QuoteError: "error message", incidentlib.QuoteStatus: "status",
	incidentlib.QuoteAlert: "alert", incidentlib.QuoteLog: "log line",
}

type sourceView struct {
	incidentlib.Source
	TypeName  string
	Retrieved string
	// Publisher is the site the source is on ("status.digitalocean.com"),
	// shown beside its title; LinkText is what the link reads: the title,
	// or the site and page when there is no title.
	Publisher string
	LinkText  string
}

func (s *server) caseView(c *incidentlib.Case) caseView {
	v := caseView{
		Case:         c,
		URL:          caseURL(c.ID),
		Date:         formatTimestamp(c.Timeline.Started),
		Day:          formatDay(c.Timeline.Date()),
		Year:         formatTimestamp(incidentlib.Timestamp{Time: c.Timeline.Date().Time, Precision: incidentlib.PrecisionYear}).Text,
		Severity:     "–",
		TTD:          "–",
		TTR:          "–",
		SymptomLinks: s.terms(incidentlib.FacetSymptom, c.SymptomTerms),
		Components:   s.terms(incidentlib.FacetComponent, c.Components),
		Factors:      s.terms(incidentlib.FacetContributingFactor, c.ContributingFactors),
	}
	if c.Timeline.Date().IsZero() {
		v.Year = "–"
	}
	if c.Timeline.Started.IsZero() && !c.Timeline.Reported.IsZero() {
		// No source gives the start: show when it was made public, and
		// say so.
		v.Date = formatTimestamp(c.Timeline.Reported)
		v.Date.Lead = "start unknown, made public "
		v.Day.Lead = "made public "
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
			v.Groups = append(v.Groups, termLink{Facet: incidentlib.FacetComponent, Slug: g.Slug, Name: g.Name,
				URL: "/search?component=" + url.QueryEscape(g.Slug)})
		}
	}
	// A case's severity is not the source's word but the vocabulary's
	// rule applied to its symptoms; the page says so.
	severity := v.Severity
	if severity != "–" {
		severity += " (from its symptoms)"
	}
	if c.Timeline.Started.IsZero() {
		v.Unknown = append(v.Unknown, "start")
	}
	for _, f := range []fact{{"Severity", severity}, {"Scope", c.Scope}, {"Users affected", c.UsersAffected},
		{"Region", c.Region}, {"Time to detect", v.TTD}, {"Time to resolve", v.TTR}} {
		if f.Value == "" || f.Value == "–" {
			v.Unknown = append(v.Unknown, strings.ToLower(f.Name))
			continue
		}
		v.Facts = append(v.Facts, f)
	}
	for _, src := range c.Sources {
		sv := sourceView{Source: src, TypeName: src.Type, LinkText: src.Title}
		if u, err := url.Parse(src.URL); err == nil && u.Host != "" {
			sv.Publisher = strings.TrimPrefix(u.Host, "www.")
			if sv.LinkText == "" {
				sv.LinkText = sv.Publisher + strings.TrimSuffix(u.EscapedPath(), "/")
			}
		}
		if t, ok := s.vocab.SourceType(src.Type); ok {
			sv.TypeName = t.Name
		}
		if !src.Retrieved.IsZero() {
			sv.Retrieved = formatDay(src.Retrieved).Text
		}
		v.Sources = append(v.Sources, sv)
	}
	for _, q := range c.Quotes {
		qv := quoteView{Text: q.Text, Kind: quoteKinds[q.Kind], SourceURL: q.Source, SourceName: q.Source}
		if qv.Kind == "" {
			qv.Kind = q.Kind
		}
		for _, sv := range v.Sources {
			if sv.URL == q.Source && sv.LinkText != "" {
				qv.SourceName = sv.LinkText
			}
		}
		v.Quotes = append(v.Quotes, qv)
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
	Word      string
	Via       string
	Fields    string // "title, summary"
	Signature bool   // Word is an error signature, Via what it means
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
	"started": "Year", "quoted": "What people saw",
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
			hv.Matched = append(hv.Matched, matchView{Word: m.Word, Via: m.Via, Fields: strings.Join(fields, ", "), Signature: m.Signature})
		}
		out = append(out, hv)
	}
	return out
}

// kubegapCommand is how a reader with Go runs kubegap without a checkout or
// an install: go run fetches the published module at its latest version.
// The test of printed commands (cmd/kubegap) runs it from the golden pages.
const kubegapCommand = "go run github.com/incidentlib/incidentlib/cmd/kubegap@latest audit ./manifests"

// kubegapAgentCommand adds kubegap's MCP server to Claude Code the same way.
const kubegapAgentCommand = "claude mcp add kubegap -- go run github.com/incidentlib/incidentlib/cmd/kubegap@latest mcp"

// checkIndexURL is the page listing every kubegap check.
const checkIndexURL = "/checks"

// checkURL is a kubegap check's page.
func checkURL(id string) string { return checkIndexURL + "/" + url.PathEscape(id) }

// checkLink is a kubegap check as lists link it.
type checkLink struct {
	ID       string
	Title    string
	Severity string
	URL      string
}

func checkLinks(cs []incidentlib.Check) []checkLink {
	out := make([]checkLink, 0, len(cs))
	for _, c := range cs {
		out = append(out, checkLink{ID: c.ID, Title: c.Title, Severity: string(c.Severity), URL: checkURL(c.ID)})
	}
	return out
}

// kubegapView is the "Check your cluster for this" panel.
type kubegapView struct {
	Intro      string // "This case involves" / "These 2 cases involve"
	Components []termLink
	URL        string // where kubegap is documented
	Checks     []checkLink
	Catalogue  bool   // whether any check is known
	IndexURL   string // every check
	Command    string // how to run kubegap
}

// kubegap builds the panel. checks are those guarding the page's terms.
func (s *server) kubegap(intro string, components []termLink, checks []incidentlib.Check) kubegapView {
	k := kubegapView{Intro: intro, Components: components, URL: s.cfg.KubegapURL, Checks: checkLinks(checks),
		Catalogue: len(s.cfg.Checks) > 0, IndexURL: checkIndexURL, Command: kubegapCommand}
	if k.URL == "" {
		k.URL = checkIndexURL
	}
	return k
}
