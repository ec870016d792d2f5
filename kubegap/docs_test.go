package kubegap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/incidentlib/incidentlib"
)

// TestDocsChecksTable keeps the check table of docs/kubegap.md true: it is
// generated from the catalogue and the cases each check cites in the
// shipped corpus today. Run go test ./kubegap -run TestDocs -update after
// changing a check or the corpus.
func TestDocsChecksTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| ID | Title | Severity, and why | Rule | Cases cited (chosen in kubegap/citations.yaml) | Topic terms |\n|---|---|---|---|---|---|\n")
	for _, c := range Checks() {
		var guards, cases []string
		for _, g := range c.Guards {
			guards = append(guards, fmt.Sprintf("`%s/%s`", g.Facet, g.Slug))
		}
		for _, cc := range c.Cases {
			cases = append(cases, cc.ID)
		}
		cited := strings.Join(cases, ", ")
		if len(c.Cases) < incidentlib.FewCases {
			cited = strings.TrimPrefix(cited+"; "+incidentlib.FewCasesNote, "; ")
		}
		_, reason, _ := strings.Cut(severityReasons[c.ID], ": ")
		fmt.Fprintf(&b, "| %s | %s | **%s**: %s | %s | %s | %s |\n", c.ID, c.Title, c.Severity, reason, strings.ReplaceAll(c.Rule, "|", "\\|"), cited, strings.Join(guards, ", "))
	}
	table := b.String()

	path := filepath.Join("..", "docs", "kubegap.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- checks:begin (generated: go test ./kubegap -run TestDocs -update) -->\n", "<!-- checks:end -->"
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q … %q markers", path, begin, end)
	}
	current := string(doc[i+len(begin) : j])
	if current == table {
		return
	}
	if !*update {
		t.Fatalf("the check table in %s is out of date; run go test ./kubegap -run TestDocs -update", path)
	}
	out := string(doc[:i+len(begin)]) + table + string(doc[j:])
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}
