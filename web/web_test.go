package web

import (
	"compress/gzip"
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"incidentlib"
)

var assetVersion = regexp.MustCompile(`\?v=[0-9a-f]+`)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func get(t *testing.T, h http.Handler, method, target string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// The golden pages pin the whole markup of the three pages people use
// most. Run `go test ./web -run Golden -update` after a deliberate change
// and read the diff.
func TestGoldenPages(t *testing.T) {
	_, h := newFixtureHandler(t)
	for _, tc := range []struct {
		name, target string
	}{
		{"case", "/cases/IL-0001"},
		{"topic", "/root-causes/config-change"},
		{"search", "/search?q=retries&component=application-database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, h, "GET", tc.target, nil)
			if w.Code != http.StatusOK {
				t.Fatalf("GET %s: status %d, body:\n%s", tc.target, w.Code, w.Body)
			}
			// Asset versions are content hashes; a style change alone
			// should not touch the golden markup.
			body := assetVersion.ReplaceAllString(w.Body.String(), "?v=HASH")
			path := filepath.Join("testdata", tc.name+".golden.html")
			if *update {
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), body); diff != "" {
				t.Errorf("GET %s differs from %s (-want +got):\n%s", tc.target, path, diff)
			}
		})
	}
}

func TestStatusAndContentType(t *testing.T) {
	_, h := newFixtureHandler(t)
	for _, tc := range []struct {
		target string
		status int
		ctype  string
		want   []string // substrings of the body
	}{
		{"/", 200, "text/html; charset=utf-8", []string{"4 public production incidents", `href="/cases/IL-0001"`, "Browse"}},
		{"/cases/IL-0001", 200, "text/html; charset=utf-8", []string{
			"2h 13m", "7m", "5 Mar 2024 14:02 UTC", "Major", "(estimated Q2 2024)", "archived copy",
			"checked against a stored copy of the source (the official status page)",
			"https://incidents.example/api/v1/cases/IL-0001/similar", "https://incidents.example/mcp",
			`href="/root-causes/config-change"`, `href="/symptoms/high-latency"`, `href="/contributing-factors/retry-amplification"`,
			"This case involves", "IL-0002", "same root cause"}},
		{"/cases/IL-0002", 200, "text/html; charset=utf-8", []string{"20 Nov 2023", "partly checked", "The duration is not stated."}},
		{"/cases/IL-0003", 200, "text/html; charset=utf-8", []string{`<time datetime="2019-12">Dec 2019</time>`, "not checked", "<dd>–</dd>"}},
		{"/cases/IL-0004", 200, "text/html; charset=utf-8", []string{`<time datetime="2018">2018</time>`}},
		{"/cases/il-0001", 301, "", nil},
		{"/cases/IL-9999", 404, "text/html; charset=utf-8", []string{"no case IL-9999 in the library"}},
		{"/cases/not-an-id", 404, "text/html; charset=utf-8", []string{"case IDs look like IL-0561"}},
		{"/cases", 301, "", nil},
		{"/root-causes", 200, "text/html; charset=utf-8", []string{"Configuration change", "2 cases", "Software defect", "1 case"}},
		{"/components", 200, "text/html; charset=utf-8", []string{"<h2>Database</h2>", "Application database"}},
		{"/symptoms", 200, "text/html; charset=utf-8", []string{"High error rate"}},
		{"/contributing-factors", 200, "text/html; charset=utf-8", []string{"Retry amplification"}},
		{"/components/in-memory-cache", 200, "text/html; charset=utf-8", []string{"2 cases", "1 to 2 of 2", "Part of the", "By root cause"}},
		{"/symptoms/data-loss", 200, "text/html; charset=utf-8", []string{"0 cases", "No case in the library is tagged with this term yet."}},
		{"/root-causes/no-such-term", 404, "text/html; charset=utf-8", nil},
		{"/widgets/x", 404, "text/html; charset=utf-8", []string{"There is no page at /widgets/x."}},
		{"/root-causes/config-change?page=0", 400, "text/html; charset=utf-8", []string{"page: must be a whole number"}},
		{"/root-causes/config-change?page=7", 404, "text/html; charset=utf-8", []string{"there is no page 7"}},
		{"/search", 200, "text/html; charset=utf-8", []string{"4 cases", "1 to 4 of 4"}},
		{"/search?sort=sideways", 400, "text/html; charset=utf-8", []string{"unknown sort", `<form class="search"`}},
		{"/search?root_cause=nonsense", 400, "text/html; charset=utf-8", []string{"unknown root cause"}},
		{"/search?year_from=abc", 400, "text/html; charset=utf-8", []string{"year_from: must be a year"}},
		{"/search?q=" + strings.Repeat("x", 1001), 413, "text/html; charset=utf-8", []string{"longer than 1000 bytes"}},
		{"/search?root_cause=software-bug", 200, "text/html; charset=utf-8", []string{"1 case", "IL-0003", "Clear filters"}},
		{"/search?year_from=2023&year_to=2024&sort=oldest", 200, "text/html; charset=utf-8", []string{"2 cases", `<option value="oldest" selected>`}},
		{"/charts", 200, "text/html; charset=utf-8", []string{"<svg", "Cases per year", "Cases by root cause", "median 1h 16m", "90th percentile 2h 1m", "known for 2 of the 4 cases"}},
		{"/feed.atom", 200, "application/atom+xml; charset=utf-8", []string{`<feed xmlns="http://www.w3.org/2005/Atom">`, "<id>https://incidents.example/cases/IL-0001</id>", "2024-03-05T14:02:00Z"}},
		{"/sitemap.xml", 200, "application/xml; charset=utf-8", []string{"<loc>https://incidents.example/cases/IL-0003</loc>", "<loc>https://incidents.example/components/load-balancer</loc>"}},
		{"/robots.txt", 200, "text/plain; charset=utf-8", []string{"Sitemap: https://incidents.example/sitemap.xml", "Disallow: /search"}},
		{"/static/style.css", 200, "text/css; charset=utf-8", []string{"prefers-color-scheme: dark", ":focus-visible"}},
		{"/static/nope.css", 404, "text/html; charset=utf-8", nil},
	} {
		t.Run(tc.target, func(t *testing.T) {
			w := get(t, h, "GET", tc.target, nil)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d; body:\n%s", w.Code, tc.status, w.Body)
			}
			if tc.ctype != "" {
				if got := w.Header().Get("Content-Type"); got != tc.ctype {
					t.Errorf("Content-Type %q, want %q", got, tc.ctype)
				}
			}
			for _, s := range tc.want {
				if !strings.Contains(w.Body.String(), s) {
					t.Errorf("body lacks %q", s)
				}
			}
			if strings.Contains(w.Body.String(), "goroutine ") || strings.Contains(w.Body.String(), "runtime error") {
				t.Errorf("body shows internals:\n%s", w.Body)
			}
		})
	}
}

