package incidentlib_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/engine/enginetest"
)

func citeVocabulary() *incidentlib.Vocabulary {
	return incidentlib.NewVocabulary(map[incidentlib.Facet][]incidentlib.Term{
		incidentlib.FacetRootCause: {{Facet: incidentlib.FacetRootCause, Slug: "config-change", Name: "Configuration change"}},
		incidentlib.FacetComponent: {
			{Facet: incidentlib.FacetComponent, Slug: "service-mesh", Name: "Service mesh", Group: "network"},
			{Facet: incidentlib.FacetComponent, Slug: "load-balancer", Name: "Load balancer", Group: "network"},
			{Facet: incidentlib.FacetComponent, Slug: "application-database", Name: "Application database", Group: "database"},
		},
		incidentlib.FacetSymptom: {{Facet: incidentlib.FacetSymptom, Slug: "restart-loop", Name: "Restart loop"}},
		incidentlib.FacetContributingFactor: {
			{Facet: incidentlib.FacetContributingFactor, Slug: "retry-amplification", Name: "Retry amplification"},
			{Facet: incidentlib.FacetContributingFactor, Slug: "deep-health-check", Name: "Deep health check"},
		},
	}, []incidentlib.Group{{Slug: "network", Name: "Network"}, {Slug: "database", Name: "Database"}},
		[]incidentlib.Term{{Slug: "major", Name: "Major"}}, []incidentlib.Term{{Slug: "news", Name: "News"}})
}

// citeCase builds a case started in the given year and month.
func citeCase(n, year, month int, rc string, comps, syms, cfs []string) *incidentlib.Case {
	started, err := incidentlib.ParseTimestamp(fmt.Sprintf("%04d-%02d", year, month))
	if err != nil {
		panic(err)
	}
	return &incidentlib.Case{
		ID: fmt.Sprintf("IL-%04d", n), Title: fmt.Sprintf("Case %d", n), Company: "Example",
		Timeline: incidentlib.Timeline{Started: started}, Summary: "s", RootCause: rc,
		Components: comps, SymptomTerms: syms, ContributingFactors: cfs,
		Sources:      []incidentlib.Source{{Type: "news"}, {URL: fmt.Sprintf("https://news.example/%d", n), Type: "news"}},
		Verification: incidentlib.Verification{Status: incidentlib.VerificationUnchecked},
	}
}

func openCiteLibrary(t *testing.T, cases []*incidentlib.Case) incidentlib.Library {
	t.Helper()
	e, err := engine.Open(context.Background(), citeVocabulary(), cases, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func ids(cs []incidentlib.CitedCase) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Case.ID)
	}
	return out
}

// TestCitingCases: a check cites the cases chosen for it, in their order
// and with their lines, then the library's cases that name it in
// kubegap_checks, newest first; vocabulary terms pick nothing.
func TestCitingCases(t *testing.T) {
	named := citeCase(7, 2026, 9, "", nil, nil, nil)
	named.KubegapChecks = []string{"KG900"}
	older := citeCase(8, 2021, 2, "", nil, nil, nil)
	older.KubegapChecks = []string{"KG900", "KG901"}
	lib := openCiteLibrary(t, []*incidentlib.Case{
		citeCase(1, 2020, 1, "config-change", []string{"service-mesh"}, nil, []string{"retry-amplification"}),
		citeCase(2, 2024, 5, "", []string{"application-database"}, []string{"restart-loop"}, nil),
		citeCase(4, 2026, 8, "", nil, nil, []string{"retry-amplification", "deep-health-check"}),
		named, older,
	})
	retries := incidentlib.TermRef{Facet: incidentlib.FacetContributingFactor, Slug: "retry-amplification"}
	check := incidentlib.Check{ID: "KG900", Guards: []incidentlib.TermRef{retries},
		Cases: []incidentlib.CheckCase{{ID: "IL-0002", Why: "the second shows it"}, {ID: "IL-0001", Why: "the first shows it"}, {ID: "IL-0099", Why: "not in this library"}}}
	tests := []struct {
		name     string
		check    incidentlib.Check
		max      int
		want     []string
		complete bool
	}{
		{"chosen, then named newest first", check, 0, []string{"IL-0002", "IL-0001", "IL-0007", "IL-0008"}, true},
		{"bounded", check, 3, []string{"IL-0002", "IL-0001", "IL-0007"}, false},
		{"a guard alone cites nothing", incidentlib.Check{ID: "KG902", Guards: []incidentlib.TermRef{retries}}, 0, nil, true},
		{"named only", incidentlib.Check{ID: "KG901"}, 0, []string{"IL-0008"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, complete, err := incidentlib.CitingCases(context.Background(), lib, tt.check, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
				t.Errorf("cited (-want +got):\n%s", diff)
			}
			if complete != tt.complete {
				t.Errorf("complete = %v, want %v", complete, tt.complete)
			}
		})
	}

	cits, err := incidentlib.CitedCases(context.Background(), lib, check, 1, "https://lib.example/")
	if err != nil {
		t.Fatal(err)
	}
	want := []incidentlib.Citation{{
		CaseID: "IL-0002", Title: "Case 2", URL: "https://lib.example/cases/IL-0002", Source: "https://news.example/2", Reason: "the second shows it",
	}}
	if diff := cmp.Diff(want, cits); diff != "" {
		t.Errorf("CitedCases (-want +got):\n%s", diff)
	}
	cits, err = incidentlib.CitedCases(context.Background(), lib, incidentlib.Check{ID: "KG901"}, 0, "")
	if err != nil || len(cits) != 1 || cits[0].Reason != incidentlib.TeamCaseWhy("KG901") {
		t.Errorf("a case naming the check: %+v, %v", cits, err)
	}
}

