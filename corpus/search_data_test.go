package corpus

import (
	"strings"
	"testing"

	"github.com/incidentlib/incidentlib/vocabulary"
)

func TestShippedSearchDataIsValid(t *testing.T) {
	v, ps := LoadShippedVocabulary()
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if len(v.Synonyms()) < 20 {
		t.Errorf("%d synonym sets", len(v.Synonyms()))
	}
	for _, s := range v.Synonyms() {
		if s.Why == "" {
			t.Errorf("%v has no reason", s.Expressions)
		}
	}
}

// TestSearchDataProblems checks each rule of the aliases and synonyms files
// with a file that breaks it.
func TestSearchDataProblems(t *testing.T) {
	base, ps := LoadVocabulary(vocabulary.FileName, vocabulary.YAML)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	shipped := string(vocabulary.AliasesYAML)
	aliasCases := []struct {
		name, data, want string
	}{
		{"unknown slug", shipped + "\n", ""},
		{"missing term", strings.Replace(shipped, "  attack: [", "  # attack: [", 1), `"attack" has no aliases`},
		{"not a slug", strings.Replace(shipped, "  attack: [", "  attack-x: []\n  attack: [", 1), `"attack-x" is not a root_cause slug`},
		{"upper case", strings.Replace(shipped, "[ddos,", "[DDoS,", 1), "must be lower-case"},
		{"repeats the name", strings.Replace(shipped, "[ddos,", "[attack, ddos,", 1), "repeats the term's name"},
		{"two terms", strings.Replace(shipped, "[ddos,", "[bad config, ddos,", 1), `already an alias of "config-change"`},
		{"unknown facet", shipped + "colours: {}\n", "colours"},
	}
	for _, tc := range aliasCases {
		_, ps := LoadAliases("aliases.yaml", []byte(tc.data), base)
		got := ps.Error()
		if tc.want == "" {
			if len(ps) > 0 {
				t.Errorf("%s: unexpected problems %v", tc.name, ps)
			}
			continue
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems %q lack %q", tc.name, got, tc.want)
		}
	}
	synCases := []struct {
		name, data, want string
	}{
		{"one expression", "synonyms:\n  - expressions: [k8s]\n    why: x\n", "two or more"},
		{"no why", "synonyms:\n  - expressions: [k8s, kubernetes]\n", "why is missing"},
		{"in two sets", "synonyms:\n  - expressions: [db, database]\n    why: x\n  - expressions: [db, datastore]\n    why: y\n", `"db" is already in set 0`},
		{"sentence", "synonyms:\n  - expressions: [a b c d e f, x]\n    why: x\n", "more than 5 words"},
		{"empty", "synonyms: []\n", "empty or missing"},
	}
	for _, tc := range synCases {
		_, ps := LoadSynonyms("synonyms.yaml", []byte(tc.data))
		if !strings.Contains(ps.Error(), tc.want) {
			t.Errorf("%s: problems %q lack %q", tc.name, ps.Error(), tc.want)
		}
	}
}
