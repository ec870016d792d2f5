package mcpserver

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/incidentlib/incidentlib"
)

// CaseDetail is a whole case, as get_incident returns it. A field the
// sources do not state is absent.
type CaseDetail struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Company string `json:"company"`
	URL     string `json:"url,omitempty" jsonschema:"the case's page in the library; absent when the server was started without a base URL"`

	Started       string `json:"started,omitempty" jsonschema:"when impact began, UTC: RFC 3339, or a day, month or year where the source gives no more; absent when no source gives the start (see reported)"`
	Reported      string `json:"reported,omitempty" jsonschema:"when the incident was first made public, for a case whose sources give no start: it had begun by then"`
	Detected      string `json:"detected,omitempty"`
	Mitigated     string `json:"mitigated,omitempty"`
	Resolved      string `json:"resolved,omitempty"`
	TimeToDetect  string `json:"time_to_detect,omitempty" jsonschema:"e.g. 2m, 6h 13m"`
	TimeToResolve string `json:"time_to_resolve,omitempty"`

	Severity      string `json:"severity,omitempty" jsonschema:"critical, major or minor; it follows from the case's symptoms (critical: full outage, data lost or exposed; major: other failures; minor: slow, late or degraded)"`
	Scope         string `json:"scope,omitempty"`
	UsersAffected string `json:"users_affected,omitempty"`
	Region        string `json:"region,omitempty"`

	Summary             string       `json:"summary"`
	Symptoms            string       `json:"symptoms,omitempty"`
	SymptomTerms        []TermRef    `json:"symptom_terms"`
	Trigger             string       `json:"trigger,omitempty"`
	RootCause           *TermRef     `json:"root_cause,omitempty" jsonschema:"absent when the source does not disclose a cause"`
	Components          []TermRef    `json:"components"`
	ContributingFactors []TermRef    `json:"contributing_factors"`
	Detection           string       `json:"detection,omitempty"`
	Remediation         []string     `json:"remediation"`
	ActionItems         []ActionItem `json:"action_items"`
	Lessons             string       `json:"lessons,omitempty"`
	Quoted              []Quote      `json:"quoted,omitempty" jsonschema:"what people saw: error messages, status codes, alerts and log lines the sources quote verbatim"`
	Sources             []Source     `json:"sources"`
	Verification        Verification `json:"verification"`
}

// Quote is text a source quotes verbatim: what people saw.
type Quote struct {
	Text   string `json:"text"`
	Kind   string `json:"kind" jsonschema:"error, status, alert or log"`
	Source string `json:"source" jsonschema:"the url of the listed source that quotes it"`
}

// ActionItem is a follow-up the company committed to.
type ActionItem struct {
	Text     string `json:"text"`
	Estimate string `json:"estimate,omitempty" jsonschema:"when, as the company estimated it"`
}

// Source is a public document a case rests on.
type Source struct {
	URL         string `json:"url,omitempty"`
	Type        string `json:"type"`
	Title       string `json:"title,omitempty"`
	Retrieved   string `json:"retrieved,omitempty"`
	ArchivedURL string `json:"archived_url,omitempty"`
}

// Verification says how far the case was checked against its sources.
type Verification struct {
	Status  string `json:"status" jsonschema:"checked, partial or unchecked"`
	Against string `json:"against,omitempty"`
	Note    string `json:"note,omitempty"`
}

func (h *handlers) termRefs(f incidentlib.Facet, slugs []string) []TermRef {
	out := []TermRef{}
	for _, s := range slugs {
		out = append(out, h.termRef(f, s))
	}
	return out
}

func (h *handlers) termRef(f incidentlib.Facet, slug string) TermRef {
	t, ok := h.lib.Vocabulary().Term(f, slug)
	if !ok {
		return TermRef{Slug: slug, Name: slug}
	}
	return TermRef{Slug: t.Slug, Name: t.Name}
}

