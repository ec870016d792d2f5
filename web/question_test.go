package web

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/incidentlib/incidentlib/engine/enginetest"
)

var hitLink = regexp.MustCompile(`<span class="case-id">(IL-[0-9]{4})</span>`)

func shippedHandler(t *testing.T) http.Handler {
	t.Helper()
	h, err := New(enginetest.Shipped(t), Config{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestIssueQueriesFindTheirCaseInTheTop3(t *testing.T) {
	h := shippedHandler(t)
	for _, q := range enginetest.IssueQueries {
		w := get(t, h, "GET", "/search?q="+url.QueryEscape(q.Text), nil)
		if w.Code != http.StatusOK {
			t.Fatalf("%q: status %d", q.Text, w.Code)
		}
		var got []string
		for _, m := range hitLink.FindAllStringSubmatch(w.Body.String(), 3) {
			got = append(got, m[1])
		}
		if !q.InTop3(got) {
			t.Errorf("%q: neither %s nor %v in the top 3 of the page: %v", q.Text, q.Want, q.Also, got)
		}
	}
}

func TestSearchPageOffersRecognisedTermsAndHelp(t *testing.T) {
	h := shippedHandler(t)
	body := html.UnescapeString(get(t, h, "GET", "/search?q=retry+amplification", nil).Body.String())
	want := regexp.MustCompile(`<a href="/search\?contributing_factor=retry-amplification&q=retry\+amplification">Filter by contributing factor: Retry amplification <span class="n">\((\d+)\)</span></a>`)
	m := want.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no one-click filter for Retry amplification on the page")
	}
	if n, _ := strconv.Atoi(m[1]); n < 11 {
		t.Errorf("the filter counts %s cases; the term has 11", m[1])
	}
	// Cases whose text holds the words rank first; further down, a case
	// found only through its tag says so.
	found := false
	for page := 1; page <= 10 && !found; page++ {
		b := html.UnescapeString(get(t, h, "GET", "/search?q=retry+amplification&page="+strconv.Itoa(page), nil).Body.String())
		found = strings.Contains(b, `as Retry amplification in contributing factor`)
	}
	if !found {
		t.Errorf("no why-it-matched line naming the term")
	}
	body = html.UnescapeString(get(t, h, "GET", "/search?q=databse+qwxzv", nil).Body.String())
	for _, s := range []string{"No case holds: <strong>qwxzv</strong>", `did you mean <a href="/search?q=database`} {
		if !strings.Contains(body, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
}

func TestReplaceWord(t *testing.T) {
	for _, tc := range []struct{ text, word, with, want string }{
		{"databse lag", "databse", "database", "database lag"},
		{"Databse lag", "databse", "database", "database lag"},
		{"subdatabse databse", "databse", "database", "subdatabse database"},
		{"nothing here", "databse", "database", "nothing here"},
	} {
		if got := replaceWord(tc.text, tc.word, tc.with); got != tc.want {
			t.Errorf("replaceWord(%q, %q) = %q, want %q", tc.text, tc.word, got, tc.want)
		}
	}
}

func TestCasePageRedirectsOtherIDSpellings(t *testing.T) {
	h := shippedHandler(t)
	for _, id := range []string{"il-561", "561"} {
		w := get(t, h, "GET", "/cases/"+id, nil)
		if w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/cases/IL-0561" {
			t.Errorf("/cases/%s: %d to %q", id, w.Code, w.Header().Get("Location"))
		}
	}
}

// A case page lists what people saw: each quoted error message, status or
// alert, its kind and the source it is quoted in.
func TestCasePageShowsWhatPeopleSaw(t *testing.T) {
	_, h := newFixtureHandler(t)
	body := get(t, h, "GET", "/cases/IL-0003", nil).Body.String()
	for _, want := range []string{
		`<h2 id="saw-h">What people saw</h2>`,
		`<li><code>upstream connect error or disconnect/reset before headers</code> <span class="meta">error message, quoted in <a href="https://news.example.net/lb" rel="external noopener">news.example.net/lb</a></span></li>`,
		`<code>503 Service Unavailable</code> <span class="meta">status,`,
		`<a href="#saw-h">What people saw</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("IL-0003 page lacks %s", want)
		}
	}
	if strings.Contains(get(t, h, "GET", "/cases/IL-0002", nil).Body.String(), "What people saw") {
		t.Error("a case without quotes shows the section")
	}
}

// A pasted error finds the cases that show it through the page too, and
// the page says what the signature means.
func TestPastedErrorsThroughThePage(t *testing.T) {
	h := shippedHandler(t)
	for _, q := range enginetest.PastedQueries {
		w := get(t, h, "GET", "/search?q="+url.QueryEscape(q.Text), nil)
		if w.Code != http.StatusOK {
			t.Fatalf("%q: status %d", q.Text, w.Code)
		}
		body := html.UnescapeString(w.Body.String())
		m := hitLink.FindStringSubmatch(body)
		if m == nil || !slices.Contains(q.Cases, m[1]) {
			t.Errorf("%q: first hit %v is not one of %v", q.Text, m, q.Cases)
		}
		if want := "matched: <strong>" + q.Signature + "</strong> → " + q.Means; !strings.Contains(body, want) {
			t.Errorf("%q: the page does not say %q", q.Text, want)
		}
	}
}
