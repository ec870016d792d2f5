package contribute

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/web"
)

// newEditorTest is the write path with the library's real validator,
// vocabulary and case page (the site's frame), over drafts in memory;
// the session "session-ana" is signed in.
func newEditorTest(t *testing.T) (*Handler, *fakeWorkflow) {
	t.Helper()
	v, ps := corpus.LoadShippedVocabulary()
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	frame, err := web.NewFrame(web.Config{Contribute: true})
	if err != nil {
		t.Fatal(err)
	}
	parse := func(content []byte, id string) (*incidentlib.Case, []incidentlib.Problem) {
		return corpus.ParseDraft(v, content, id, time.Now())
	}
	wf := &fakeWorkflow{accounts: map[string]*incidentlib.Account{
		"tok-ana":     {ID: 1, Name: "ana", Team: "payments", Role: incidentlib.RoleSubmitter},
		"session-ana": {ID: 1, Name: "ana", Team: "payments", Role: incidentlib.RoleSubmitter},
	}}
	h := New(Config{Workflow: wf, Site: frame, Parse: parse, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Vocabulary: func() *incidentlib.Vocabulary { return v },
		Validate: func(content []byte, id string) []incidentlib.Problem {
			_, ps := parse(content, id)
			return ps
		}})
	return h, wf
}

// editorPage is the page of a draft holding f, as its author sees it.
func editorPage(t *testing.T, f caseForm) string {
	t.Helper()
	h, wf := newEditorTest(t)
	wf.drafts = append(wf.drafts, &incidentlib.Draft{ID: 1, Author: "ana", State: incidentlib.DraftOpen, Content: f.yamlOf()})
	r := do(h, "GET", "/drafts/1", nil, "session-ana", nil)
	body := bodyOf(r)
	if r.StatusCode != 200 {
		t.Fatalf("draft page: %d\n%s", r.StatusCode, body)
	}
	return body
}