func TestRedirectsToCanonicalCaseID(t *testing.T) {
	_, h := newFixtureHandler(t)
	w := get(t, h, "GET", "/cases/il-0001", nil)
	if got := w.Header().Get("Location"); got != "/cases/IL-0001" {
		t.Errorf("Location %q, want /cases/IL-0001", got)
	}
}

// Every field of the hostile case holds markup; the page must show it as
// text and never as an element or an attribute.
func TestCaseTextIsEscaped(t *testing.T) {
	_, h := newFixtureHandler(t)
	for _, target := range []string{"/cases/IL-0004", "/search?q=retries", "/search", "/", "/feed.atom", "/cases/IL-0003"} {
		t.Run(target, func(t *testing.T) {
			body := get(t, h, "GET", target, nil).Body.String()
			for _, bad := range []string{"<script", "<img", `href="javascript:`} {
				if strings.Contains(strings.ToLower(body), bad) {
					t.Errorf("%s holds raw %q", target, bad)
				}
			}
		})
	}
	body := get(t, h, "GET", "/cases/IL-0004", nil).Body.String()
	for _, want := range []string{
		"Escaping test &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",
		"Hostile&#34;&gt;&lt;img src=x onerror=alert(1)&gt;",
		`href="#ZgotmplZ"`, // html/template's mark for a refused URL
	} {
		if !strings.Contains(body, want) {
			t.Errorf("IL-0004 page lacks the escaped text %q", want)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	_, h := newFixtureHandler(t)
	for _, target := range []string{"/", "/cases/IL-0001", "/cases/IL-9999", "/search?sort=x", "/static/style.css"} {
		w := get(t, h, "GET", target, nil)
		csp := w.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") {
			t.Errorf("%s: Content-Security-Policy %q is not strict", target, csp)
		}
		if got := w.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", target, got)
		}
		if got := w.Header().Get("Referrer-Policy"); got == "" {
			t.Errorf("%s: no Referrer-Policy", target)
		}
	}
}