func (h *handlers) caseDetail(c *incidentlib.Case) *CaseDetail {
	d := &CaseDetail{
		ID: c.ID, Title: c.Title, Company: c.Company, URL: h.caseURL(c.ID),
		Started:   c.Timeline.Started.String(),
		Detected:  c.Timeline.Detected.String(),
		Mitigated: c.Timeline.Mitigated.String(),
		Resolved:  c.Timeline.Resolved.String(),
		Reported:  c.Timeline.Reported.String(),
		Severity:  c.Severity, Scope: c.Scope, UsersAffected: c.UsersAffected, Region: c.Region,
		Summary: c.Summary, Symptoms: c.Symptoms,
		SymptomTerms:        h.termRefs(incidentlib.FacetSymptom, c.SymptomTerms),
		Trigger:             c.Trigger,
		Components:          h.termRefs(incidentlib.FacetComponent, c.Components),
		ContributingFactors: h.termRefs(incidentlib.FacetContributingFactor, c.ContributingFactors),
		Detection:           c.Detection,
		Remediation:         append([]string{}, c.Remediation...),
		ActionItems:         []ActionItem{},
		Lessons:             c.Lessons,
		Sources:             []Source{},
		Verification:        Verification{Status: c.Verification.Status, Against: c.Verification.Against, Note: c.Verification.Note},
	}
	for _, q := range c.Quotes {
		d.Quoted = append(d.Quoted, Quote{Text: q.Text, Kind: q.Kind, Source: q.Source})
	}
	if t, ok := c.TimeToDetect(); ok {
		d.TimeToDetect = incidentlib.FormatDuration(t)
	}
	if t, ok := c.TimeToResolve(); ok {
		d.TimeToResolve = incidentlib.FormatDuration(t)
	}
	if c.RootCause != "" {
		r := h.termRef(incidentlib.FacetRootCause, c.RootCause)
		d.RootCause = &r
	}
	for _, a := range c.ActionItems {
		d.ActionItems = append(d.ActionItems, ActionItem{Text: a.Text, Estimate: a.Estimate})
	}
	for _, s := range c.Sources {
		d.Sources = append(d.Sources, Source{URL: s.URL, Type: s.Type, Title: s.Title, Retrieved: s.Retrieved.String(), ArchivedURL: s.ArchivedURL})
	}
	return d
}

