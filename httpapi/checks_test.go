package httpapi

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
)

func TestChecks(t *testing.T) {
	ta := newAPI(t, Config{BaseURL: "http://api.test"})
	list, _ := getJSON[CheckList](t, ta, "/api/v1/checks")
	if list.Total != 2 || len(list.Checks) != 2 || list.Checks[0].ID != "KG001" {
		t.Fatalf("list: total %d, %d checks", list.Total, len(list.Checks))
	}
	wantGuards := []TermRef{
		{Facet: "contributing_factor", Slug: "retry-amplification", Name: "Retry amplification", Links: Links{
			Self: "http://api.test/api/v1/topics/contributing_factor/retry-amplification", HTML: ptr("http://api.test/contributing-factors/retry-amplification")}},
		{Facet: "component", Slug: "cache", Name: "Cache", Links: Links{
			Self: "http://api.test/api/v1/topics/component/cache", HTML: ptr("http://api.test/components/cache")}},
	}
	if diff := cmp.Diff(wantGuards, list.Checks[0].Guards); diff != "" {
		t.Errorf("guards (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Links{Self: "http://api.test/api/v1/checks/KG001", HTML: ptr("http://api.test/checks/KG001")}, list.Checks[0].Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}

	// The citations are the cases chosen for the check, in their order,
	// each with its line.
	got, _ := getJSON[Check](t, ta, "/api/v1/checks/kg001")
	lib := shippedLibrary(t)
	want := []string{"IL-0943", "IL-0790"}
	var ids []string
	for _, cit := range got.Citations {
		ids = append(ids, cit.Case.ID)
		if cit.Reason == "" {
			t.Errorf("%s cited with no reason", cit.Case.ID)
		}
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("citations (-chosen +api):\n%s", diff)
	}
	if !got.CitationsComplete {
		t.Errorf("citations_complete false, want true")
	}
	if got.ID != "KG001" || got.FixYAML == "" || got.Why == "" {
		t.Errorf("check body: %+v", got.CheckSummary)
	}
	// The API and the domain cite the same cases.
	dom, err := incidentlib.CitedCases(context.Background(), lib, testChecks()[0], checkCitations, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range dom {
		if i < len(got.Citations) && (got.Citations[i].Case.ID != c.CaseID || got.Citations[i].Reason != c.Reason) {
			t.Errorf("citation %d: API %s %q, domain %s %q", i, got.Citations[i].Case.ID, got.Citations[i].Reason, c.CaseID, c.Reason)
		}
	}

	// No catalogue: an empty list, and 404 for any ID.
	empty := newAPI(t, Config{Checks: []incidentlib.Check{}})
	if l, _ := getJSON[CheckList](t, empty, "/api/v1/checks"); l.Total != 0 || l.Checks == nil {
		t.Errorf("empty catalogue: %+v", l)
	}
	checkProblem(t, empty.do("GET", "/api/v1/checks/KG001"), 404, "not_found", "id", "no kubegap checks")
}
