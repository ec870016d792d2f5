package main

import (
	"regexp"
	"testing"
)

func TestVersion(t *testing.T) {
	code, stdout, _ := run(t, "version")
	if code != 0 || !regexp.MustCompile(`(?m)^incidentlib \S+\n`).MatchString(stdout) ||
		!regexp.MustCompile(`(?m)^corpus:  \d{3,} cases, the newest started \d{4}(-\d\d){0,2}$`).MatchString(stdout) {
		t.Errorf("incidentlib version: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run(t, "version", "extra"); code != 2 || stderr == "" {
		t.Errorf("incidentlib version extra: exit %d, want 2 with a usage message", code)
	}
}
