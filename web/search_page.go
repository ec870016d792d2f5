package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/incidentlib/incidentlib"
)

// maxPage bounds the page parameter so that a silly number is a clear
// error rather than an empty page.
const maxPage = 10000

// parsePage reads the page parameter: absent means 1.
func parsePage(v url.Values) (int, error) {
	s := v.Get("page")
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxPage {
		return 0, incidentlib.InvalidParam("page", "must be a whole number from 1 to %d, not %q", maxPage, truncate(s, 20))
	}
	return n, nil
}

// searchParams are the URL parameters of /search. The URL holds the whole
// state of a search, so that it can be shared.
var facetParams = map[incidentlib.Facet]string{
	incidentlib.FacetRootCause:          "root_cause",
	incidentlib.FacetComponent:          "component",
	incidentlib.FacetSymptom:            "symptom",
	incidentlib.FacetContributingFactor: "contributing_factor",
}

// parseQuery turns the URL of a search page into a query. The library
// checks the slugs; this checks the shape of the numbers.
func parseQuery(v url.Values) (incidentlib.Query, error) {
	var q incidentlib.Query
	q.Text = strings.TrimSpace(v.Get("q"))
	// A facet or sort given with no value is a mistake in the URL, as on
	// the API. (The form's year boxes may come empty: that is "any".)
	for _, name := range []string{"root_cause", "component", "symptom", "contributing_factor", "severity", "company", "sort", "page"} {
		if vs, ok := v[name]; ok && strings.TrimSpace(strings.Join(vs, "")) == "" {
			return q, incidentlib.InvalidParam(name, "is empty; give a value or leave the parameter out")
		}
	}
	if len(q.Text) > incidentlib.MaxQueryLength {
		return q, &incidentlib.Error{Code: incidentlib.ETOOLARGE, Param: "q", Message: "the query is " + strconv.Itoa(len(q.Text)) + " bytes; at most " + strconv.Itoa(incidentlib.MaxQueryLength) + " are allowed"}
	}
	var err error
	if q.Page, err = parsePage(v); err != nil {
		return q, err
	}
	if s := v.Get("sort"); s != "" {
		if !slices.Contains(incidentlib.Sorts, incidentlib.Sort(s)) {
			var valid []string
			for _, so := range incidentlib.Sorts {
				valid = append(valid, string(so))
			}
			return q, incidentlib.InvalidParam("sort", "unknown sort %q; valid: %s", truncate(s, 30), strings.Join(valid, ", "))
		}
		q.Sort = incidentlib.Sort(s)
	}
	f := &q.Filters
	f.RootCauses = values(v, "root_cause")
	f.Components = values(v, "component")
	f.Symptoms = values(v, "symptom")
	f.ContributingFactors = values(v, "contributing_factor")
	f.Companies = values(v, "company")
	f.Severities = values(v, "severity")
	for _, y := range []struct {
		name string
		dst  *int
	}{{"year_from", &f.YearFrom}, {"year_to", &f.YearTo}} {
		s := strings.TrimSpace(v.Get(y.name))
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 9999 {
			return q, incidentlib.InvalidParam(y.name, "must be a year such as 2019, not %q", truncate(s, 20))
		}
		*y.dst = n
	}
	return q, nil
}

