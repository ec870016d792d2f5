package web

import (
	"compress/gzip"
	"context"
	"flag"
	"html"
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

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine"
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
		{"check", "/checks/KG001"},
		{"checks", "/checks"},
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
			"https://incidents.example/api/v1/cases/IL-0001/similar", "https://incidents.example/<wbr>mcp",
			`href="/root-causes/config-change"`, `href="/symptoms/high-latency"`, `href="/contributing-factors/retry-amplification"`,
			"This case involves", "IL-0002", "same root cause"}},
		{"/cases/IL-0002", 200, "text/html; charset=utf-8", []string{"20 Nov 2023", "partly checked", "The duration is not stated."}},
		{"/cases/IL-0003", 200, "text/html; charset=utf-8", []string{`<time datetime="2019-12">Dec 2019</time>`, "not checked", "Not given by the sources: severity,"}},
		{"/cases/IL-0004", 200, "text/html; charset=utf-8", []string{`<time datetime="2018">2018</time>`}},
		{"/cases/il-0001", 301, "", nil},
		{"/cases/IL-9999", 404, "text/html; charset=utf-8", []string{"The library has no case IL-9999.", `aria-label="Search the library instead"`}},
		{"/cases/not-an-id", 404, "text/html; charset=utf-8", []string{"Case IDs look like IL-0561"}},
		{"/favicon.ico", 301, "", nil},
		{"/agents", 200, "text/html; charset=utf-8", []string{"claude mcp add --transport http incidentlib https://incidents.example/mcp", "[mcp_servers.incidentlib]", ".cursor/mcp.json"}},
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
		{"/search?q=" + strings.Repeat("x", 1001), 414, "text/html; charset=utf-8", []string{"at most 1000 are allowed"}},
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
	for _, target := range []string{"/cases/IL-0004", "/search?q=retries", "/search", "/", "/feed.atom", "/cases/IL-0003", "/checks", "/checks/KG002", "/components/load-balancer"} {
		t.Run(target, func(t *testing.T) {
			body := themeScript.ReplaceAllString(get(t, h, "GET", target, nil).Body.String(), "")
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
	// A check's text is shown as text too, in its page, the index and the
	// panel.
	for target, wants := range map[string][]string{
		"/checks/KG002": {
			"Load balancer drains &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",
			"Rule &#34;&gt;&lt;img src=x onerror=alert(1)&gt;",
			"<pre class=\"yaml\"><code>metadata:\n  name: &lt;script&gt;",
		},
		"/checks":                   {"Rule &#34;&gt;&lt;img src=x onerror=alert(1)&gt;"},
		"/components/load-balancer": {"Load balancer drains &lt;script&gt;"},
	} {
		body := get(t, h, "GET", target, nil).Body.String()
		for _, want := range wants {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks the escaped text %q", target, want)
			}
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	_, h := newFixtureHandler(t)
	for _, target := range []string{"/", "/cases/IL-0001", "/cases/IL-9999", "/search?sort=x", "/static/style.css"} {
		w := get(t, h, "GET", target, nil)
		csp := w.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-") || !strings.Contains(csp, "script-src 'self';") {
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

// themeScript is the one script a page may load: the theme toggle, from
// the site itself.
var themeScript = regexp.MustCompile(`<script src="/static/theme\.js\?v=[0-9a-f]+"></script>`)

// No page carries a script other than the theme toggle's file, nor an
// inline script, style or event handler attribute, which the CSP would
// block anyway.
func TestNoScriptOrInlineStyle(t *testing.T) {
	_, h := newFixtureHandler(t)
	inline := regexp.MustCompile(`(?i)<script|<[^>]*\sstyle=|<[^>]*\son[a-z]+=`)
	for _, target := range []string{"/", "/cases/IL-0001", "/root-causes/config-change", "/search?q=retries", "/charts", "/components", "/nope", "/checks", "/checks/KG001"} {
		body := get(t, h, "GET", target, nil).Body.String()
		if n := len(themeScript.FindAllString(body, -1)); n != 1 {
			t.Errorf("%s loads the theme script %d times, want once", target, n)
		}
		body = themeScript.ReplaceAllString(body, "")
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
	h, err := New(eng, Config{BaseURL: testBaseURL, KubegapURL: "https://kubegap.example/", Checks: fixtureChecks()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target   string
		want     []string
		dontWant []string
	}{
		{"/cases/IL-0001", []string{
			`<a href="https://kubegap.example/">kubegap</a>`,
			`<a href="/checks/KG001">Retries without a brake</a> <code>KG001</code>`,
			`This case involves <a href="/components/application-database">Application database</a> and <a href="/components/in-memory-cache">In-memory cache</a>.`,
			"<code>go run github.com/incidentlib/incidentlib/cmd/kubegap@latest audit ./manifests</code>",
			`<a href="/checks">every check</a>`,
		}, []string{"/checks/KG002", "/checks/KG003"}},
		// A case lists the checks that chose it.
		{"/cases/IL-0003", []string{`<a href="/checks/KG002">`}, []string{"/checks/KG001"}},
		{"/cases/IL-0004", []string{"No kubegap check cites this case yet."}, []string{`<a href="/checks/KG`}},
		{"/contributing-factors/retry-amplification", []string{`<a href="/checks/KG001">`}, []string{"/checks/KG002"}},
		{"/components/load-balancer", []string{`<a href="/checks/KG002">`}, []string{"/checks/KG001"}},
		{"/symptoms/data-loss", []string{`<a href="/checks/KG003">`}, nil},
		{"/root-causes/config-change", []string{"No kubegap check guards against these terms yet."}, []string{`<a href="/checks/KG`}},
	} {
		body := get(t, h, "GET", tc.target, nil).Body.String()
		for _, want := range tc.want {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", tc.target, want)
			}
		}
		for _, bad := range tc.dontWant {
			if strings.Contains(body, bad) {
				t.Errorf("%s holds %q", tc.target, bad)
			}
		}
	}

	// Without a catalogue the panel still says how to run kubegap, and
	// links no check.
	h, err = New(eng, Config{BaseURL: testBaseURL})
	if err != nil {
		t.Fatal(err)
	}
	body := get(t, h, "GET", "/cases/IL-0001", nil).Body.String()
	if !strings.Contains(body, `<a href="/checks">kubegap</a>`) || !strings.Contains(body, kubegapCommand) || strings.Contains(body, "every check") {
		t.Errorf("panel without a catalogue:\n%s", body)
	}
	if w := get(t, h, "GET", "/checks", nil); w.Code != 200 || !strings.Contains(w.Body.String(), "This server knows no kubegap checks.") {
		t.Errorf("/checks without a catalogue: %d", w.Code)
	}
	if w := get(t, h, "GET", "/checks/KG001", nil); w.Code != 404 || !strings.Contains(w.Body.String(), "there are no kubegap checks") {
		t.Errorf("/checks/KG001 without a catalogue: %d", w.Code)
	}
}

func TestCheckPages(t *testing.T) {
	_, h := newFixtureHandler(t)
	for _, tc := range []struct {
		target string
		status int
		want   []string
	}{
		{"/checks", 200, []string{
			`<a href="/checks/KG001"><code>KG001</code> Retries without a brake</a>`,
			`<a href="/contributing-factors/retry-amplification">Retry amplification</a>, <a href="/components/in-memory-cache">In-memory cache</a>`,
			`<a href="/components/network">Network</a>`, // a group guard, named and linked
			`<a href="https://incidents.example/api/v1/checks">`,
		}},
		{"/checks/KG001", 200, []string{
			"<p>Retries multiply load on a struggling backend.</p>",
			"<pre class=\"yaml\"><code>apiVersion: networking.istio.io/v1\nkind: DestinationRule\nspec:\n  trafficPolicy:\n    outlierDetection:\n      consecutive5xxErrors: 5\n</code></pre>",
			// In the order chosen, each with how it shows the gap.
			`<span class="case-id">IL-0001</span> Checkout failed`,
			`<span class="reason">checkout retries piled onto the cache</span>`,
			`<span class="reason">retries kept the cache cold</span>`,
			`<span class="sev">High</span>`,
			"https://incidents.example/api/v1/checks/KG001",
		}},
		{"/checks/KG003", 200, []string{"Fewer than two public outages that show this gap directly are known yet."}},
		{"/checks/kg001", 301, nil},
		{"/checks/KG999", 404, []string{"there is no kubegap check &#34;KG999&#34;; the checks are KG001 to KG003"}},
		{"/sitemap.xml", 200, []string{"<loc>https://incidents.example/checks</loc>", "<loc>https://incidents.example/checks/KG002</loc>"}},
	} {
		w := get(t, h, "GET", tc.target, nil)
		if w.Code != tc.status {
			t.Errorf("%s: status %d, want %d", tc.target, w.Code, tc.status)
			continue
		}
		body := w.Body.String()
		for _, want := range tc.want {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", tc.target, want)
			}
		}
	}
	if loc := get(t, h, "GET", "/checks/kg001", nil).Header().Get("Location"); loc != "/checks/KG001" {
		t.Errorf("/checks/kg001 redirects to %q", loc)
	}
	body := get(t, h, "GET", "/checks/KG001", nil).Body.String()
	if i, j := strings.Index(body, "IL-0001</span>"), strings.Index(body, "IL-0002</span>"); i < 0 || j < 0 || i > j {
		t.Errorf("KG001 cites IL-0001 at %d and IL-0002 at %d; want both, in the order chosen", i, j)
	}
}

func TestFormatTimestamp(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want dateView
	}{
		{"2026-08-24T16:56:00Z", dateView{Text: "24 Aug 2026 16:56 UTC", ISO: "2026-08-24T16:56:00Z"}},
		{"2026-08-24", dateView{Text: "24 Aug 2026", ISO: "2026-08-24"}},
		{"2019-12", dateView{Text: "Dec 2019", ISO: "2019-12"}},
		{"2026", dateView{Text: "2026", ISO: "2026"}},
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

// A case page shows the facts it has and says once which it lacks, leaves
// out sections with nothing in them, links its tags, and names each source
// by its title and site rather than a bare URL.
func TestCasePageShowsWhatIsKnown(t *testing.T) {
	_, h := newFixtureHandler(t)
	body := get(t, h, "GET", "/cases/IL-0003", nil).Body.String()
	for _, unwanted := range []string{"<dd>–</dd>", "<p>–</p>", `id="lessons-h"`, `id="actions-h"`} {
		if strings.Contains(body, unwanted) {
			t.Errorf("case page has %q: an empty fact or section is shown", unwanted)
		}
	}
	if strings.Count(body, "Not given by the sources") != 1 {
		t.Error("the unknown facts are not named exactly once")
	}
	body = get(t, h, "GET", "/cases/IL-0001", nil).Body.String()
	for _, want := range []string{`<a class="tag" href="/search?component=`, `<h2 id="cause-h">Cause</h2>`, `<nav class="outline"`} {
		if !strings.Contains(body, want) {
			t.Errorf("case page lacks %q", want)
		}
	}
	if strings.Contains(body, `rel="external noopener">https://`) {
		t.Error("a source's link text is a bare URL")
	}
}

// Pages for people never show a parameter's name as a label, and an
// invalid search shows no count of results it did not run.
func TestErrorPagesForReaders(t *testing.T) {
	_, h := newFixtureHandler(t)
	body := get(t, h, "GET", "/cases/IL-9999", nil).Body.String()
	if strings.Contains(body, "id: ") {
		t.Errorf("the 404 page of a case speaks in parameter names:\n%s", body)
	}
	w := get(t, h, "GET", "/search?sort=sideways", nil)
	if w.Code != 400 || strings.Contains(w.Body.String(), "0 cases") {
		t.Errorf("an invalid search: %d, and the page counts results it did not run", w.Code)
	}
	body = get(t, h, "GET", "/cases/IL-0001", nil).Body.String()
	for _, want := range []string{`<meta property="og:type" content="article">`, `<meta property="og:url" content="https://incidents.example/cases/IL-0001">`, `<meta name="twitter:card"`} {
		if !strings.Contains(body, want) {
			t.Errorf("case page lacks %s", want)
		}
	}
}

// Every narrowing link on a topic page leads to a page that lists exactly
// as many cases as the link's count says, on the topic page and on each
// narrowed page it leads to.
func TestTopicFacetCountsMatchTheirPages(t *testing.T) {
	_, h := newFixtureHandler(t)
	link := regexp.MustCompile(`<li(?: class="chosen")?><a href="([^"]+)"(?: aria-current="true")?>[^<]*</a> <span class="n">(\d+)</span>`)
	total := regexp.MustCompile(`<h2 id="cases-h">Cases <span class="count">(\d+) cases?</span>`)
	seen := map[string]bool{}
	queue := []string{"/components/load-balancer", "/root-causes/software-bug", "/contributing-factors/retry-amplification", "/components/database"}
	checked := 0
	for len(queue) > 0 && checked < 200 {
		page := queue[0]
		queue = queue[1:]
		if seen[page] {
			continue
		}
		seen[page] = true
		w := get(t, h, "GET", page, nil)
		if w.Code != 200 {
			t.Errorf("%s: %d", page, w.Code)
			continue
		}
		body := w.Body.String()
		side := body
		if i := strings.Index(body, `<aside class="side">`); i >= 0 {
			side = body[i:]
		}
		for _, m := range link.FindAllStringSubmatch(side, -1) {
			target := html.UnescapeString(m[1])
			if !strings.Contains(target, "?") && !strings.HasPrefix(target, strings.SplitN(page, "?", 2)[0]) {
				continue // "Components involved" links to other topics
			}
			if strings.Contains(m[0], `class="chosen"`) {
				continue // the link that widens again
			}
			tw := get(t, h, "GET", target, nil)
			tm := total.FindStringSubmatch(tw.Body.String())
			if tw.Code != 200 || tm == nil {
				t.Errorf("%s links to %s: %d, no total", page, target, tw.Code)
				continue
			}
			if tm[1] != m[2] {
				t.Errorf("%s: the link to %s says %s cases, the page lists %s", page, target, m[2], tm[1])
			}
			checked++
			queue = append(queue, target)
		}
	}
	if checked < 5 {
		t.Errorf("only %d facet links checked; the fixture should offer more", checked)
	}
}

// A ticked component group shows how many of the listed cases it holds,
// not zero.
func TestTickedGroupCount(t *testing.T) {
	_, h := newFixtureHandler(t)
	body := get(t, h, "GET", "/search?component=database", nil).Body.String()
	m := regexp.MustCompile(`id="f-component-database"[^>]*checked[^>]*>[\s\S]*?<span class="n">(\d+)</span>`).FindStringSubmatch(body)
	total := regexp.MustCompile(`<h2 id="results-h">Results <span class="count">(\d+) cases?</span>`).FindStringSubmatch(body)
	if m == nil || total == nil {
		t.Fatalf("no ticked group or no total on the page")
	}
	if m[1] == "0" || m[1] != total[1] {
		t.Errorf("ticked group counts %s, the page lists %s", m[1], total[1])
	}
}

// A search sent from the form with empty fields lands on the same search
// without them.
func TestSearchFormDropsEmptyFields(t *testing.T) {
	_, h := newFixtureHandler(t)
	w := get(t, h, "GET", "/search?q=retries&year_from=&year_to=&root_cause=software-bug", nil)
	if w.Code != 303 || w.Header().Get("Location") != "/search?q=retries&root_cause=software-bug" {
		t.Errorf("%d %q, want 303 to the search without empty fields", w.Code, w.Header().Get("Location"))
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
		if w.Code != 400 && w.Code != 414 {
			t.Errorf("%.40s: %d, want 400", tc.target, w.Code)
		}
		if !strings.Contains(w.Body.String(), tc.param) {
			t.Errorf("%.40s: the page does not name %s", tc.target, tc.param)
		}
	}
	w := get(t, h, "GET", "/search?q="+url.QueryEscape(`"q x z k"`), nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "No case holds") {
		t.Errorf("degraded query: %d, the words that matched nothing are not named", w.Code)
	}
	w = get(t, h, "GET", "/search?q="+strings.Repeat("abcdefghijklmnopqrstuvwxyz", 30), nil)
	if w.Code != 200 {
		t.Errorf("alphabet x30: %d", w.Code)
	}
}

// A case that rests on a listing alone says so at the top of its page; a
// case with a public source does not.
func TestSeedListingOnlyCaseIsMarked(t *testing.T) {
	cases := fixtureCases()
	cases[0].Sources = []incidentlib.Source{{Type: "seed-listing"}}
	h := handlerFor(t, cases)
	const notice = `class="seed-only"`
	if body := get(t, h, "GET", "/cases/"+cases[0].ID, nil).Body.String(); !strings.Contains(body, notice) {
		t.Errorf("the page of listing-only %s does not say it rests on a listing", cases[0].ID)
	}
	if body := get(t, h, "GET", "/cases/"+cases[1].ID, nil).Body.String(); strings.Contains(body, notice) {
		t.Errorf("the page of %s, which has a public source, is marked as resting on a listing", cases[1].ID)
	}
}

// A case with no source from the company itself says its facts rest on
// news and third-party summaries; one with an official source does not.
func TestCaseWithoutOfficialSourceSaysSo(t *testing.T) {
	cases := fixtureCases()
	cases[0].Sources = []incidentlib.Source{{URL: "https://news.example.com/a", Type: "news"}}
	cases[1].Sources = []incidentlib.Source{{URL: "https://status.example.com/b", Type: "official-status"}}
	e, err := engine.Open(context.Background(), fixtureVocabulary(), cases, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	h, err := New(e, Config{BaseURL: testBaseURL, Checks: fixtureChecks()})
	if err != nil {
		t.Fatal(err)
	}
	const notice = "No write-up by the company itself was found"
	if body := get(t, h, "GET", "/cases/"+cases[0].ID, nil).Body.String(); !strings.Contains(body, notice) {
		t.Errorf("the page of %s, resting on news alone, does not say so", cases[0].ID)
	}
	if body := get(t, h, "GET", "/cases/"+cases[1].ID, nil).Body.String(); strings.Contains(body, notice) {
		t.Errorf("the page of %s, which has an official source, says it has none", cases[1].ID)
	}
}

// The server's refusals of a page are pages in the site's layout that say
// when to reload (issue 22: a bare 188-byte page).
func TestRefusalPages(t *testing.T) {
	refuse, err := RefusalPages(Config{})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	w.Header().Set("Retry-After", "1")
	refuse(w, httptest.NewRequest("GET", "/search?q=dns", nil), 503, "busy")
	body := w.Body.String()
	if w.Code != 503 || !strings.Contains(body, "The library is busy") || !strings.Contains(body, "Reload this page in 1 second.") ||
		!strings.Contains(body, `<nav`) || w.Header().Get("Retry-After") != "1" {
		t.Errorf("%d %s", w.Code, body)
	}
}

// An over-long q is 414 with the same message on the pages as on the API
// (issue 22: 400, 413 or 414 depending on the surface).
func TestOverLongQueryIs414(t *testing.T) {
	_, h := newFixtureHandler(t)
	for _, path := range []string{"/search?q="} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path+strings.Repeat("x", incidentlib.MaxQueryLength+1), nil))
		if w.Code != 414 || !strings.Contains(w.Body.String(), "at most 1000 are allowed") {
			t.Errorf("%s…: %d %.300s", path, w.Code, w.Body.String())
		}
	}
}

// The search page says which filters are in force, each with a link that
// removes it (issue 22: on a phone "9 cases" appeared with no reason).
func TestSearchPageSummarisesActiveFilters(t *testing.T) {
	_, h := newFixtureHandler(t)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/search?q=retries&component=application-database&year_from=2010", nil))
	body := w.Body.String()
	i := strings.Index(body, `class="active-filters"`)
	if w.Code != 200 || i < 0 {
		t.Fatalf("%d, no summary of active filters", w.Code)
	}
	summary := body[i:min(len(body), i+800)]
	for _, want := range []string{"Component: ", "From 2010", `href="/search?q=retries&amp;year_from=2010"`, `href="/search?component=application-database&amp;q=retries"`} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %s: %s", want, summary)
		}
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/search?q=retries", nil))
	if strings.Contains(w.Body.String(), `class="active-filters"`) {
		t.Error("a summary of filters on a search without any")
	}
}

// A case whose sources give no start says so, shows when it was made
// public instead, and is ordered by that date (a case should never carry a
// start year worked out from its post's date).
func TestCaseWithoutAStartShowsWhenItWasMadePublic(t *testing.T) {
	cases := fixtureCases()
	c := *cases[0]
	c.ID, c.Title = "IL-0777", "An undated outage told of in a later post"
	c.Timeline = incidentlib.Timeline{Reported: incidentlib.Timestamp{Time: time.Date(2018, 6, 1, 0, 0, 0, 0, time.UTC), Precision: incidentlib.PrecisionMonth}}
	h := handlerFor(t, append(cases, &c))
	body := get(t, h, "GET", "/cases/IL-0777", nil).Body.String()
	for _, want := range []string{`start unknown, made public <time datetime="2018-06">Jun 2018</time>`, "Not given by the sources: start, "} {
		if !strings.Contains(body, want) {
			t.Errorf("case page lacks %q", want)
		}
	}
	body = get(t, h, "GET", "/search?q=undated+outage", nil).Body.String()
	if !strings.Contains(body, `made public <time datetime="2018-06">Jun 2018</time>`) {
		t.Error("the search result does not say the date is when the case was made public")
	}
	body = get(t, h, "GET", "/search?year_from=2018&year_to=2018", nil).Body.String()
	if !strings.Contains(body, "IL-0777") {
		t.Error("a case without a start is not counted in the year it was made public")
	}
}
