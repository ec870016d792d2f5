package incidentlib

import "strings"

// CaseField is one field of a case as curators count it: its name and
// whether a case knows it.
type CaseField struct {
	Name  string
	Known func(c *Case) bool
	// Why, where set, says why a case that does not know the field
	// cannot: what its timeline, as recorded from its sources, lacks.
	Why func(c *Case) string
}

// CaseFields are the fields whose completeness `incidentlib stats` reports,
// in the order it prints them. The counts and the list of cases missing a
// field (`stats --missing`) come from the same test.
var CaseFields = []CaseField{
	{Name: "started (exact time)", Known: func(c *Case) bool { return c.Timeline.Started.Exact() }},
	{Name: "started (day or better)", Known: func(c *Case) bool {
		p := c.Timeline.Started.Precision
		return !c.Timeline.Started.IsZero() && (p == PrecisionTime || p == PrecisionDay)
	}},
	{Name: "detected", Known: func(c *Case) bool { return !c.Timeline.Detected.IsZero() }},
	{Name: "mitigated", Known: func(c *Case) bool { return !c.Timeline.Mitigated.IsZero() }},
	{Name: "resolved", Known: func(c *Case) bool { return !c.Timeline.Resolved.IsZero() }},
	{Name: "time_to_detect", Known: func(c *Case) bool { _, ok := c.TimeToDetect(); return ok }, Why: func(c *Case) string {
		return whyNoDuration(c.Timeline.Started, c.Timeline.Detected, "detection time (detected)", "time to detect")
	}},
	{Name: "time_to_resolve", Known: func(c *Case) bool { _, ok := c.TimeToResolve(); return ok }, Why: func(c *Case) string {
		why := whyNoDuration(c.Timeline.Started, c.Timeline.Resolved, "end time (resolved)", "time to resolve")
		if c.Timeline.Resolved.IsZero() && c.Timeline.Mitigated.Exact() {
			why += "; impact ended at " + c.Timeline.Mitigated.String() + " (mitigated)"
		}
		return why
	}},
	{Name: "severity", Known: func(c *Case) bool { return isSet(c.Severity) }},
	{Name: "scope", Known: func(c *Case) bool { return isSet(c.Scope) }},
	{Name: "users_affected", Known: func(c *Case) bool { return isSet(c.UsersAffected) }},
	{Name: "region", Known: func(c *Case) bool { return isSet(c.Region) }},
	{Name: "symptoms", Known: func(c *Case) bool { return isSet(c.Symptoms) }},
	{Name: "symptom_terms", Known: func(c *Case) bool { return len(c.SymptomTerms) > 0 }},
	{Name: "trigger", Known: func(c *Case) bool { return isSet(c.Trigger) }},
	{Name: "root_cause", Known: func(c *Case) bool { return isSet(c.RootCause) }},
	{Name: "components", Known: func(c *Case) bool { return len(c.Components) > 0 }},
	{Name: "contributing_factors", Known: func(c *Case) bool { return len(c.ContributingFactors) > 0 }},
	{Name: "detection", Known: func(c *Case) bool { return isSet(c.Detection) }},
	{Name: "remediation", Known: func(c *Case) bool { return len(c.Remediation) > 0 }},
	{Name: "action_items", Known: func(c *Case) bool { return len(c.ActionItems) > 0 }},
	{Name: "lessons", Known: func(c *Case) bool { return isSet(c.Lessons) }},
	{Name: "archived copy", Known: func(c *Case) bool {
		for _, s := range c.Sources {
			if s.ArchivedURL != "" {
				return true
			}
		}
		return false
	}},
}

// FindCaseField looks a field up by name.
func FindCaseField(name string) (CaseField, bool) {
	for _, f := range CaseFields {
		if f.Name == name {
			return f, true
		}
	}
	return CaseField{}, false
}

// whyNoDuration says why a duration from start to an instant is unknown:
// a duration is known when both instants are known to the minute, or when
// a source states it.
func whyNoDuration(start, end Timestamp, endName, durationName string) string {
	switch {
	case start.IsZero():
		return "no start (its sources give only when it was made public)"
	case end.IsZero():
		return "no " + endName + " and no stated " + durationName
	case !start.Exact() && !end.Exact():
		return "start and " + endName + " known only to the " + start.precisionWord() + ", and no stated " + durationName
	case !start.Exact():
		return "starts only to the " + start.precisionWord() + ", and no stated " + durationName
	default:
		return endName + " known only to the " + end.precisionWord() + ", and no stated " + durationName
	}
}

// precisionWord names how far a timestamp is known: "day", "month", "year".
func (t Timestamp) precisionWord() string {
	switch t.Precision {
	case PrecisionYear:
		return "year"
	case PrecisionMonth:
		return "month"
	case PrecisionDay:
		return "day"
	}
	return "minute"
}

func isSet(s string) bool { return strings.TrimSpace(s) != "" }
