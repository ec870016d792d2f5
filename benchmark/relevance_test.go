package benchmark

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBaselineQueryORsTheWords(t *testing.T) {
	got := baselineQuery(`Last State: Terminated  Reason: "OOMKilled" reason`)
	want := `"last" OR "state" OR "terminated" OR "reason" OR "oomkilled"`
	if got != want {
		t.Errorf("baselineQuery = %s, want %s", got, want)
	}
	if baselineQuery(" :: ") != "" {
		t.Error("a query of punctuation must be empty")
	}
}

// The relevance command scores both engines on a judged set, per split and
// per kind, and a query a plain keyword engine answers at rank 1 scores 1
// for it.
func TestRelevanceCommandScoresBothEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("opens the shipped corpus")
	}
	set := `seed: 7
queries:
  - {q: "GitLab database deleted by an engineer", kind: question, top3: [IL-0086]}
  - {q: "leap second", kind: keyword, top3: [IL-0009, IL-0151]}
  - {q: "Reason: OOMKilled", kind: alert, top10: [IL-1100, IL-0216]}
  - {q: "no such case", kind: alert, top10: [IL-9999]}
`
	path := filepath.Join(t.TempDir(), "set.yaml")
	if err := os.WriteFile(path, []byte(set), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := RelevanceMain(context.Background(), []string{"--set", path}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	text := out.String()
	for _, want := range []string{
		"2 queries held out (1/2), 2 tuning",
		"1 judged IDs are not in the corpus: IL-9999",
		"| held out | all | 2 | incidentlib |",
		"| held out | all | 2 | fts5-bm25 |",
		"| tuning | all | 2 | fts5-bm25 |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

func TestRelevanceCommandRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("seed: 1\nqueries:\n  - {q: x}\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage"},
		{[]string{"--set", filepath.Join(dir, "missing.yaml")}, 1, "no such file"},
		{[]string{"--set", bad}, 1, "needs text and at least one judged case"},
		{[]string{"--set", bad, "--held-out", "0"}, 2, "--held-out must be 1 or more"},
	} {
		var out, errOut bytes.Buffer
		if code := RelevanceMain(context.Background(), tc.args, &out, &errOut); code != tc.code || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), tc.code, tc.want)
		}
	}
}
