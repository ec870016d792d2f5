package web

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// axeScript is axe-core, read from INCIDENTLIB_AXE (a path to axe.min.js,
// from the npm package axe-core, which .ci/run installs).
func axeScript(t *testing.T) string {
	t.Helper()
	path := os.Getenv("INCIDENTLIB_AXE")
	if path == "" {
		t.Skip("accessibility checks are off: set INCIDENTLIB_AXE to the path of axe-core's axe.min.js (npm install axe-core)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("INCIDENTLIB_AXE: %v", err)
	}
	return string(b)
}

// axeViolation is what the test reports of one axe finding.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// axe runs axe-core on the open page and returns its violations. The page
// forbids scripts (CSP), so the check is injected with the CSP bypassed
// for this tab only.
func (b *browser) axe(script string) []axeViolation {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](script+";true")); err != nil {
		b.t.Fatalf("inject axe: %v", err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ['violations']}).then(r => JSON.stringify(r.violations))`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("run axe: %v", err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		b.t.Fatalf("axe result: %v", err)
	}
	return vs
}

// The pages of every type pass axe with no violation, at desktop and phone
// width and in light and dark, and each issue-14 fix shows in the browser.
func TestBrowserPages(t *testing.T) {
	script := axeScript(t)
	ctx := browserContext(t)
	srv, _ := shippedServer(t)
	b := &browser{t: t, ctx: ctx, base: srv.URL, dir: artifactsDir(t)}
	{
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := chromedp.Call(cctx, cdppage.SetBypassCSP, cdppage.SetBypassCSPParams{Enabled: true}); err != nil {
			t.Fatalf("bypass CSP for the injected checks: %v", err)
		}
		cancel()
	}
	pages := []struct{ name, path string }{
		{"home", "/"},
		{"search", "/search?q=database"},
		{"search-filtered", "/search?q=database&component=database"},
		{"search-invalid", "/search?sort=sideways"},
		{"case", "/cases/IL-0561"},
		{"case-listing-only", "/cases/IL-0600"},
		{"topic", "/root-causes/config-change"},
		{"topic-narrowed", "/root-causes/config-change?component=application-database"},
		{"facet-index", "/components"},
		{"charts", "/charts"},
		{"agents", "/agents"},
		{"not-found", "/cases/IL-9999"},
	}
	for _, width := range []int64{1280, 390} {
		b.viewport(width, 900, width < 600)
		for _, scheme := range []string{"light", "dark"} {
			b.colorScheme(scheme)
			for _, p := range pages {
				b.open(p.path)
				for _, v := range b.axe(script) {
					var where []string
					for _, n := range v.Nodes {
						where = append(where, strings.Trim(strings.Join(strings.Fields(strings.Trim(fmtAny(n.Target), "[]")), " "), " "))
					}
					t.Errorf("%s at %dpx, %s: axe %s (%s): %s — %s", p.path, width, scheme, v.ID, v.Impact, v.Help, strings.Join(where, "; "))
				}
				b.noOverflow(p.path)
				if scheme == "light" {
					b.screenshot("issue14-" + p.name + "-" + strconv.FormatInt(width, 10))
				}
			}
		}
	}

	// Charts read on a phone: the narrow layout shows, at full size.
	b.viewport(390, 900, true)
	b.colorScheme("light")
	b.open("/charts")
	if got := b.eval(`String(document.querySelectorAll('svg.narrow').length > 0 && [...document.querySelectorAll('svg.narrow')].every(s => getComputedStyle(s).display === 'block'))`); got != "true" {
		t.Error("the phone layout of the charts is not shown at 390px")
	}
	if got := b.eval(`String(Math.min(...[...document.querySelectorAll('svg.narrow text')].map(e => e.getBoundingClientRect().height)))`); mustFloat(t, got) < 11 {
		t.Errorf("chart text on a phone is %spx tall; want at least 11", got)
	}
	if got := b.eval(`String(document.querySelectorAll('svg a, svg [tabindex]').length)`); got != "0" {
		t.Errorf("%s focusable elements inside chart images", got)
	}
	// Search on a phone: the first result is on the first screen.
	b.open("/search?q=database")
	if top := mustFloat(t, b.eval(`String(document.querySelector('ol.hits > li').getBoundingClientRect().top)`)); top > 900 {
		t.Errorf("on a phone the first search result starts %.0fpx down, below the first screen", top)
	}
	// Topic pages are compact: a row per case, the summary folded.
	b.viewport(1280, 900, false)
	b.open("/root-causes/config-change")
	if n := b.count("ol.topic-cases > li"); n == 0 || b.count("ol.topic-cases details[open]") != 0 {
		t.Errorf("topic page rows: %d, or summaries open", n)
	}
	if h := mustFloat(t, b.eval(`String(document.documentElement.scrollHeight)`)); h > 6000 {
		t.Errorf("the config-change topic page is %.0fpx tall at 1280px; a compact list should be far shorter", h)
	}
	// A browser on /mcp lands on the page about connecting agents.
	b.open("/agents")
	if got := b.text("h1"); got != "Connect an AI tool" {
		t.Errorf("/agents heading %q", got)
	}
	// The theme toggle: shown when scripts run, it switches the scheme
	// whatever the system says, and the choice survives a reload.
	b.colorScheme("light")
	b.open("/")
	if b.eval(`getComputedStyle(document.getElementById('theme-toggle')).display`) == "none" {
		t.Error("the theme toggle is hidden although scripts run")
	}
	bg := func() string { return b.eval(`getComputedStyle(document.body).backgroundColor`) }
	light := bg()
	b.do("choose light", chromedp.Click(chromedp.ID("theme-toggle")))
	b.do("choose dark", chromedp.Click(chromedp.ID("theme-toggle")))
	if got := b.eval(`document.documentElement.dataset.theme || ""`); got != "dark" || bg() == light {
		t.Errorf("after choosing dark: data-theme %q, background %s", got, bg())
	}
	b.open("/charts")
	if bg() == light {
		t.Error("the dark choice was not remembered on the next page")
	}
	b.screenshot("issue14-theme-dark-chosen")
	b.do("back to the system's setting", chromedp.Click(chromedp.ID("theme-toggle")))
	if got := b.eval(`document.documentElement.dataset.theme || ""`); got != "" || bg() != light {
		t.Errorf("back to the system's setting: data-theme %q, background %s", got, bg())
	}

	// A case page uses a wide screen: outline left, key facts right.
	b.open("/cases/IL-0561")
	if got := b.eval(`getComputedStyle(document.querySelector('.outline')).display`); got != "block" {
		t.Errorf("no outline of the sections at 1280px (display %s)", got)
	}
	if w := mustFloat(t, b.eval(`String(document.querySelector('.case-layout').getBoundingClientRect().width)`)); w < 1000 {
		t.Errorf("the case page uses %.0fpx of a 1280px screen", w)
	}
}

func fmtAny(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return f
}

// On a phone the theme toggle sits on the brand's row (issue 22: it took a
// header row of its own) and nothing moves after the first layout (it
// appeared late and shifted the page). No axe needed.
func TestBrowserThemeToggleOnPhones(t *testing.T) {
	ctx := browserContext(t)
	srv, _ := shippedServer(t)
	b := &browser{t: t, ctx: ctx, base: srv.URL, dir: artifactsDir(t)}
	// On a phone the toggle sits on the brand's row (issue 22: it took a
	// header row of its own) and nothing in the header moves after the
	// first layout (it appeared late and shifted the page).
	b.viewport(360, 740, true)
	// A slow phone, or a busy test machine, draws a page before all of it
	// is parsed: CI once measured a shift of 0.415 on the search page,
	// whose filters were drawn first and then pushed down by the results
	// placed above them. At a 20× slower CPU that happened on every run
	// (0.415 on both searches), so the test runs so throttled.
	if _, err := chromedp.Call(b.ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: 20}); err != nil {
		t.Fatalf("throttle the CPU: %v", err)
	}
	for _, path := range []string{"/", "/cases/IL-0561", "/search?q=dns", "/search?q=database+failover", "/root-causes/config-change", "/charts", "/checks"} {
		b.open(path)
		top := func(sel string) float64 {
			return mustFloat(t, b.eval(`String(Math.round(document.querySelector('`+sel+`').getBoundingClientRect().top))`))
		}
		if tb, bb := top("#theme-toggle"), top(".brand"); tb-bb > 12 || bb-tb > 12 {
			t.Errorf("%s at 360px: the theme toggle's top %.0f, the brand's %.0f: not on one row", path, tb, bb)
		}
		// The sum of the page's layout shifts, and what moved: a failure
		// names the element, its old and its new box.
		var shift struct {
			Total float64  `json:"total"`
			Moved []string `json:"moved"`
		}
		raw, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`new Promise(r => {
			const out = {total: 0, moved: []};
			new PerformanceObserver(l => {
				for (const e of l.getEntries()) {
					out.total += e.value;
					for (const s of (e.sources || [])) {
						const n = s.node, box = q => Math.round(q.x) + ',' + Math.round(q.y) + ' ' + Math.round(q.width) + 'x' + Math.round(q.height);
						out.moved.push((n && n.nodeName ? n.nodeName.toLowerCase() + (n.className ? '.' + n.className : '') : 'text') + ' ' + box(s.previousRect) + ' -> ' + box(s.currentRect));
					}
				}
			}).observe({type: 'layout-shift', buffered: true});
			setTimeout(() => r(JSON.stringify(out)), 300);
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("layout shift: %v", err)
		}
		if err := json.Unmarshal([]byte(raw), &shift); err != nil {
			t.Fatalf("layout shift: %v", err)
		}
		if shift.Total > 0.01 {
			t.Errorf("%s at 360px: cumulative layout shift %.3f; moved: %s", path, shift.Total, strings.Join(shift.Moved, "; "))
		}
	}
	b.screenshot("issue22-phone-header")
}