// formValues is what a browser sends for the page's form #editor as it
// stands: every named field with its value, checked boxes only, the
// chosen option of each select.
func formValues(t *testing.T, page string) url.Values {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	attr := func(n *html.Node, k string) (string, bool) {
		for _, a := range n.Attr {
			if a.Key == k {
				return a.Val, true
			}
		}
		return "", false
	}
	vals := url.Values{}
	var form *html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			if id, _ := attr(n, "id"); n.Data == "form" && id == "editor" {
				form = n
			}
			if form != nil {
				name, named := attr(n, "name")
				switch n.Data {
				case "input":
					typ, _ := attr(n, "type")
					val, _ := attr(n, "value")
					_, checked := attr(n, "checked")
					if named && ((typ != "checkbox" && typ != "radio") || checked) {
						vals.Add(name, val)
					}
				case "textarea":
					var b strings.Builder
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						b.WriteString(c.Data)
					}
					vals.Add(name, b.String())
				case "select":
					for o := n.FirstChild; o != nil; o = o.NextSibling {
						if _, sel := attr(o, "selected"); o.Type == html.ElementNode && sel {
							v, _ := attr(o, "value")
							vals.Add(name, v)
						}
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n == form {
			form = nil
		}
	}
	walk(doc)
	if vals.Get("csrf") == "" {
		t.Fatalf("no editor form on the page:\n%s", page)
	}
	return vals
}

// send posts the page's form with action.
func send(h *Handler, target string, vals url.Values, action string) (int, string) {
	v := url.Values{}
	for k, vs := range vals {
		v[k] = append([]string(nil), vs...)
	}
	v.Set("action", action)
	r := do(h, "POST", target, v, "session-ana", nil)
	return r.StatusCode, bodyOf(r)
}

func TestEditorSavesTheFormAsACaseFile(t *testing.T) {
	h, wf := newEditorTest(t)
	r := do(h, "GET", "/drafts/new", nil, "session-ana", nil)
	page := bodyOf(r)
	if r.StatusCode != 200 || !strings.Contains(page, `name="summary"`) || !strings.Contains(page, `<nav class="wrap site-nav"`) {
		t.Fatalf("new draft page: %d, want the form in the site's layout\n%s", r.StatusCode, page)
	}
	vals := formValues(t, page)
	f := sampleForm()
	for k, v := range valuesOf(t, f) {
		vals[k] = v
	}
	code, body := send(h, "/drafts", vals, "save")
	if code != 303 || len(wf.drafts) != 1 {
		t.Fatalf("save: %d, %d drafts\n%s", code, len(wf.drafts), body)
	}
	if got := string(wf.drafts[0].Content); got != string(f.yamlOf()) {
		t.Errorf("saved file:\n%s\nwant:\n%s", got, f.yamlOf())
	}
}

// valuesOf is what the form sends for f.
func valuesOf(t *testing.T, f caseForm) url.Values {
	t.Helper()
	return formValues(t, editorPage(t, f))
}

func TestEditorPutsMessagesNextToTheirFields(t *testing.T) {
	h, wf := newEditorTest(t)
	f := sampleForm()
	f.Title = ""
	f.Sources[1].URL = "not a url"
	f.SymptomTerms = append(f.SymptomTerms, "ful-outage")
	f.Quoted[0].Source = "https://example.com/other"
	vals := valuesOf(t, sampleForm())
	for k, v := range valuesOf(t, f) {
		vals[k] = v
	}
	vals["symptom_terms"] = f.SymptomTerms
	vals.Set("title", "")
	code, body := send(h, "/drafts", vals, "save")
	if code != 400 || len(wf.drafts) != 0 {
		t.Fatalf("save of a bad case: %d, %d drafts", code, len(wf.drafts))
	}
	for field, want := range map[string]string{
		"title":           `missing required field &#34;title&#34;`,
		"sources.1.url":   `is not an http or https URL`,
		"symptom_terms":   `did you mean &#34;full-outage&#34;`,
		"quoted.0.source": `is not the url of one of this case&#39;s sources`,
	} {
		re := regexp.MustCompile(`<p class="field-msg" id="m-` + regexp.QuoteMeta(field) + `">([^\n]*)</p>`)
		m := re.FindStringSubmatch(body)
		if m == nil || !strings.Contains(m[1], want) {
			t.Errorf("message of %s: %q, want one saying %q", field, m, want)
		}
	}
	if !strings.Contains(body, `id="f-title" name="title" value="" aria-describedby="h-title m-title" aria-invalid="true"`) {
		t.Error("the title field is not marked invalid and tied to its message")
	}
	// What was typed is kept.
	if !strings.Contains(body, `value="not a url"`) || !strings.Contains(body, `value="ful-outage" checked`) {
		t.Error("the form did not keep what was typed")
	}
}

func TestValidateAsYouTypeNamesThePageRows(t *testing.T) {
	h, _ := newEditorTest(t)
	vals := valuesOf(t, sampleForm())
	// The contributor left the first source row empty and typed in a third.
	vals.Set("sources.0.url", "")
	vals.Set("sources.0.type", "")
	vals.Set("sources.0.title", "")
	vals.Set("sources.0.retrieved", "")
	vals.Set("sources.0.archived_url", "")
	vals.Set("sources.2.url", "ftp://example.com/x")
	vals.Set("sources.2.type", "news")
	vals.Set("timeline.detected", "2026-02-01T00:00:00Z")
	code, body := send(h, "/drafts/validate", vals, "")
	if code != 200 {
		t.Fatalf("validate: %d %s", code, body)
	}
	var ans validateAnswer
	if err := json.Unmarshal([]byte(body), &ans); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range ans.Problems {
		got[p.Field] += p.Message + "; "
	}
	if ans.OK || !strings.Contains(got["sources.2.url"], "not an http or https URL") || !strings.Contains(got["timeline.detected"], "before timeline.started") {
		t.Errorf("validate answered %s", body)
	}
	// The quote cites the first source, which was cleared.
	if !strings.Contains(got["quoted.0.source"], "not the url of one of this case's sources") {
		t.Errorf("quote: %s", body)
	}
	// Nothing is saved, and a good form is ok.
	code, body = send(h, "/drafts/validate", valuesOf(t, sampleForm()), "")
	if code != 200 || !strings.Contains(body, `"ok":true`) {
		t.Errorf("validate a good case: %d %s", code, body)
	}
	// The check is a form post like the others: no form token, no answer.
	vals = valuesOf(t, sampleForm())
	vals.Del("csrf")
	if code, _ := send(h, "/drafts/validate", vals, ""); code != 403 {
		t.Errorf("validate without the form token: %d, want 403", code)
	}
}

func TestEditorSwitchesBetweenFormAndYAML(t *testing.T) {
	h, _ := newEditorTest(t)
	f := sampleForm()
	code, body := send(h, "/drafts", valuesOf(t, f), "view-yaml")
	if code != 200 {
		t.Fatalf("to YAML: %d", code)
	}
	vals := formValues(t, body)
	if vals.Get("view") != "yaml" || vals.Get("content") != string(f.yamlOf()) {
		t.Fatalf("the YAML view holds:\n%s\nwant:\n%s", vals.Get("content"), f.yamlOf())
	}
	// Edit the YAML, go back to the form: the edit is in its field.
	vals.Set("content", strings.Replace(vals.Get("content"), "region: global", "region: eu-west-1", 1))
	code, body = send(h, "/drafts", vals, "view-form")
	if code != 200 {
		t.Fatalf("to the form: %d\n%s", code, body)
	}
	back, _ := formFromValues(formValues(t, body))
	f.Region = "eu-west-1"
	if back.Region != "eu-west-1" || string(back.yamlOf()) != string(f.yamlOf()) {
		t.Errorf("the form after the YAML view:\n%s", back.yamlOf())
	}
	// YAML the form cannot hold stays in the YAML view, saying why.
	vals.Set("content", "title: x\nwhatever: 1\n")
	code, body = send(h, "/drafts", vals, "view-form")
	if code != 400 || !strings.Contains(body, "whatever") || formValues(t, body).Get("view") != "yaml" {
		t.Errorf("unknown key to the form: %d\n%s", code, body)
	}
}

func TestEditorAddsRowsWithoutScript(t *testing.T) {
	h, _ := newEditorTest(t)
	code, body := send(h, "/drafts", valuesOf(t, sampleForm()), "add-sources")
	if code != 200 || !strings.Contains(body, `name="sources.2.url"`) || strings.Contains(body, `name="sources.3.url"`) {
		t.Errorf("add a source: %d, want a third source row", code)
	}
	if !strings.Contains(body, `value="https://news.example.net/a"`) {
		t.Error("adding a row lost the rows before it")
	}
	if !strings.Contains(body, `id="f-sources.2.url" name="sources.2.url" value="" aria-describedby="m-sources.2.url" autofocus>`) || strings.Count(body, "autofocus") != 1 {
		t.Error("the new row's first field does not take the focus")
	}
	if code, _ := send(h, "/drafts", valuesOf(t, sampleForm()), "add-nonsense"); code != 400 {
		t.Errorf("an unknown action: %d, want 400", code)
	}
}

func TestPreviewRendersTheCasePage(t *testing.T) {
	h, wf := newEditorTest(t)
	f := sampleForm()
	code, body := send(h, "/drafts", valuesOf(t, f), "preview")
	if code != 200 {
		t.Fatalf("preview: %d\n%s", code, body)
	}
	for _, want := range []string{
		"<h1>" + html.EscapeString(f.Title) + "</h1>", // the case page's heading
		`<article class="case">`,                      // the case page's own template
		"It was renewed by hand.",                     // its summary
		"Preview.",                                    // the banner
		`<nav class="wrap site-nav"`,                  // the site's layout
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the preview has no %q", want)
		}
	}
	if len(wf.drafts) != 0 {
		t.Error("a preview saved a draft")
	}
	// A saved draft has a preview of its own, for its reviewers.
	wf.drafts = append(wf.drafts, &incidentlib.Draft{ID: 1, Author: "ana", State: incidentlib.DraftSubmitted, Content: f.yamlOf()})
	r := do(h, "GET", "/drafts/1/preview", nil, "session-ana", nil)
	if b := bodyOf(r); r.StatusCode != 200 || !strings.Contains(b, "It was renewed by hand.") {
		t.Errorf("preview of a saved draft: %d", r.StatusCode)
	}
	// A file that is no case at all cannot be shown, and says why.
	code, body = send(h, "/drafts", url.Values{"csrf": {csrfToken("session-ana")}, "view": {"yaml"}, "content": {"- a list\n"}}, "preview")
	if code != 400 || !strings.Contains(body, "not a case") {
		t.Errorf("preview of a list: %d\n%s", code, body)
	}
}