// values returns a parameter's non-empty values, once each.
func values(v url.Values, name string) []string {
	var out []string
	for _, s := range v[name] {
		s = strings.TrimSpace(s)
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// stateValues is the canonical URL state of a query: what pagination and
// sort links carry over.
func stateValues(q incidentlib.Query) url.Values {
	v := url.Values{}
	if q.Text != "" {
		v.Set("q", q.Text)
	}
	for _, f := range incidentlib.Facets {
		for _, s := range q.Filters.Of(f) {
			v.Add(facetParams[f], s)
		}
	}
	for _, c := range q.Filters.Companies {
		v.Add("company", c)
	}
	for _, s := range q.Filters.Severities {
		v.Add("severity", s)
	}
	if q.Filters.YearFrom != 0 {
		v.Set("year_from", strconv.Itoa(q.Filters.YearFrom))
	}
	if q.Filters.YearTo != 0 {
		v.Set("year_to", strconv.Itoa(q.Filters.YearTo))
	}
	if q.Sort != "" {
		v.Set("sort", string(q.Sort))
	}
	return v
}

// pageURL is path with the state and a page number (1 is left out).
func pageURL(path string, state url.Values, page int) string {
	v := url.Values{}
	for k, vs := range state {
		v[k] = vs
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// pager is the "Previous 1 2 … 9 Next" navigation.
type pager struct {
	Prev, Next string
	Pages      []pageLink
}

type pageLink struct {
	N       int
	URL     string
	Current bool
	Gap     bool // an ellipsis before this link
}

func newPager(res *incidentlib.SearchResult, urlFor func(int) string) pager {
	var p pager
	if res.PerPage <= 0 || res.Total <= res.PerPage {
		return p
	}
	last := (res.Total + res.PerPage - 1) / res.PerPage
	cur := res.Page
	if cur > 1 {
		p.Prev = urlFor(cur - 1)
	}
	if cur < last {
		p.Next = urlFor(cur + 1)
	}
	prev := 0
	for n := 1; n <= last; n++ {
		if n != 1 && n != last && (n < cur-2 || n > cur+2) {
			continue
		}
		p.Pages = append(p.Pages, pageLink{N: n, URL: urlFor(n), Current: n == cur, Gap: prev != 0 && n != prev+1})
		prev = n
	}
	return p
}

type searchPage struct {
	Text     string
	Error    string
	ErrParam string
	Total    int
	From, To int
	Fuzzy    bool
	Notice   string // the query ran in a cheaper form, and why
	Sort     incidentlib.Sort
	Sorts    []sortOption
	Hits     []hitView
	Pager    pager
	Facets   []filterGroup
	Sev      filterGroup
	YearFrom string
	YearTo   string
	Filtered bool
	ClearURL string
	// Active lists the filters in force, each with a link that removes
	// it: on a phone the filter column is below the results, and "9
	// cases" must say why.
	Active []activeFilter

	// What the query meant, and help when it found little.
	TermFilters []termFilter
	Partial     bool
	Complete    int
	Unmatched   []string
	Suggestions []suggestionView
}

// activeFilter is one filter in force on a search.
type activeFilter struct {
	Label     string // "Root cause: DNS"
	RemoveURL string
}

// activeFilters lists the filters of q in force, in the order of the
// filter column.
func (s *server) activeFilters(q incidentlib.Query, state url.Values) []activeFilter {
	var out []activeFilter
	add := func(label, param, value string) {
		v := url.Values{}
		for k, vs := range state {
			for _, x := range vs {
				if k != param || x != value {
					v.Add(k, x)
				}
			}
		}
		out = append(out, activeFilter{Label: label, RemoveURL: pageURL("/search", v, 1)})
	}
	for _, f := range incidentlib.Facets {
		for _, slug := range q.Filters.Of(f) {
			add(f.Title()+": "+s.term(f, slug).Name, facetParams[f], slug)
		}
	}
	for _, c := range q.Filters.Companies {
		add("Company: "+c, "company", c)
	}
	for _, sev := range q.Filters.Severities {
		name := sev
		for _, t := range s.vocab.Severities() {
			if t.Slug == sev {
				name = t.Name
			}
		}
		add("Severity: "+name, "severity", sev)
	}
	if q.Filters.YearFrom != 0 {
		add("From "+strconv.Itoa(q.Filters.YearFrom), "year_from", strconv.Itoa(q.Filters.YearFrom))
	}
	if q.Filters.YearTo != 0 {
		add("To "+strconv.Itoa(q.Filters.YearTo), "year_to", strconv.Itoa(q.Filters.YearTo))
	}
	return out
}

// termFilter is a vocabulary term the query names, offered as a one-click
// filter: "Filter by contributing factor: Retry amplification (11)".
type termFilter struct {
	Facet  string // "contributing factor"
	Name   string
	Count  int
	URL    string // this search narrowed to the term
	Active bool   // the search already filters on it
	Topic  string // the term's topic page
}

// suggestionView is help for one query word.
type suggestionView struct {
	Word      string
	Spellings []linkView
	Terms     []linkView
}

type linkView struct {
	Text string
	URL  string
}

type sortOption struct {
	Value    string
	Label    string
	Selected bool
}

// filterGroup is one facet's checkboxes.
type filterGroup struct {
	Param   string
	Title   string
	Options []filterOption
	More    []filterOption // shown inside <details>, without JavaScript
}

type filterOption struct {
	Param   string
	Value   string
	Label   string
	Count   int
	Checked bool
	ID      string
}

// filterOptionsShown is how many checkboxes a facet shows before "more".
const filterOptionsShown = 8

var sortLabels = map[incidentlib.Sort]string{
	incidentlib.SortRelevance: "Best match",
	incidentlib.SortNewest:    "Newest first",
	incidentlib.SortOldest:    "Oldest first",
	incidentlib.SortLongest:   "Longest to resolve",
}

// showSearchPage renders /search: full-text search with facet filters,
// sort and pagination, all held in the URL.
func (s *server) showSearchPage(w http.ResponseWriter, r *http.Request) error {
	// The form sends every field, empty ones too ("&year_from=&year_to="):
	// send the browser to the same search without them, so the URL it
	// shows and shares says only what the search is.
	if clean, changed := withoutEmpty(r.URL.Query()); changed {
		target := "/search"
		if len(clean) > 0 {
			target += "?" + clean.Encode()
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
		return nil
	}
	q, qerr := parseQuery(r.URL.Query())
	var res *incidentlib.SearchResult
	if qerr == nil {
		res, qerr = s.lib.SearchCases(r.Context(), q)
	}
	if qerr != nil && statusOf(qerr) == http.StatusInternalServerError {
		return qerr
	}
	sp := searchPage{Text: q.Text, ClearURL: "/search"}
	if q.Text != "" {
		sp.ClearURL = "/search?q=" + url.QueryEscape(q.Text)
	}
	status := http.StatusOK
	if qerr != nil {
		status = statusOf(qerr)
		sp.Error, sp.ErrParam = incidentlib.ErrorMessage(qerr), incidentlib.ErrorParam(qerr)
		res = &incidentlib.SearchResult{}
	}
	if q.Page > 1 && len(res.Hits) == 0 && res.Total > 0 {
		return incidentlib.Errorf(incidentlib.ENOTFOUND, "This search has %s; there is no page %d.", plural(res.Total, "case", "cases"), q.Page)
	}
	sp.Total, sp.From, sp.To, sp.Fuzzy, sp.Sort = res.Total, res.From, res.To, res.Fuzzy, res.Sort
	sp.Notice = res.Notice
	if sp.Sort == "" {
		sp.Sort = q.Sort
	}
	for _, so := range incidentlib.Sorts {
		if so == incidentlib.SortRelevance && q.Text == "" {
			continue
		}
		sp.Sorts = append(sp.Sorts, sortOption{Value: string(so), Label: sortLabels[so], Selected: so == sp.Sort})
	}
	sp.Hits = s.hits(res.Hits)
	state := stateValues(q)
	sp.Partial, sp.Complete, sp.Unmatched = res.Partial, res.Complete, res.Unmatched
	for _, fc := range res.Terms {
		param := facetParams[fc.Term.Facet]
		tf := termFilter{Facet: strings.ToLower(fc.Term.Facet.Title()), Name: fc.Term.Name, Count: fc.Count,
			Active: slices.Contains(q.Filters.Of(fc.Term.Facet), fc.Term.Slug), Topic: topicURL(fc.Term.Facet, fc.Term.Slug)}
		v := url.Values{}
		for k, vs := range state {
			v[k] = append([]string{}, vs...)
		}
		if !tf.Active {
			v.Add(param, fc.Term.Slug)
		}
		tf.URL = pageURL("/search", v, 1)
		sp.TermFilters = append(sp.TermFilters, tf)
	}
	for _, sg := range res.Suggestions {
		sv := suggestionView{Word: sg.Word}
		for _, sp := range sg.Spellings {
			v := url.Values{}
			for k, vs := range state {
				v[k] = vs
			}
			v.Set("q", replaceWord(q.Text, sg.Word, sp))
			sv.Spellings = append(sv.Spellings, linkView{Text: sp, URL: pageURL("/search", v, 1)})
		}
		for _, t := range sg.Terms {
			sv.Terms = append(sv.Terms, linkView{Text: t.Name, URL: topicURL(t.Facet, t.Slug)})
		}
		sp.Suggestions = append(sp.Suggestions, sv)
	}
	sp.Pager = newPager(res, func(n int) string { return pageURL("/search", state, n) })
	sp.Filtered = !q.Filters.IsZero()
	sp.Active = s.activeFilters(q, state)
	for _, f := range incidentlib.Facets {
		g := s.filterGroup(f, res.Facets[f], q.Filters.Of(f))
		if f == incidentlib.FacetComponent {
			s.countGroups(r.Context(), q, &g)
		}
		sp.Facets = append(sp.Facets, g)
	}
	sp.Sev = filterGroup{Param: "severity", Title: "Severity"}
	for _, t := range s.vocab.Severities() {
		o := filterOption{Param: "severity", Value: t.Slug, Label: t.Name, Checked: slices.Contains(q.Filters.Severities, t.Slug), ID: "f-severity-" + t.Slug}
		for _, vc := range res.Severities {
			if vc.Value == t.Slug {
				o.Count = vc.Count
			}
		}
		if o.Count > 0 || o.Checked {
			sp.Sev.Options = append(sp.Sev.Options, o)
		}
	}
	if q.Filters.YearFrom != 0 {
		sp.YearFrom = strconv.Itoa(q.Filters.YearFrom)
	}
	if q.Filters.YearTo != 0 {
		sp.YearTo = strconv.Itoa(q.Filters.YearTo)
	}
	title := "Search"
	if q.Text != "" {
		title = "Search: " + truncate(q.Text, 60)
	}
	p := s.newPage(r, title)
	p.Nav = "search"
	p.Query = q.Text
	p.NoIndex = true
	p.Description = "Search the Incident Library's public production incidents."
	p.Content = sp
	// A bad parameter still shows the form, with the message by it.
	return s.renderStatus(w, status, "search", p)
}

// countGroups gives a ticked component group its real count: the cases of
// the result set with any of its members, which is the total of the same
// search narrowed to the group alone within the component filter.
func (s *server) countGroups(ctx context.Context, q incidentlib.Query, g *filterGroup) {
	for _, opts := range [][]filterOption{g.Options, g.More} {
		for i := range opts {
			if _, isGroup := s.vocab.Group(opts[i].Value); !isGroup || !opts[i].Checked {
				continue
			}
			gq := q
			gq.Filters.Components = []string{opts[i].Value}
			gq.Page, gq.PerPage = 1, 1
			if res, err := s.lib.SearchCases(ctx, gq); err == nil {
				opts[i].Count = res.Total
			}
		}
	}
}

// filterGroup builds a facet's checkboxes: the terms the result set holds,
// most cases first, and every checked term even when it now counts zero.
func (s *server) filterGroup(f incidentlib.Facet, counts []incidentlib.FacetCount, checked []string) filterGroup {
	g := filterGroup{Param: facetParams[f], Title: f.Title()}
	seen := map[string]bool{}
	var opts []filterOption
	for _, fc := range counts {
		seen[fc.Term.Slug] = true
		opts = append(opts, filterOption{Value: fc.Term.Slug, Label: s.term(f, fc.Term.Slug).Name, Count: fc.Count,
			Checked: slices.Contains(checked, fc.Term.Slug)})
	}
	for _, slug := range checked {
		if seen[slug] {
			continue
		}
		name := slug
		if t, ok := s.vocab.Term(f, slug); ok {
			name = t.Name
		} else if gr, ok := s.vocab.Group(slug); ok && f == incidentlib.FacetComponent {
			name = gr.Name + " (all)"
		}
		opts = append([]filterOption{{Value: slug, Label: name, Checked: true}}, opts...)
	}
	// Checked options first, so that a filter in use is never hidden.
	slices.SortStableFunc(opts, func(a, b filterOption) int {
		switch {
		case a.Checked && !b.Checked:
			return -1
		case b.Checked && !a.Checked:
			return 1
		}
		return 0
	})
	for i := range opts {
		opts[i].Param = g.Param
		opts[i].ID = "f-" + g.Param + "-" + opts[i].Value
	}
	if len(opts) > filterOptionsShown {
		g.Options, g.More = opts[:filterOptionsShown], opts[filterOptionsShown:]
	} else {
		g.Options = opts
	}
	return g
}

// formFields are the search form's fields that a browser sends even when
// they are empty (the words and the years); other parameters come only
// from links, and an empty one is an error (400) like on the API.
var formFields = map[string]bool{"q": true, "year_from": true, "year_to": true}

// withoutEmpty drops the form's empty fields and reports whether any was
// dropped.
func withoutEmpty(v url.Values) (url.Values, bool) {
	out, changed := url.Values{}, false
	for k, vals := range v {
		for _, x := range vals {
			if formFields[k] && strings.TrimSpace(x) == "" {
				changed = true
				continue
			}
			out.Add(k, x)
		}
	}
	return out, changed
}

// replaceWord swaps the first whole-word occurrence of word in text
// (case-insensitive) for with, for a "did you mean" link.
func replaceWord(text, word, with string) string {
	lower := strings.ToLower(text)
	w := strings.ToLower(word)
	for i := 0; ; {
		j := strings.Index(lower[i:], w)
		if j < 0 {
			return text
		}
		j += i
		end := j + len(w)
		before := j == 0 || !isWordByte(lower[j-1])
		after := end == len(lower) || !isWordByte(lower[end])
		if before && after {
			return text[:j] + with + text[end:]
		}
		i = end
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 0x80
}
