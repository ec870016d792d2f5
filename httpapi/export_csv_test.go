package httpapi

import (
	"testing"

	"github.com/incidentlib/incidentlib"
)

// Issue 21: CSV cells that start with =, +, - or @ were written as they
// are, so a spreadsheet opening the export ran them as formulas. Case
// text is written by people (a private case's by any member of a team).
func TestCSVCellsAreNeverFormulas(t *testing.T) {
	a := &api{links: links{base: "https://lib.example"}}
	c := &incidentlib.Case{
		ID: "IL-9001", Title: `=HYPERLINK("https://evil.example","click")`, Company: "+cmd|' /C calc'!A0",
		Summary: "-2+3", Trigger: "@SUM(A1)", Lessons: "\t=1+1", Region: "eu-west-1",
	}
	row := a.csvRow(c)
	for i, cell := range row {
		if cell == "" {
			continue
		}
		switch cell[0] {
		case '=', '+', '-', '@', '\t', '\r':
			t.Errorf("column %s starts a formula: %q", csvColumns[i], cell)
		}
	}
	if row[1] != `'=HYPERLINK("https://evil.example","click")` || row[0] != "IL-9001" {
		t.Errorf("title %q, id %q; want the title kept after an apostrophe and the id as it is", row[1], row[0])
	}
}
