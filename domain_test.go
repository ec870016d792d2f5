package incidentlib_test

import (
	"testing"
	"time"

	"github.com/incidentlib/incidentlib"
)

func TestNearest(t *testing.T) {
	slugs := []string{"config-change", "software-bug", "application-database", "in-memory-cache"}
	tests := []struct {
		got, want string
		ok        bool
	}{
		{"config-chang", "config-change", true},
		{"Software-Bug", "software-bug", true},
		{"database", "application-database", true},
		{"gremlins", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := incidentlib.Nearest(tt.got, slugs)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tt.got, got, ok, tt.want, tt.ok)
		}
	}
	if d := incidentlib.EditDistance("kitten", "sitting"); d != 3 {
		t.Errorf("EditDistance(kitten, sitting) = %d, want 3", d)
	}
	if d := incidentlib.EditDistance("日本語", "日本"); d != 1 {
		t.Errorf("EditDistance counts runes: got %d, want 1", d)
	}
}

func TestTimestampsAndDurations(t *testing.T) {
	for _, tt := range []struct {
		in, out string
		p       incidentlib.Precision
	}{
		{"2026-08-24T16:56:00Z", "2026-08-24T16:56:00Z", incidentlib.PrecisionTime},
		{"2026-08-24T12:56:00-04:00", "2026-08-24T16:56:00Z", incidentlib.PrecisionTime},
		{"2026-08-24", "2026-08-24", incidentlib.PrecisionDay},
		{"2019-12", "2019-12", incidentlib.PrecisionMonth},
		{"2026", "2026", incidentlib.PrecisionYear},
	} {
		ts, err := incidentlib.ParseTimestamp(tt.in)
		if err != nil || ts.String() != tt.out || ts.Precision != tt.p {
			t.Errorf("ParseTimestamp(%q) = %v (%v), %v; want %s", tt.in, ts, ts.Precision, err, tt.out)
		}
	}
	if _, err := incidentlib.ParseTimestamp("May 1st"); err == nil {
		t.Error("ParseTimestamp accepted prose")
	}
	c := &incidentlib.Case{Timeline: incidentlib.Timeline{}}
	c.Timeline.Started, _ = incidentlib.ParseTimestamp("2026-08-24T16:56:00Z")
	c.Timeline.Resolved, _ = incidentlib.ParseTimestamp("2026-08-24T23:09:00Z")
	if d, ok := c.TimeToResolve(); !ok || incidentlib.FormatDuration(d) != "6h 13m" {
		t.Errorf("time to resolve = %v %v, want 6h 13m as on the seed page", d, ok)
	}
	c.Timeline.Resolved, _ = incidentlib.ParseTimestamp("2026-08-25")
	c.StatedTimeToResolve = 0
	if _, ok := c.TimeToResolve(); ok {
		t.Error("a day-precision resolution must not give a duration")
	}
	for in, want := range map[string]time.Duration{"2m": 2 * time.Minute, "6h 13m": 6*time.Hour + 13*time.Minute, "3d": 72 * time.Hour} {
		if d, err := incidentlib.ParseDuration(in); err != nil || d != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, d, err, want)
		}
	}
	for _, bad := range []string{"", "6 hours", "5x", "99999999999h"} {
		if _, err := incidentlib.ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestNormalizeCaseID(t *testing.T) {
	for in, want := range map[string]string{
		"IL-0561": "IL-0561", "il-561": "IL-0561", "IL-561": "IL-0561", "561": "IL-0561",
		" il0561 ": "IL-0561", "7": "IL-0007", "IL-1234": "IL-1234",
	} {
		if got, ok := incidentlib.NormalizeCaseID(in); !ok || got != want {
			t.Errorf("NormalizeCaseID(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "IL-", "IL-12345", "abc", "IL-05a1", "IL--561", "-1", "-0561", "+1"} {
		if got, ok := incidentlib.NormalizeCaseID(in); ok {
			t.Errorf("NormalizeCaseID(%q) = %q, want not an ID", in, got)
		}
	}
}

// A case whose sources give no start knows neither start field, nor any
// duration from the start, whatever its reported date.
func TestCaseWithoutAStartKnowsNoStart(t *testing.T) {
	c := &incidentlib.Case{Timeline: incidentlib.Timeline{
		Reported: incidentlib.Timestamp{Time: time.Date(2018, 7, 25, 0, 0, 0, 0, time.UTC), Precision: incidentlib.PrecisionDay},
		Resolved: incidentlib.Timestamp{Time: time.Date(2018, 7, 20, 10, 0, 0, 0, time.UTC)},
	}}
	for _, f := range incidentlib.CaseFields {
		switch f.Name {
		case "started (exact time)", "started (day or better)", "time_to_resolve", "time_to_detect":
			if f.Known(c) {
				t.Errorf("%s is known of a case with no start", f.Name)
			}
		}
	}
	if y := c.Year(); y != 2018 {
		t.Errorf("Year() = %d, want the year it was made public", y)
	}
}
