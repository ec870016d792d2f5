package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/incidentlib/incidentlib/engine/enginetest"
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
	if len(res.Hits) == 0 || res.Hits[0].Case.ID != "IL-0872" {
		t.Errorf("redis OOMKilled: want the Redis out-of-memory case IL-0872 first, got %v", ids(res))
	}
}
