package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/incidentlib/incidentlib"
)

// facetSidebarTerms is how many terms each "By …" list shows.
const facetSidebarTerms = 10

// topicPageComponents is how many components the cluster panel of a topic
// page names.
const topicPageComponents = 4

type topicPage struct {
	Facet      incidentlib.Facet
	FacetURL   string
	Term       incidentlib.Term
	Group      *incidentlib.Group
	GroupURL   string
	Total      int // cases of the topic, narrowed by the chosen filters
	TopicTotal int // cases of the topic
	From, To   int
	Hits       []hitView
	Pager      pager
	Narrow     []narrowList
	Chosen     []chosenFilter
	ClearURL   string
	Components []termLink
	Kubegap    kubegapView
}

// narrowList is one sidebar list of a topic page: terms (or companies)
// within the topic, each linking to the topic narrowed to it, with the
// count of cases that page lists.
type narrowList struct {
	Title string
	Items []narrowItem
}

type narrowItem struct {
	Name     string
	Count    int
	URL      string // the topic narrowed to this term (or widened again)
	Chosen   bool
	TopicURL string // the term's own topic page, the way out
}

// chosenFilter is a narrowing in force, with the link that removes it.
type chosenFilter struct {
	Name      string
	RemoveURL string
}

// topicParams are the narrowings a topic page takes, one value each.
var topicParams = []struct {
	param string
	facet incidentlib.Facet // "" for company
	title string
}{
	{"root_cause", incidentlib.FacetRootCause, "Root cause"},
	{"component", incidentlib.FacetComponent, "Component"},
	{"symptom", incidentlib.FacetSymptom, "Symptom"},
	{"contributing_factor", incidentlib.FacetContributingFactor, "Contributing factor"},
	{"company", "", "Case: company"},
}

// narrowings reads a topic page's narrowings: one value per parameter, so
// that every count leads to a list of exactly that many cases.
func narrowings(v url.Values) (map[string]string, error) {
	out := map[string]string{}
	for _, tp := range topicParams {
		vals := values(v, tp.param)
		if len(vals) > 1 {
			return nil, incidentlib.InvalidParam(tp.param, "a topic page narrows by one %s at a time", strings.ToLower(tp.title))
		}
		if len(vals) == 1 {
			out[tp.param] = vals[0]
		}
	}
	return out, nil
}

// filtersFrom turns narrowings into library filters, leaving one
// parameter out (for the counts of that parameter's own list).
func filtersFrom(n map[string]string, except string) incidentlib.Filters {
	var f incidentlib.Filters
	for param, val := range n {
		if param == except {
			continue
		}
		switch param {
		case "root_cause":
			f.RootCauses = []string{val}
		case "component":
			f.Components = []string{val}
		case "symptom":
			f.Symptoms = []string{val}
		case "contributing_factor":
			f.ContributingFactors = []string{val}
		case "company":
			f.Companies = []string{val}
		}
	}
	return f
}

// narrowURL is the topic page with the narrowings n, changed so param has
// val ("" removes it).
func narrowURL(self string, n map[string]string, param, val string) string {
	v := url.Values{}
	for p, x := range n {
		if p != param {
			v.Set(p, x)
		}
	}
	if val != "" {
		v.Set(param, val)
	}
	if len(v) == 0 {
		return self
	}
	return self + "?" + v.Encode()
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]|0x20) + s[1:]
}

// topicPage renders /{facet}/{slug}: a term's definition and its cases.
func (s *server) topicPage(f incidentlib.Facet) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		slug := r.PathValue("slug")
		pageNo, err := parsePage(r.URL.Query())
		if err != nil {
			return err
		}
		chosen, err := narrowings(r.URL.Query())
		if err != nil {
			return err
		}
		t, err := s.lib.FindTopic(r.Context(), f, slug, incidentlib.Query{Page: pageNo, Filters: filtersFrom(chosen, "")})
		if incidentlib.ErrorCode(err) == incidentlib.EINVALID && incidentlib.ErrorParam(err) == "slug" {
			return &incidentlib.Error{Code: incidentlib.ENOTFOUND, Message: incidentlib.ErrorMessage(err)}
		}
		if err != nil {
			return err
		}
		res := t.Results
		if pageNo > 1 && len(res.Hits) == 0 {
			return incidentlib.Errorf(incidentlib.ENOTFOUND, "%s has %s; there is no page %d.", t.Term.Name, plural(res.Total, "case", "cases"), pageNo)
		}
		self := topicURL(f, t.Term.Slug)
		tp := topicPage{
			Facet: f, FacetURL: "/" + f.PathSegment(), Term: t.Term, Group: t.Group,
			Total: res.Total, From: res.From, To: res.To,
			Hits:  s.hits(res.Hits),
			Pager: newPager(res, func(n int) string { return pageURL(self, url.Values{}, n) }),
		}
		if len(chosen) > 0 {
			state := url.Values{}
			for p, x := range chosen {
				state.Set(p, x)
			}
			tp.Pager = newPager(res, func(n int) string { return pageURL(self, state, n) })
			tp.ClearURL = self
		}
		if tp.Narrow, tp.Chosen, tp.TopicTotal, err = s.narrowLists(r, f, t, self, chosen); err != nil {
			return err
		}
		if t.Group != nil {
			tp.GroupURL = "/search?component=" + url.QueryEscape(t.Group.Slug)
		}
		comps := t.Components
		tp.Components = s.counted(comps)
		if len(comps) > topicPageComponents {
			comps = comps[:topicPageComponents]
		}
		intro := "These " + plural(res.Total, "case", "cases") + " involve"
		if res.Total == 1 {
			intro = "This case involves"
		}
		tp.Kubegap = s.kubegap(intro, s.counted(comps), incidentlib.ChecksForTerm(s.cfg.Checks, s.vocab, f, t.Term.Slug))
		p := s.newPage(r, f.Title()+": "+t.Term.Name)
		if pageNo > 1 {
			p.Title += " (page " + strconv.Itoa(pageNo) + ")"
		}
		if len(chosen) > 0 {
			p.NoIndex = true // a narrowed topic is a view of the canonical page
		}
		p.Description = t.Term.Definition
		p.Canonical = s.baseURL(r) + pageURL(self, url.Values{}, pageNo)
		p.Nav = f.PathSegment()
		p.Content = tp
		return s.render(w, "topic", p)
	}
}

