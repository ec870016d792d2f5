package incidentlib

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Case is one public production incident, written up in the library's
// structure. A zero value in an optional field means the source does not say:
// pages print "–", the API prints null, and nobody guesses.
type Case struct {
	ID      string // IL-NNNN
	Title   string
	Company string

	Timeline Timeline

	Severity      string // a severity slug, or "" when the source gives none
	Scope         string
	UsersAffected string
	Region        string

	// StatedTimeToDetect and StatedTimeToResolve hold durations the source
	// states directly; they are used only when the timeline cannot give them.
	StatedTimeToDetect  time.Duration
	StatedTimeToResolve time.Duration

	Summary      string
	Symptoms     string   // prose
	SymptomTerms []string // symptom slugs

	Trigger             string
	RootCause           string   // root-cause slug, or "" when undisclosed
	Components          []string // component slugs
	ContributingFactors []string // contributing-factor slugs

	// KubegapChecks names the kubegap checks (KG001 …) whose gap the case
	// shows directly, so that a team's own case is cited by those checks.
	KubegapChecks []string

	Detection   string
	Remediation []string
	ActionItems []ActionItem
	Lessons     string

	// Quotes are the exact error messages, status codes and alert texts
	// the sources quote: what engineers saw, kept verbatim so that a pasted
	// log line finds the case. Each names the listed source it comes from.
	Quotes []Quote

	Sources      []Source
	Verification Verification

	// Origin is where the case was loaded from ("builtin:cases/IL-0561.yaml"
	// or a path on disk). It is not part of the case's content.
	Origin string
}

// Timeline holds the moments a source gives. Only Started is required.
type Timeline struct {
	// Started is when impact began; zero when no source says, in which
	// case Reported is set.
	Started   Timestamp
	Detected  Timestamp
	Mitigated Timestamp
	Resolved  Timestamp
	// Reported is when the incident was first made public (a post, a
	// filing, a news report), for a case whose sources give no start: it
	// had begun by then. Zero when Started is known, unless a source gives
	// both.
	Reported Timestamp
}

// Date is the date a case is ordered and counted by: its start, or when no
// source gives one, the date it was first made public.
func (tl Timeline) Date() Timestamp {
	if tl.Started.IsZero() {
		return tl.Reported
	}
	return tl.Started
}

// Precision says how much of a Timestamp the source gives.
type Precision int

// Precisions, coarsest first. The zero value is PrecisionTime so that a
// Timestamp built from a time.Time alone is exact.
const (
	PrecisionTime  Precision = iota // to the minute or second, UTC
	PrecisionYear                   // "2019"
	PrecisionMonth                  // "2019-12"
	PrecisionDay                    // "2019-12-06"
)

// Timestamp is a UTC instant, or a calendar day, month or year where the
// source gives no more. The zero value is unknown.
type Timestamp struct {
	Time      time.Time
	Precision Precision
}

// IsZero reports whether the timestamp is unknown.
func (t Timestamp) IsZero() bool { return t.Time.IsZero() }

// Exact reports whether the timestamp is known to the minute.
func (t Timestamp) Exact() bool { return !t.IsZero() && t.Precision == PrecisionTime }

// String renders the timestamp as it is written in a case file.
func (t Timestamp) String() string {
	if t.IsZero() {
		return ""
	}
	switch t.Precision {
	case PrecisionYear:
		return t.Time.Format("2006")
	case PrecisionMonth:
		return t.Time.Format("2006-01")
	case PrecisionDay:
		return t.Time.Format(time.DateOnly)
	}
	return t.Time.UTC().Format(time.RFC3339)
}

// SeedListingOnly reports whether the case rests on nothing but a listing
// of incidents (every source is of type seed-listing, with no URL): its
// facts could not be checked, so it is shown last in the default order,
// marked on its page and never cited by a check.
func (c *Case) SeedListingOnly() bool {
	if len(c.Sources) == 0 {
		return false
	}
	for _, s := range c.Sources {
		if s.URL != "" || s.Type != "seed-listing" {
			return false
		}
	}
	return true
}

// HasOfficialSource reports whether any source is first-hand: the
// company's own (a source type whose slug starts with "official-": its blog,
// status page, report or forum) or a recorded talk. A case without one rests
// on news and third-party summaries, and its page says so.
func (c *Case) HasOfficialSource() bool {
	for _, s := range c.Sources {
		if strings.HasPrefix(s.Type, "official-") || s.Type == "talk" {
			return true
		}
	}
	return false
}

// Year returns the calendar year, or 0 when unknown.
func (t Timestamp) Year() int {
	if t.IsZero() {
		return 0
	}
	return t.Time.UTC().Year()
}