func TestChecksForCaseAndTerm(t *testing.T) {
	v := citeVocabulary()
	mesh := incidentlib.Check{ID: "KG001", Guards: []incidentlib.TermRef{{Facet: incidentlib.FacetComponent, Slug: "service-mesh"}}}
	network := incidentlib.Check{ID: "KG002", Guards: []incidentlib.TermRef{{Facet: incidentlib.FacetComponent, Slug: "network"}}}
	loop := incidentlib.Check{ID: "KG003", Guards: []incidentlib.TermRef{{Facet: incidentlib.FacetSymptom, Slug: "restart-loop"}},
		Cases: []incidentlib.CheckCase{{ID: "IL-0001", Why: "it shows the gap"}}}
	checks := []incidentlib.Check{mesh, network, loop}
	namesKG002 := citeCase(3, 2020, 1, "", nil, nil, nil)
	namesKG002.KubegapChecks = []string{"KG002"}
	checkIDs := func(cs []incidentlib.Check) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		got  []incidentlib.Check
		want []string
	}{
		{"case a check chose", incidentlib.ChecksForCase(checks, v, citeCase(1, 2020, 1, "", []string{"service-mesh"}, nil, nil)), []string{"KG003"}},
		{"case naming a check", incidentlib.ChecksForCase(checks, v, namesKG002), []string{"KG002"}},
		{"case with a guarded term only", incidentlib.ChecksForCase(checks, v, citeCase(2, 2020, 1, "", []string{"load-balancer"}, []string{"restart-loop"}, nil)), nil},
		{"term service-mesh", incidentlib.ChecksForTerm(checks, v, incidentlib.FacetComponent, "service-mesh"), []string{"KG001", "KG002"}},
		{"group network", incidentlib.ChecksForTerm(checks, v, incidentlib.FacetComponent, "network"), []string{"KG001", "KG002"}},
		{"term restart-loop", incidentlib.ChecksForTerm(checks, v, incidentlib.FacetSymptom, "restart-loop"), []string{"KG003"}},
		{"same slug, other facet", incidentlib.ChecksForTerm(checks, v, incidentlib.FacetContributingFactor, "restart-loop"), nil},
	} {
		if diff := cmp.Diff(tt.want, checkIDs(tt.got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}

	if c, err := incidentlib.FindCheck(checks, "kg003"); err != nil || c.ID != "KG003" {
		t.Errorf("FindCheck(kg003) = %v, %v", c.ID, err)
	}
	_, err := incidentlib.FindCheck(checks, "KG999")
	if incidentlib.ErrorCode(err) != incidentlib.ENOTFOUND || incidentlib.ErrorMessage(err) != `id: there is no kubegap check "KG999"; the checks are KG001 to KG003` {
		t.Errorf("FindCheck(KG999): %v", err)
	}
	if got := incidentlib.CitationReason(v, []incidentlib.TermRef{{Facet: incidentlib.FacetComponent, Slug: "network"}, {Facet: incidentlib.FacetSymptom, Slug: "restart-loop"}, {Facet: incidentlib.FacetRootCause, Slug: "config-change"}}); got != "tagged Network, Restart loop and Configuration change" {
		t.Errorf("CitationReason = %q", got)
	}
}

// BenchmarkCitingCases measures one check's citations over the shipped
// corpus: the work of a check page or of getCheck, a check with two chosen
// cases (looked up by ID) and a scan for cases naming it.
func BenchmarkCitingCases(b *testing.B) {
	lib := enginetest.Shipped(b)
	check := incidentlib.Check{ID: "KG900", Guards: []incidentlib.TermRef{
		{Facet: incidentlib.FacetContributingFactor, Slug: "retry-amplification"},
		{Facet: incidentlib.FacetContributingFactor, Slug: "health-check-dependency"},
		{Facet: incidentlib.FacetComponent, Slug: "load-balancer"},
	}, Cases: []incidentlib.CheckCase{{ID: "IL-0601", Why: "a"}, {ID: "IL-0821", Why: "b"}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := incidentlib.CitingCases(ctx, lib, check, 50); err != nil {
			b.Fatal(err)
		}
	}
}