// caseMarkdown renders a whole case the way the case page reads, for
// get_incident and the incident:// resource. Unknown key facts print "–".
func (h *handlers) caseMarkdown(c *incidentlib.Case) string {
	d := h.caseDetail(c)
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s\n\n", d.ID, d.Title)
	if d.URL != "" {
		fmt.Fprintf(&b, "%s · %s · %s\n\n", d.Company, caseDate(c), d.URL)
	} else {
		fmt.Fprintf(&b, "%s · %s\n\n", d.Company, caseDate(c))
	}
	b.WriteString("## Key facts\n\n")
	fact := func(name, v string) {
		if v == "" {
			v = "–"
		}
		fmt.Fprintf(&b, "- %s: %s\n", name, v)
	}
	fact("Started", d.Started)
	if d.Reported != "" {
		fact("Made public", d.Reported)
	}
	if d.Detected != "" {
		fact("Detected", d.Detected)
	}
	if d.Mitigated != "" {
		fact("Mitigated", d.Mitigated)
	}
	if d.Resolved != "" {
		fact("Resolved", d.Resolved)
	}
	fact("Severity", d.Severity)
	fact("Scope", d.Scope)
	fact("Users affected", d.UsersAffected)
	fact("Region", d.Region)
	fact("Time to detect", d.TimeToDetect)
	fact("Time to resolve", d.TimeToResolve)
	section := func(title, text string) {
		if strings.TrimSpace(text) == "" {
			text = "–"
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n", title, strings.TrimSpace(text))
	}
	section("Summary", d.Summary)
	section("Symptoms", d.Symptoms)
	if len(d.SymptomTerms) > 0 {
		fmt.Fprintf(&b, "\nSymptom terms: %s\n", refs(d.SymptomTerms))
	}
	rc := "undisclosed"
	if d.RootCause != nil {
		rc = refs([]TermRef{*d.RootCause})
	}
	fmt.Fprintf(&b, "\n## Root cause\n\n- Root cause: %s\n", rc)
	fmt.Fprintf(&b, "- Trigger: %s\n", orDash(d.Trigger))
	fmt.Fprintf(&b, "- Components: %s\n", orDash(refs(d.Components)))
	fmt.Fprintf(&b, "- Contributing factors: %s\n", orDash(refs(d.ContributingFactors)))
	section("Detection", d.Detection)
	list := func(title string, items []string) {
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		if len(items) == 0 {
			b.WriteString("–\n")
		}
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	list("Remediation", d.Remediation)
	var items []string
	for _, a := range d.ActionItems {
		s := a.Text
		if a.Estimate != "" {
			s += " (estimated " + a.Estimate + ")"
		}
		items = append(items, s)
	}
	list("Action items", items)
	section("Lessons", d.Lessons)
	if len(d.Quoted) > 0 {
		var saw []string
		for _, q := range d.Quoted {
			saw = append(saw, "`"+strings.ReplaceAll(q.Text, "`", "'")+"` ("+q.Kind+", quoted in "+q.Source+")")
		}
		list("What people saw", saw)
	}
	var srcs []string
	for _, s := range d.Sources {
		line := s.Type
		if s.URL != "" {
			line = s.URL + " · " + s.Type
		}
		if s.Title != "" {
			line += " · " + s.Title
		}
		if s.ArchivedURL != "" {
			line += " · archived copy: " + s.ArchivedURL
		}
		srcs = append(srcs, line)
	}
	list("Sources", srcs)
	fmt.Fprintf(&b, "\nVerification: %s", d.Verification.Status)
	if d.Verification.Note != "" {
		fmt.Fprintf(&b, " (%s)", d.Verification.Note)
	}
	b.WriteString("\n")
	return b.String()
}

func refs(ts []TermRef) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s (`%s`)", t.Name, t.Slug))
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// renderPage is the compact text of a page of cases: one numbered entry per
// case, each with its URL, and how to get the next page.
func renderPage(what string, p *CasePage, tool string) string {
	var b strings.Builder
	switch {
	case p.Total == 0:
		fmt.Fprintf(&b, "No cases %s. Try other words, fewer filters, or vocab to check the slugs.\n", what)
		if p.notice != "" {
			b.WriteString(p.notice + "\n")
		}
		writeQueryNotes(&b, p)
		return b.String()
	case len(p.Cases) == 0:
		fmt.Fprintf(&b, "%s %s, but this page is past the last one.\n", countCases(p.Total), what)
		return b.String()
	}
	fmt.Fprintf(&b, "%s %s (sorted by %s; %d shown).", countCases(p.Total), what, p.Sort, len(p.Cases))
	if p.Partial && p.Complete != nil {
		fmt.Fprintf(&b, " %s every meaningful word; the rest hold most of them.", countHold(*p.Complete))
	}
	if p.Fuzzy {
		b.WriteString(" Some words are in no case; near spellings were matched (see Why).")
	}
	b.WriteString("\n")
	writeQueryNotes(&b, p)
	b.WriteString("\n")
	writeHits(&b, p.Cases)
	if p.NextCursor != "" {
		fmt.Fprintf(&b, "\nMore: call %s again with the same arguments and cursor %q.\n", tool, p.NextCursor)
	}
	return b.String()
}

func writeHits(b *strings.Builder, hits []CaseHit) {
	for i, c := range hits {
		fmt.Fprintf(b, "%d. **%s** %s · %s · %s\n", i+1, c.ID, c.Title, c.Company, c.Date)
		if c.Summary != "" && c.Summary != c.Title {
			fmt.Fprintf(b, "   %s\n", c.Summary)
		}
		if c.md != "" {
			fmt.Fprintf(b, "   %s\n", c.md)
		}
		if c.Why != "" {
			fmt.Fprintf(b, "   Why: %s\n", c.Why)
		}
		if c.URL != "" {
			fmt.Fprintf(b, "   %s\n", c.URL)
		}
		if c.Source != "" {
			fmt.Fprintf(b, "   Source: %s\n", c.Source)
		}
		for _, r := range c.Remediation {
			fmt.Fprintf(b, "   Fix: %s\n", r)
		}
	}
}

func renderSimilar(o *SimilarOutput) string {
	var b strings.Builder
	if len(o.Similar) == 0 {
		fmt.Fprintf(&b, "No cases are related to %s.\n", withURL(o.ID, o.URL))
		return b.String()
	}
	fmt.Fprintf(&b, "Cases most like %s, %s:\n\n", withURL(o.ID, o.URL), o.Title)
	writeHits(&b, o.Similar)
	return b.String()
}

func renderTopic(t *TopicOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s: %s (`%s`)\n\n%s\n\n", facetTitle(t.Facet), t.Name, t.Slug, t.Definition)
	if t.Group != nil {
		fmt.Fprintf(&b, "Group: %s (`%s`)\n\n", t.Group.Name, t.Group.Slug)
	}
	fmt.Fprintf(&b, "%s.\n", countCases(t.Total))
	counts := func(title string, tc []TermCount) {
		if len(tc) == 0 {
			return
		}
		var parts []string
		for _, c := range tc {
			parts = append(parts, fmt.Sprintf("%s `%s` (%d)", c.Name, c.Slug, c.Cases))
		}
		fmt.Fprintf(&b, "%s: %s\n", title, strings.Join(parts, ", "))
	}
	counts("Components involved", t.Components)
	counts("Root causes", t.RootCauses)
	counts("Symptoms", t.Symptoms)
	counts("Contributing factors", t.ContributingFactors)
	if len(t.Cases) > 0 {
		b.WriteString("\n")
		writeHits(&b, t.Cases)
	}
	if t.NextCursor != "" {
		fmt.Fprintf(&b, "\nMore: call get_topic again with the same facet and slug and cursor %q.\n", t.NextCursor)
	}
	return b.String()
}

func facetTitle(f string) string {
	if ff, ok := incidentlib.ParseFacet(f); ok {
		return ff.Title()
	}
	return f
}

func renderVocab(v *VocabOutput) string {
	var b strings.Builder
	for _, f := range v.Facets {
		fmt.Fprintf(&b, "## %s (facet `%s`)\n\n", f.Title, f.Facet)
		if len(f.Terms) > 0 && f.Terms[0].Definition == "" {
			// The overview: one line per facet, slug and case count.
			var parts []string
			for _, t := range f.Terms {
				parts = append(parts, fmt.Sprintf("%s %d", t.Slug, t.Cases))
			}
			b.WriteString(strings.Join(parts, " · "))
			if len(f.Groups) > 0 {
				var gs []string
				for _, g := range f.Groups {
					gs = append(gs, g.Slug)
				}
				fmt.Fprintf(&b, "\n\nGroups (a group slug filters on all its members): %s", strings.Join(gs, ", "))
			}
			b.WriteString("\n\n")
			continue
		}
		for _, t := range f.Terms {
			fmt.Fprintf(&b, "- `%s` %s (%d cases): %s\n", t.Slug, t.Name, t.Cases, oneLine(t.Definition))
		}
		if len(f.Groups) > 0 {
			b.WriteString("\nComponent groups (a group slug filters on all its members):\n")
			for _, g := range f.Groups {
				fmt.Fprintf(&b, "- `%s` %s: %s\n", g.Slug, g.Name, oneLine(g.Definition))
			}
		}
		b.WriteString("\n")
	}
	if len(v.Severities) > 0 && v.Severities[0].Definition == "" {
		var parts []string
		for _, t := range v.Severities {
			parts = append(parts, fmt.Sprintf("%s %d", t.Slug, t.Cases))
		}
		b.WriteString("## Severity (filter `severity`)\n\n" + strings.Join(parts, " · ") + "\n\nNames and definitions: vocab with facet, or definitions=true.\n")
	} else if len(v.Severities) > 0 {
		b.WriteString("## Severity (filter `severity`)\n\n")
		for _, t := range v.Severities {
			fmt.Fprintf(&b, "- `%s` %s (%d cases): %s\n", t.Slug, t.Name, t.Cases, oneLine(t.Definition))
		}
	}
	return b.String()
}

// caseDate is the day an incident started, or the month or year where the
// source gives no more; where no source gives the start, when it was made
// public.
func caseDate(c *incidentlib.Case) string {
	ts := c.Timeline.Date()
	if c.Timeline.Started.IsZero() && !ts.IsZero() {
		return "start unknown, made public " + ts.String()
	}
	if ts.Exact() {
		return ts.Time.UTC().Format("2006-01-02")
	}
	return ts.String()
}

// snippetText renders the first snippet twice: as plain text for the
// structured content, and with the matched words in Markdown bold for the
// text content.
func snippetText(ss []incidentlib.Snippet) (plain, md string) {
	if len(ss) == 0 {
		return "", ""
	}
	var t strings.Builder
	for _, p := range ss[0].Parts {
		t.WriteString(p.Text)
	}
	return ss[0].Field + ": " + oneLine(t.String()), snippetsWhy(ss[:1])
}

// snippetsWhy renders up to two snippets with the matched words in bold.
func snippetsWhy(ss []incidentlib.Snippet) string {
	var parts []string
	for _, s := range ss {
		if len(parts) == 2 {
			break
		}
		var t strings.Builder
		for _, p := range s.Parts {
			if p.Match && strings.TrimSpace(p.Text) != "" {
				// Keep the spaces around a match outside the markers, where
				// Markdown needs them.
				core := strings.TrimSpace(p.Text)
				i := strings.Index(p.Text, core)
				t.WriteString(p.Text[:i] + "**" + oneLine(core) + "**" + p.Text[i+len(core):])
			} else {
				t.WriteString(p.Text)
			}
		}
		if t.Len() > 0 {
			parts = append(parts, fmt.Sprintf("%s: “%s”", s.Field, oneLine(t.String())))
		}
	}
	return strings.Join(parts, "; ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// firstSentence returns the first sentence of s, cut to at most n bytes.
func firstSentence(s string, n int) string {
	s = oneLine(s)
	for i := 0; i < len(s)-1; i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' && i > 20 {
			s = s[:i+1]
			break
		}
	}
	return truncate(s, n)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// nearest returns the candidate closest to s, if it is close enough to be
// a likely typo.
func nearest(s string, candidates []string) string {
	best, _ := incidentlib.Nearest(s, candidates)
	return best
}

func countCases(n int) string {
	if n == 1 {
		return "1 case"
	}
	return fmt.Sprintf("%d cases", n)
}

// writeQueryNotes says what a search understood: the vocabulary terms it
// recognised, the words that matched nothing, and suggestions.
func writeQueryNotes(b *strings.Builder, p *CasePage) {
	for _, t := range p.Recognised {
		fmt.Fprintf(b, "Recognised %s: %s (%s; %s here); filter with %s=[%q] or call get_topic.\n",
			strings.ReplaceAll(t.Facet, "_", " "), t.Name, t.Slug, countCases(t.Cases), t.Facet, t.Slug)
	}
	if len(p.Unmatched) > 0 {
		fmt.Fprintf(b, "No case holds: %s.\n", strings.Join(p.Unmatched, ", "))
	}
	for _, s := range p.Suggestions {
		var parts []string
		if len(s.Spellings) > 0 {
			parts = append(parts, "did you mean "+strings.Join(s.Spellings, ", ")+"?")
		}
		if len(s.Terms) > 0 {
			var ts []string
			for _, t := range s.Terms {
				ts = append(ts, fmt.Sprintf("%s (%s %s)", t.Name, t.Facet, t.Slug))
			}
			parts = append(parts, "related terms: "+strings.Join(ts, ", "))
		}
		fmt.Fprintf(b, "For %q: %s\n", s.Word, strings.Join(parts, "; "))
	}
}

func countHold(n int) string {
	if n == 1 {
		return "1 case holds"
	}
	return fmt.Sprintf("%d cases hold", n)
}

// withURL names a case with its page when the server has one.
func withURL(id, url string) string {
	if url == "" {
		return id
	}
	return id + " (" + url + ")"
}
