package main

import (
	"regexp"
	"testing"
)

func TestVersion(t *testing.T) {
	code, stdout, _ := run(t, "", "version")
	// A test binary is built in a checkout: "(devel)", and the corpus.
	if code != 0 || !regexp.MustCompile(`(?m)^kubegap \S+\n`).MatchString(stdout) ||
		!regexp.MustCompile(`(?m)^corpus:  \d{3,} cases, the newest started \d{4}(-\d\d){0,2}$`).MatchString(stdout) ||
		!regexp.MustCompile(`(?m)^module:  github.com/incidentlib/incidentlib$`).MatchString(stdout) {
		t.Errorf("kubegap version: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run(t, "", "version", "--json"); code != 2 || stderr == "" {
		t.Errorf("kubegap version --json: exit %d, want 2 with a usage message", code)
	}
}
