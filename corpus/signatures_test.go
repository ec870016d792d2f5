package corpus

import (
	"strings"
	"testing"

	"github.com/incidentlib/incidentlib/vocabulary"
)

func TestShippedSignaturesAreValid(t *testing.T) {
	v, ps := LoadShippedVocabulary()
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	sigs := v.Signatures()
	if len(sigs.Signatures) < 20 {
		t.Errorf("%d signatures; the catalogue covers at least 20", len(sigs.Signatures))
	}
	// The families the catalogue promises (docs/search.md).
	for _, name := range []string{"OOMKilled", "CrashLoopBackOff", "ImagePullBackOff", "FailedScheduling", "Evicted",
		"too many open files", "no space left on device", "connection reset by peer", "context deadline exceeded",
		"DNS lookup failure", "certificate expired", "unknown certificate authority", "too many connections",
		"deadlock detected", "could not serialize access", "replication lag", "upstream connect error",
		"502 Bad Gateway", "503 Service Unavailable", "504 Gateway Timeout", "throttled", "429 Too Many Requests"} {
		found := false
		for _, s := range sigs.Signatures {
			if s.Name == name {
				found = true
			}
		}
		if !found {
			t.Errorf("no signature %q", name)
		}
	}
	if len(sigs.Boilerplate) == 0 {
		t.Error("no boilerplate field names")
	}
}

// TestSignatureProblems checks each rule of the signatures file with a file
// that breaks it.
func TestSignatureProblems(t *testing.T) {
	base, ps := LoadVocabulary(vocabulary.FileName, vocabulary.YAML)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	shipped := string(vocabulary.SignaturesYAML)
	ok := "signatures:\n  - name: X\n    means: y\n    match: [xx]\n    search: [y]\n    why: z\n"
	cases := []struct {
		name, data, want string
	}{
		{"shipped", shipped, ""},
		{"minimal", ok, ""},
		{"no name", strings.Replace(ok, "name: X", "name: ''", 1), "name is missing"},
		{"no means", strings.Replace(ok, "    means: y\n", "", 1), "means is missing"},
		{"no why", strings.Replace(ok, "    why: z\n", "", 1), "why is missing"},
		{"nothing to match", strings.Replace(ok, "    match: [xx]\n", "", 1), "must recognise something"},
		{"upper-case literal", strings.Replace(ok, "[xx]", "[XX]", 1), "must be lower-case"},
		{"bad pattern", strings.Replace(ok, "match: [xx]", "patterns: ['a(b']", 1), "not a valid regular expression"},
		{"no search", strings.Replace(ok, "    search: [y]\n", "", 1), "search is missing"},
		{"bad term", strings.Replace(ok, "why: z", "terms: [components/dnss]\n    why: z", 1), `"dnss" is not a component slug`},
		{"bad facet", strings.Replace(ok, "why: z", "terms: [colours/red]\n    why: z", 1), "must be facet/slug"},
		{"literal twice", ok + "  - name: W\n    means: y\n    match: ['x-x', xx]\n    search: [y]\n    why: z\n", `already matched by "X"`},
		{"same name", ok + "  - name: x\n    means: y\n    match: [ww]\n    search: [y]\n    why: z\n", "another signature has this name"},
		{"unknown key", ok + "    colour: red\n", "colour"},
		{"boilerplate twice", "boilerplate: [reason, reason]\n" + ok, `"reason" is listed twice`},
		{"empty", "signatures: []\n", "the list is empty"},
	}
	for _, tc := range cases {
		_, ps := LoadSignatures("signatures.yaml", []byte(tc.data), base)
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
}
