package web

import (
	"context"
	"html/template"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/incidentlib/incidentlib/engine"
)

// A library that takes contributions links them from every page, and a
// case page offers an edit of the case; one that does not, does not.
func TestContributorLinks(t *testing.T) {
	e, err := engine.Open(context.Background(), fixtureVocabulary(), fixtureCases(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	for _, on := range []bool{false, true} {
		h, err := New(e, Config{BaseURL: testBaseURL, Contribute: on})
		if err != nil {
			t.Fatal(err)
		}
		body := get(t, h, "GET", "/cases/IL-0001", nil).Body.String()
		hasNav := strings.Contains(body, `<a href="/drafts">Contribute</a>`)
		hasEdit := strings.Contains(body, `<a href="/drafts/new?case=IL-0001">Propose an edit of this case</a>`)
		if hasNav != on || hasEdit != on {
			t.Errorf("contributions %v: nav link %v, edit link %v", on, hasNav, hasEdit)
		}
	}
}

// The frame draws another package's page in the site's layout, and a
// case that is not in the library with the case page's template.
func TestFrame(t *testing.T) {
	f, err := NewFrame(Config{BaseURL: testBaseURL, Contribute: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	r := httptest.NewRequest("GET", "/drafts/new", nil)
	if err := f.Page(&b, r, "New draft", template.HTML("<p>the form</p>"), "/drafts/form.js"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<title>New draft · Incident Library</title>", `<meta name="robots" content="noindex">`,
		"<p>the form</p>", `<script src="/drafts/form.js" defer></script>`, `<a href="/drafts" aria-current="page">Contribute</a>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the framed page has no %q", want)
		}
	}
	c := fixtureCases()[0]
	c.Title = "A draft's <title>"
	body, err := f.CaseHTML(fixtureVocabulary(), c)
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if !strings.Contains(s, `<article class="case">`) || !strings.Contains(s, "<h1>A draft&#39;s &lt;title&gt;</h1>") {
		t.Errorf("the case preview:\n%s", s)
	}
	if strings.Contains(s, "For AI tools and scripts") {
		t.Error("a preview links the API for a case it does not serve yet")
	}
	if _, err := f.CaseHTML(nil, c); err == nil {
		t.Error("a preview without a vocabulary rendered")
	}
}
