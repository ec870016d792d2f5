package contribute

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	got, ok := Diff("id: IL-1\ntitle: old\nsummary: s\n", "id: IL-1\ntitle: new\nsummary: s\nlessons: l\n")
	want := []DiffLine{{" ", "id: IL-1"}, {"-", "title: old"}, {"+", "title: new"}, {" ", "summary: s"}, {"+", "lessons: l"}}
	if !ok {
		t.Fatal("not compared")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, ok := Diff(strings.Repeat("x\n", maxDiffLines+1), "x\n"); ok {
		t.Error("a text over the bound was compared")
	}
}
