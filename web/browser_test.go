package web

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/engine/enginetest"
)

// The browser tests drive a real headless Chromium against the real
// handler over the shipped corpus, the way a person uses the site: they
// read what is on the screen, click links and buttons, and save
// screenshots at desktop and phone width.
//
//	INCIDENTLIB_BROWSER_TESTS=1 go test ./web -run Browser -v
//
// INCIDENTLIB_ARTIFACTS names the screenshot directory (default
// testdata/artifacts); INCIDENTLIB_CHROMIUM the browser (default: chromium
// on PATH).

func browserContext(t *testing.T) context.Context {
	t.Helper()
	if os.Getenv("INCIDENTLIB_BROWSER_TESTS") != "1" {
		t.Skip("browser tests are off; set INCIDENTLIB_BROWSER_TESTS=1 (needs Debian's chromium package)")
	}
	bin := os.Getenv("INCIDENTLIB_CHROMIUM")
	if bin == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				bin = p
				break
			}
		}
	}
	if bin == "" {
		t.Skip("INCIDENTLIB_BROWSER_TESTS=1 but no chromium on PATH; install it with: apt-get install -y chromium")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// Start the browser now, outside any per-step timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	return ctx
}

func shippedServer(t *testing.T) (*httptest.Server, *engine.Engine) {
	t.Helper()
	e := enginetest.Shipped(t)
	h, err := New(e, Config{Checks: browserChecks(t, e)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, e
}

func artifactsDir(t *testing.T) string {
	dir := os.Getenv("INCIDENTLIB_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is one tab with the helpers a test step needs; every helper
// fails the test with what it was doing.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string
}

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *browser) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitReady(chromedp.CSS("body")))
}

// click clicks and waits for the page it leads to.
func (b *browser) click(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(cdppage.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))); err != nil {
		b.t.Fatalf("click %s: %v", sel, err)
	}
	b.do("wait for the page after "+sel, chromedp.WaitReady(chromedp.CSS("body")))
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	return b.eval(`(document.querySelector(` + strconv.Quote(sel) + `) || {innerText: ""}).innerText.trim()`)
}