// Truncate returns the timestamp cut to precision p (when p is coarser),
// so that two timestamps of different precision can be compared.
func (t Timestamp) Truncate(p Precision) time.Time {
	u := t.Time.UTC()
	if p == PrecisionTime || (t.Precision != PrecisionTime && t.Precision < p) {
		p = t.Precision
	}
	switch p {
	case PrecisionYear:
		return time.Date(u.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	case PrecisionMonth:
		return time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
	case PrecisionDay:
		return time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	}
	return u
}

// Coarser returns the coarser of two precisions.
func Coarser(a, b Precision) Precision {
	switch {
	case a == PrecisionTime:
		return b
	case b == PrecisionTime:
		return a
	case a < b:
		return a
	}
	return b
}

// ParseTimestamp accepts RFC 3339 (converted to UTC), a date (2019-12-06),
// a month (2019-12) or a year (2019).
func ParseTimestamp(s string) (Timestamp, error) {
	s = strings.TrimSpace(s)
	for _, f := range []struct {
		layout string
		p      Precision
	}{{time.DateOnly, PrecisionDay}, {"2006-01", PrecisionMonth}, {"2006", PrecisionYear}} {
		if d, err := time.Parse(f.layout, s); err == nil {
			return Timestamp{Time: d, Precision: f.p}, nil
		}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return Timestamp{}, fmt.Errorf("%q is not an RFC 3339 time (2026-08-24T16:56:00Z), a date (2026-08-24), a month (2026-08) or a year (2026)", s)
	}
	return Timestamp{Time: t.UTC()}, nil
}

// ActionItem is a follow-up the company committed to, with its own estimate
// of when, if it gave one ("October 2026").
type ActionItem struct {
	Text     string
	Estimate string
}

// Quote kinds: what sort of text an engineer saw.
const (
	QuoteError  = "error"  // an error message a program printed or returned
	QuoteStatus = "status" // a status code or status-page wording ("503", "HTTP 429")
	QuoteAlert  = "alert"  // an alert or monitor's text
	QuoteLog    = "log"    // a log line
)

// Quote is text a source quotes verbatim: an error message, a status code
// or an alert. Quoted text is the one thing a case carries over word for
// word, and only when the source itself quotes it.
type Quote struct {
	Text   string // verbatim, as the source quotes it
	Kind   string // error, status, alert or log
	Source string // the URL of the listed source that quotes it
}

// Source is a public document the case rests on.
type Source struct {
	URL         string // empty only for type seed-listing
	Type        string // a source-type slug
	Title       string
	Retrieved   Timestamp // when the library's curator read it
	ArchivedURL string
}

// Verification statuses: how far the case's facts were checked against a
// stored copy of its sources.
const (
	VerificationChecked   = "checked"   // every fact checked against a stored copy
	VerificationPartial   = "partial"   // some facts checked; Note says which were not
	VerificationUnchecked = "unchecked" // no stored copy could be found
)

// Verification records how a case's facts were checked.
type Verification struct {
	Status  string // checked, partial or unchecked
	Against string // which stored copy the facts were checked against
	Note    string
}

// TimeToDetect is the time from start to detection: derived from the
// timeline when both instants are known to the minute, the stated duration
// otherwise. ok is false when unknown.
func (c *Case) TimeToDetect() (d time.Duration, ok bool) {
	return elapsed(c.Timeline.Started, c.Timeline.Detected, c.StatedTimeToDetect)
}

// TimeToResolve is the time from start to resolution, derived or stated as
// for TimeToDetect.
func (c *Case) TimeToResolve() (d time.Duration, ok bool) {
	return elapsed(c.Timeline.Started, c.Timeline.Resolved, c.StatedTimeToResolve)
}

func elapsed(from, to Timestamp, stated time.Duration) (time.Duration, bool) {
	if from.Exact() && to.Exact() {
		return to.Time.Sub(from.Time), true
	}
	if stated > 0 {
		return stated, true
	}
	return 0, false
}

// Year is the year the incident started (or, when no source gives its
// start, the year it was made public).
func (c *Case) Year() int { return c.Timeline.Date().Year() }

var caseIDPattern = regexp.MustCompile(`^IL-[0-9]{4}$`)

// ValidCaseID reports whether id has the form IL-NNNN.
func ValidCaseID(id string) bool { return caseIDPattern.MatchString(id) }

// NormalizeCaseID turns the ways people and models write a case ID into
// its canonical form: "il-561", "IL-561", "IL561", "561" and " IL-0561 "
// are all IL-0561. ok is false when s is not a case ID in any of them.
func NormalizeCaseID(s string) (id string, ok bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	// "IL-0561", "IL0561" or "561"; a bare "-1" is not a case number.
	digits := s
	if rest, ok := strings.CutPrefix(s, "IL"); ok {
		digits = strings.TrimPrefix(rest, "-")
	}
	if digits == "" || len(digits) > 4 {
		return "", false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return "", false
		}
	}
	id = "IL-" + strings.Repeat("0", 4-len(digits)) + digits
	return id, ValidCaseID(id)
}

// FormatDuration renders a duration the way the case pages do: "2m",
// "6h 13m", "3d 4h". Seconds are dropped above one minute.
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return "0m"
	}
	if d < time.Minute {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	mins := int(d / time.Minute)
	days, hours, m := mins/(24*60), mins/60%24, mins%60
	var parts []string
	if days > 0 {
		parts = append(parts, strconv.Itoa(days)+"d")
	}
	if hours > 0 {
		parts = append(parts, strconv.Itoa(hours)+"h")
	}
	if m > 0 && days == 0 {
		parts = append(parts, strconv.Itoa(m)+"m")
	}
	if len(parts) == 0 {
		return strconv.Itoa(days) + "d"
	}
	return strings.Join(parts, " ")
}

var durationPart = regexp.MustCompile(`^([0-9]+)([dhms])`)

// ParseDuration reads the durations case files state directly: one or more
// of "3d", "6h", "13m", "20s", optionally separated by spaces ("6h 13m").
func ParseDuration(s string) (time.Duration, error) {
	rest := strings.TrimSpace(s)
	if rest == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	for rest != "" {
		m := durationPart.FindStringSubmatch(rest)
		if m == nil {
			return 0, fmt.Errorf("%q is not a duration like \"2m\", \"6h 13m\" or \"3d\"", s)
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || n > 100000 {
			return 0, fmt.Errorf("%q is out of range", s)
		}
		unit := map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second}[m[2]]
		total += time.Duration(n) * unit
		rest = strings.TrimLeft(rest[len(m[0]):], " ")
	}
	return total, nil
}