// No page carries a script, inline or not, nor an inline style or event
// handler attribute, which the CSP would block anyway.
func TestNoScriptOrInlineStyle(t *testing.T) {
	_, h := newFixtureHandler(t)
	inline := regexp.MustCompile(`(?i)<script|<[^>]*\sstyle=|<[^>]*\son[a-z]+=`)
	for _, target := range []string{"/", "/cases/IL-0001", "/root-causes/config-change", "/search?q=retries", "/charts", "/components", "/nope"} {
		body := get(t, h, "GET", target, nil).Body.String()
		if m := inline.FindString(body); m != "" {
			t.Errorf("%s holds %q", target, m)
		}
	}
}

func TestConditionalGetHeadAndGzip(t *testing.T) {
	_, h := newFixtureHandler(t)
	first := get(t, h, "GET", "/cases/IL-0001", nil)
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on a case page")
	}
	if w := get(t, h, "GET", "/cases/IL-0001", map[string]string{"If-None-Match": etag}); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("If-None-Match with the current ETag: status %d, %d body bytes; want 304 and none", w.Code, w.Body.Len())
	}
	if w := get(t, h, "GET", "/cases/IL-0001", map[string]string{"If-None-Match": `"stale"`}); w.Code != http.StatusOK {
		t.Errorf("If-None-Match with a stale ETag: status %d, want 200", w.Code)
	}
	head := get(t, h, "HEAD", "/cases/IL-0001", nil)
	if head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("ETag") != etag {
		t.Errorf("HEAD: status %d, %d body bytes, ETag %q; want 200, none, %q", head.Code, head.Body.Len(), head.Header().Get("ETag"), etag)
	}
	gz := get(t, h, "GET", "/cases/IL-0001", map[string]string{"Accept-Encoding": "gzip"})
	if gz.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Accept-Encoding gzip: Content-Encoding %q", gz.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first.Body.String(), string(plain)); diff != "" {
		t.Errorf("gzip body differs from the identity body:\n%s", diff)
	}
	if w := get(t, h, "POST", "/cases/IL-0001", nil); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", w.Code)
	}
}