func (b *browser) eval(js string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func (b *browser) count(sel string) int {
	b.t.Helper()
	n, err := strconv.Atoi(b.eval(`String(document.querySelectorAll(` + strconv.Quote(sel) + `).length)`))
	if err != nil {
		b.t.Fatal(err)
	}
	return n
}

func (b *browser) path() string {
	b.t.Helper()
	return strings.TrimPrefix(b.eval(`location.href`), b.base)
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", path)
}

func (b *browser) viewport(width, height int64, mobile bool) {
	b.t.Helper()
	if mobile {
		b.do("phone viewport", chromedp.EmulateViewport(width, height, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	} else {
		b.do("desktop viewport", chromedp.EmulateViewport(width, height))
	}
}

func (b *browser) colorScheme(scheme string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		b.t.Fatalf("emulate prefers-color-scheme %s: %v", scheme, err)
	}
}

// noOverflow checks that nothing is wider than the screen: a page that
// scrolls sideways at phone width is not readable.
func (b *browser) noOverflow(what string) {
	b.t.Helper()
	if got := b.eval(`String(document.documentElement.scrollWidth - window.innerWidth)`); got != "0" {
		b.t.Errorf("%s scrolls sideways by %spx at width %s", what, got, b.eval(`String(window.innerWidth)`))
	}
}

var rangePattern = regexp.MustCompile(`^(\d+) to (\d+) of (\d+)$`)

func TestBrowserJourney(t *testing.T) {
	ctx := browserContext(t)
	srv, lib := shippedServer(t)
	b := &browser{t: t, ctx: ctx, base: srv.URL, dir: artifactsDir(t)}
	b.viewport(1280, 900, false)

	// Home: what the library is, a search box, the newest cases.
	b.open("/")
	if got := b.eval(`document.title`); got != "Incident Library" {
		t.Errorf("home title %q", got)
	}
	cases, err := lib.Cases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if lead := b.text(".lead"); !strings.HasPrefix(lead, strconv.Itoa(len(cases))+" public production incidents") {
		t.Errorf("home lead paragraph %q does not count the %d cases", lead, len(cases))
	}
	if got := b.text(".newest li a"); got != cases[0].Title {
		t.Errorf("first of the newest cases is %q, want the newest case %q", got, cases[0].Title)
	}
	if n := b.count(".browse-facet"); n != 4 {
		t.Errorf("home shows %d facets to browse, want 4", n)
	}
	// The stylesheet loaded under the CSP: the header bar is a flex row.
	if got := b.eval(`getComputedStyle(document.querySelector('.site-bar')).display`); got != "flex" {
		t.Errorf("stylesheet not applied: .site-bar display %q", got)
	}
	// Keyboard: the first Tab lands on the skip link, and focus is visible.
	b.do("press Tab", chromedp.KeyEvent("\t"))
	if got := b.eval(`document.activeElement.innerText`); got != "Skip to content" {
		t.Errorf("first Tab focuses %q, want the skip link", got)
	}
	if got := b.eval(`getComputedStyle(document.activeElement).outlineStyle`); got == "none" {
		t.Error("the focused skip link has no visible outline")
	}
	b.screenshot("desktop-home")

	// Search.
	b.do("type a search", chromedp.SendKeys(chromedp.ID("home-q"), "retry"))
	b.click(".home-search button")
	if p := b.path(); p != "/search?q=retry" {
		t.Errorf("search went to %s", p)
	}
	total := resultCount(t, b.text("#results-h .count"))
	if total == 0 {
		t.Fatal("searching for retry found nothing")
	}
	if b.count("ol.hits > li") == 0 || b.count("ol.hits mark") == 0 {
		t.Errorf("search results show %d hits and %d highlighted words", b.count("ol.hits > li"), b.count("ol.hits mark"))
	}
	if got := strings.ToLower(b.text("ol.hits mark")); !strings.HasPrefix(got, "retr") {
		t.Errorf("first highlighted word is %q, want a form of retry", got)
	}
	b.screenshot("desktop-search")

	// Apply a filter: tick the first root cause and press Apply.
	first := ".filters fieldset:first-of-type .options li:first-child"
	value := b.eval(`document.querySelector(` + strconv.Quote(first+" input") + `).value`)
	want, err := strconv.Atoi(b.text(first + " .n"))
	if err != nil {
		t.Fatalf("filter count %q: %v", b.text(first+" .n"), err)
	}
	b.do("tick "+value, chromedp.Click(chromedp.CSS(first+" label")))
	b.click(".filters > button[type=submit]")
	if p := b.path(); !strings.Contains(p, "root_cause="+value) || !strings.Contains(p, "q=retry") {
		t.Errorf("after the filter the URL is %s; it should hold q=retry and root_cause=%s", p, value)
	}
	if got := resultCount(t, b.text("#results-h .count")); got != want {
		t.Errorf("filtered on %s: %d cases, the checkbox said %d", value, got, want)
	}
	if b.eval(`String(document.querySelector('input[name=root_cause][value=`+strconv.Quote(value)+`]').checked)`) != "true" {
		t.Errorf("the %s checkbox is not ticked after applying it", value)
	}
	b.screenshot("desktop-search-filtered")

	// Open a case.
	title := b.text("ol.hits > li:first-child h3 a")
	b.click("ol.hits > li:first-child h3 a")
	if got := b.text("h1"); got != title {
		t.Errorf("case page h1 %q, want the hit's title %q", got, title)
	}
	id := b.text(".case-head .case-id")
	if !incidentlib.ValidCaseID(id) || !strings.HasSuffix(b.path(), "/cases/"+id) {
		t.Errorf("case page %s shows ID %q", b.path(), id)
	}
	// The sections in the seed's order; a section with nothing in it is
	// left out, so the list is checked for order, not completeness.
	order := []string{"Key facts", "Summary", "Symptoms", "Cause", "Detection", "Remediation", "Action items", "Lessons",
		"Sources", "Related cases", "Check your cluster for this", "For AI tools and scripts"}
	got := strings.Split(b.eval(`Array.from(document.querySelectorAll('article.case h2:not(.visually-hidden)')).map(h => h.innerText).join('|')`), "|")
	last := -1
	for _, h := range got {
		i := slices.Index(order, h)
		if i <= last {
			t.Errorf("case sections %q are not a subsequence of %q", got, order)
			break
		}
		last = i
	}
	for _, must := range []string{"Summary", "Cause", "Sources", "Check your cluster for this"} {
		if !slices.Contains(got, must) {
			t.Errorf("case page has no %q section", must)
		}
	}
	if facts, unknown := b.count(".facts dt"), b.count(".key-facts .unknown"); facts+unknown == 0 || facts > 6 {
		t.Errorf("key facts list %d entries and %d lines of unknown facts", facts, unknown)
	}
	if got := b.text(".machine li:first-child code"); got != srv.URL+"/api/v1/cases/"+id {
		t.Errorf("JSON link %q", got)
	}
	b.screenshot("desktop-case")

	// Follow a related case.
	relTitle := b.eval(`document.querySelector('.related li a').lastChild.textContent.trim()`)
	relID := b.text(".related li .case-id")
	reason := b.text(".related li .reason")
	if reason == "" {
		t.Error("the first related case gives no reason")
	}
	b.click(".related li a")
	if b.text(".case-head .case-id") != relID || b.text("h1") != relTitle || relID == id {
		t.Errorf("following related %s (%q) led to %s %q", relID, relTitle, b.text(".case-head .case-id"), b.text("h1"))
	}

	// Page through a topic: the root cause with the most cases, reached
	// from the root-cause index.
	st, err := lib.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var top incidentlib.FacetCount
	for _, fc := range st.Terms[incidentlib.FacetRootCause] {
		if fc.Count > top.Count {
			top = fc
		}
	}
	if top.Count <= incidentlib.DefaultPerPage {
		t.Fatalf("no root cause has more than %d cases, so no topic has a second page", incidentlib.DefaultPerPage)
	}
	b.open("/root-causes")
	b.click(`.term-index a[href="/root-causes/` + top.Term.Slug + `"]`)
	if got := b.text("h1"); got != top.Term.Name {
		t.Errorf("topic h1 %q, want %q", got, top.Term.Name)
	}
	if got := b.text(".results h2 .count"); got != strconv.Itoa(top.Count)+" cases" {
		t.Errorf("topic count %q, want %d cases", got, top.Count)
	}
	checkRange(t, b.text(".results .range"), 1, incidentlib.DefaultPerPage, top.Count)
	if n := b.count("ol.topic-cases > li"); n != incidentlib.DefaultPerPage {
		t.Errorf("first topic page lists %d cases", n)
	}
	b.screenshot("desktop-topic")
	b.click(`.pager a[rel="next"]`)
	checkRange(t, b.text(".results .range"), incidentlib.DefaultPerPage+1, min(2*incidentlib.DefaultPerPage, top.Count), top.Count)
	if got := b.eval(`document.querySelector('ol.topic-cases').getAttribute('start')`); got != strconv.Itoa(incidentlib.DefaultPerPage+1) {
		t.Errorf("second page numbers its list from %s", got)
	}
	if got := b.text(`.pager a[aria-current="page"]`); got != "2" {
		t.Errorf("pager marks page %q as current, want 2", got)
	}
	b.screenshot("desktop-topic-page-2")

	b.open("/charts")
	if n := b.count("figure.chart svg.wide"); n != 3 {
		t.Errorf("charts page draws %d charts at desktop width, want 3", n)
	}
	if !strings.Contains(b.text(".chart-note"), "median") {
		t.Errorf("charts page note %q names no median", b.text(".chart-note"))
	}
	b.screenshot("desktop-charts")

	// kubegap checks: the index, then one check with the cases it cites.
	b.open("/checks")
	if n := b.count("table.checks tbody tr"); n != 1 {
		t.Errorf("check index lists %d checks, want 1", n)
	}
	b.screenshot("desktop-checks")
	b.click(`table.checks a[href="/checks/KG900"]`)
	if got := b.text("h1"); got != "KG900 Browser test check" {
		t.Errorf("check page h1 %q", got)
	}
	if n := b.count("ul.cited > li"); n == 0 {
		t.Error("the check page cites no case")
	} else if !strings.Contains(b.text("ul.cited > li .reason"), "shows the gap in the browser test") {
		t.Errorf("first cited case's reason %q", b.text("ul.cited > li .reason"))
	}
	if got := b.eval(`getComputedStyle(document.querySelector('pre.yaml code')).whiteSpace`); got != "pre" {
		t.Errorf("the fix's YAML is not preformatted: white-space %q", got)
	}
	b.screenshot("desktop-check")
	b.click("ul.cited > li a")
	if !strings.HasPrefix(b.path(), "/cases/") || !strings.Contains(b.text(".kubegap"), "KG900") {
		t.Errorf("a cited case (%s) does not name the check in its panel: %q", b.path(), b.text(".kubegap"))
	}

	b.open("/cases/IL-9999")
	if got := b.text("h1"); got != "Not found" {
		t.Errorf("unknown case h1 %q", got)
	}

	// Phone width: the same pages, readable without sideways scrolling.
	b.viewport(390, 844, true)
	for _, p := range []struct{ name, path string }{
		{"phone-home", "/"},
		{"phone-search", "/search?q=retry"},
		{"phone-case", "/cases/" + id},
		{"phone-topic", "/root-causes/" + top.Term.Slug},
		{"phone-charts", "/charts"},
		{"phone-checks", "/checks"},
		{"phone-check", "/checks/KG900"},
	} {
		b.open(p.path)
		b.noOverflow(p.path)
		b.screenshot(p.name)
	}

	// Dark mode through prefers-color-scheme.
	b.viewport(1280, 900, false)
	b.colorScheme("dark")
	b.open("/cases/" + id)
	if bg := b.eval(`getComputedStyle(document.body).backgroundColor`); bg == "rgb(255, 255, 255)" {
		t.Errorf("dark mode: the page background is still white")
	}
	b.screenshot("desktop-case-dark")
	b.open("/search?q=retry")
	b.screenshot("desktop-search-dark")
	b.colorScheme("light")
}

// browserChecks is a one-check kubegap catalogue over the shipped corpus's
// most used contributing factor, so that the check pages have cases to
// cite whatever the corpus holds. Package web knows checks only through
// the domain; the real catalogue is wired in cmd/.
func browserChecks(t *testing.T, lib incidentlib.Library) []incidentlib.Check {
	t.Helper()
	st, err := lib.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var top incidentlib.FacetCount
	for _, fc := range st.Terms[incidentlib.FacetContributingFactor] {
		if fc.Count > top.Count {
			top = fc
		}
	}
	// The check cites the two newest cases tagged with that factor, as the
	// citation table names the cases a check cites.
	res, err := lib.SearchCases(context.Background(), incidentlib.Query{
		Filters: incidentlib.Filters{ContributingFactors: []string{top.Term.Slug}}, Sort: incidentlib.SortNewest, Page: 1, PerPage: 2})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("no case tagged %s: %v", top.Term.Slug, err)
	}
	var cited []incidentlib.CheckCase
	for _, h := range res.Hits {
		cited = append(cited, incidentlib.CheckCase{ID: h.Case.ID, Why: "shows the gap in the browser test"})
	}
	return []incidentlib.Check{{
		ID: "KG900", Title: "Browser test check", Severity: incidentlib.CheckHigh,
		Rule: "A rule in one sentence.", Why: "Why it matters.", Fix: "How to fix it.",
		FixYAML: "spec:\n  replicas: 3\n",
		Guards:  []incidentlib.TermRef{{Facet: incidentlib.FacetContributingFactor, Slug: top.Term.Slug}},
		Cases:   cited,
	}}
}

func resultCount(t *testing.T, s string) int {
	t.Helper()
	f := strings.Fields(s)
	if len(f) != 2 || (f[1] != "cases" && f[1] != "case") {
		t.Fatalf("result count %q is not like \"12 cases\"", s)
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func checkRange(t *testing.T, s string, from, to, total int) {
	t.Helper()
	m := rangePattern.FindStringSubmatch(s)
	want := []string{strconv.Itoa(from), strconv.Itoa(to), strconv.Itoa(total)}
	if m == nil || m[1] != want[0] || m[2] != want[1] || m[3] != want[2] {
		t.Errorf("range %q, want %q", s, want[0]+" to "+want[1]+" of "+want[2])
	}
}