// "Propose an edit" starts from the case as published, in the form.
func TestEditStartsFromThePublishedCase(t *testing.T) {
	h, wf := newEditorTest(t)
	f := sampleForm()
	f.ID = "IL-0561"
	wf.history = map[string][]incidentlib.CaseVersion{"IL-0561": {{Version: 1, Content: []byte("id: IL-0561\ntitle: old\n")}, {Version: 2, Content: f.yamlOf()}}}
	r := do(h, "GET", "/drafts/new?case=IL-0561", nil, "session-ana", nil)
	body := bodyOf(r)
	if r.StatusCode != 200 {
		t.Fatalf("edit page: %d", r.StatusCode)
	}
	got, _ := formFromValues(formValues(t, body))
	if got.Title != f.Title || got.ID != "IL-0561" || formValues(t, body).Get("case_id") != "IL-0561" {
		t.Errorf("the edit starts from title %q, id %q; want the newest version", got.Title, got.ID)
	}
	// A case the account may not read the history of starts from its ID.
	r = do(h, "GET", "/drafts/new?case=IL-0562", nil, "session-ana", nil)
	body = bodyOf(r)
	if got, _ := formFromValues(formValues(t, body)); r.StatusCode != 200 || got.ID != "IL-0562" || got.Title != "" {
		t.Errorf("edit of a case without history: %d, %+v", r.StatusCode, got)
	}
	if r := do(h, "GET", "/drafts/new?case=nonsense", nil, "session-ana", nil); r.StatusCode != 400 {
		t.Errorf("an edit of %q: %d, want 400", "nonsense", r.StatusCode)
	}
}

