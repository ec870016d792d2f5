package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/vocabulary"
)

func vocab(t testing.TB) *incidentlib.Vocabulary {
	t.Helper()
	v, ps := corpus.LoadVocabulary(vocabulary.FileName, vocabulary.YAML)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return v
}

func at(s string) incidentlib.Timestamp {
	ts, err := incidentlib.ParseTimestamp(s)
	if err != nil {
		panic(err)
	}
	return ts
}

// fixture is a small fixed corpus whose rankings, counts and reasons the
// tests below know by heart.
func fixture() []*incidentlib.Case {
	return []*incidentlib.Case{
		{
			ID: "IL-0001", Title: "Control panel errors as hedged retries amplified a slow authorization query",
			Company: "DigitalOcean", Timeline: incidentlib.Timeline{Started: at("2026-08-24T16:56:00Z"), Detected: at("2026-08-24T16:58:00Z"), Resolved: at("2026-08-24T23:09:00Z")},
			Summary:   "A database migration slowed an authorization query; upstream services sent hedged retries that multiplied load.",
			Trigger:   "A planned database migration.",
			RootCause: "config-change", Components: []string{"application-database", "auth-service"},
			ContributingFactors: []string{"retry-amplification", "no-load-shedding"}, SymptomTerms: []string{"high-error-rate", "high-latency"},
			Severity: "major",
		},
		{
			ID: "IL-0002", Title: "Proxy change pinned the Aurora writer CPU",
			Company: "Safie", Timeline: incidentlib.Timeline{Started: at("2026")},
			Summary:   "Pointing production at a new database proxy multiplied connections to the writer.",
			RootCause: "config-change", Components: []string{"connection-pool", "application-database"},
			SymptomTerms: []string{"high-latency"},
		},
		{
			ID: "IL-0003", Title: "Memcache down in all regions",
			Company: "Google Cloud", Timeline: incidentlib.Timeline{Started: at("2017-03-01T10:00:00Z"), Resolved: at("2017-03-01T11:50:00Z")},
			Summary:   "A cache service could not read its datacenter mapping. Retries from clients made the recovery slower.",
			RootCause: "config-change", Components: []string{"in-memory-cache"},
			ContributingFactors: []string{"retry-amplification"}, SymptomTerms: []string{"full-outage"},
			Severity: "critical",
		},
		{
			ID: "IL-0004", Title: "Primary database deleted by a test process",
			Company: "DigitalOcean", Timeline: incidentlib.Timeline{Started: at("2017-04-05T14:24:00Z"), Resolved: at("2017-04-05T19:20:00Z")},
			Summary:   "An automated test was configured with production credentials and dropped the primary database.",
			Lessons:   "Keep production credentials away from test automation.",
			RootCause: "operator-error", Components: []string{"application-database", "backup-restore"},
			ContributingFactors: []string{"no-guardrail", "slow-recovery"}, SymptomTerms: []string{"control-plane-unavailable"},
		},
		{
			ID: "IL-0005", Title: "DNS records vanished after a Terraform deploy",
			Company: "Rust", Timeline: incidentlib.Timeline{Started: at("2023-01-25")},
			Summary:   "A deploy deleted certificate and name records before creating new ones.",
			RootCause: "deployment-error", Components: []string{"dns", "certificates-secrets"},
			SymptomTerms: []string{"unreachable"},
		},
		{
			ID: "IL-0006", Title: "Kafka consumers stalled behind a poison message",
			Company: "Example", Timeline: incidentlib.Timeline{Started: at("2022-06-01T08:00:00Z"), Resolved: at("2022-06-01T08:30:00Z")},
			Summary:   "One malformed message crashed every consumer that read it; the queue backed up. Hedged retries were not involved.",
			RootCause: "software-bug", Components: []string{"message-queue", "background-workers"},
			ContributingFactors: []string{"fail-unsafe"}, SymptomTerms: []string{"processing-delay"},
		},
	}
}

func open(t testing.TB, cases []*incidentlib.Case) *engine.Engine {
	t.Helper()
	e, err := engine.Open(context.Background(), vocab(t), cases, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func ids(res *incidentlib.SearchResult) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Case.ID)
	}
	return out
}

