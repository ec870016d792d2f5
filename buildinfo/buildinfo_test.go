package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib"
)

func TestPseudoVersionRev(t *testing.T) {
	for v, want := range map[string]string{
		"v0.0.0-20261202043000-f957e09c1a2b":       "f957e09c1a2b",
		"v1.2.4-0.20261202043000-f957e09c1a2b":     "f957e09c1a2b",
		"v0.0.0-20261202043000-f957e09c1a2b+dirty": "f957e09c1a2b",
		"v1.2.0":                             "",
		"v1.2.0-rc.1":                        "",
		"(devel)":                            "",
		"v0.0.0-2026-f957e09c1a2b":           "",
		"v0.0.0-20261202043000-F957E09C1A2Z": "",
	} {
		if got := pseudoVersionRev(v); got != want {
			t.Errorf("pseudoVersionRev(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestFromBuild(t *testing.T) {
	var info Info
	info.fromBuild(&debug.BuildInfo{Main: debug.Module{Path: "github.com/incidentlib/incidentlib", Version: "v0.0.0-20261202043000-f957e09c1a2b"}})
	if info.Commit != "f957e09c1a2b" || info.Version != "v0.0.0-20261202043000-f957e09c1a2b" {
		t.Errorf("installed from the proxy: %+v", info)
	}
	info = Info{Version: "(devel)"}
	info.fromBuild(&debug.BuildInfo{Main: debug.Module{Path: "m", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}})
	if info.Commit != "abc123" || !info.Modified || !strings.Contains(info.String(), "abc123 (with uncommitted changes)") {
		t.Errorf("built in a checkout: %+v\n%s", info, info)
	}
}

func TestNewestCase(t *testing.T) {
	day := func(s string, p incidentlib.Precision) incidentlib.Timestamp {
		tm, _ := time.Parse(time.RFC3339, s)
		return incidentlib.Timestamp{Time: tm, Precision: p}
	}
	cs := []*incidentlib.Case{
		{Timeline: incidentlib.Timeline{Started: day("2024-03-05T10:00:00Z", incidentlib.PrecisionTime)}},
		{Timeline: incidentlib.Timeline{Started: day("2025-06-01T00:00:00Z", incidentlib.PrecisionMonth)}},
		{Timeline: incidentlib.Timeline{Started: day("2025-02-10T00:00:00Z", incidentlib.PrecisionDay)}},
	}
	n, latest := newest(cs)
	if n != 3 || latest != "2025-06" {
		t.Errorf("newest = %d, %q; want 3, 2025-06", n, latest)
	}
	if n, newest := newest(nil); n != 0 || newest != "" {
		t.Errorf("no cases: %d %q", n, newest)
	}
	s := Read("kubegap", cs).String()
	for _, want := range []string{"kubegap ", "corpus:  3 cases, the newest started 2025-06", "go:      go1."} {
		if !strings.Contains(s, want) {
			t.Errorf("version text lacks %q:\n%s", want, s)
		}
	}
}
