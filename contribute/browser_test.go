package contribute

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/cases"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/web"
)

// The browser suite drives a real headless Chromium through the
// contributor pages, as a contributor and a reviewer use them, and runs
// axe-core on every page at desktop (1280 px) and phone (390 px) width:
//
//	INCIDENTLIB_BROWSER_TESTS=1 INCIDENTLIB_AXE=.../axe.min.js go test ./contribute -run Browser -v
//
// INCIDENTLIB_CHROMIUM names the browser (default: chromium on PATH);
// INCIDENTLIB_ARTIFACTS the screenshot directory (default
// testdata/artifacts).

func browserTab(t *testing.T) (context.Context, string) {
	t.Helper()
	if os.Getenv("INCIDENTLIB_BROWSER_TESTS") != "1" {
		t.Skip("browser tests are off; set INCIDENTLIB_BROWSER_TESTS=1 (needs Debian's chromium package)")
	}
	axePath := os.Getenv("INCIDENTLIB_AXE")
	if axePath == "" {
		t.Skip("accessibility checks are off: set INCIDENTLIB_AXE to the path of axe-core's axe.min.js (npm install axe-core)")
	}
	axe, err := os.ReadFile(axePath)
	if err != nil {
		t.Fatalf("INCIDENTLIB_AXE: %v", err)
	}
	bin := os.Getenv("INCIDENTLIB_CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if bin != "" {
			break
		}
		if p, err := exec.LookPath(name); err == nil {
			bin = p
		}
	}
	if bin == "" {
		t.Skip("INCIDENTLIB_BROWSER_TESTS=1 but no chromium on PATH; install it with: apt-get install -y chromium")
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	// axe is injected into pages whose policy allows only their own
	// scripts; the policy is set aside for this tab only.
	if _, err := chromedp.Call(ctx, cdppage.SetBypassCSP, cdppage.SetBypassCSPParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return ctx, string(axe)
}

// siteWithWritePath is the site as serve puts it together over a store:
// the pages of a small library, and the write path over drafts in memory
// with the library's validator, vocabulary and case page.
func siteWithWritePath(t *testing.T) (*httptest.Server, *fakeWorkflow) {
	t.Helper()
	v, ps := corpus.LoadShippedVocabulary()
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	var cs []*incidentlib.Case
	for _, name := range []string{"IL-0561.yaml", "IL-1210.yaml"} {
		b, err := cases.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		c, ps := corpus.ParseCase(v, name, b, time.Now())
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		cs = append(cs, c)
	}
	eng, err := engine.Open(context.Background(), v, cs, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	pages, err := web.New(eng, web.Config{Contribute: true})
	if err != nil {
		t.Fatal(err)
	}
	frame, err := web.NewFrame(web.Config{Contribute: true})
	if err != nil {
		t.Fatal(err)
	}
	published, _ := cases.FS.ReadFile("IL-0561.yaml")
	wf := &fakeWorkflow{
		accounts: map[string]*incidentlib.Account{
			"tok-ana":  {ID: 1, Name: "ana", Team: "payments", Role: incidentlib.RoleSubmitter},
			"tok-rita": {ID: 2, Name: "rita", Team: "payments", Role: incidentlib.RoleReviewer},
		},
		history: map[string][]incidentlib.CaseVersion{"IL-0561": {{Version: 1, Content: published, By: "import", At: time.Now()}}},
	}
	parse := func(content []byte, id string) (*incidentlib.Case, []incidentlib.Problem) {
		return corpus.ParseDraft(v, content, id, time.Now())
	}
	write := New(Config{Workflow: wf, Site: frame, Parse: parse, Vocabulary: func() *incidentlib.Vocabulary { return v },
		Validate: func(content []byte, id string) []incidentlib.Problem { _, ps := parse(content, id); return ps }})
	mux := http.NewServeMux()
	mux.Handle("/", pages)
	for _, p := range Patterns {
		mux.Handle(p, write)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, wf
}

// tab is one browser tab; every helper fails the test with what it was
// doing.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string
	axe  string
}

func (b *tab) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *tab) open(path string) {
	b.t.Helper()
	b.run("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitReady(chromedp.CSS("body")))
}

// submit clicks a button that sends a form and waits for the page it
// leads to.
func (b *tab) submit(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(cdppage.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))); err != nil {
		b.t.Fatalf("click %s: %v", sel, err)
	}
	b.run("the page after "+sel, chromedp.WaitReady(chromedp.CSS("body")))
}

