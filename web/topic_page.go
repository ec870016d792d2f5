package web

import (
	"net/http"
	"net/url"
	"strconv"

	"incidentlib"
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
	Total      int
	From, To   int
	Hits       []hitView
	Pager      pager
	ByFacet    []facetList
	Components []termLink
	Kubegap    kubegapView
}

// facetList is one "By root cause" list of term counts.
type facetList struct {
	Facet incidentlib.Facet
	Title string
	Terms []termLink
}

func (s *server) facetLists(res *incidentlib.SearchResult) []facetList {
	var out []facetList
	for _, f := range incidentlib.Facets {
		fcs := res.Facets[f]
		if len(fcs) == 0 {
			continue
		}
		if len(fcs) > facetSidebarTerms {
			fcs = fcs[:facetSidebarTerms]
		}
		out = append(out, facetList{Facet: f, Title: "By " + lowerFirst(f.Title()), Terms: s.counted(fcs)})
	}
	return out
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
		t, err := s.lib.FindTopic(r.Context(), f, slug, incidentlib.Query{Page: pageNo})
		if incidentlib.ErrorCode(err) == incidentlib.EINVALID {
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
			Hits:    s.hits(res.Hits),
			Pager:   newPager(res, func(n int) string { return pageURL(self, url.Values{}, n) }),
			ByFacet: s.facetLists(res),
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
