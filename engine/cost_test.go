package engine_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine/enginetest"
)

// hostileQueries are the queries that cost seconds, gigabytes or a 500
// before the cost model: each must now be refused with an error naming q
// or answered quickly, saying when the typo-tolerant retry was skipped.
func hostileQueries() map[string]string {
	letters := "b c d f g h j k l m n p q r s t v w x y z "
	return map[string]string{
		"one-letter phrase":       `"` + strings.Repeat(letters, 21) + `"`,
		"short phrase of letters": `"b c d f g h j k"`,
		"long phrase":             `"` + strings.Repeat("storage quota ", 10) + `"`,
		"alphabet x30":            strings.Repeat("abcdefghijklmnopqrstuvwxyz", 30),
		"many fuzzy words":        "qwertyuiop asdfghjkl zxcvbnmq poiuytrewq lkjhgfdsa mnbvcxzq qazwsxedc rfvtgbyhn ujmikolp",
		"many one-letter words":   strings.Repeat("x ", 30),
	}
}

func TestHostileQueriesAreBounded(t *testing.T) {
	e := enginetest.Shipped(t)
	for name, q := range hostileQueries() {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := e.SearchCases(context.Background(), incidentlib.Query{Text: q})
			runtime.ReadMemStats(&after)
			// Memory, not time, is the check: it does not depend on how
			// busy the machine is. Before the cost model, the phrase of
			// one-letter words allocated gigabytes. The bound was 64 MiB
			// at 825 cases; at 1,040, with a long text searched field by
			// field, nine unknown words allocate about 64 MiB.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 128<<20 {
				t.Fatalf("allocated %d MiB", alloc>>20)
			}
			if err != nil {
				if c := incidentlib.ErrorCode(err); c != incidentlib.EINVALID && c != incidentlib.ETOOLARGE {
					t.Fatalf("error code %q (%v), want a client error", c, err)
				}
				if incidentlib.ErrorParam(err) != "q" {
					t.Fatalf("error %v does not name q", err)
				}
				return
			}
			if res.Total > 0 && res.Fuzzy && res.Notice != "" {
				t.Fatalf("a retry ran and a notice says it did not: %q", res.Notice)
			}
		})
	}
}

// A query the typo-tolerant fallback would make costly runs as typed, and
// the result names the words that matched nothing.
func TestDegradedQuerySaysSo(t *testing.T) {
	e := enginetest.Shipped(t)
	for _, q := range []string{`"q x z k"`, strings.Repeat("abcdefghijklmnopqrstuvwxyz", 30)} {
		res, err := e.SearchCases(context.Background(), incidentlib.Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 0 || res.Fuzzy || len(res.Unmatched) == 0 {
			t.Fatalf("%.30q: total %d fuzzy %v unmatched %q; want no match, no retry, the words named", q, res.Total, res.Fuzzy, res.Unmatched)
		}
		if long := len(q) > 100; long != (res.Notice != "") {
			t.Errorf("%.30q: notice %q", q, res.Notice)
		}
	}
	// An ordinary typo still gets its retry.
	res, err := e.SearchCases(context.Background(), incidentlib.Query{Text: "databse"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Fuzzy {
		t.Fatalf("typo: fuzzy %v", res.Fuzzy)
	}
}

func TestLongPhraseIsRefusedNamingQ(t *testing.T) {
	e := enginetest.Shipped(t)
	_, err := e.SearchCases(context.Background(), incidentlib.Query{Text: `"` + strings.Repeat("a b ", 20) + `"`})
	if incidentlib.ErrorCode(err) != incidentlib.EINVALID || incidentlib.ErrorParam(err) != "q" {
		t.Fatalf("got %v", err)
	}
}

func TestCanceledQueryIsNotInternal(t *testing.T) {
	e := enginetest.Shipped(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.SearchCases(ctx, incidentlib.Query{Text: "database"})
	if c := incidentlib.ErrorCode(err); c != incidentlib.ECANCELED {
		t.Fatalf("code %q (%v), want canceled", c, err)
	}
}

// FuzzQueryCost runs arbitrary text through the parser, the cost model and
// the engine over the shipped corpus, and fails any query that takes more
// than its deadline (with slack for a busy machine) or allocates more than
// 64 MiB.
func FuzzQueryCost(f *testing.F) {
	e := enginetest.Shipped(f)
	for _, q := range hostileQueries() {
		f.Add(q)
	}
	f.Add("database")
	f.Add(`"retry storm" dns`)
	f.Fuzz(func(t *testing.T, text string) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		_, err := e.SearchCases(context.Background(), incidentlib.Query{Text: text})
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if c := incidentlib.ErrorCode(err); err != nil && c != incidentlib.EINVALID && c != incidentlib.ETOOLARGE && c != incidentlib.EUNAVAILABLE {
			t.Fatalf("%q: error %q: %v", text, c, err)
		}
		if took > 3*time.Second {
			t.Fatalf("%q took %v", text, took)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Fatalf("%q allocated %d MiB", text, alloc>>20)
		}
	})
}
