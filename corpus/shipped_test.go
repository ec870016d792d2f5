package corpus_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
)

// The shipped corpus is the product's heart. These are its floor: enough
// cases, every vocabulary term used by at least two of them (or merged or
// dropped), and every case resting on a source and saying how it was
// checked.
func TestShippedCorpusFloor(t *testing.T) {
	c, ps, err := corpus.Load(corpus.Options{Now: time.Now()})
	if err != nil || len(ps) > 0 {
		t.Fatalf("shipped corpus does not load cleanly: %v %v", err, ps)
	}
	if n := len(c.Cases); n < 600 {
		t.Errorf("%d shipped cases, want at least 600", n)
	}
	used := map[incidentlib.Facet]map[string]int{}
	for _, f := range incidentlib.Facets {
		used[f] = map[string]int{}
	}
	for _, k := range c.Cases {
		if len(k.Sources) == 0 {
			t.Errorf("%s has no source", k.ID)
		}
		if k.Verification.Status == "" {
			t.Errorf("%s does not say how its facts were checked", k.ID)
		}
		if k.RootCause != "" {
			used[incidentlib.FacetRootCause][k.RootCause]++
		}
		for _, s := range k.Components {
			used[incidentlib.FacetComponent][s]++
		}
		for _, s := range k.SymptomTerms {
			used[incidentlib.FacetSymptom][s]++
		}
		for _, s := range k.ContributingFactors {
			used[incidentlib.FacetContributingFactor][s]++
		}
	}
	for _, f := range incidentlib.Facets {
		for _, term := range c.Vocabulary.Terms(f) {
			if n := used[f][term.Slug]; n < 2 {
				t.Errorf("%s %q is used by %d cases; use it in two or more, or merge or drop it", f, term.Slug, n)
			}
		}
	}
	// The seed pages name these cases by ID; they must stay.
	seedIDs := []string{"IL-0561", "IL-0574", "IL-0366", "IL-0179", "IL-0487", "IL-0283", "IL-0528", "IL-0392", "IL-0367", "IL-0511", "IL-0331", "IL-0272", "IL-0292", "IL-0325"}
	have := map[string]bool{}
	for _, k := range c.Cases {
		have[k.ID] = true
	}
	for _, id := range seedIDs {
		if !have[id] {
			t.Errorf("seed case %s is missing", id)
		}
	}
}

// hostLike finds web host names in prose ("status.example.com",
// "postmortems.app"), a country's second level included ("itnews.com.au").
// File endings that are also country codes (.md, .py, .sh, .go) are left
// out, so that "README.md" is not read as a host.
var hostLike = regexp.MustCompile(`\b(?:[a-z0-9-]+\.)+(?:com|org|net|edu|gov|io|app|dev|co|ai|me|blog|info|tech|cloud|news|xyz|site|fyi|art|biz|tv|wiki|online|page|pub|today|space|ws|to|jp|kr|cn|tw|hk|sg|in|id|vn|th|my|ph|au|nz|de|fr|uk|eu|it|nl|be|at|ch|es|pt|se|no|dk|fi|ie|is|pl|cz|sk|hu|ro|gr|ru|ua|ee|lv|lt|si|il|za|br|ar|cl|mx|pe|ca|us)(?:\.[a-z]{2})?\b`)

// Every page a fact comes from is listed among the case's sources: a host
// named in the verification text must be the host of a listed source or of
// its archived copy, and a case rests on a source with a URL unless it is
// marked as resting on a listing only.
func TestShippedSourcesListed(t *testing.T) {
	c, _, err := corpus.Load(corpus.Options{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, k := range c.Cases {
		hosts := map[string]bool{}
		withURL := false
		listing := false
		for _, s := range k.Sources {
			for _, raw := range []string{s.URL, s.ArchivedURL} {
				if u, err := url.Parse(raw); err == nil && u.Host != "" {
					hosts[strings.TrimPrefix(strings.ToLower(u.Host), "www.")] = true
					if raw == s.URL {
						withURL = true
					}
				}
			}
			listing = listing || s.Type == "seed-listing"
		}
		if !withURL && !listing {
			t.Errorf("%s has no source with a URL and is not marked as resting on a listing only", k.ID)
		}
		seen := map[string]bool{}
		for _, h := range hostLike.FindAllString(strings.ToLower(k.Verification.Against+" "+k.Verification.Note), -1) {
			h = strings.TrimPrefix(h, "www.")
			if !hosts[h] && !hostUnder(h, hosts) && !seen[h] {
				seen[h] = true
				found = append(found, k.ID+" "+h)
			}
		}
	}
	for _, f := range found {
		id, h, _ := strings.Cut(f, " ")
		t.Errorf("%s: its verification names %s, which is not the host of a listed source: list the page in sources, or do not name it", id, h)
	}
}

// hostUnder reports whether h belongs to the same site as a listed host:
// the same registrable domain ("blog.example.com" and "engineering.example.com"
// are both example.com's), except on hosting domains shared by many owners.
func hostUnder(h string, hosts map[string]bool) bool {
	site := registrable(h)
	if sharedHosting[site] {
		return false
	}
	for k := range hosts {
		if registrable(k) == site {
			return true
		}
	}
	return false
}

// sharedHosting are domains whose subdomains belong to different owners.
var sharedHosting = map[string]bool{
	"github.io": true, "wordpress.com": true, "medium.com": true, "substack.com": true,
	"blogspot.com": true, "go-vip.co": true, "notion.site": true, "hatenablog.com": true,
}

// registrable is a host's last two labels, or three under a country's
// second-level domain ("example.co.jp").
func registrable(h string) string {
	labels := strings.Split(h, ".")
	n := 2
	if len(labels) >= 3 && len(labels[len(labels)-1]) == 2 {
		switch labels[len(labels)-2] {
		case "co", "com", "ac", "or", "ne", "go", "org", "net":
			n = 3
		}
	}
	if len(labels) <= n {
		return h
	}
	return strings.Join(labels[len(labels)-n:], ".")
}