func (b *tab) click(sel string) { b.t.Helper(); b.run("click "+sel, chromedp.Click(chromedp.CSS(sel))) }

// typeIn types into the field named name, as a person does.
func (b *tab) typeIn(name, text string) {
	b.t.Helper()
	b.run("type in "+name, chromedp.SendKeys(chromedp.CSS(`[name="`+name+`"]`), text))
}

func (b *tab) choose(name, value string) {
	b.t.Helper()
	b.run("choose "+value+" in "+name, chromedp.SetValue(chromedp.CSS(`select[name="`+name+`"]`), value))
}

func (b *tab) eval(js string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// message is the text shown next to the field at path.
func (b *tab) message(path string) string {
	return b.eval(`(document.getElementById("m-` + path + `") || {innerText: "(no slot)"}).innerText.trim()`)
}

// waitMessage waits for the check as you type to put a message next to
// the field at path.
func (b *tab) waitMessage(path, want string) {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(b.message(path), want) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Errorf("no message %q next to %s while typing; it says %q", want, path, b.message(path))
}

func (b *tab) path() string { return strings.TrimPrefix(b.eval(`location.href`), b.base) }

func (b *tab) viewport(width int64) {
	b.t.Helper()
	if width < 600 {
		b.run("phone viewport", chromedp.EmulateViewport(width, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
	} else {
		b.run("desktop viewport", chromedp.EmulateViewport(width, 900))
	}
}

func (b *tab) screenshot(name string) {
	b.t.Helper()
	dir := os.Getenv("INCIDENTLIB_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", p)
}

// accessible runs axe-core on the open page at 1280 and 390 px, in the
// light and the dark scheme, fails the test on any violation, and checks
// that nothing scrolls sideways.
func (b *tab) accessible(what string) {
	b.t.Helper()
	for _, scheme := range []string{"light", "dark"} {
		b.colorScheme(scheme)
		for _, width := range []int64{1280, 390} {
			b.viewport(width)
			for _, v := range b.axeViolations() {
				var where []string
				for _, n := range v.Nodes {
					where = append(where, jsonText(n.Target))
				}
				b.t.Errorf("%s at %dpx, %s: axe %s (%s): %s — %s", what, width, scheme, v.ID, v.Impact, v.Help, strings.Join(where, "; "))
			}
			if got := b.eval(`String(document.documentElement.scrollWidth - window.innerWidth)`); got != "0" {
				wide := b.eval(`Array.from(document.querySelectorAll("body *")).filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 5).map(e => e.tagName + "#" + e.id + "." + e.className).join(", ")`)
				b.t.Errorf("%s scrolls sideways by %spx at %dpx (%s)", what, got, width, wide)
			}
		}
	}
	b.colorScheme("light")
	b.viewport(1280)
}

type axeViolation struct {
	ID, Impact, Help string
	Nodes            []struct{ Target []any }
}

func (b *tab) axeViolations() []axeViolation {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](b.axe+";true")); err != nil {
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

func (b *tab) colorScheme(scheme string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	}); err != nil {
		b.t.Fatalf("emulate prefers-color-scheme %s: %v", scheme, err)
	}
}

func jsonText(v any) string { b, _ := json.Marshal(v); return string(b) }

func (b *tab) signIn(token string) {
	b.t.Helper()
	b.open("/account/sign-in")
	b.typeIn("token", token)
	b.submit(`form.signin button`)
}

func (b *tab) signOut() {
	b.t.Helper()
	b.submit(`.contrib-bar form button`)
}

// A contributor writes a case in the form: the form checks as they type
// and shows each problem next to its field, a source row is added, the
// case is saved, previewed as its case page, switched to YAML and back,
// and submitted; a reviewer sees the edit of a published case side by
// side. Every page passes axe at both widths.
func TestBrowserContributor(t *testing.T) {
	ctx, axe := browserTab(t)
	srv, wf := siteWithWritePath(t)
	b := &tab{t: t, ctx: ctx, base: srv.URL, axe: axe}

	// The site's navigation leads to the contributor pages, and every
	// case page offers an edit.
	b.open("/cases/IL-0561")
	if b.eval(`String(!!document.querySelector('nav.site-nav a[href="/drafts"]'))`) != "true" ||
		b.eval(`String(!!document.querySelector('a[href="/drafts/new?case=IL-0561"]'))`) != "true" {
		t.Error("the case page links neither the contributor pages nor an edit of the case")
	}
	b.click(`nav.site-nav a[href="/drafts"]`)
	b.run("sign-in page", chromedp.WaitReady(chromedp.CSS("#token")))
	if p := b.path(); !strings.HasPrefix(p, "/account/sign-in?next=") {
		t.Errorf("the drafts signed out led to %s, want the sign-in page", p)
	}
	b.accessible("sign-in page")
	b.typeIn("token", "tok-ana")
	b.submit(`form.signin button`)
	if p := b.path(); p != "/drafts" {
		t.Fatalf("after signing in: %s, want /drafts", p)
	}
	b.accessible("drafts (none)")

	b.open("/drafts/new")
	b.accessible("new draft form")
	b.screenshot("contribute-form-1280")

	// Checked as typed: a source URL that is not http(s) and a start in
	// the future get their messages next to their fields, without a save.
	b.typeIn("sources.0.url", "ftp://example.com/post")
	b.waitMessage("sources.0.url", "not an http or https URL")
	b.typeIn("timeline.started", "2999-01-01")
	b.waitMessage("timeline.started", "in the future")
	if got := b.eval(`document.getElementById("f-timeline.started").getAttribute("aria-invalid") || ""`); got != "true" {
		t.Errorf("the start field is not marked invalid while typing: %q", got)
	}
	// Fields not touched yet wait: their problems are counted, not shown.
	if got := b.message("title"); got != "" {
		t.Errorf("the untouched title already says %q", got)
	}
	if got := b.eval(`document.getElementById("check-status").innerText`); !strings.Contains(got, "in fields not filled in yet") {
		t.Errorf("the check's status: %q", got)
	}
	b.accessible("form with messages while typing")
	b.viewport(390)
	b.screenshot("contribute-form-messages-390")
	b.viewport(1280)

	// Fix them and fill in the rest.
	b.eval(`document.querySelector('[name="sources.0.url"]').value = ""; document.querySelector('[name="timeline.started"]').value = ""; ""`)
	b.typeIn("title", "Example Corp's API failed for two hours as its TLS certificate expired")
	b.typeIn("company", "Example Corp")
	b.typeIn("timeline.started", "2026-03-01T10:00:00Z")
	b.typeIn("summary", "The certificate of the public API expired.\nIt was renewed by hand two hours later.")
	b.click(`#f-symptom_terms summary`)
	b.click(`[id="f-symptom_terms-full-outage"]`)
	if got := b.eval(`String(document.getElementById("f-symptom_terms-full-outage").checked) + " " + String(document.querySelector("#f-symptom_terms details").open)`); got != "true true" {
		t.Errorf("the symptom picker after a click: checked, open = %s", got)
	}
	b.typeIn("sources.0.url", "https://example.com/post")
	b.choose("sources.0.type", "official-blog")
	b.choose("verification.status", "unchecked")
	// A second source row, without script: the form is sent and drawn
	// again with one more row, keeping what was typed.
	b.submit(`button[value="add-sources"]`)
	if b.eval(`String(!!document.querySelector('[name="sources.1.url"]'))`) != "true" ||
		b.eval(`document.querySelector('[name="sources.0.url"]').value`) != "https://example.com/post" {
		t.Fatal("add a source: no second row, or the first was lost")
	}
	b.typeIn("sources.1.url", "https://news.example.net/a")
	b.choose("sources.1.type", "news")
	b.submit(`.actions button[value="save"]`)
	if p := b.path(); p != "/drafts/1" || len(wf.drafts) != 1 {
		t.Fatalf("save: at %s with %d drafts, want /drafts/1\n%s", p, len(wf.drafts), b.eval(`document.body.innerText`))
	}
	saved := string(wf.drafts[0].Content)
	for _, want := range []string{"symptom_terms: [full-outage]", "type: news", "status: unchecked"} {
		if !strings.Contains(saved, want) {
			t.Errorf("the saved file has no %q:\n%s", want, saved)
		}
	}
	b.accessible("saved draft")

	// The YAML view holds the same file, and back in the form it is the
	// same form.
	b.submit(`button[value="view-yaml"]`)
	if got := b.eval(`document.getElementById("f-content").value`); got != saved {
		t.Errorf("the YAML view holds:\n%s\nwant the saved file:\n%s", got, saved)
	}
	// In the YAML view the check as you type lists problems by line.
	b.run("type in the YAML", chromedp.SendKeys(chromedp.CSS("#f-content"), "severity: major\n"))
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(b.eval(`document.getElementById("m-general").innerText`), "severity is not written by hand") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := b.eval(`document.getElementById("m-general").innerText`); !strings.Contains(got, "line ") || !strings.Contains(got, "severity is not written by hand") {
		t.Errorf("the YAML view's check as you type says %q", got)
	}
	b.accessible("YAML view with a problem")
	b.eval(`document.getElementById("f-content").value = document.getElementById("f-content").value.replace("severity: major\n", ""); ""`)
	b.submit(`button[value="view-form"]`)
	if got := b.eval(`document.querySelector('[name="sources.1.url"]').value`); got != "https://news.example.net/a" {
		t.Errorf("back in the form, the second source is %q", got)
	}

	// The preview is the case page, drawn from the draft.
	b.open("/drafts/1/preview")
	if got := b.eval(`document.querySelector("article.case h1").innerText`); !strings.Contains(got, "TLS certificate expired") {
		t.Errorf("preview heading: %q", got)
	}
	b.accessible("preview")
	b.screenshot("contribute-preview-1280")

	b.open("/drafts/1")
	b.submit(`.submit-draft button`)
	if wf.drafts[0].State != incidentlib.DraftSubmitted {
		t.Errorf("submit: the draft is %s", wf.drafts[0].State)
	}
	b.signOut()

	// A reviewer reads an edit of a published case side by side.
	published, _ := cases.FS.ReadFile("IL-0561.yaml")
	edited := strings.Replace(string(published), "company: DigitalOcean", "company: DigitalOcean, Inc.", 1)
	wf.drafts = append(wf.drafts, &incidentlib.Draft{ID: 2, CaseID: "IL-0561", Author: "ana", Team: "payments", State: incidentlib.DraftSubmitted, Content: []byte(edited)})
	b.signIn("tok-rita")
	b.open("/drafts/2")
	if got := b.eval(`document.querySelector("table.diff-side td.added") ? document.querySelector("table.diff-side td.added").innerText : ""`); !strings.Contains(got, "DigitalOcean, Inc.") {
		t.Errorf("review: the added line is %q", got)
	}
	if got := b.eval(`document.querySelector("tr.folded") ? document.querySelector("tr.folded").innerText : ""`); !strings.Contains(got, "unchanged lines") {
		t.Errorf("review: the unchanged part of the file is not folded (%q)", got)
	}
	b.accessible("review with the side-by-side diff")
	b.screenshot("contribute-review-1280")
}

// Without script the form still checks: a save with problems draws the
// form again with each message next to its field.
func TestBrowserFormWithoutScript(t *testing.T) {
	ctx, axe := browserTab(t)
	srv, wf := siteWithWritePath(t)
	b := &tab{t: t, ctx: ctx, base: srv.URL, axe: axe}
	b.signIn("tok-ana")
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	b.open("/drafts/new")
	b.typeIn("sources.0.url", "example.com/no-scheme")
	b.submit(`.actions button[value="save"]`)
	if len(wf.drafts) != 0 {
		t.Fatal("a case with problems was saved")
	}
	for path, want := range map[string]string{
		"title":         `missing required field "title"`,
		"sources.0.url": "not an http or https URL",
		"summary":       `missing required field "summary"`,
	} {
		if got := b.message(path); !strings.Contains(got, want) {
			t.Errorf("next to %s: %q, want %q", path, got, want)
		}
	}
	if got := b.eval(`document.querySelector('[name="sources.0.url"]').value`); got != "example.com/no-scheme" {
		t.Errorf("the form lost what was typed: %q", got)
	}
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	b.accessible("form with messages after a save")
	b.viewport(390)
	b.screenshot("contribute-form-errors-390")
}
