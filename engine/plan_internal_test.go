package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib/corpus"
)

func TestParseTextSyntax(t *testing.T) {
	w := func(s string) item { return item{text: s} }
	ph := func(s string) item { return item{text: s, phrase: true} }
	jn := func(s string) item { return item{text: s, phrase: true, joined: true} }
	tests := []struct {
		in      string
		clauses [][]item
		exclude []item
	}{
		{`retry storm`, [][]item{{w("retry")}, {w("storm")}}, nil},
		{`"hedged retries" slow`, [][]item{{ph("hedged retries")}, {w("slow")}}, nil},
		{`database -proxy -"read replica"`, [][]item{{w("database")}}, []item{w("proxy"), ph("read replica")}},
		{`kafka OR rabbitmq lag`, [][]item{{w("kafka"), w("rabbitmq")}, {w("lag")}}, nil},
		{`OR kafka`, [][]item{{w("or")}, {w("kafka")}}, nil},
		{`steam rm -rf`, [][]item{{w("steam")}, {w("rm")}, {w("rf")}}, nil},
		{`us-east-1 read-only`, [][]item{{jn("us east 1")}, {jn("read only")}}, nil},
		{`+database (writer:*)`, [][]item{{w("database")}, {w("writer")}}, nil},
		{`"unbalanced quote`, [][]item{{ph("unbalanced quote")}}, nil},
	}
	for _, tt := range tests {
		p, err := parseText(tt.in)
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		var got [][]item
		for _, c := range p.clauses {
			got = append(got, c.alts)
		}
		if diff := cmp.Diff(tt.clauses, got, cmp.AllowUnexported(item{})); diff != "" {
			t.Errorf("%q clauses (-want +got):\n%s", tt.in, diff)
		}
		if diff := cmp.Diff(tt.exclude, p.exclude, cmp.AllowUnexported(item{})); diff != "" {
			t.Errorf("%q exclude (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestLongTextTakesJoinedWordsApart: in a sentence or a paste, a word
// joined by hyphens or dots is searched as its parts (numbers left out),
// and a quoted phrase as itself and its words; a few keywords keep them
// whole.
func TestLongTextTakesJoinedWordsApart(t *testing.T) {
	e := openFixture(t)
	a := e.analyzer()
	tests := []struct {
		in   string
		want []string // each clause's alternatives, joined by " OR "
	}{
		{`us-east-1 read-only`, []string{`"us east 1"`, `"read only"`}},
		{`"split brain" database`, []string{`"split brain"`, "database"}},
		{`kube-proxy failed to run iptables-restore v1.8.4 on the upgraded nodes`,
			[]string{"kube", "proxy", "failed", "run", "iptables", "restore", "v1.8.4", "upgraded", "nodes"}},
		{`lookups of api.example.com timed out for "every single request" today`,
			[]string{"lookups", "api", "example", "com", "timed", `"every single request"`, "every", "single", "request", "today"}},
	}
	for _, tt := range tests {
		p, err := parseText(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range e.longClauses(a, p) {
			if len(analyzedTerms(a, c.alts[0].text)) > 0 {
				got = append(got, c.display())
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestPlanIsBounded checks the bounds the cost of a question rests on:
// however long the text, at most maxClauses words, and capped expansions;
// no typo fallback for short words, numbers or phrases.
func TestPlanIsBounded(t *testing.T) {
	e := openFixture(t)
	r, err := e.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var words []string
	for i := 0; i < 150; i++ {
		words = append(words, fmt.Sprintf("qwzx%03d", i))
	}
	p, _ := parseText(strings.Join(words, " ") + " auth k8s db oom lb cert az config regex retry storm")
	pl, err := e.newPlan(r, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.clauses) > maxClauses {
		t.Errorf("%d clauses, want at most %d", len(pl.clauses), maxClauses)
	}
	counts := map[matcherKind]int{}
	for _, m := range pl.matchers {
		counts[m.kind]++
	}
	if counts[matchSynonym] > maxSynonymMatchers || counts[matchTerm] > maxTermMatchers || counts[matchFuzzy] > maxFuzzyWords*maxFuzzyCandidates {
		t.Errorf("matchers %v exceed the bounds", counts)
	}
	for _, q := range []string{"xq", "dbz", "zzz9000", `"retrys hedgd"`} {
		p, _ := parseText(q)
		pl, _ := e.newPlan(r, p)
		if len(pl.fuzzy) > 0 {
			t.Errorf("%q got a typo fallback %v", q, pl.fuzzy)
		}
	}
}

func openFixture(t *testing.T) *Engine {
	t.Helper()
	c, ps, err := corpus.Load(corpus.Options{})
	if err != nil || len(ps) > 0 {
		t.Fatalf("loading the shipped corpus: %v %v", err, ps)
	}
	e, err := Open(context.Background(), c.Vocabulary, c.Cases, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