func TestSearchRankingAndMatching(t *testing.T) {
	e := open(t, fixture())
	tests := []struct {
		name    string
		q       incidentlib.Query
		want    []string
		partial bool
	}{
		{"no text lists newest first", incidentlib.Query{}, []string{"IL-0001", "IL-0002", "IL-0005", "IL-0006", "IL-0004", "IL-0003"}, false},
		{"cases with every word come first, then those with part of the query", incidentlib.Query{Text: "hedged retries"}, []string{"IL-0001", "IL-0006", "IL-0003"}, true},
		{"-word leaves cases out", incidentlib.Query{Text: "database -proxy"}, []string{"IL-0004", "IL-0001"}, false},
		{"-phrase leaves cases out", incidentlib.Query{Text: `retries -"hedged retries"`}, []string{"IL-0003"}, false},
		{"OR takes either", incidentlib.Query{Text: "kafka OR memcache"}, []string{"IL-0003", "IL-0006"}, false},
		{"or in lower case is a stop word", incidentlib.Query{Text: "kafka or memcache"}, []string{"IL-0003", "IL-0006"}, true},
		{"only exclusions list the rest newest first", incidentlib.Query{Text: "-database -dns"}, []string{"IL-0006", "IL-0003"}, false},
		{"a phrase must match in order", incidentlib.Query{Text: `"hedged retries"`}, []string{"IL-0001", "IL-0006"}, false},
		{"a phrase in the wrong order matches nothing", incidentlib.Query{Text: `"retries hedged"`}, nil, false},
		{"stemming: retry finds retries; the title match ranks first", incidentlib.Query{Text: "retry"}, []string{"IL-0001", "IL-0003", "IL-0006"}, false},
		{"title outranks body", incidentlib.Query{Text: "database"}, []string{"IL-0004", "IL-0001", "IL-0002"}, false},
		{"company is searched", incidentlib.Query{Text: "safie"}, []string{"IL-0002"}, false},
		{"lessons are searched", incidentlib.Query{Text: "credentials automation"}, []string{"IL-0004"}, false},
		{"only stop words match nothing", incidentlib.Query{Text: "the and of"}, nil, false},
		{"syntax characters of other languages are plain text", incidentlib.Query{Text: `+proxy (writer:*)`}, []string{"IL-0002"}, false},
		{"unbalanced quote is ignored", incidentlib.Query{Text: `"kafka consumers`}, []string{"IL-0006"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.SearchCases(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(res)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if res.Total != len(tt.want) || res.Fuzzy || res.Partial != tt.partial {
				t.Errorf("total %d fuzzy %v partial %v, want %d false %v", res.Total, res.Fuzzy, res.Partial, len(tt.want), tt.partial)
			}
		})
	}
}

func TestSearchFuzzyFallbackAndSnippets(t *testing.T) {
	e := open(t, fixture())
	res, err := e.SearchCases(context.Background(), incidentlib.Query{Text: "authorisation"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Fuzzy || len(res.Hits) != 1 || res.Hits[0].Case.ID != "IL-0001" {
		t.Fatalf("typo: fuzzy %v hits %v, want the fuzzy retry to find IL-0001", res.Fuzzy, ids(res))
	}
	res, err = e.SearchCases(context.Background(), incidentlib.Query{Text: "hedged retries"})
	if err != nil {
		t.Fatal(err)
	}
	sn := res.Hits[0].Snippets
	if len(sn) == 0 || sn[0].Field != "summary" {
		t.Fatalf("snippets %+v, want one from the summary first", sn)
	}
	var marked []string
	for _, p := range sn[0].Parts {
		if p.Match {
			marked = append(marked, p.Text)
		}
	}
	if diff := cmp.Diff([]string{"hedged", "retries"}, marked); diff != "" {
		t.Errorf("marked words (-want +got):\n%s", diff)
	}
}

func TestFiltersAndExactFacetCounts(t *testing.T) {
	e := open(t, fixture())
	tests := []struct {
		name   string
		f      incidentlib.Filters
		want   []string
		counts map[string]int // "facet/slug" → count, checked exactly
	}{
		{"root cause", incidentlib.Filters{RootCauses: []string{"config-change"}}, []string{"IL-0001", "IL-0002", "IL-0003"},
			map[string]int{"root_cause/config-change": 3, "component/application-database": 2, "component/in-memory-cache": 1, "contributing_factor/retry-amplification": 2}},
		{"a group matches its members", incidentlib.Filters{Components: []string{"database"}}, []string{"IL-0001", "IL-0002", "IL-0004"},
			map[string]int{"root_cause/config-change": 2, "root_cause/operator-error": 1, "component/connection-pool": 1}},
		{"OR within a facet", incidentlib.Filters{RootCauses: []string{"software-bug", "deployment-error"}}, []string{"IL-0005", "IL-0006"},
			map[string]int{"root_cause/software-bug": 1, "root_cause/deployment-error": 1}},
		{"AND across facets", incidentlib.Filters{RootCauses: []string{"config-change"}, ContributingFactors: []string{"retry-amplification"}}, []string{"IL-0001", "IL-0003"},
			map[string]int{"symptom/high-error-rate": 1, "symptom/full-outage": 1}},
		{"year range", incidentlib.Filters{YearFrom: 2017, YearTo: 2022}, []string{"IL-0006", "IL-0004", "IL-0003"}, nil},
		{"company, any case", incidentlib.Filters{Companies: []string{"digitalocean"}}, []string{"IL-0001", "IL-0004"}, nil},
		{"severity", incidentlib.Filters{Severities: []string{"critical", "major"}}, []string{"IL-0001", "IL-0003"}, nil},
		{"nothing passes", incidentlib.Filters{RootCauses: []string{"attack"}}, nil, map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.SearchCases(context.Background(), incidentlib.Query{Filters: tt.f})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(res)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			got := map[string]int{}
			total := 0
			for f, fcs := range res.Facets {
				for _, fc := range fcs {
					got[string(f)+"/"+fc.Term.Slug] = fc.Count
					total += fc.Count
				}
			}
			for k, n := range tt.counts {
				if got[k] != n {
					t.Errorf("count %s = %d, want %d", k, got[k], n)
				}
			}
			if tt.counts != nil && len(tt.counts) == 0 && total != 0 {
				t.Errorf("counts %v, want none", got)
			}
		})
	}
}

func TestSortingAndPaging(t *testing.T) {
	e := open(t, fixture())
	get := func(q incidentlib.Query) *incidentlib.SearchResult {
		t.Helper()
		res, err := e.SearchCases(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if diff := cmp.Diff([]string{"IL-0003", "IL-0004", "IL-0006", "IL-0005", "IL-0002", "IL-0001"}, ids(get(incidentlib.Query{Sort: incidentlib.SortOldest}))); diff != "" {
		t.Errorf("oldest (-want +got):\n%s", diff)
	}
	// Longest time to resolve: 6h13m, 4h56m, 1h50m, 30m; unknown last, newest first among them.
	if diff := cmp.Diff([]string{"IL-0001", "IL-0004", "IL-0003", "IL-0006", "IL-0002", "IL-0005"}, ids(get(incidentlib.Query{Sort: incidentlib.SortLongest}))); diff != "" {
		t.Errorf("longest (-want +got):\n%s", diff)
	}
	p2 := get(incidentlib.Query{Page: 2, PerPage: 4})
	if p2.From != 5 || p2.To != 6 || p2.Total != 6 || len(p2.Hits) != 2 {
		t.Errorf("page 2 of 4: from %d to %d of %d (%d hits), want 5 to 6 of 6", p2.From, p2.To, p2.Total, len(p2.Hits))
	}
	past := get(incidentlib.Query{Page: 9, PerPage: 4})
	if past.From != 0 || past.To != 0 || past.Total != 6 || len(past.Hits) != 0 {
		t.Errorf("page past the end: from %d to %d of %d, want an empty page of 6", past.From, past.To, past.Total)
	}
}

func TestBadInputIsAClearError(t *testing.T) {
	e := open(t, fixture())
	tests := []struct {
		name      string
		q         incidentlib.Query
		code      string
		param     string
		mentioned string
	}{
		{"10 KB query", incidentlib.Query{Text: strings.Repeat("a", 10<<10)}, incidentlib.ETOOLARGE, "q", "at most 1000"},
		{"too many exclusions", incidentlib.Query{Text: strings.Repeat("-word ", 40)}, incidentlib.EINVALID, "q", "more than 16"},
		{"bad UTF-8", incidentlib.Query{Text: "caf\xe9"}, incidentlib.EINVALID, "q", "UTF-8"},
		{"unknown root cause", incidentlib.Query{Filters: incidentlib.Filters{RootCauses: []string{"gremlins"}}}, incidentlib.EINVALID, "root_cause", "config-change"},
		{"unknown component", incidentlib.Query{Filters: incidentlib.Filters{Components: []string{"mainframe"}}}, incidentlib.EINVALID, "component", "application-database"},
		{"unknown severity", incidentlib.Query{Filters: incidentlib.Filters{Severities: []string{"sev1"}}}, incidentlib.EINVALID, "severity", "critical"},
		{"reversed years", incidentlib.Query{Filters: incidentlib.Filters{YearFrom: 2020, YearTo: 2010}}, incidentlib.EINVALID, "year_from", "after"},
		{"negative page", incidentlib.Query{Page: -1}, incidentlib.EINVALID, "page", "1 or more"},
		{"huge page", incidentlib.Query{Page: 1 << 40}, incidentlib.EINVALID, "page", "at most"},
		{"negative per_page", incidentlib.Query{PerPage: -5}, incidentlib.EINVALID, "per_page", "between 1 and 100"},
		{"huge per_page", incidentlib.Query{PerPage: 1 << 30}, incidentlib.EINVALID, "per_page", "between 1 and 100"},
		{"unknown sort", incidentlib.Query{Sort: "random"}, incidentlib.EINVALID, "sort", "relevance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.SearchCases(context.Background(), tt.q)
			var de *incidentlib.Error
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want an *incidentlib.Error", err)
			}
			if de.Code != tt.code || de.Param != tt.param || !strings.Contains(de.Message, tt.mentioned) {
				t.Errorf("err = %+v, want code %s param %s mentioning %q", de, tt.code, tt.param, tt.mentioned)
			}
		})
	}
	if _, err := e.FindCaseByID(context.Background(), "IL-9999"); incidentlib.ErrorCode(err) != incidentlib.ENOTFOUND {
		t.Errorf("unknown id: %v, want not found", err)
	}
	if _, err := e.FindCaseByID(context.Background(), "<script>"); incidentlib.ErrorCode(err) != incidentlib.EINVALID {
		t.Errorf("malformed id: %v, want invalid", err)
	}
	if _, err := e.SimilarCases(context.Background(), "IL-0001", 500); incidentlib.ErrorParam(err) != "limit" {
		t.Errorf("huge limit: %v, want an error naming limit", err)
	}
	if _, err := e.FindTopic(context.Background(), incidentlib.FacetRootCause, "gremlins", incidentlib.Query{}); incidentlib.ErrorCode(err) != incidentlib.ENOTFOUND {
		t.Errorf("unknown topic: %v, want not found", err)
	}
}

func TestSimilarCasesWithReasons(t *testing.T) {
	e := open(t, fixture())
	rel, err := e.SimilarCases(context.Background(), "IL-0001", 3)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ ID, Reason string }
	var got []row
	for _, r := range rel {
		got = append(got, row{r.Case.ID, r.Reason()})
	}
	want := []row{
		{"IL-0003", "same root cause · shared Retry amplification"},
		{"IL-0002", "same root cause · shared Database"},
		{"IL-0004", "shared Database"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("similar to IL-0001 (-want +got):\n%s", diff)
	}
	again, _ := e.SimilarCases(context.Background(), "IL-0001", 3)
	for i := range again {
		if again[i].Case.ID != rel[i].Case.ID {
			t.Fatal("similar cases are not deterministic")
		}
	}
}

func TestTopicListsCasesAndComponents(t *testing.T) {
	e := open(t, fixture())
	top, err := e.FindTopic(context.Background(), incidentlib.FacetContributingFactor, "retry-amplification", incidentlib.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if top.Term.Name != "Retry amplification" || top.Results.Total != 2 {
		t.Fatalf("topic %q with %d cases, want Retry amplification with 2", top.Term.Name, top.Results.Total)
	}
	var comps []string
	for _, c := range top.Components {
		comps = append(comps, c.Term.Name)
	}
	if diff := cmp.Diff([]string{"Application database", "Authentication and authorization", "In-memory cache"}, comps); diff != "" {
		t.Errorf("components involved (-want +got):\n%s", diff)
	}
	grp, err := e.FindTopic(context.Background(), incidentlib.FacetComponent, "database", incidentlib.Query{})
	if err != nil || grp.Results.Total != 3 || grp.Group == nil {
		t.Fatalf("group topic: %v, %+v", err, grp)
	}
	within, err := e.FindTopic(context.Background(), incidentlib.FacetRootCause, "config-change",
		incidentlib.Query{Filters: incidentlib.Filters{RootCauses: []string{"software-bug"}}})
	if err != nil || within.Results.Total != 0 {
		t.Fatalf("topic with a second value of its own facet must intersect: %v, %d cases", err, within.Results.Total)
	}
}

func TestIndexReusedOnlyForTheSameCorpus(t *testing.T) {
	dir := t.TempDir()
	v := vocab(t)
	ctx := context.Background()
	openIn := func(cases []*incidentlib.Case) *engine.Engine {
		e, err := engine.Open(ctx, v, cases, engine.Options{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e1 := openIn(fixture())
	if e1.IndexReused() {
		t.Fatal("first open reused an index")
	}
	e1.Close()
	e2 := openIn(fixture())
	if !e2.IndexReused() {
		t.Fatal("second open on the same corpus rebuilt the index")
	}
	res, err := e2.SearchCases(ctx, incidentlib.Query{Text: "kafka"})
	if err != nil || res.Total != 1 {
		t.Fatalf("search on a reused index: %v, %d hits", err, res.Total)
	}
	e2.Close()
	changed := fixture()
	changed[0].Summary += " Edited."
	e3 := openIn(changed)
	defer e3.Close()
	if e3.IndexReused() {
		t.Fatal("a changed corpus reused the old index")
	}
}

func TestStats(t *testing.T) {
	e := open(t, fixture())
	st, err := e.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Cases != 6 {
		t.Fatalf("cases %d", st.Cases)
	}
	known := map[string]int{}
	for _, k := range st.Known {
		known[k.Field] = k.Known
	}
	if known["time_to_resolve"] != 4 || known["lessons"] != 1 || known["started (exact time)"] != 4 {
		t.Errorf("known = %v", known)
	}
	for _, fc := range st.Terms[incidentlib.FacetRootCause] {
		if fc.Term.Slug == "config-change" && fc.Count != 3 {
			t.Errorf("config-change counted %d", fc.Count)
		}
	}
}

func TestShippedCorpusNeighboursOfIL0561(t *testing.T) {
	c, ps, err := corpus.Load(corpus.Options{Now: time.Now()})
	if err != nil || len(ps) > 0 {
		t.Fatalf("shipped corpus does not load cleanly: %v %v", err, ps)
	}
	e := open(t, c.Cases)
	rel, err := e.SimilarCases(context.Background(), "IL-0561", 10)
	if err != nil {
		t.Fatal(err)
	}
	// Like the seed page: the neighbours share the root cause, a
	// contributing factor or the Database group, and say so.
	for _, r := range rel {
		reason := r.Reason()
		if !strings.Contains(reason, "same root cause") && !strings.Contains(reason, "shared Database") && !strings.Contains(reason, "Retry amplification") && !strings.Contains(reason, "No load shedding") {
			t.Errorf("%s: reason %q shares neither root cause, Database nor a factor", r.Case.ID, reason)
		}
	}
}

func TestSnippetKeepsSpacesAroundMatches(t *testing.T) {
	e := open(t, fixture())
	res, err := e.SearchCases(context.Background(), incidentlib.Query{Text: "retries"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		for _, sn := range h.Snippets {
			var b strings.Builder
			for _, p := range sn.Parts {
				b.WriteString(p.Text)
			}
			joined := b.String()
			if strings.Contains(joined, "retriesthat") || strings.Contains(joined, "hedgedretries") || strings.Contains(joined, "Retriesfrom") {
				t.Errorf("%s %s: words run together: %q", h.Case.ID, sn.Field, joined)
			}
		}
	}
}

// TestSeedListingOnlyCasesComeLast: a case that rests on a listing alone is
// shown after every case with a public source in the default order, even
// when it is the newest.
func TestSeedListingOnlyCasesComeLast(t *testing.T) {
	cases := fixture()
	// IL-0001 is the newest case of the fixture; make it rest on a listing.
	cases[0].Sources = []incidentlib.Source{{Type: "seed-listing"}}
	for _, c := range cases[1:] {
		c.Sources = []incidentlib.Source{{URL: "https://example.com/" + c.ID, Type: "official-blog"}}
	}
	e := open(t, cases)
	all, err := e.Cases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := all[len(all)-1].ID; got != "IL-0001" {
		t.Errorf("last case in the default order is %s, want the listing-only IL-0001", got)
	}
	res, err := e.SearchCases(context.Background(), incidentlib.Query{PerPage: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := ids(res)
	if got[len(got)-1] != "IL-0001" || got[0] == "IL-0001" {
		t.Errorf("default search order %v: want the listing-only IL-0001 last", got)
	}
}
