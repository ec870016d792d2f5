package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/incidentlib/incidentlib"
)

// defaultSimilar is how many similar cases a request gets without limit.
const defaultSimilar = 10

func (a *api) vocab() *incidentlib.Vocabulary { return a.lib.Vocabulary() }

func (a *api) handleIndex(w http.ResponseWriter, r *http.Request, _ url.Values) error {
	idx := Index{
		Name:      "Incident Library API",
		OpenAPI:   a.links.abs(apiPrefix + "/openapi.json"),
		Endpoints: map[string]string{},
		Links:     Links{Self: a.links.abs(apiPrefix + "/"), HTML: a.links.absPtr("/")},
	}
	for _, rt := range a.routes {
		p := strings.TrimSuffix(rt.Path, "{$}")
		idx.Endpoints[rt.ID] = a.links.abs(p)
	}
	return a.writeJSON(w, idx)
}

// facetParams maps each tagging facet to its query parameter.
var facetParams = []struct {
	facet incidentlib.Facet
	name  string
}{
	{incidentlib.FacetRootCause, "root_cause"},
	{incidentlib.FacetComponent, "component"},
	{incidentlib.FacetSymptom, "symptom"},
	{incidentlib.FacetContributingFactor, "contributing_factor"},
}

// parseListQuery reads the search parameters. It checks their shape
// (numbers are numbers); the library checks their meaning (slugs exist,
// ranges hold) and names the parameter when they do not.
func parseListQuery(v url.Values) (incidentlib.Query, error) {
	var q incidentlib.Query
	q.Text = strings.TrimSpace(v.Get("q"))
	// A parameter that is present must have a value: an empty one is a
	// mistake in the caller's URL, not a request for the default.
	for _, name := range []string{"root_cause", "component", "symptom", "contributing_factor", "severity", "company", "sort", "page", "per_page", "year_from", "year_to"} {
		if err := notEmpty(v, name); err != nil {
			return q, err
		}
	}
	f := &q.Filters
	f.RootCauses = slugValues(v["root_cause"])
	f.Components = slugValues(v["component"])
	f.Symptoms = slugValues(v["symptom"])
	f.ContributingFactors = slugValues(v["contributing_factor"])
	f.Severities = slugValues(v["severity"])
	for _, c := range v["company"] {
		if c = strings.TrimSpace(c); c != "" {
			f.Companies = append(f.Companies, c)
		}
	}
	q.Sort = incidentlib.Sort(strings.TrimSpace(v.Get("sort")))
	for _, n := range []struct {
		name string
		dst  *int
	}{{"year_from", &f.YearFrom}, {"year_to", &f.YearTo}, {"page", &q.Page}, {"per_page", &q.PerPage}} {
		var err error
		if *n.dst, err = intParam(v, n.name); err != nil {
			return q, err
		}
	}
	for _, n := range []struct {
		name string
		val  int
	}{{"page", q.Page}, {"per_page", q.PerPage}} {
		if v.Has(n.name) && n.val < 1 {
			if n.name == "per_page" {
				return q, incidentlib.InvalidParam(n.name, "must be between 1 and %d, got %d", incidentlib.MaxPerPage, n.val)
			}
			return q, incidentlib.InvalidParam(n.name, "must be 1 or more, got %d", n.val)
		}
	}
	return q, nil
}

// notEmpty refuses a parameter given with no value (or only blanks).
func notEmpty(v url.Values, name string) error {
	vs, ok := v[name]
	if !ok {
		return nil
	}
	for _, s := range vs {
		if strings.Trim(s, " ,") != "" {
			return nil
		}
	}
	return incidentlib.InvalidParam(name, "is empty; give a value or leave the parameter out")
}

// intParam reads an optional whole number; absent or empty is 0.
func intParam(v url.Values, name string) (int, error) {
	s := strings.TrimSpace(v.Get(name))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, incidentlib.InvalidParam(name, "must be a whole number, not %q", truncate(s, 20))
	}
	return n, nil
}

