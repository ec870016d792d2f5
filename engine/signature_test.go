package engine_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/engine/enginetest"
	"go.yaml.in/yaml/v3"
)

func TestPastedErrorsFindTheCasesThatShowThem(t *testing.T) {
	for _, q := range enginetest.PastedQueries {
		res := search(t, q.Text)
		if len(res.Hits) == 0 {
			t.Errorf("%q: no results", q.Text)
			continue
		}
		first := res.Hits[0]
		if !slices.Contains(q.Cases, first.Case.ID) {
			t.Errorf("%q: first hit %s is not one of the cases showing %s %v; got %v", q.Text, first.Case.ID, q.Signature, q.Cases, ids(res))
		}
		found := false
		for _, m := range first.Matched {
			if m.Word == q.Signature && m.Via == q.Means && m.Signature {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: why it matched %+v does not say %s → %s", q.Text, first.Matched, q.Signature, q.Means)
		}
	}
}

// The noise of pasted text (timestamps, addresses, ports, ids, pod hashes,
// stack frames, paths, field names) is not searched: it matches nothing
// and is not reported as unmatched.
func TestPastedNoiseIsNotSearched(t *testing.T) {
	text := `2025-12-01T10:02:11.123Z level=error msg="request failed" pod=checkout-7d9f8c6b5-x2x4z id=3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f
trace 9f86d081884c7d659a2feaa0c55ad015 from 10.1.2.3:5432 in /var/lib/app/data/file.db
goroutine 1 [running]:
main.handle(0xc000123456)
	/src/app/main.go:42 +0x1d
Exit Code: 1  context deadline exceeded`
	res := search(t, text)
	for _, u := range res.Unmatched {
		for _, noise := range []string{"2025", "10", "level", "3f2b8c1e", "9f86d081884c7d659a2feaa0c55ad015", "5432", "var", "goroutine", "0xc000123456", "main.go", "x2x4z", "7d9f8c6b5", "exit"} {
			if strings.Contains(strings.ToLower(u), noise) {
				t.Errorf("noise %q was searched (unmatched %v)", noise, res.Unmatched)
			}
		}
	}
	if len(res.Hits) == 0 {
		t.Fatalf("no results for a pasted deadline error")
	}
	sig := false
	for _, m := range res.Hits[0].Matched {
		if m.Signature && m.Word == "context deadline exceeded" {
			sig = true
		}
	}
	if !sig {
		t.Errorf("the first hit's reasons %+v do not name the signature", res.Hits[0].Matched)
	}
}

// A signature inside plain words counts beside them; the words still
// count: "checkout" narrows the out-of-memory cases, it is not dropped.
func TestASignatureDoesNotDrownTheOtherWords(t *testing.T) {
	res := search(t, "redis OOMKilled")
	// IL-0872 and IL-1233 are the Redis processes killed for memory.
	if len(res.Hits) == 0 || !slices.Contains([]string{"IL-0872", "IL-1233"}, res.Hits[0].Case.ID) {
		t.Errorf("redis OOMKilled: want a Redis out-of-memory case (IL-0872, IL-1233) first, got %v", ids(res))
	}
}

// What people saw (a case's quoted error messages) is searched in its own
// field, and a signature recognised in a query finds the cases whose
// quotes show it even when their own words never name the symptom.
func TestQuotesAreSearchedAndShowSignatures(t *testing.T) {
	v, ps := corpus.LoadShippedVocabulary()
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	cases := fixture()
	cases = append(cases,
		&incidentlib.Case{ID: "IL-0007", Title: "Checkout pods restarted over and over", Company: "Example",
			Timeline: incidentlib.Timeline{Started: at("2024-02-01")}, Summary: "Pods kept restarting after a release.",
			RootCause: "deployment-error", Components: []string{"container-orchestration"},
			Quotes: []incidentlib.Quote{{Text: "Last State: Terminated Reason: OOMKilled", Kind: incidentlib.QuoteLog, Source: "https://example.com/pm"},
				{Text: "pq: sorry, too many clients already", Kind: incidentlib.QuoteError, Source: "https://example.com/pm"}}},
		&incidentlib.Case{ID: "IL-0008", Title: "A batch job ran out of memory", Company: "Other",
			Timeline: incidentlib.Timeline{Started: at("2024-03-01")}, Summary: "The nightly batch ran out of memory.",
			RootCause: "resource-exhaustion", Components: []string{"background-workers"}},
	)
	e, err := engine.Open(context.Background(), v, cases, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.SearchCases(context.Background(), incidentlib.Query{Text: "Reason: OOMKilled"})
	if err != nil {
		t.Fatal(err)
	}
	got := ids(res)
	if len(got) < 2 || !slices.Contains(got[:2], "IL-0007") || !slices.Contains(got[:2], "IL-0008") {
		t.Fatalf("OOMKilled: want IL-0007 (quotes it) and IL-0008 (ran out of memory) first, got %v", got)
	}
	for _, h := range res.Hits {
		if h.Case.ID != "IL-0007" {
			continue
		}
		i := slices.IndexFunc(h.Matched, func(m incidentlib.Match) bool { return m.Signature && m.Word == "OOMKilled" })
		if i < 0 || !slices.Contains(h.Matched[i].Fields, "quoted") || h.Matched[i].Via != "out of memory" {
			t.Errorf("IL-0007's reasons %+v do not say OOMKilled → out of memory in quoted", h.Matched)
		}
	}
	res, err = e.SearchCases(context.Background(), incidentlib.Query{Text: "pq sorry clients already"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].Case.ID != "IL-0007" {
		t.Fatalf("words of a quote: want IL-0007 first, got %v", ids(res))
	}
	if !slices.ContainsFunc(res.Hits[0].Matched, func(m incidentlib.Match) bool { return slices.Contains(m.Fields, "quoted") }) {
		t.Errorf("reasons %+v do not name the quoted field", res.Hits[0].Matched)
	}
}

// A query of noise alone is searched as written, never answered as if no
// text had been given (which lists every case).
func TestAQueryOfNoiseAloneIsNotEmpty(t *testing.T) {
	res := search(t, "3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f 10.1.2.3:5432")
	all := search(t, "")
	if res.Total == all.Total || res.Sort != incidentlib.SortRelevance {
		t.Errorf("a query of ids returned %d of %d cases, sorted %s", res.Total, all.Total, res.Sort)
	}
}

// TestPastedTextNeverPanics runs every query of the judged relevance sets
// (pasted alerts, log lines and kubectl output among them) through search:
// matches of several signatures that overlap one another in a chain once
// made recognition slice the text backwards and panic.
func TestPastedTextNeverPanics(t *testing.T) {
	for _, file := range []string{"../relevance/judged.yaml", "../relevance/blind.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var set struct {
			Queries []struct {
				Q string `yaml:"q"`
			} `yaml:"queries"`
		}
		if err := yaml.Unmarshal(data, &set); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, q := range set.Queries {
			search(t, q.Q)
		}
	}
	// Three signatures whose matches chain: each overlaps the next.
	search(t, "dial tcp: lookup db on 10.96.0.10:53: read udp 10.1.2.3:40000->10.96.0.10:53: i/o timeout context deadline exceeded i/o timeout")
}
