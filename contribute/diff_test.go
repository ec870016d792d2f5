package contribute

import (
	"strconv"
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

// A review shows the changes with a few lines around each; long runs of
// unchanged lines fold into one row that says how many it holds.
func TestFoldUnchanged(t *testing.T) {
	var lines []DiffLine
	for i := range 20 {
		lines = append(lines, DiffLine{" ", "same " + strconv.Itoa(i)})
	}
	lines = append(lines, DiffLine{"-", "old"}, DiffLine{"+", "new"})
	for i := range 5 {
		lines = append(lines, DiffLine{" ", "after " + strconv.Itoa(i)})
	}
	rows := FoldUnchanged(SideBySide(lines), 3)
	var got []string
	for _, r := range rows {
		switch {
		case r.Skip > 0:
			got = append(got, "skip "+strconv.Itoa(r.Skip))
		default:
			got = append(got, r.OldOp+r.Old+"|"+r.NewOp+r.New)
		}
	}
	want := []string{"skip 17", " same 17| same 17", " same 18| same 18", " same 19| same 19", "-old|+new",
		" after 0| after 0", " after 1| after 1", " after 2| after 2", "skip 2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// A run no longer than the context it would leave is not folded.
	short := FoldUnchanged(SideBySide([]DiffLine{{" ", "a"}, {"+", "b"}, {" ", "c"}}), 3)
	if len(short) != 3 {
		t.Errorf("short diff folded: %+v", short)
	}
}
