package corpus_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/vocabulary"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixedNow is the "today" of every test, so future-date checks do not drift.
var fixedNow = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func TestShippedVocabularyLoads(t *testing.T) {
	v, ps := corpus.LoadVocabulary(vocabulary.FileName, vocabulary.YAML)
	if len(ps) > 0 {
		t.Fatalf("shipped vocabulary has problems:\n%v", ps)
	}
	term, ok := v.Term(incidentlib.FacetComponent, "application-database")
	if !ok || term.Name != "Application database" || term.Group != "database" {
		t.Fatalf("application-database = %+v, %v; the seed pages name it \"Application database\" in group Database", term, ok)
	}
	if g, ok := v.Group("database"); !ok || g.Name != "Database" {
		t.Fatalf("group database = %+v, %v", g, ok)
	}
	for _, f := range incidentlib.Facets {
		for _, term := range v.Terms(f) {
			if strings.Count(term.Definition, ".") < 1 {
				t.Errorf("%s %s: the definition should be a sentence", f, term.Slug)
			}
		}
	}
}

// A case's severity follows from its symptoms: the most severe level any of
// them gives; none without symptoms.
func TestSeverityFollowsSymptoms(t *testing.T) {
	v, ps := corpus.LoadVocabulary(vocabulary.FileName, vocabulary.YAML)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	for _, tt := range []struct {
		symptoms []string
		want     string
	}{
		{nil, ""},
		{[]string{"high-latency"}, "minor"},
		{[]string{"degraded-feature", "high-error-rate"}, "major"},
		{[]string{"high-latency", "partial-outage", "data-loss"}, "critical"},
		{[]string{"control-plane-unavailable"}, "major"},
	} {
		if got := v.SeverityFor(tt.symptoms); got != tt.want {
			t.Errorf("SeverityFor(%v) = %q, want %q", tt.symptoms, got, tt.want)
		}
	}
	// The rule must cover every symptom once.
	broken := strings.Replace(string(vocabulary.YAML), "symptoms: [high-latency, processing-delay, degraded-feature]", "symptoms: [high-latency, processing-delay, full-outage]", 1)
	if broken == string(vocabulary.YAML) {
		t.Fatal("the minor severity's rule line moved; update this test")
	}
	_, ps = corpus.LoadVocabulary("v.yaml", []byte(broken))
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, p.Message)
	}
	got := strings.Join(msgs, "\n")
	for _, want := range []string{"symptom full-outage is listed under both critical and minor", "symptom degraded-feature gives no severity"} {
		if !strings.Contains(got, want) {
			t.Errorf("a rule that misses or repeats a symptom: problems lack %q:\n%s", want, got)
		}
	}
}

func TestShippedCorpusValidates(t *testing.T) {
	c, ps, err := corpus.Load(corpus.Options{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Error(p)
	}
	if len(c.Cases) == 0 {
		t.Fatal("no shipped cases")
	}
}

func TestGoodFixtureHasNoProblems(t *testing.T) {
	_, ps, err := corpus.Load(corpus.Options{NoBuiltin: true, CaseDirs: []string{"testdata/good"}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) > 0 {
		t.Fatalf("unexpected problems:\n%v", ps)
	}
}

// TestBrokenFixtures pins the exact message for every kind of problem the
// validator reports. Refresh with: go test ./corpus -run BrokenFixtures -update
func TestBrokenFixtures(t *testing.T) {
	c, ps, err := corpus.Load(corpus.Options{NoBuiltin: true, CaseDirs: []string{"testdata/broken"}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, p := range ps {
		got.WriteString(p.String() + "\n")
	}
	golden := filepath.Join("testdata", "broken.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("problems differ from %s (-want +got):\n%s", golden, diff)
	}
	// Files that are cases still load, so that IDs are compared across
	// files; the duplicate is left out.
	ids := map[string]int{}
	for _, k := range c.Cases {
		ids[k.ID]++
	}
	if ids["IL-9002"] != 1 {
		t.Errorf("IL-9002 loaded %d times, want once", ids["IL-9002"])
	}
}

func TestMissingDirectoryIsAnError(t *testing.T) {
	_, _, err := corpus.Load(corpus.Options{CaseDirs: []string{"testdata/no-such-dir"}, Now: fixedNow})
	if err == nil || !strings.Contains(err.Error(), "no-such-dir") {
		t.Fatalf("err = %v, want one naming the directory", err)
	}
}

func TestCollisionWithShippedCaseNamesBothFiles(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../cases/IL-0561.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "IL-0561.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, ps, err := corpus.Load(corpus.Options{CaseDirs: []string{dir}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	ps = onlyIn(ps, dir)
	want := filepath.Join(dir, "IL-0561.yaml") + ":1: duplicate ID IL-0561: cases/IL-0561.yaml, a built-in case compiled into this binary, already has it (to check copies of the built-in cases on their own, add --no-builtin)"
	if len(ps) != 1 || ps[0].String() != want {
		t.Fatalf("problems = %v, want [%s]", ps, want)
	}
}

// onlyIn keeps the problems in files under dir, so a test about a team's
// directory does not depend on the state of the shipped corpus.
func onlyIn(ps corpus.Problems, dir string) corpus.Problems {
	var out corpus.Problems
	for _, p := range ps {
		if strings.HasPrefix(p.File, dir) {
			out = append(out, p)
		}
	}
	return out
}