func TestStaticAssetCaching(t *testing.T) {
	_, h := newFixtureHandler(t)
	body := get(t, h, "GET", "/", nil).Body.String()
	m := regexp.MustCompile(`href="(/static/style\.css\?v=[0-9a-f]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("home page links no versioned stylesheet")
	}
	if cc := get(t, h, "GET", m[1], nil).Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("versioned stylesheet Cache-Control %q, want immutable", cc)
	}
	if cc := get(t, h, "GET", "/static/style.css?v=old", nil).Header().Get("Cache-Control"); strings.Contains(cc, "immutable") {
		t.Errorf("stylesheet with a stale version is cached for good: %q", cc)
	}
}

func TestBaseURLFromRequest(t *testing.T) {
	_, e := newFixtureHandler(t)
	_ = e
	eng, _ := newFixtureHandler(t)
	h, err := New(eng, Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/robots.txt", nil)
	r.Host = "lib.internal:8080"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if !strings.Contains(w.Body.String(), "Sitemap: http://lib.internal:8080/sitemap.xml") {
		t.Errorf("robots.txt without a BaseURL:\n%s", w.Body)
	}
}

func TestKubegapPanel(t *testing.T) {
	eng, _ := newFixtureHandler(t)
	var asked string
	h, err := New(eng, Config{BaseURL: testBaseURL, KubegapURL: "https://kubegap.example/",
		KubegapChecks: func(_ context.Context, id string) []KubegapCheck {
			asked = id
			return []KubegapCheck{{ID: "KG-012", Name: "Clients retry without backoff", URL: "https://kubegap.example/checks/KG-012"}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	body := get(t, h, "GET", "/cases/IL-0001", nil).Body.String()
	if asked != "IL-0001" {
		t.Errorf("KubegapChecks asked for %q, want IL-0001", asked)
	}
	for _, want := range []string{
		`<a href="https://kubegap.example/">kubegap</a>`,
		`<a href="https://kubegap.example/checks/KG-012">Clients retry without backoff</a>`,
		`This case involves <a href="/components/application-database">Application database</a> and <a href="/components/in-memory-cache">In-memory cache</a>.`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("case page lacks %q", want)
		}
	}
}

func TestFormatTimestamp(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want dateView
	}{
		{"2026-08-24T16:56:00Z", dateView{"24 Aug 2026 16:56 UTC", "2026-08-24T16:56:00Z"}},
		{"2026-08-24", dateView{"24 Aug 2026", "2026-08-24"}},
		{"2019-12", dateView{"Dec 2019", "2019-12"}},
		{"2026", dateView{"2026", "2026"}},
	} {
		if diff := cmp.Diff(tc.want, formatTimestamp(ts(tc.in))); diff != "" {
			t.Errorf("formatTimestamp(%s) (-want +got):\n%s", tc.in, diff)
		}
	}
	if got := formatTimestamp(incidentlib.Timestamp{}); got.Text != "–" {
		t.Errorf("unknown timestamp shows %q, want –", got.Text)
	}
}

func TestQuantile(t *testing.T) {
	m := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, x := range n {
			out = append(out, time.Duration(x)*time.Minute)
		}
		return out
	}
	for _, tc := range []struct {
		in   []time.Duration
		q    float64
		want time.Duration
	}{
		{m(10), 0.5, 10 * time.Minute},
		{m(10, 20), 0.5, 15 * time.Minute},
		{m(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.9, 9*time.Minute + 6*time.Second},
		{m(1, 2, 3, 1000), 0.5, 150 * time.Second}, // the median ignores the outlier a mean would not
		{nil, 0.5, 0},
	} {
		if got := quantile(tc.in, tc.q); got != tc.want {
			t.Errorf("quantile(%v, %v) = %v, want %v", tc.in, tc.q, got, tc.want)
		}
	}
}

func TestPager(t *testing.T) {
	urlFor := func(n int) string { return pageURL("/x", nil, n) }
	for _, tc := range []struct {
		total, page int
		prev, next  string
		pages       []int
	}{
		{total: 20, page: 1},
		{total: 21, page: 1, next: "/x?page=2", pages: []int{1, 2}},
		{total: 200, page: 5, prev: "/x?page=4", next: "/x?page=6", pages: []int{1, 3, 4, 5, 6, 7, 10}},
		{total: 200, page: 10, prev: "/x?page=9", pages: []int{1, 8, 9, 10}},
	} {
		p := newPager(&incidentlib.SearchResult{Total: tc.total, Page: tc.page, PerPage: 20}, urlFor)
		var got []int
		for _, l := range p.Pages {
			got = append(got, l.N)
		}
		if p.Prev != tc.prev || p.Next != tc.next || !cmp.Equal(got, tc.pages) {
			t.Errorf("pager(total %d, page %d) = prev %q next %q pages %v; want %q %q %v", tc.total, tc.page, p.Prev, p.Next, got, tc.prev, tc.next, tc.pages)
		}
	}
}

func TestParseQueryKeepsState(t *testing.T) {
	in := "q=retry+storm&root_cause=config-change&component=database&component=dns&sort=oldest&year_from=2019&page=3"
	r := httptest.NewRequest("GET", "/search?"+in, nil)
	q, err := parseQuery(r.URL.Query())
	if err != nil {
		t.Fatal(err)
	}
	want := incidentlib.Query{Text: "retry storm", Sort: incidentlib.SortOldest, Page: 3, Filters: incidentlib.Filters{
		RootCauses: []string{"config-change"}, Components: []string{"database", "dns"}, YearFrom: 2019}}
	if diff := cmp.Diff(want, q); diff != "" {
		t.Errorf("parseQuery (-want +got):\n%s", diff)
	}
	got := pageURL("/search", stateValues(q), q.Page)
	if got != "/search?component=database&component=dns&page=3&q=retry+storm&root_cause=config-change&sort=oldest&year_from=2019" {
		t.Errorf("state URL %s", got)
	}
}

// The search page refuses empty and out-of-range parameters with a 400
// naming them, as the API does, and answers the hostile queries of issue
// 11 without a 500 (saying when the typo-tolerant retry was skipped).
func TestSearchPageStrictAndBounded(t *testing.T) {
	_, h := newFixtureHandler(t)
	for _, tc := range []struct{ target, param string }{
		{"/search?page=0", "page"},
		{"/search?page=", "page"},
		{"/search?sort=", "sort"},
		{"/search?root_cause=", "root_cause"},
		{"/search?q=" + strings.Repeat("a", 1001), "q"},
	} {
		w := get(t, h, "GET", tc.target, nil)
		if w.Code != 400 && w.Code != 413 {
			t.Errorf("%.40s: %d, want 400", tc.target, w.Code)
		}
		if !strings.Contains(w.Body.String(), tc.param) {
			t.Errorf("%.40s: the page does not name %s", tc.target, tc.param)
		}
	}
	w := get(t, h, "GET", "/search?q="+url.QueryEscape(`"q x z k"`), nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "no typo-tolerant retry was run") {
		t.Errorf("degraded query: %d, notice missing", w.Code)
	}
	w = get(t, h, "GET", "/search?q="+strings.Repeat("abcdefghijklmnopqrstuvwxyz", 30), nil)
	if w.Code != 200 {
		t.Errorf("alphabet x30: %d", w.Code)
	}
}
