package incidentlib

import "strings"

// CaseField is one field of a case as curators count it: its name and
// whether a case knows it.
type CaseField struct {
	Name  string
	Known func(c *Case) bool
}

// CaseFields are the fields whose completeness `incidentlib stats` reports,
// in the order it prints them. The counts and the list of cases missing a
// field (`stats --missing`) come from the same test.
var CaseFields = []CaseField{
	{"started (exact time)", func(c *Case) bool { return c.Timeline.Started.Exact() }},
	{"started (day or better)", func(c *Case) bool {
		p := c.Timeline.Started.Precision
		return p == PrecisionTime || p == PrecisionDay
	}},
	{"detected", func(c *Case) bool { return !c.Timeline.Detected.IsZero() }},
	{"mitigated", func(c *Case) bool { return !c.Timeline.Mitigated.IsZero() }},
	{"resolved", func(c *Case) bool { return !c.Timeline.Resolved.IsZero() }},
	{"time_to_detect", func(c *Case) bool { _, ok := c.TimeToDetect(); return ok }},
	{"time_to_resolve", func(c *Case) bool { _, ok := c.TimeToResolve(); return ok }},
	{"severity", func(c *Case) bool { return isSet(c.Severity) }},
	{"scope", func(c *Case) bool { return isSet(c.Scope) }},
	{"users_affected", func(c *Case) bool { return isSet(c.UsersAffected) }},
	{"region", func(c *Case) bool { return isSet(c.Region) }},
	{"symptoms", func(c *Case) bool { return isSet(c.Symptoms) }},
	{"symptom_terms", func(c *Case) bool { return len(c.SymptomTerms) > 0 }},
	{"trigger", func(c *Case) bool { return isSet(c.Trigger) }},
	{"root_cause", func(c *Case) bool { return isSet(c.RootCause) }},
	{"components", func(c *Case) bool { return len(c.Components) > 0 }},
	{"contributing_factors", func(c *Case) bool { return len(c.ContributingFactors) > 0 }},
	{"detection", func(c *Case) bool { return isSet(c.Detection) }},
	{"remediation", func(c *Case) bool { return len(c.Remediation) > 0 }},
	{"action_items", func(c *Case) bool { return len(c.ActionItems) > 0 }},
	{"lessons", func(c *Case) bool { return isSet(c.Lessons) }},
	{"archived copy", func(c *Case) bool {
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

func isSet(s string) bool { return strings.TrimSpace(s) != "" }
