package main

import (
	"strings"
	"testing"
)

func TestOverlap(t *testing.T) {
	const dir = "testdata/overlap/"
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string // text stdout and stderr must hold
	}{
		{"a copied sentence is listed with its field", []string{"overlap", dir + "IL-9100.yaml", dir + "source.html"}, 1,
			`detection: 11 words shared with testdata/overlap/source.html: "Service monitors detected a high error rate on creating check suites"`, "1 runs"},
		{"a stricter minimum finds nothing", []string{"overlap", "--min", "12", dir + "IL-9100.yaml", dir + "source.html"}, 0, "", "ok: no run of 12 words"},
		{"no source is a usage error", []string{"overlap", dir + "IL-9100.yaml"}, 2, "", "usage: incidentlib overlap"},
		{"a missing source names the file", []string{"overlap", dir + "IL-9100.yaml", "no/such.txt"}, 2, "", "cannot read no/such.txt"},
		{"a file that is not a case", []string{"overlap", dir + "source.html", dir + "source.html"}, 2, "", "not a case file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d with %q and %q", code, out, errOut, tt.code, tt.out, tt.err)
			}
		})
	}
}
