package web

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"time"

	"github.com/incidentlib/incidentlib"
)

// feedEntries is how many of the newest cases the Atom feed carries.
const feedEntries = 30

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string      `xml:"title"`
	ID      string      `xml:"id"`
	Updated string      `xml:"updated"`
	Author  atomAuthor  `xml:"author"`
	Links   []atomLink  `xml:"link"`
	Entries []atomEntry `xml:"entry"`
}

type atomAuthor struct {
	Name string `xml:"name"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr,omitempty"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomEntry struct {
	Title      string         `xml:"title"`
	ID         string         `xml:"id"`
	Updated    string         `xml:"updated"`
	Link       atomLink       `xml:"link"`
	Summary    string         `xml:"summary"`
	Categories []atomCategory `xml:"category"`
}

type atomCategory struct {
	Term   string `xml:"term,attr"`
	Scheme string `xml:"scheme,attr,omitempty"`
	Label  string `xml:"label,attr,omitempty"`
}

// showFeed renders /feed.atom: the newest cases. An entry's updated time is
// when the incident started, the only date every case has, so the feed
// changes exactly when a newer case arrives.
// caseDateText is a case's date for a feed summary: its start, or when it
// was made public where no source gives the start.
func caseDateText(c *incidentlib.Case) string {
	if c.Timeline.Started.IsZero() && !c.Timeline.Reported.IsZero() {
		return "made public " + formatTimestamp(c.Timeline.Reported).Text
	}
	return formatTimestamp(c.Timeline.Started).Text
}

func (s *server) showFeed(w http.ResponseWriter, r *http.Request) error {
	cases, err := s.lib.Cases(r.Context())
	if err != nil {
		return err
	}
	base := s.baseURL(r)
	f := atomFeed{
		Title:  "Incident Library: newest cases",
		ID:     base + "/feed.atom",
		Author: atomAuthor{Name: "Incident Library"},
		Links: []atomLink{
			{Rel: "self", Type: "application/atom+xml", Href: base + "/feed.atom"},
			{Rel: "alternate", Type: "text/html", Href: base + "/"},
		},
		Updated: time.Unix(0, 0).UTC().Format(time.RFC3339),
	}
	var newest time.Time
	for i, c := range cases {
		if i == feedEntries {
			break
		}
		t := c.Timeline.Date().Time.UTC()
		if t.After(newest) {
			newest = t
		}
		e := atomEntry{
			Title:   c.ID + ": " + c.Title,
			ID:      base + caseURL(c.ID),
			Updated: t.Format(time.RFC3339),
			Link:    atomLink{Rel: "alternate", Type: "text/html", Href: base + caseURL(c.ID)},
			Summary: c.Company + ", " + caseDateText(c) + ". " + firstParagraph(c.Summary),
		}
		if c.RootCause != "" {
			l := s.term(incidentlib.FacetRootCause, c.RootCause)
			e.Categories = append(e.Categories, atomCategory{Term: c.RootCause, Scheme: base + "/root-causes/", Label: l.Name})
		}
		f.Entries = append(f.Entries, e)
	}
	if !newest.IsZero() {
		f.Updated = newest.Format(time.RFC3339)
	}
	return writeXML(w, "application/atom+xml; charset=utf-8", f)
}

func firstParagraph(s string) string {
	if ps := paragraphs(s); len(ps) > 0 {
		return ps[0]
	}
	return ""
}

type sitemapURLSet struct {
	XMLName xml.Name     `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	URLs    []sitemapURL `xml:"url"`
}

type sitemapURL struct {
	Loc string `xml:"loc"`
}

// showSitemap renders /sitemap.xml: the home page, charts, every facet
// index, every case, every term with at least one case and the kubegap
// checks.
func (s *server) showSitemap(w http.ResponseWriter, r *http.Request) error {
	cases, err := s.lib.Cases(r.Context())
	if err != nil {
		return err
	}
	st, err := s.lib.Stats(r.Context())
	if err != nil {
		return err
	}
	base := s.baseURL(r)
	sm := sitemapURLSet{}
	add := func(p string) { sm.URLs = append(sm.URLs, sitemapURL{Loc: base + p}) }
	add("/")
	add("/charts")
	for _, f := range incidentlib.Facets {
		add("/" + f.PathSegment())
		for _, fc := range st.Terms[f] {
			if fc.Count > 0 {
				add(topicURL(f, fc.Term.Slug))
			}
		}
	}
	for _, c := range cases {
		add(caseURL(c.ID))
	}
	if len(s.cfg.Checks) > 0 {
		add(checkIndexURL)
		for _, c := range s.cfg.Checks {
			add(checkURL(c.ID))
		}
	}
	return writeXML(w, "application/xml; charset=utf-8", sm)
}

func writeXML(w http.ResponseWriter, contentType string, v any) error {
	b, err := xml.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("xml: %w", err)
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write([]byte(xml.Header))
	w.Write(b)
	w.Write([]byte("\n"))
	return nil
}

// showRobots renders /robots.txt. Search result pages are endless
// combinations of the same cases, so robots are kept to the pages the
// sitemap lists.
func (s *server) showRobots(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	fmt.Fprintf(w, "User-agent: *\nDisallow: /search\nDisallow: /api/\nAllow: /\n\nSitemap: %s/sitemap.xml\n", s.baseURL(r))
	return nil
}