func TestFormScriptAndLimits(t *testing.T) {
	h, _ := newEditorTest(t)
	r := do(h, "GET", "/drafts/new", nil, "session-ana", nil)
	page := bodyOf(r)
	if !strings.Contains(page, `<script src="/drafts/form.js" defer></script>`) ||
		!strings.Contains(r.Header.Get("Content-Security-Policy"), "script-src 'self'") ||
		strings.Contains(r.Header.Get("Content-Security-Policy"), "unsafe-inline") {
		t.Errorf("the form page does not load its script under a policy that allows only the site's own: %s", r.Header.Get("Content-Security-Policy"))
	}
	r = do(h, "GET", "/drafts/form.js", nil, "", nil)
	if js := bodyOf(r); r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/javascript") || !strings.Contains(js, "data-validate") {
		t.Errorf("form.js: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	// The YAML view's problems come back with their lines and no field
	// the page lacks.
	vals := url.Values{"csrf": {csrfToken("session-ana")}, "view": {"yaml"}, "content": {"title: x\ncompany: y\nroot_cause: sofware-bug\n"}}
	code, body := send(h, "/drafts/validate", vals, "")
	if code != 200 || !strings.Contains(body, `"line":3`) || !strings.Contains(body, `did you mean \"software-bug\"`) {
		t.Errorf("validate the YAML view: %d %s", code, body)
	}
	// A body over the limit is refused before it is read.
	vals.Set("content", strings.Repeat("x", maxBody+100<<10))
	if code, _ := send(h, "/drafts/validate", vals, ""); code != 413 {
		t.Errorf("validate 1.1 MiB: %d, want 413", code)
	}
	if code, _ := send(h, "/drafts", vals, "preview"); code != 413 {
		t.Errorf("preview 1.1 MiB: %d, want 413", code)
	}
}