// slugValues splits repeated and comma-separated values and drops empty
// ones: slugs hold no commas.
func slugValues(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// searchValues renders a query back into URL parameters, for links. Only
// what differs from the default is kept, so links stay short and equal
// queries get equal URLs.
func searchValues(q incidentlib.Query, res *incidentlib.SearchResult, skip incidentlib.Facet) url.Values {
	v := url.Values{}
	if q.Text != "" {
		v.Set("q", q.Text)
	}
	for _, fp := range facetParams {
		if fp.facet == skip {
			continue
		}
		if s := q.Filters.Of(fp.facet); len(s) > 0 {
			v[fp.name] = append([]string{}, s...)
		}
	}
	if len(q.Filters.Companies) > 0 {
		v["company"] = append([]string{}, q.Filters.Companies...)
	}
	if len(q.Filters.Severities) > 0 {
		v["severity"] = append([]string{}, q.Filters.Severities...)
	}
	if q.Filters.YearFrom != 0 {
		v.Set("year_from", itoa(q.Filters.YearFrom))
	}
	if q.Filters.YearTo != 0 {
		v.Set("year_to", itoa(q.Filters.YearTo))
	}
	if q.Sort != "" {
		v.Set("sort", string(res.Sort))
	}
	if res.PerPage != incidentlib.DefaultPerPage {
		v.Set("per_page", itoa(res.PerPage))
	}
	return v
}

// caseList renders one page of results. path is the list's API path,
// htmlPath its page's (with the same parameters, less per_page), skip the
// facet a topic path already fixes.
func (a *api) caseList(w http.ResponseWriter, q incidentlib.Query, res *incidentlib.SearchResult, path, htmlPath string, htmlQuery bool, skip incidentlib.Facet) CaseList {
	pages := 1
	if res.PerPage > 0 && res.Total > 0 {
		pages = (res.Total + res.PerPage - 1) / res.PerPage
	}
	base := searchValues(q, res, skip)
	pageURL := func(n int) string {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		if n > 1 {
			v.Set("page", itoa(n))
		}
		return a.links.withQuery(path, v)
	}
	hv := url.Values{}
	if htmlQuery {
		for k, vs := range base {
			if k != "per_page" {
				hv[k] = vs
			}
		}
		if res.Page > 1 {
			hv.Set("page", itoa(res.Page))
		}
	}
	htmlURL := a.links.withQuery(htmlPath, hv)
	pl := PageLinks{
		Self:  pageURL(res.Page),
		HTML:  &htmlURL,
		First: pageURL(1),
		Last:  pageURL(pages),
	}
	if res.Page > 1 {
		p := pageURL(min(res.Page-1, pages))
		pl.Prev = &p
	}
	if res.Page < pages {
		n := pageURL(res.Page + 1)
		pl.Next = &n
	}
	var lh []string
	add := func(u, rel string) { lh = append(lh, "<"+u+`>; rel="`+rel+`"`) }
	add(pl.First, "first")
	if pl.Prev != nil {
		add(*pl.Prev, "prev")
	}
	if pl.Next != nil {
		add(*pl.Next, "next")
	}
	add(pl.Last, "last")
	w.Header().Set("Link", strings.Join(lh, ", "))

	out := CaseList{
		Query:  appliedQuery(q, res),
		Total:  res.Total,
		Pages:  pages,
		From:   res.From,
		To:     res.To,
		Fuzzy:  res.Fuzzy,
		Notice: res.Notice,
		Items:  make([]Hit, 0, len(res.Hits)),
		Links:  pl,
		Facets: a.facets(res),

		Partial:     res.Partial,
		Complete:    res.Complete,
		Terms:       []RecognisedTerm{},
		Unmatched:   append([]string{}, res.Unmatched...),
		Suggestions: []Suggestion{},
	}
	for _, fc := range res.Terms {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		v.Del("page")
		if !slices.Contains(v[string(fc.Term.Facet)], fc.Term.Slug) {
			v.Add(string(fc.Term.Facet), fc.Term.Slug)
		}
		tc := a.termCounts(fc.Term.Facet, []incidentlib.FacetCount{fc})[0]
		out.Terms = append(out.Terms, RecognisedTerm{TermCount: tc, Filter: a.links.withQuery(path, v)})
	}
	for _, s := range res.Suggestions {
		sg := Suggestion{Word: s.Word, Spellings: append([]string{}, s.Spellings...), Terms: []TermRef{}}
		for _, t := range s.Terms {
			sg.Terms = append(sg.Terms, a.termRef(t.Facet, t.Slug))
		}
		out.Suggestions = append(out.Suggestions, sg)
	}
	for _, h := range res.Hits {
		hit := Hit{Case: a.caseSummary(h.Case), Snippets: a.snippets(h.Snippets), Matched: []Match{}, Terms: []TermRef{}}
		for _, m := range h.Matched {
			hit.Matched = append(hit.Matched, Match{Word: m.Word, Via: nullable(m.Via), Signature: m.Signature, Fields: append([]string{}, m.Fields...)})
		}
		for _, t := range h.Terms {
			hit.Terms = append(hit.Terms, a.termRef(t.Facet, t.Slug))
		}
		if q.Text != "" {
			s := h.Score
			hit.Score = &s
		}
		out.Items = append(out.Items, hit)
	}
	return out
}

func appliedQuery(q incidentlib.Query, res *incidentlib.SearchResult) AppliedQuery {
	f := q.Filters
	orEmpty := func(s []string) []string { return append([]string{}, s...) }
	aq := AppliedQuery{
		Q:                  nullable(q.Text),
		RootCause:          orEmpty(f.RootCauses),
		Component:          orEmpty(f.Components),
		Symptom:            orEmpty(f.Symptoms),
		ContributingFactor: orEmpty(f.ContributingFactors),
		Company:            orEmpty(f.Companies),
		Severity:           orEmpty(f.Severities),
		Sort:               string(res.Sort),
		Page:               res.Page,
		PerPage:            res.PerPage,
	}
	if f.YearFrom != 0 {
		aq.YearFrom = &f.YearFrom
	}
	if f.YearTo != 0 {
		aq.YearTo = &f.YearTo
	}
	return aq
}

func (a *api) facets(res *incidentlib.SearchResult) Facets {
	return Facets{
		RootCause:          a.termCounts(incidentlib.FacetRootCause, res.Facets[incidentlib.FacetRootCause]),
		Component:          a.termCounts(incidentlib.FacetComponent, res.Facets[incidentlib.FacetComponent]),
		Symptom:            a.termCounts(incidentlib.FacetSymptom, res.Facets[incidentlib.FacetSymptom]),
		ContributingFactor: a.termCounts(incidentlib.FacetContributingFactor, res.Facets[incidentlib.FacetContributingFactor]),
		Company:            valueCounts(res.Companies),
		Year:               valueCounts(res.Years),
		Severity:           valueCounts(res.Severities),
	}
}

func (a *api) handleListCases(w http.ResponseWriter, r *http.Request, v url.Values) error {
	q, err := parseListQuery(v)
	if err != nil {
		return err
	}
	res, err := a.lib.SearchCases(r.Context(), q)
	if err != nil {
		return err
	}
	return a.writeJSON(w, a.caseList(w, q, res, apiPrefix+"/cases", "/search", true, ""))
}

// findCase looks a case up, refusing a malformed ID with a message that
// says what an ID looks like. il-561, IL-561 and 561 all name IL-0561.
func (a *api) findCase(ctx context.Context, id string) (*incidentlib.Case, error) {
	norm, ok := incidentlib.NormalizeCaseID(id)
	if !ok {
		return nil, &incidentlib.Error{Code: incidentlib.ENOTFOUND, Param: "id",
			Message: fmt.Sprintf("no case %q: case IDs look like IL-0561 (il-561 and 561 work too)", truncate(id, 40))}
	}
	return a.lib.FindCaseByID(ctx, norm)
}

func (a *api) handleCase(w http.ResponseWriter, r *http.Request, _ url.Values) error {
	c, err := a.findCase(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return a.writeJSON(w, a.fullCase(c))
}

func (a *api) handleSimilar(w http.ResponseWriter, r *http.Request, v url.Values) error {
	c, err := a.findCase(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := notEmpty(v, "limit"); err != nil {
		return err
	}
	k, err := intParam(v, "limit")
	if err != nil {
		return err
	}
	if v.Has("limit") && k < 1 {
		return incidentlib.InvalidParam("limit", "must be between 1 and 50, got %d", k)
	}
	if k == 0 {
		k = defaultSimilar
	}
	rel, err := a.lib.SimilarCases(r.Context(), c.ID, k)
	if err != nil {
		return err
	}
	cl := a.links.caseLinks(c.ID)
	out := SimilarCases{
		Case:  CaseRef{ID: c.ID, Title: c.Title, Links: cl},
		Items: make([]RelatedCase, 0, len(rel)),
		Links: Links{Self: *cl.Similar, HTML: cl.HTML},
	}
	if s := strings.TrimSpace(v.Get("limit")); s != "" {
		out.Links.Self += "?limit=" + url.QueryEscape(itoa(k))
	}
	for _, rc := range rel {
		out.Items = append(out.Items, RelatedCase{
			Case:    a.caseSummary(rc.Case),
			Score:   rc.Score,
			Reasons: append([]string{}, rc.Reasons...),
			Reason:  rc.Reason(),
		})
	}
	return a.writeJSON(w, out)
}

func (a *api) handleTopic(w http.ResponseWriter, r *http.Request, v url.Values) error {
	facet, ok := incidentlib.ParseFacet(r.PathValue("facet"))
	if !ok {
		var valid []string
		for _, f := range incidentlib.Facets {
			valid = append(valid, string(f))
		}
		return &incidentlib.Error{Code: incidentlib.ENOTFOUND, Param: "facet",
			Message: fmt.Sprintf("no facet %q; valid: %s", truncate(r.PathValue("facet"), 40), strings.Join(valid, ", "))}
	}
	slug := r.PathValue("slug")
	q, err := parseListQuery(v)
	if err != nil {
		return err
	}
	t, err := a.lib.FindTopic(r.Context(), facet, slug, q)
	if err != nil {
		return err
	}
	tl := a.links.termLinks(facet, t.Term.Slug)
	term := TopicTerm{
		Facet:      string(facet),
		Slug:       t.Term.Slug,
		Name:       t.Term.Name,
		Definition: t.Term.Definition,
	}
	if t.Group != nil {
		term.Group = &GroupRef{Slug: t.Group.Slug, Name: t.Group.Name, Definition: t.Group.Definition}
		_, isTerm := a.vocab().Term(facet, slug)
		term.IsGroup = !isTerm && t.Group.Slug == slug
	}
	path := apiPrefix + "/topics/" + string(facet) + "/" + url.PathEscape(t.Term.Slug)
	htmlPath := "/" + facet.PathSegment() + "/" + url.PathEscape(t.Term.Slug)
	out := Topic{
		Term:       term,
		Count:      t.Results.Total,
		Components: a.termCounts(incidentlib.FacetComponent, t.Components),
		Cases:      a.caseList(w, q, t.Results, path, htmlPath, false, ""),
		Links:      Links{Self: tl.Self, HTML: tl.HTML},
	}
	// The page echoes the caller's filters; the topic's own term is implied
	// by the path.
	return a.writeJSON(w, out)
}

func (a *api) handleVocab(w http.ResponseWriter, r *http.Request, _ url.Values) error {
	ctx := r.Context()
	st, err := a.lib.Stats(ctx)
	if err != nil {
		return err
	}
	all, err := a.lib.SearchCases(ctx, incidentlib.Query{PerPage: 1})
	if err != nil {
		return err
	}
	v := a.vocab()
	out := Vocab{
		Facets:      make([]VocabFacet, 0, len(incidentlib.Facets)),
		Groups:      make([]VocabGroup, 0, len(v.Groups())),
		Severities:  make([]PlainTerm, 0, len(v.Severities())),
		SourceTypes: make([]PlainTerm, 0, len(v.SourceTypes())),
		Links:       Links{Self: a.links.abs(apiPrefix + "/vocab")},
	}
	for _, f := range incidentlib.Facets {
		counts := map[string]int{}
		for _, fc := range st.Terms[f] {
			counts[fc.Term.Slug] = fc.Count
		}
		vf := VocabFacet{Facet: string(f), Name: f.Title(), PathSegment: f.PathSegment(), Terms: []VocabTerm{}}
		for _, t := range v.Terms(f) {
			vf.Terms = append(vf.Terms, VocabTerm{
				Slug: t.Slug, Name: t.Name, Definition: t.Definition, Group: nullable(t.Group),
				CaseCount: counts[t.Slug], Links: a.links.termLinks(f, t.Slug),
			})
		}
		out.Facets = append(out.Facets, vf)
	}
	for _, g := range v.Groups() {
		res, err := a.lib.SearchCases(ctx, incidentlib.Query{PerPage: 1, Filters: incidentlib.Filters{Components: []string{g.Slug}}})
		if err != nil {
			return err
		}
		out.Groups = append(out.Groups, VocabGroup{
			Slug: g.Slug, Name: g.Name, Definition: g.Definition,
			Members:   append([]string{}, v.GroupMembers(g.Slug)...),
			CaseCount: res.Total,
			Links:     a.links.termLinks(incidentlib.FacetComponent, g.Slug),
		})
	}
	sev := map[string]int{}
	for _, vc := range all.Severities {
		sev[vc.Value] = vc.Count
	}
	for _, t := range v.Severities() {
		n := sev[t.Slug]
		out.Severities = append(out.Severities, PlainTerm{Slug: t.Slug, Name: t.Name, Definition: t.Definition, CaseCount: &n})
	}
	for _, t := range v.SourceTypes() {
		out.SourceTypes = append(out.SourceTypes, PlainTerm{Slug: t.Slug, Name: t.Name, Definition: t.Definition})
	}
	return a.writeJSON(w, out)
}

func (a *api) handleStats(w http.ResponseWriter, r *http.Request, _ url.Values) error {
	st, err := a.lib.Stats(r.Context())
	if err != nil {
		return err
	}
	out := Stats{
		Cases: st.Cases,
		Terms: TermCounts{
			RootCause:          a.termCounts(incidentlib.FacetRootCause, st.Terms[incidentlib.FacetRootCause]),
			Component:          a.termCounts(incidentlib.FacetComponent, st.Terms[incidentlib.FacetComponent]),
			Symptom:            a.termCounts(incidentlib.FacetSymptom, st.Terms[incidentlib.FacetSymptom]),
			ContributingFactor: a.termCounts(incidentlib.FacetContributingFactor, st.Terms[incidentlib.FacetContributingFactor]),
		},
		Known:        make([]FieldKnown, 0, len(st.Known)),
		Verification: valueCounts(st.Verification),
		Years:        valueCounts(st.Years),
		Links:        Links{Self: a.links.abs(apiPrefix + "/stats"), HTML: a.links.absPtr("/charts")},
	}
	for _, k := range st.Known {
		share := 0.0
		if st.Cases > 0 {
			share = float64(k.Known) / float64(st.Cases)
		}
		out.Known = append(out.Known, FieldKnown{Field: k.Field, Known: k.Known, Share: share})
	}
	return a.writeJSON(w, out)
}

func (a *api) handleOpenAPI(w http.ResponseWriter, r *http.Request, _ url.Values) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", a.cache)
	w.Write(a.openapi)
	return nil
}
