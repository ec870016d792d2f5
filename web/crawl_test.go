package web

import (
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/incidentlib/incidentlib/engine/enginetest"
)

// pageOnly is a topic or index page's later page: it is visited like a
// page without a query, so every case a topic lists is reached.
var pageOnly = regexp.MustCompile(`^/[a-z-]+/[a-z0-9-]+\?page=\d+$`)

// Every internal link reachable from the home page answers 200, over the
// shipped corpus: no page links to a page that does not exist.
func TestLinkCrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the whole site")
	}
	lib := enginetest.Shipped(t)
	h, err := New(lib, Config{})
	if err != nil {
		t.Fatal(err)
	}
	href := regexp.MustCompile(`href="(/[^"#]*)`)
	seen := map[string]bool{"/": true}
	// Pages without a query (every case, topic and index) are all visited;
	// of those with one (searches, narrowings, pages of results), which
	// multiply without end, the first maxQueries.
	plain, queries := []string{"/"}, []string(nil)
	const maxQueries = 600
	visited, visitedQueries := 0, 0
	for len(plain) > 0 || (len(queries) > 0 && visitedQueries < maxQueries) {
		var page string
		if len(plain) > 0 {
			page, plain = plain[0], plain[1:]
		} else {
			page, queries = queries[0], queries[1:]
			visitedQueries++
		}
		visited++
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", page, nil))
		if w.Code != http.StatusOK && w.Code != http.StatusMovedPermanently {
			t.Errorf("GET %s: %d", page, w.Code)
			continue
		}
		if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			continue
		}
		for _, m := range href.FindAllStringSubmatch(w.Body.String(), -1) {
			link := html.UnescapeString(m[1])
			if strings.HasPrefix(link, "//") || strings.HasPrefix(link, "/api/") || seen[link] {
				continue // the API has its own tests
			}
			seen[link] = true
			if strings.Contains(link, "?") && !pageOnly.MatchString(link) {
				queries = append(queries, link)
			} else {
				plain = append(plain, link) // pages of a topic reach its every case
			}
		}
	}
	cases, err := lib.Cases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !seen["/cases/"+c.ID] {
			t.Errorf("no link leads to %s", c.ID)
		}
	}
	t.Logf("visited %d internal URLs (%d with a query) of %d found", visited, visitedQueries, len(seen))
}
