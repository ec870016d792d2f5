package kubegap

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/engine/enginetest"
)

func TestCatalogue(t *testing.T) {
	checks := Checks()
	seen := map[string]bool{}
	for i, c := range checks {
		if want := fmt.Sprintf("KG%03d", i+1); c.ID != want {
			t.Errorf("check %d has ID %s, want %s (IDs are sorted and contiguous)", i, c.ID, want)
		}
		if seen[c.ID] {
			t.Errorf("%s twice", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Rule == "" || c.Why == "" || c.Fix == "" || c.FixYAML == "" || len(c.Guards) == 0 {
			t.Errorf("%s: every check needs a title, rule, why, fix, fix YAML and guards", c.ID)
		}
		if c.Severity.Rank() == 0 {
			t.Errorf("%s: severity %q", c.ID, c.Severity)
		}
		var v any
		if err := yaml.Unmarshal([]byte(c.FixYAML), &v); err != nil {
			t.Errorf("%s: fix YAML does not parse: %v", c.ID, err)
		}
	}
}

// TestEveryCheckCitesShippedCases resolves every check's guards against the
// shipped corpus, as kubegap audit does: each check must cite a real case,
// the retry checks DigitalOcean's retry amplification (IL-0561) and the
// probe checks the health-check restart loops of IL-0600 and IL-0601.
func TestEveryCheckCitesShippedCases(t *testing.T) {
	eng := enginetest.Shipped(t)
	v := eng.Vocabulary()
	// Every case a check cites, not just the newest few that a report
	// shows, so that new cases in the corpus do not push these out.
	citer := LibraryCiter(eng, "", incidentlib.MaxCitations)
	must := map[string][]string{
		"KG003": {"IL-0561"}, "KG004": {"IL-0561"}, "KG005": {"IL-0561"}, "KG006": {"IL-0561"}, "KG007": {"IL-0561"},
		"KG001": {"IL-0600", "IL-0601"}, "KG002": {"IL-0600", "IL-0601"}, "KG023": {"IL-0600", "IL-0601"}, "KG024": {"IL-0600", "IL-0601"},
	}
	for _, c := range Checks() {
		for _, g := range c.Guards {
			if _, ok := v.Term(g.Facet, g.Slug); !ok {
				t.Errorf("%s guards %s %q, which is not in the vocabulary", c.ID, g.Facet, g.Slug)
			}
		}
		cites := citer.Cite(context.Background(), c)
		if len(cites) == 0 {
			t.Errorf("%s cites no case in the shipped corpus", c.ID)
			continue
		}
		var ids []string
		for _, ct := range cites {
			ids = append(ids, ct.CaseID)
			if len(ct.Terms) == 0 {
				t.Errorf("%s cites %s, which carries none of its guarded terms", c.ID, ct.CaseID)
			}
		}
		for _, id := range must[c.ID] {
			if !slices.Contains(ids, id) {
				t.Errorf("%s cites %v, want %s among them", c.ID, ids, id)
			}
		}
	}
}

// TestCitesTeamCases shows that a case outside the shipped corpus (a
// team's own, as --cases loads) is cited as soon as the library holds it:
// guards are resolved at run time.
func TestCitesTeamCases(t *testing.T) {
	c, _, err := corpus.Load(corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	started, err := incidentlib.ParseTimestamp("2026-11-20")
	if err != nil {
		t.Fatal(err)
	}
	check := Checks()[0]
	own := &incidentlib.Case{ID: "IL-9001", Title: "Our checkout pods restarted in a loop when the session store slowed", Company: "Example",
		Timeline: incidentlib.Timeline{Started: started}, Summary: "Liveness probes checked the session store.",
		ContributingFactors: []string{check.Guards[0].Slug}}
	eng, err := engine.Open(context.Background(), c.Vocabulary, append(c.Cases, own), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	cites := LibraryCiter(eng, "https://lib.example", 5).Cite(context.Background(), check)
	if len(cites) == 0 || cites[0].CaseID != "IL-9001" || cites[0].URL != "https://lib.example/cases/IL-9001" {
		t.Fatalf("citations %+v, want the team's case IL-9001 first, linked", cites)
	}
}
