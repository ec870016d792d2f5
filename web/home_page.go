package web

import (
	"net/http"
	"sort"

	"github.com/incidentlib/incidentlib"
)

// Home page sizes.
const (
	homeNewestCases = 10
	homeFacetTerms  = 8
)

type homePage struct {
	Cases     int
	Companies int
	FirstYear string
	LastYear  string
	Newest    []caseView
	Browse    []browseFacet
	MCPURL    string
	APIURL    string
}

type browseFacet struct {
	Title string
	URL   string
	Terms []termLink
	More  int // terms not shown
}

// showHomePage renders /: what the library is, a search box, the newest
// cases and a way into each facet.
func (s *server) showHomePage(w http.ResponseWriter, r *http.Request) error {
	cases, err := s.lib.Cases(r.Context())
	if err != nil {
		return err
	}
	st, err := s.lib.Stats(r.Context())
	if err != nil {
		return err
	}
	hp := homePage{Cases: len(cases), MCPURL: s.baseURL(r) + "/mcp", APIURL: s.baseURL(r) + "/api/v1/cases"}
	companies := map[string]bool{}
	minY, maxY := 0, 0
	for _, c := range cases {
		companies[c.Company] = true
		if y := c.Year(); y != 0 {
			if minY == 0 || y < minY {
				minY = y
			}
			if y > maxY {
				maxY = y
			}
		}
	}
	hp.Companies = len(companies)
	if minY != 0 {
		hp.FirstYear, hp.LastYear = itoa(minY), itoa(maxY)
	}
	for i, c := range cases {
		if i == homeNewestCases {
			break
		}
		hp.Newest = append(hp.Newest, s.caseView(c))
	}
	for _, f := range incidentlib.Facets {
		fcs := append([]incidentlib.FacetCount(nil), st.Terms[f]...)
		sort.SliceStable(fcs, func(i, j int) bool { return fcs[i].Count > fcs[j].Count })
		var nonzero []incidentlib.FacetCount
		for _, fc := range fcs {
			if fc.Count > 0 {
				nonzero = append(nonzero, fc)
			}
		}
		b := browseFacet{Title: facetPlurals[f], URL: "/" + f.PathSegment()}
		if len(nonzero) > homeFacetTerms {
			b.More = len(nonzero) - homeFacetTerms
			nonzero = nonzero[:homeFacetTerms]
		}
		b.Terms = s.counted(nonzero)
		hp.Browse = append(hp.Browse, b)
	}
	p := s.newPage(r, "Incident Library")
	p.Description = "A library of public production incidents, each written up the same way: what happened, why, how it was found and fixed, and what to learn."
	p.Canonical = s.baseURL(r) + "/"
	p.Nav = "home"
	p.Content = hp
	return s.render(w, "home", p)
}
