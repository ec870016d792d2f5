package contribute

import "strings"

// DiffLine is one line of a diff between two versions of a case file.
type DiffLine struct {
	Op   string `json:"op"` // " " same, "-" only in the old version, "+" only in the new
	Text string `json:"text"`
}

// DiffRow is one row of a side-by-side diff: the old version's line on
// the left, the new one's on the right; a side is empty (Op "") where the
// other version has a line the first does not.
type DiffRow struct {
	OldOp, Old string
	NewOp, New string
	// Skip, when above 0, makes the row stand for that many unchanged
	// lines folded away (FoldUnchanged).
	Skip int
}

// FoldUnchanged keeps context unchanged rows around each change and
// folds every longer run of unchanged rows into one row that counts them,
// so a review shows what changed in a long file.
func FoldUnchanged(rows []DiffRow, context int) []DiffRow {
	changed := func(r DiffRow) bool { return r.OldOp != " " || r.NewOp != " " }
	var out []DiffRow
	for i := 0; i < len(rows); {
		if changed(rows[i]) {
			out = append(out, rows[i])
			i++
			continue
		}
		j := i
		for j < len(rows) && !changed(rows[j]) {
			j++
		}
		// rows[i:j] is a run of unchanged rows; keep context after the
		// change before it and before the change after it.
		keepHead, keepTail := context, context
		if i == 0 {
			keepHead = 0
		}
		if j == len(rows) {
			keepTail = 0
		}
		if j-i <= keepHead+keepTail {
			out = append(out, rows[i:j]...)
		} else {
			out = append(out, rows[i:i+keepHead]...)
			out = append(out, DiffRow{Skip: j - i - keepHead - keepTail})
			out = append(out, rows[j-keepTail:j]...)
		}
		i = j
	}
	return out
}

// SideBySide lays a diff out in two columns: unchanged lines on both
// sides, and each run of removed lines beside the run of added lines that
// replaced it.
func SideBySide(lines []DiffLine) []DiffRow {
	var rows []DiffRow
	for i := 0; i < len(lines); {
		if lines[i].Op == " " {
			rows = append(rows, DiffRow{OldOp: " ", Old: lines[i].Text, NewOp: " ", New: lines[i].Text})
			i++
			continue
		}
		var removed, added []string
		for ; i < len(lines) && lines[i].Op == "-"; i++ {
			removed = append(removed, lines[i].Text)
		}
		for ; i < len(lines) && lines[i].Op == "+"; i++ {
			added = append(added, lines[i].Text)
		}
		for j := range max(len(removed), len(added)) {
			var r DiffRow
			if j < len(removed) {
				r.OldOp, r.Old = "-", removed[j]
			}
			if j < len(added) {
				r.NewOp, r.New = "+", added[j]
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// maxDiffLines bounds the work of a diff: the table is lines × lines.
const maxDiffLines = 3000

// Diff compares two texts line by line (longest common subsequence) and
// returns every line marked. Texts over maxDiffLines lines are not compared
// and ok is false.
func Diff(old, new string) (lines []DiffLine, ok bool) {
	a, b := splitLines(old), splitLines(new)
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		return nil, false
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, DiffLine{" ", a[i]})
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] > lcs[i+1][j]):
			lines = append(lines, DiffLine{"+", b[j]})
			j++
		default:
			lines = append(lines, DiffLine{"-", a[i]})
			i++
		}
	}
	return lines, true
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