type facetIndexPage struct {
	Facet  incidentlib.Facet
	Title  string
	Groups []termGroup
	Total  int
}

// termGroup is a list of terms under a heading: the component groups, or
// one list with no heading for the other facets.
type termGroup struct {
	Name       string
	Definition string
	Terms      []termDef
}

type termDef struct {
	termLink
	Definition string
}

var facetPlurals = map[incidentlib.Facet]string{
	incidentlib.FacetRootCause:          "Root causes",
	incidentlib.FacetComponent:          "Components",
	incidentlib.FacetSymptom:            "Symptoms",
	incidentlib.FacetContributingFactor: "Contributing factors",
}

// facetIndexPage renders /{facet}: every term of a facet with its count.
func (s *server) facetIndexPage(f incidentlib.Facet) pageFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		st, err := s.lib.Stats(r.Context())
		if err != nil {
			return err
		}
		counts := map[string]int{}
		for _, fc := range st.Terms[f] {
			counts[fc.Term.Slug] = fc.Count
		}
		def := func(t incidentlib.Term) termDef {
			l := s.term(f, t.Slug)
			l.Count = counts[t.Slug]
			return termDef{termLink: l, Definition: t.Definition}
		}
		ip := facetIndexPage{Facet: f, Title: facetPlurals[f], Total: st.Cases}
		if f == incidentlib.FacetComponent {
			for _, g := range s.vocab.Groups() {
				tg := termGroup{Name: g.Name, Definition: g.Definition}
				for _, t := range s.vocab.Terms(f) {
					if t.Group == g.Slug {
						tg.Terms = append(tg.Terms, def(t))
					}
				}
				ip.Groups = append(ip.Groups, tg)
			}
		} else {
			var tg termGroup
			for _, t := range s.vocab.Terms(f) {
				tg.Terms = append(tg.Terms, def(t))
			}
			ip.Groups = append(ip.Groups, tg)
		}
		p := s.newPage(r, ip.Title)
		p.Description = ip.Title + " of the incidents in the library, with the number of cases for each."
		p.Canonical = s.baseURL(r) + "/" + f.PathSegment()
		p.Nav = f.PathSegment()
		p.Content = ip
		return s.render(w, "facet", p)
	}
}

// narrowLists builds the sidebar of a topic page. A list whose parameter
// is not chosen counts within the topic as narrowed, and its links add the
// term; a list whose parameter is chosen counts as if it were not (one
// more query), and its links replace the choice. Either way the count
// beside a link is the total of the page it leads to.
func (s *server) narrowLists(r *http.Request, f incidentlib.Facet, t *incidentlib.Topic, self string, chosen map[string]string) ([]narrowList, []chosenFilter, int, error) {
	topicTotal := t.Results.Total
	if len(chosen) > 0 {
		all, err := s.lib.FindTopic(r.Context(), f, t.Term.Slug, incidentlib.Query{PerPage: 1})
		if err != nil {
			return nil, nil, 0, err
		}
		topicTotal = all.Results.Total
	}
	var lists []narrowList
	var chips []chosenFilter
	for _, tp := range topicParams {
		res := t.Results
		if _, ok := chosen[tp.param]; ok {
			other, err := s.lib.FindTopic(r.Context(), f, t.Term.Slug, incidentlib.Query{PerPage: 1, Filters: filtersFrom(chosen, tp.param)})
			if err != nil {
				return nil, nil, 0, err
			}
			res = other.Results
		}
		l := narrowList{Title: lowerFirst(tp.title)}
		add := func(name, val string, count int, topic string) {
			if len(l.Items) >= facetSidebarTerms && chosen[tp.param] != val {
				return
			}
			it := narrowItem{Name: name, Count: count, URL: narrowURL(self, chosen, tp.param, val), TopicURL: topic}
			if chosen[tp.param] == val {
				it.Chosen, it.URL = true, narrowURL(self, chosen, tp.param, "")
				chips = append(chips, chosenFilter{Name: tp.title + ": " + name, RemoveURL: it.URL})
			}
			l.Items = append(l.Items, it)
		}
		if tp.facet == "" {
			for _, vc := range res.Companies {
				add(vc.Value, vc.Value, vc.Count, "")
			}
		} else {
			for _, fc := range res.Facets[tp.facet] {
				if tp.facet == f && fc.Term.Slug == t.Term.Slug {
					continue // the topic itself
				}
				tl := s.term(tp.facet, fc.Term.Slug)
				add(tl.Name, fc.Term.Slug, fc.Count, tl.URL)
			}
		}
		if len(l.Items) > 0 {
			lists = append(lists, l)
		}
	}
	return lists, chips, topicTotal, nil
}
