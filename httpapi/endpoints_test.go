package httpapi

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
)

// The tests below check what the API says against the corpus itself, so
// that they hold whatever cases are shipped.

func getJSON[T any](t *testing.T, ta *testAPI, target string) (T, map[string][]string) {
	t.Helper()
	var v T
	w := ta.do("GET", target)
	if w.Code != 200 {
		t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return v, w.Header()
}

func casesWhere(t *testing.T, keep func(*incidentlib.Case) bool) []string {
	var ids []string
	for _, c := range mustCases(t) {
		if keep(c) {
			ids = append(ids, c.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

func findCase(t *testing.T, id string) *incidentlib.Case {
	for _, c := range mustCases(t) {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no case %s in the corpus", id)
	return nil
}

func TestGetCase(t *testing.T) {
	ta := newAPI(t, Config{BaseURL: "http://127.0.0.1:8080"})
	// One case of each start precision the corpus has, and IL-0561.
	ids := map[string]bool{"IL-0561": true}
	seen := map[incidentlib.Precision]bool{}
	for _, c := range mustCases(t) {
		if c.Timeline.Started.IsZero() {
			continue // no start: TestCaseWithoutAStart
		}
		if !seen[c.Timeline.Started.Precision] {
			seen[c.Timeline.Started.Precision] = true
			ids[c.ID] = true
		}
	}
	for id := range ids {
		t.Run(id, func(t *testing.T) {
			c := findCase(t, id)
			got, _ := getJSON[Case](t, ta, "/api/v1/cases/"+id)
			if got.ID != c.ID || got.Title != c.Title || got.Company != c.Company || got.Year != c.Year() {
				t.Errorf("identity: %s %q %q %d", got.ID, got.Title, got.Company, got.Year)
			}
			started := *got.Timeline.Started
			if c.Timeline.Started.Exact() {
				if _, err := time.Parse(time.RFC3339, started); err != nil || !strings.HasSuffix(started, "Z") {
					t.Errorf("exact start %q is not RFC 3339 UTC", started)
				}
			} else if want := c.Timeline.Started.String(); started != want {
				t.Errorf("started %q, want %q", started, want)
			}
			if *got.Timeline.StartedPrecision != precisionName(c.Timeline.Started.Precision) {
				t.Errorf("started_precision %q", *got.Timeline.StartedPrecision)
			}
			checkNull := func(name string, v *string, domain string) {
				if (v == nil) != (domain == "") {
					t.Errorf("%s = %v for %q", name, v, domain)
				}
				if v != nil && (*v == "–" || *v == "-") {
					t.Errorf("%s is a placeholder", name)
				}
			}
			checkNull("severity", got.Severity, c.Severity)
			checkNull("region", got.Region, c.Region)
			checkNull("lessons", got.Lessons, c.Lessons)
			checkNull("scope", got.Scope, c.Scope)
			if d, ok := c.TimeToResolve(); ok != (got.TimeToResolve != nil) || (ok && got.TimeToResolve.Seconds != int64(d.Seconds())) {
				t.Errorf("time_to_resolve %+v, want %v %v", got.TimeToResolve, d, ok)
			}
			if got.TimeToResolve != nil && got.TimeToResolve.Human != incidentlib.FormatDuration(time.Duration(got.TimeToResolve.Seconds)*time.Second) {
				t.Errorf("human %q", got.TimeToResolve.Human)
			}
			if len(got.Sources) != len(c.Sources) || got.Verification.Status == "" {
				t.Errorf("%d sources, verification %+v", len(got.Sources), got.Verification)
			}
			want := Links{
				Self:    "http://127.0.0.1:8080/api/v1/cases/" + id,
				HTML:    ptr("http://127.0.0.1:8080/cases/" + id),
				Similar: ptr("http://127.0.0.1:8080/api/v1/cases/" + id + "/similar"),
			}
			if diff := cmp.Diff(want, got.Links); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
			var tagged []string
			for _, tr := range got.Tags.Components {
				tagged = append(tagged, tr.Slug)
			}
			if diff := cmp.Diff(c.Components, tagged); diff != "" {
				t.Errorf("components (-corpus +api):\n%s", diff)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestListCasesFilters(t *testing.T) {
	ta := newAPI(t, Config{})
	year := func(c *incidentlib.Case) int { return c.Year() }
	tests := []struct {
		query string
		keep  func(*incidentlib.Case) bool
	}{
		{"", func(*incidentlib.Case) bool { return true }},
		{"root_cause=config-change", func(c *incidentlib.Case) bool { return c.RootCause == "config-change" }},
		{"root_cause=config-change,software-bug", func(c *incidentlib.Case) bool { return c.RootCause == "config-change" || c.RootCause == "software-bug" }},
		{"root_cause=config-change&root_cause=software-bug&year_from=2020", func(c *incidentlib.Case) bool {
			return (c.RootCause == "config-change" || c.RootCause == "software-bug") && year(c) >= 2020
		}},
		{"component=dns", func(c *incidentlib.Case) bool { return slices.Contains(c.Components, "dns") }},
		{"company=digitalocean", func(c *incidentlib.Case) bool { return strings.EqualFold(c.Company, "DigitalOcean") }},
		{"year_from=2020&year_to=2021", func(c *incidentlib.Case) bool { return year(c) >= 2020 && year(c) <= 2021 }},
		{"symptom=high-error-rate&contributing_factor=no-guardrail", func(c *incidentlib.Case) bool {
			return slices.Contains(c.SymptomTerms, "high-error-rate") && slices.Contains(c.ContributingFactors, "no-guardrail")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			want := casesWhere(t, tt.keep)
			got := walkPages(t, ta, "/api/v1/cases?per_page=50&"+tt.query)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("cases (-corpus +api):\n%s", diff)
			}
		})
	}
}

// walkPages follows the Link header's next relation to the end and returns
// the IDs seen, sorted, checking that none repeats.
func walkPages(t *testing.T, ta *testAPI, target string) []string {
	t.Helper()
	next := regexp.MustCompile(`<([^>]+)>; rel="next"`)
	var ids []string
	seen := map[string]bool{}
	var total int
	for page := 1; target != ""; page++ {
		list, h := getJSON[CaseList](t, ta, target)
		total = list.Total
		if list.Query.Page != page {
			t.Fatalf("page %d reports page %d", page, list.Query.Page)
		}
		for _, it := range list.Items {
			if seen[it.Case.ID] {
				t.Fatalf("%s on two pages", it.Case.ID)
			}
			seen[it.Case.ID] = true
			ids = append(ids, it.Case.ID)
		}
		target = ""
		if m := next.FindStringSubmatch(strings.Join(h["Link"], ", ")); m != nil {
			target = m[1]
			if list.Links.Next == nil || *list.Links.Next != target {
				t.Fatalf("body next %v, header next %s", list.Links.Next, target)
			}
		} else if list.Links.Next != nil {
			t.Fatalf("body has next %s, header none", *list.Links.Next)
		}
	}
	if total != len(ids) {
		t.Errorf("total %d, walked %d", total, len(ids))
	}
	slices.Sort(ids)
	if ids == nil {
		ids = []string{}
	}
	return ids
}

func TestListCasesFacetsAndOrder(t *testing.T) {
	ta := newAPI(t, Config{})
	list, _ := getJSON[CaseList](t, ta, "/api/v1/cases?year_from=2023&per_page=100")
	var rc map[string]int = map[string]int{}
	for _, id := range casesWhere(t, func(c *incidentlib.Case) bool { return c.Year() >= 2023 }) {
		if r := findCase(t, id).RootCause; r != "" {
			rc[r]++
		}
	}
	got := map[string]int{}
	for i, tc := range list.Facets.RootCause {
		got[tc.Slug] = tc.Count
		if i > 0 && tc.Count > list.Facets.RootCause[i-1].Count {
			t.Errorf("facet counts not most-first at %s", tc.Slug)
		}
	}
	for slug, n := range got {
		if n == 0 {
			delete(got, slug)
		}
	}
	if diff := cmp.Diff(rc, got); diff != "" {
		t.Errorf("root-cause counts (-corpus +api):\n%s", diff)
	}
	// The date a case is ordered by: its start, or when it was made public
	// where no source gives the start.
	date := func(tl Timeline) string {
		if tl.Started != nil {
			return *tl.Started
		}
		if tl.Reported == nil {
			t.Fatal("a case with neither started nor reported")
		}
		return *tl.Reported
	}
	for i := 1; i < len(list.Items); i++ {
		a, b := date(list.Items[i-1].Case.Timeline), date(list.Items[i].Case.Timeline)
		if a < b && len(a) == len(b) {
			t.Errorf("not newest first: %s before %s", a, b)
		}
	}
	if list.Query.Sort != "newest" || list.Items[0].Score != nil {
		t.Errorf("default without q: sort %q score %v", list.Query.Sort, list.Items[0].Score)
	}
}

func TestSearchSnippets(t *testing.T) {
	ta := newAPI(t, Config{})
	list, _ := getJSON[CaseList](t, ta, "/api/v1/cases?q=retries")
	if list.Total == 0 || list.Query.Sort != "relevance" {
		t.Fatalf("q=retries: total %d sort %s", list.Total, list.Query.Sort)
	}
	matched := false
	for _, it := range list.Items {
		if it.Score == nil {
			t.Errorf("%s: no score with q", it.Case.ID)
		}
		for _, sn := range it.Snippets {
			var text strings.Builder
			for _, p := range sn.Parts {
				text.WriteString(p.Text)
				if p.Match {
					matched = true
					if !strings.Contains(strings.ToLower(p.Text), "retr") {
						t.Errorf("%s: match %q does not look like the query", it.Case.ID, p.Text)
					}
				}
			}
			if text.String() != sn.Text {
				t.Errorf("%s: parts do not add up to text", it.Case.ID)
			}
		}
	}
	if !matched {
		t.Error("no snippet marks a match")
	}
}

func TestSimilar(t *testing.T) {
	ta := newAPI(t, Config{})
	got, _ := getJSON[SimilarCases](t, ta, "/api/v1/cases/IL-0561/similar?limit=5")
	want, err := shippedLibrary(t).SimilarCases(t.Context(), "IL-0561", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != len(want) || len(want) == 0 {
		t.Fatalf("%d items, engine %d", len(got.Items), len(want))
	}
	for i, it := range got.Items {
		if it.Case.ID != want[i].Case.ID || it.Case.ID == "IL-0561" {
			t.Errorf("item %d: %s, engine %s", i, it.Case.ID, want[i].Case.ID)
		}
		if len(it.Reasons) == 0 || it.Reason != strings.Join(it.Reasons, " · ") {
			t.Errorf("%s: reasons %q reason %q", it.Case.ID, it.Reasons, it.Reason)
		}
	}
	if got.Case.ID != "IL-0561" || got.Links.Self != "/api/v1/cases/IL-0561/similar?limit=5" {
		t.Errorf("case %s, self %s", got.Case.ID, got.Links.Self)
	}
	def, _ := getJSON[SimilarCases](t, ta, "/api/v1/cases/IL-0561/similar")
	if len(def.Items) != defaultSimilar {
		t.Errorf("default limit: %d items", len(def.Items))
	}
}

func TestTopic(t *testing.T) {
	ta := newAPI(t, Config{})
	v := shippedLibrary(t).Vocabulary()
	tests := []struct {
		path    string
		isGroup bool
		keep    func(*incidentlib.Case) bool
	}{
		{"root_cause/config-change", false, func(c *incidentlib.Case) bool { return c.RootCause == "config-change" }},
		{"root-causes/config-change", false, func(c *incidentlib.Case) bool { return c.RootCause == "config-change" }},
		{"component/dns", false, func(c *incidentlib.Case) bool { return slices.Contains(c.Components, "dns") }},
		{"component/database", true, func(c *incidentlib.Case) bool {
			for _, m := range v.GroupMembers("database") {
				if slices.Contains(c.Components, m) {
					return true
				}
			}
			return false
		}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			top, _ := getJSON[Topic](t, ta, "/api/v1/topics/"+tt.path+"?per_page=100")
			want := casesWhere(t, tt.keep)
			if top.Count != len(want) || top.Term.IsGroup != tt.isGroup || top.Term.Definition == "" {
				t.Errorf("count %d (corpus %d), is_group %v, definition %q", top.Count, len(want), top.Term.IsGroup, top.Term.Definition)
			}
			// A topic may hold more cases than one page: read every page.
			var got []string
			for page := 1; ; page++ {
				p, _ := getJSON[Topic](t, ta, "/api/v1/topics/"+tt.path+"?per_page=100&page="+strconv.Itoa(page))
				for _, it := range p.Cases.Items {
					got = append(got, it.Case.ID)
				}
				if len(p.Cases.Items) < 100 || page > 50 {
					break
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("cases (-corpus +api):\n%s", diff)
			}
			if len(top.Components) == 0 {
				t.Error("no components")
			}
			facet, _ := incidentlib.ParseFacet(strings.Split(tt.path, "/")[0])
			if top.Links.Self != "/api/v1/topics/"+string(facet)+"/"+top.Term.Slug || *top.Links.HTML != "/"+facet.PathSegment()+"/"+top.Term.Slug {
				t.Errorf("links %+v", top.Links)
			}
		})
	}
	// Filters narrow a topic; its own facet's values intersect with it.
	narrowed, _ := getJSON[Topic](t, ta, "/api/v1/topics/root_cause/config-change?year_from=2024&per_page=100")
	if want := casesWhere(t, func(c *incidentlib.Case) bool { return c.RootCause == "config-change" && c.Year() >= 2024 }); narrowed.Count != len(want) {
		t.Errorf("narrowed count %d, corpus %d", narrowed.Count, len(want))
	}
}

func TestVocabAndStats(t *testing.T) {
	ta := newAPI(t, Config{})
	v := shippedLibrary(t).Vocabulary()
	voc, _ := getJSON[Vocab](t, ta, "/api/v1/vocab")
	if len(voc.Facets) != len(incidentlib.Facets) {
		t.Fatalf("%d facets", len(voc.Facets))
	}
	for i, vf := range voc.Facets {
		f := incidentlib.Facets[i]
		if vf.Facet != string(f) || len(vf.Terms) != len(v.Terms(f)) {
			t.Errorf("%s: %d terms, vocabulary %d", vf.Facet, len(vf.Terms), len(v.Terms(f)))
		}
		for _, term := range vf.Terms {
			n := len(casesWhere(t, func(c *incidentlib.Case) bool {
				switch f {
				case incidentlib.FacetRootCause:
					return c.RootCause == term.Slug
				case incidentlib.FacetComponent:
					return slices.Contains(c.Components, term.Slug)
				case incidentlib.FacetSymptom:
					return slices.Contains(c.SymptomTerms, term.Slug)
				}
				return slices.Contains(c.ContributingFactors, term.Slug)
			}))
			if term.CaseCount != n || term.Definition == "" {
				t.Errorf("%s/%s: case_count %d, corpus %d", f, term.Slug, term.CaseCount, n)
			}
		}
	}
	if len(voc.Groups) != len(v.Groups()) || len(voc.Severities) != len(v.Severities()) || len(voc.SourceTypes) != len(v.SourceTypes()) {
		t.Errorf("groups %d, severities %d, source types %d", len(voc.Groups), len(voc.Severities), len(voc.SourceTypes))
	}
	for _, s := range voc.Severities {
		if n := len(casesWhere(t, func(c *incidentlib.Case) bool { return c.Severity == s.Slug })); *s.CaseCount != n {
			t.Errorf("severity %s: %d, corpus %d", s.Slug, *s.CaseCount, n)
		}
	}
	st, _ := getJSON[Stats](t, ta, "/api/v1/stats")
	if st.Cases != len(mustCases(t)) || len(st.Known) == 0 {
		t.Errorf("stats: %d cases, %d known fields", st.Cases, len(st.Known))
	}
	for _, k := range st.Known {
		if k.Share < 0 || k.Share > 1 || k.Known > st.Cases {
			t.Errorf("known %+v", k)
		}
	}
}

func TestPagingLinks(t *testing.T) {
	ta := newAPI(t, Config{BaseURL: "https://lib.example/"})
	list, h := getJSON[CaseList](t, ta, "/api/v1/cases?per_page=2&page=2&sort=oldest&component=dns")
	base := "https://lib.example/api/v1/cases?component=dns&per_page=2&sort=oldest"
	want := PageLinks{
		Self:  base + "&page=2",
		HTML:  ptr("https://lib.example/search?component=dns&page=2&sort=oldest"),
		First: base,
		Prev:  ptr(base),
		Last:  base,
	}
	if list.Pages < 2 {
		t.Fatalf("component=dns has %d pages of 2; the test needs two", list.Pages)
	}
	want.Last = base + "&page=" + itoa(list.Pages)
	if list.Pages > 2 {
		want.Next = ptr(base + "&page=3")
	}
	// url.Values.Encode sorts keys: page comes between component and per_page.
	norm := func(s string) string {
		u, _ := url.Parse(s)
		u.RawQuery = u.Query().Encode()
		return u.String()
	}
	for _, p := range []*string{&want.Self, want.HTML, &want.First, want.Prev, want.Next, &want.Last} {
		if p != nil {
			*p = norm(*p)
		}
	}
	if diff := cmp.Diff(want, list.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if link := strings.Join(h["Link"], ", "); !strings.Contains(link, `<`+want.First+`>; rel="first"`) || !strings.Contains(link, `rel="prev"`) {
		t.Errorf("Link header %q", link)
	}
}
