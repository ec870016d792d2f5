package kubegap

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
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
		if severityReasons[c.ID] == "" || !strings.HasPrefix(severityReasons[c.ID], string(c.Severity)+":") {
			t.Errorf("%s: severityReasons must say why it is %s, starting %q", c.ID, c.Severity, string(c.Severity)+":")
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

// TestCitationTable keeps citations.yaml true to the shipped corpus: every
// check is in it, every case exists, is checked or partial, lists a public
// source URL and is cited at most once per check, and every line is one
// short line. The seed-listing and unchecked cases that once led the
// citations (IL-0600, IL-0179) can never come back.
func TestCitationTable(t *testing.T) {
	table, err := parseCitationTable(citationsYAML)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := corpus.Load(corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*incidentlib.Case{}
	for _, cs := range c.Cases {
		byID[cs.ID] = cs
	}
	known := map[string]bool{}
	for _, ch := range Checks() {
		known[ch.ID] = true
		if _, ok := table[ch.ID]; !ok {
			t.Errorf("%s is not in citations.yaml: list it, with [] when no public outage shows its gap yet", ch.ID)
		}
		if len(ch.Cases) != len(table[ch.ID]) {
			t.Errorf("%s carries %d cases, the table %d", ch.ID, len(ch.Cases), len(table[ch.ID]))
		}
	}
	for id, entries := range table {
		if !known[id] {
			t.Errorf("citations.yaml lists %s, which is not a check", id)
		}
		seen := map[string]bool{}
		for _, e := range entries {
			cs := byID[e.ID]
			switch {
			case cs == nil:
				t.Errorf("%s cites %s, which is not in the shipped corpus", id, e.ID)
				continue
			case seen[e.ID]:
				t.Errorf("%s cites %s twice", id, e.ID)
			case e.ID == "IL-0600" || e.ID == "IL-0179":
				t.Errorf("%s cites %s, a case with no checked public source", id, e.ID)
			case cs.Verification.Status != incidentlib.VerificationChecked && cs.Verification.Status != incidentlib.VerificationPartial:
				t.Errorf("%s cites %s, whose verification is %q: only checked or partial cases may be cited", id, e.ID, cs.Verification.Status)
			}
			seen[e.ID] = true
			public := false
			for _, src := range cs.Sources {
				public = public || strings.HasPrefix(src.URL, "https://") || strings.HasPrefix(src.URL, "http://")
			}
			if !public {
				t.Errorf("%s cites %s, which lists no public source URL", id, e.ID)
			}
			if e.Why == "" || len(e.Why) > 200 || strings.Contains(e.Why, "\n") {
				t.Errorf("%s on %s: the why must be one line of at most 200 characters, got %d: %q", id, e.ID, len(e.Why), e.Why)
			}
		}
	}
}

// TestCitationTableRejectsBadCases shows the table test can fail: the
// rules it applies catch an unchecked case and a case that does not exist.
func TestCitationTableCanFail(t *testing.T) {
	if _, err := parseCitationTable([]byte("KG001:\n  - {case: IL-0601, why: x, extra: y}\n")); err == nil {
		t.Error("an unknown field in citations.yaml was accepted")
	}
	c, _, err := corpus.Load(corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range c.Cases {
		if cs.ID == "IL-0600" && cs.Verification.Status == incidentlib.VerificationChecked {
			t.Error("IL-0600 is now checked: update TestCitationTable's explicit ban")
		}
	}
}

// TestTableCiter resolves the chosen cases from the compiled-in corpus as
// kubegap audit does, without an index: titles and sources are the
// corpus's, the why is the table's, --no-builtin leaves them out, and a
// team's case that names the check is cited after them.
func TestTableCiter(t *testing.T) {
	c, _, err := corpus.Load(corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*incidentlib.Case{}
	for _, cs := range c.Cases {
		byID[cs.ID] = cs
	}
	started, err := incidentlib.ParseTimestamp("2026-11-20")
	if err != nil {
		t.Fatal(err)
	}
	own := &incidentlib.Case{ID: "IL-9001", Title: "Our consumer hung", Timeline: incidentlib.Timeline{Started: started}, KubegapChecks: []string{"KG027"}}
	citer := TableCiter(TableOptions{BaseURL: "https://lib.example/", Team: []*incidentlib.Case{own}})
	for _, ch := range Checks() {
		cites := citer.Cite(context.Background(), ch)
		want := min(len(ch.Cases), 5)
		if ch.ID == "KG027" {
			want = min(len(ch.Cases)+1, 5)
		}
		if len(cites) != want {
			t.Errorf("%s: %d citations, want %d", ch.ID, len(cites), want)
			continue
		}
		for i, ct := range cites {
			if i < len(ch.Cases) {
				cs := byID[ct.CaseID]
				if cs == nil || ct.CaseID != ch.Cases[i].ID || ct.Title != cs.Title || ct.Reason != ch.Cases[i].Why || ct.Source != cs.Sources[0].URL {
					t.Errorf("%s citation %d = %+v, want %s as the corpus has it, with the table's why", ch.ID, i, ct, ch.Cases[i].ID)
				}
				if ct.URL != "https://lib.example/cases/"+ct.CaseID {
					t.Errorf("%s: URL %q", ch.ID, ct.URL)
				}
			}
		}
	}
	kg027, _ := incidentlib.FindCheck(Checks(), "KG027")
	cites := TableCiter(TableOptions{NoBuiltin: true, Team: []*incidentlib.Case{own}}).Cite(context.Background(), kg027)
	if len(cites) != 1 || cites[0].CaseID != "IL-9001" || cites[0].Reason != incidentlib.TeamCaseWhy("KG027") {
		t.Errorf("--no-builtin citations %+v, want only the team's IL-9001", cites)
	}
	if got := UnknownChecks([]*incidentlib.Case{{ID: "IL-9002", KubegapChecks: []string{"KG999"}}}); len(got) != 1 || !strings.Contains(got[0], "KG999") {
		t.Errorf("UnknownChecks = %v, want KG999 reported", got)
	}
}

// TestLibraryCiterCitesChosenAndTeamCases shows the library's citing
// (web pages, API, MCP) gives the same chosen cases, and a team's case
// naming the check in kubegap_checks after them.
func TestLibraryCiterCitesChosenAndTeamCases(t *testing.T) {
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
		Timeline: incidentlib.Timeline{Started: started}, Summary: "Liveness probes checked the session store.", KubegapChecks: []string{check.ID}}
	eng, err := engine.Open(context.Background(), c.Vocabulary, append(c.Cases, own), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	cites := LibraryCiter(eng, "https://lib.example", 5).Cite(context.Background(), check)
	var ids []string
	for _, ct := range cites {
		ids = append(ids, ct.CaseID)
	}
	want := []string{}
	for _, cc := range check.Cases {
		want = append(want, cc.ID)
	}
	want = append(want, "IL-9001")
	if !slices.Equal(ids, want) {
		t.Fatalf("citations %v, want %v", ids, want)
	}
	if last := cites[len(cites)-1]; last.URL != "https://lib.example/cases/IL-9001" {
		t.Errorf("team case URL %q", last.URL)
	}
}
