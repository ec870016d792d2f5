package kubegap

import (
	"context"
	"os"
	"sort"
	"testing"

	"github.com/incidentlib/incidentlib"
)

// auditFile loads one manifest file and audits it without citations.
func auditFile(t testing.TB, path string, p Policy) *incidentlib.AuditReport {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := NewSnapshot()
	problems := Load(path, f, s)
	rep := Audit(context.Background(), s, p, nil)
	rep.Problems = append(problems, rep.Problems...)
	return rep
}

// firedIDs lists the distinct check IDs of a report's findings, sorted.
func firedIDs(rep *incidentlib.AuditReport) []string {
	seen := map[string]bool{}
	ids := []string{}
	for _, f := range rep.Findings {
		if !seen[f.CheckID] {
			seen[f.CheckID] = true
			ids = append(ids, f.CheckID)
		}
	}
	sort.Strings(ids)
	return ids
}
