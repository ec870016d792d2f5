package corpus_test

import (
	"testing"

	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/vocabulary"
)

// FuzzParseCase feeds arbitrary bytes to the case parser. It must never
// panic, and whatever it returns must be self-consistent: a case only with
// a well-formed ID, and every problem naming the file.
func FuzzParseCase(f *testing.F) {
	v, ps := corpus.LoadVocabulary(vocabulary.FileName, vocabulary.YAML)
	if len(ps) > 0 {
		f.Fatal(ps)
	}
	f.Add([]byte("id: IL-0001\ntitle: t\n"))
	f.Add([]byte("id: IL-0001\ntimeline:\n  started: 2024-01-01\n  resolved: 2023-01-01\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("id: [\n"))
	f.Add([]byte("id: IL-0001\nsources:\n  - url: '%zz'\n    type: news\n"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ps := corpus.ParseCase(v, "IL-0001.yaml", data, fixedNow)
		if c != nil && c.ID == "" {
			t.Fatal("case returned without an ID")
		}
		for _, p := range ps {
			if p.File != "IL-0001.yaml" || p.Message == "" {
				t.Fatalf("bad problem %+v", p)
			}
		}
	})
}

// FuzzLoadVocabulary does the same for the vocabulary parser.
func FuzzLoadVocabulary(f *testing.F) {
	f.Add(vocabulary.YAML)
	f.Add([]byte("root_causes:\n  - slug: a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ps := corpus.LoadVocabulary("v.yaml", data)
		if v == nil && len(ps) == 0 {
			t.Fatal("no vocabulary and no problem")
		}
	})
}
