package corpus

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
)

// kubegapCheckID is the shape of a kubegap check ID; which IDs exist is
// kubegap's to check, where it reads the cases.
var kubegapCheckID = regexp.MustCompile(`^KG[0-9]{3}$`)

// CaseFile is the YAML shape of a case (docs/case-format.md): the
// validator reads a file into it, and the contributor form holds a draft
// in it.
type CaseFile struct {
	ID                  string           `yaml:"id"`
	Title               string           `yaml:"title"`
	Company             string           `yaml:"company"`
	Timeline            TimelineFile     `yaml:"timeline"`
	Severity            string           `yaml:"severity"`
	Scope               string           `yaml:"scope"`
	UsersAffected       string           `yaml:"users_affected"`
	Region              string           `yaml:"region"`
	TimeToDetect        string           `yaml:"time_to_detect"`
	TimeToResolve       string           `yaml:"time_to_resolve"`
	Summary             string           `yaml:"summary"`
	Symptoms            string           `yaml:"symptoms"`
	SymptomTerms        []string         `yaml:"symptom_terms"`
	Trigger             string           `yaml:"trigger"`
	RootCause           string           `yaml:"root_cause"`
	Components          []string         `yaml:"components"`
	ContributingFactors []string         `yaml:"contributing_factors"`
	KubegapChecks       []string         `yaml:"kubegap_checks"`
	Detection           string           `yaml:"detection"`
	Remediation         []string         `yaml:"remediation"`
	ActionItems         []ActionItemFile `yaml:"action_items"`
	Lessons             string           `yaml:"lessons"`
	Quoted              []QuoteFile      `yaml:"quoted"`
	Sources             []SourceFile     `yaml:"sources"`
	Verification        VerificationFile `yaml:"verification"`
}

type TimelineFile struct {
	Started   string `yaml:"started"`
	Detected  string `yaml:"detected"`
	Mitigated string `yaml:"mitigated"`
	Resolved  string `yaml:"resolved"`
	Reported  string `yaml:"reported"`
}

type ActionItemFile struct {
	Text     string `yaml:"text"`
	Estimate string `yaml:"estimate"`
}

type QuoteFile struct {
	Text   string `yaml:"text"`
	Kind   string `yaml:"kind"`
	Source string `yaml:"source"`
}

type SourceFile struct {
	URL         string `yaml:"url"`
	Type        string `yaml:"type"`
	Title       string `yaml:"title"`
	Retrieved   string `yaml:"retrieved"`
	ArchivedURL string `yaml:"archived_url"`
}

type VerificationFile struct {
	Status  string `yaml:"status"`
	Against string `yaml:"against"`
	Note    string `yaml:"note"`
}

// Dir is a tree of case files: the shipped corpus or a team's directory.
type Dir struct {
	FS fs.FS
	// Name prefixes file names in problems and in Case.Origin: "cases" for
	// the shipped corpus, the directory's path for a team's.
	Name string
	// Builtin marks the shipped corpus compiled into the binary, so that a
	// directory holding copies of its cases (a checkout's cases/) is told
	// how to check them on their own.
	Builtin bool
}

// foldedItem finds a list item that swallowed the next one: a "- Step"
// line indented deeper than its list is a continuation of the item before
// in YAML, so the item reads "…the first step - Second step".
var foldedItem = regexp.MustCompile(`\s- [A-Z][a-z]+`)

// MaxCaseFileSize bounds one case file; a larger one is a problem, not a
// slow load.
const MaxCaseFileSize = 1 << 20

// LoadCases reads every *.yaml file under each Dir, checks it against the
// vocabulary and the rules of docs/case-format.md, and checks IDs across all
// of them. It returns the cases that loaded (sorted by ID) and every problem.
// now bounds start dates: none may lie in the future.
func LoadCases(v *incidentlib.Vocabulary, dirs []Dir, now time.Time) ([]*incidentlib.Case, Problems) {
	var all Problems
	var cases []*incidentlib.Case
	firstFile := map[string]string{}
	builtin := map[string]bool{} // IDs first found in the built-in corpus
	for _, d := range dirs {
		var names []string
		err := fs.WalkDir(d.FS, ".", func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				all = append(all, Problem{File: path.Join(d.Name, p), Message: "cannot read: " + cleanFSError(err)})
				return nil
			}
			if !e.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				names = append(names, p)
			}
			return nil
		})
		if err != nil {
			all = append(all, Problem{File: d.Name, Message: "cannot read: " + cleanFSError(err)})
			continue
		}
		sort.Strings(names)
		for _, p := range names {
			file := path.Join(d.Name, p)
			data, err := fs.ReadFile(d.FS, p)
			if err != nil {
				all = append(all, Problem{File: file, Message: "cannot read: " + cleanFSError(err)})
				continue
			}
			c, ps := ParseCase(v, file, data, now)
			all = append(all, ps...)
			if c == nil {
				continue
			}
			if prev, dup := firstFile[c.ID]; dup {
				msg := fmt.Sprintf("duplicate ID %s: %s already has it", c.ID, prev)
				if builtin[c.ID] {
					msg = fmt.Sprintf("duplicate ID %s: %s, a built-in case compiled into this binary, already has it (to check copies of the built-in cases on their own, add --no-builtin)", c.ID, prev)
				}
				all = append(all, Problem{File: file, Line: 1, Message: msg})
				continue
			}
			firstFile[c.ID] = file
			builtin[c.ID] = d.Builtin
			cases = append(cases, c)
		}
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].ID < cases[j].ID })
	all.Sort()
	return cases, all
}

func cleanFSError(err error) string {
	var pe *fs.PathError
	if e, ok := err.(*fs.PathError); ok {
		pe = e
		return pe.Err.Error()
	}
	return err.Error()
}

// ParseCase parses and checks one case file. It returns the case when the
// file is a case at all (even with problems in some fields, so that IDs can
// still be compared across files), or nil when it is not.
func ParseCase(v *incidentlib.Vocabulary, file string, data []byte, now time.Time) (*incidentlib.Case, Problems) {
	var ps Problems
	report := func(line int, format string, args ...any) {
		ps = append(ps, Problem{File: file, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	if len(data) > MaxCaseFileSize {
		report(0, "the file is %d bytes; a case file may be at most %d", len(data), MaxCaseFileSize)
		return nil, ps
	}
	if !utf8.Valid(data) {
		report(firstInvalidUTF8Line(data), "the file is not valid UTF-8")
		return nil, ps
	}
	root, errs := parseDocument(data)
	for _, e := range errs {
		report(e.line, "%s", e.msg)
	}
	if root == nil {
		return nil, ps
	}
	if root.Kind != yaml.MappingNode || lookup(root, "id") == nil {
		report(root.Line, "not a case: expected a mapping with id, title, company, … (see docs/case-format.md)")
		return nil, ps
	}
	checkKeys(root, reflect.TypeOf(CaseFile{}), "", func(line int, msg string) { report(line, "%s", msg) })
	if hasDuplicateKey(root) {
		// Reported once above, at the repeated key; decoding would only
		// add messages about fields that are in fact present.
		return nil, ps
	}

	var cf CaseFile
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&cf); err != nil {
		for _, e := range yamlErrorMessages(err, "wrong type") {
			report(e.line, "%s", e.msg)
		}
	}
	at := func(p ...any) int { return lineOf(root, p...) }

	c := &incidentlib.Case{
		ID: strings.TrimSpace(cf.ID), Title: cf.Title, Company: cf.Company,
		Scope: cf.Scope, UsersAffected: cf.UsersAffected, Region: cf.Region,
		Summary: cf.Summary, Symptoms: cf.Symptoms, Trigger: cf.Trigger,
		RootCause: cf.RootCause, Detection: cf.Detection, Lessons: cf.Lessons,
		Severity: v.SeverityFor(cf.SymptomTerms), Remediation: cf.Remediation,
		SymptomTerms: cf.SymptomTerms, Components: cf.Components, ContributingFactors: cf.ContributingFactors,
		KubegapChecks: cf.KubegapChecks,
		Verification:  incidentlib.Verification{Status: cf.Verification.Status, Against: cf.Verification.Against, Note: cf.Verification.Note},
		Origin:        file,
	}

	// Identity.
	base := strings.TrimSuffix(strings.TrimSuffix(path.Base(file), ".yaml"), ".yml")
	switch {
	case c.ID == "":
		report(at("id"), "missing required field \"id\"")
	case !incidentlib.ValidCaseID(c.ID):
		report(at("id"), "id %q is not of the form IL-NNNN (four digits)", c.ID)
	case c.ID != base:
		report(at("id"), "id %s does not match the file name %s; name the file %s.yaml", c.ID, path.Base(file), c.ID)
	}
	for _, f := range []struct {
		key, val string
	}{{"title", c.Title}, {"company", c.Company}, {"summary", c.Summary}} {
		if strings.TrimSpace(f.val) == "" {
			report(at(f.key), "missing required field %q", f.key)
		}
	}

	// Timeline.
	ts := func(key, val string) incidentlib.Timestamp {
		if strings.TrimSpace(val) == "" {
			return incidentlib.Timestamp{}
		}
		t, err := incidentlib.ParseTimestamp(val)
		if err != nil {
			report(at("timeline", key), "timeline.%s: %v", key, err)
		}
		return t
	}
	c.Timeline = incidentlib.Timeline{
		Started:   ts("started", cf.Timeline.Started),
		Detected:  ts("detected", cf.Timeline.Detected),
		Mitigated: ts("mitigated", cf.Timeline.Mitigated),
		Resolved:  ts("resolved", cf.Timeline.Resolved),
		Reported:  ts("reported", cf.Timeline.Reported),
	}
	tl := c.Timeline
	switch {
	case strings.TrimSpace(cf.Timeline.Started) == "" && strings.TrimSpace(cf.Timeline.Reported) == "":
		report(at("timeline", "started"), "missing required field \"timeline.started\" (where no source gives the start, give timeline.reported: when the incident was first made public)")
	case !tl.Started.IsZero() && tl.Started.Time.After(now):
		report(at("timeline", "started"), "timeline.started %s is in the future", tl.Started)
	case !tl.Reported.IsZero() && tl.Reported.Time.After(now):
		report(at("timeline", "reported"), "timeline.reported %s is in the future", tl.Reported)
	}
	before := func(aKey string, a incidentlib.Timestamp, bKey string, b incidentlib.Timestamp) {
		if a.IsZero() || b.IsZero() {
			return
		}
		p := incidentlib.Coarser(a.Precision, b.Precision)
		if a.Truncate(p).After(b.Truncate(p)) {
			report(at("timeline", bKey), "timeline.%s (%s) is before timeline.%s (%s)", bKey, b, aKey, a)
		}
	}
	before("started", tl.Started, "detected", tl.Detected)
	before("started", tl.Started, "mitigated", tl.Mitigated)
	before("started", tl.Started, "resolved", tl.Resolved)
	before("started", tl.Started, "reported", tl.Reported)
	if tl.Detected.Exact() && tl.Resolved.Exact() && tl.Detected.Time.After(tl.Resolved.Time) {
		report(at("timeline", "detected"), "detection (%s) is after resolution (%s)", tl.Detected, tl.Resolved)
	}
	before("mitigated", tl.Mitigated, "resolved", tl.Resolved)

	// Stated durations.
	dur := func(key, val string) time.Duration {
		if strings.TrimSpace(val) == "" {
			return 0
		}
		d, err := incidentlib.ParseDuration(val)
		if err != nil {
			report(at(key), "%s: %v", key, err)
		}
		return d
	}
	c.StatedTimeToDetect = dur("time_to_detect", cf.TimeToDetect)
	c.StatedTimeToResolve = dur("time_to_resolve", cf.TimeToResolve)
	agree := func(key string, stated time.Duration, from, to incidentlib.Timestamp) {
		if stated == 0 || !from.Exact() || !to.Exact() {
			return
		}
		derived := to.Time.Sub(from.Time)
		if diff := derived - stated; diff > time.Minute || diff < -time.Minute {
			report(at(key), "%s %s disagrees with the timeline, which gives %s", key, incidentlib.FormatDuration(stated), incidentlib.FormatDuration(derived))
		}
	}
	agree("time_to_detect", c.StatedTimeToDetect, tl.Started, tl.Detected)
	agree("time_to_resolve", c.StatedTimeToResolve, tl.Started, tl.Resolved)
	if c.StatedTimeToDetect > 0 && c.StatedTimeToResolve > 0 && c.StatedTimeToDetect > c.StatedTimeToResolve {
		report(at("time_to_detect"), "time_to_detect is longer than time_to_resolve")
	}

	// Vocabulary terms.
	checkTerm := func(facet incidentlib.Facet, key string, idx int, slug string) {
		if _, ok := v.Term(facet, slug); ok {
			return
		}
		line := at(key)
		if idx >= 0 {
			line = at(key, idx)
		}
		report(line, "unknown %s %q%s", strings.ReplaceAll(string(facet), "_", " "), slug, didYouMean(slug, v.Slugs(facet)))
	}
	checkTerms := func(facet incidentlib.Facet, key string, slugs []string) {
		seen := map[string]bool{}
		for i, s := range slugs {
			if seen[s] {
				report(at(key, i), "%s lists %q twice", key, s)
			}
			seen[s] = true
			checkTerm(facet, key, i, s)
		}
	}
	if c.RootCause != "" {
		checkTerm(incidentlib.FacetRootCause, "root_cause", -1, c.RootCause)
	}
	checkTerms(incidentlib.FacetSymptom, "symptom_terms", c.SymptomTerms)
	checkTerms(incidentlib.FacetComponent, "components", c.Components)
	checkTerms(incidentlib.FacetContributingFactor, "contributing_factors", c.ContributingFactors)
	for i, id := range c.KubegapChecks {
		if !kubegapCheckID.MatchString(id) {
			report(at("kubegap_checks", i), "kubegap_checks[%d] %q is not a kubegap check ID (KG followed by three digits, e.g. KG009)", i, id)
		}
		if slices.Contains(c.KubegapChecks[:i], id) {
			report(at("kubegap_checks", i), "kubegap_checks lists %q twice", id)
		}
	}
	if cf.Severity != "" {
		report(at("severity"), "severity is not written by hand: it follows from symptom_terms (%s); remove this line", severityRule(v))
	}

	// Lists of prose.
	for i, r := range c.Remediation {
		if strings.TrimSpace(r) == "" {
			report(at("remediation", i), "remediation[%d] is empty", i)
		} else if foldedItem.MatchString(r) {
			report(at("remediation", i), "remediation[%d] holds a step folded into it (%q): a \"- \" line indented deeper than its list is read as part of the item before; give each step its own \"- \" at the list's indentation", i, foldedItem.FindString(r))
		}
	}
	for i, a := range cf.ActionItems {
		if strings.TrimSpace(a.Text) == "" {
			report(at("action_items", i), "action_items[%d] has no text", i)
		} else if foldedItem.MatchString(a.Text) {
			report(at("action_items", i), "action_items[%d] holds an item folded into it (%q): give each its own \"- text:\" entry", i, foldedItem.FindString(a.Text))
		}
		c.ActionItems = append(c.ActionItems, incidentlib.ActionItem{Text: a.Text, Estimate: a.Estimate})
	}

	// Sources.
	if len(cf.Sources) == 0 {
		report(at("sources"), "missing required field \"sources\": a case rests on at least one public source")
	}
	for i, s := range cf.Sources {
		src := incidentlib.Source{URL: strings.TrimSpace(s.URL), Type: s.Type, Title: s.Title, ArchivedURL: strings.TrimSpace(s.ArchivedURL)}
		switch {
		case s.Type == "":
			report(at("sources", i), "sources[%d]: missing type (valid: %s)", i, slugList(v.SourceTypes()))
		default:
			if _, ok := v.SourceType(s.Type); !ok {
				report(at("sources", i, "type"), "sources[%d]: unknown source type %q%s", i, s.Type, didYouMean(s.Type, slugsOf(v.SourceTypes())))
			}
		}
		if src.URL == "" && s.Type != "seed-listing" {
			report(at("sources", i), "sources[%d]: missing url (only a seed-listing source may have none)", i)
		}
		if src.URL != "" {
			if msg := checkURL(src.URL); msg != "" {
				report(at("sources", i, "url"), "sources[%d].url: %s", i, msg)
			}
		}
		if src.ArchivedURL != "" {
			if msg := checkURL(src.ArchivedURL); msg != "" {
				report(at("sources", i, "archived_url"), "sources[%d].archived_url: %s", i, msg)
			}
		}
		if strings.TrimSpace(s.Retrieved) != "" {
			r, err := incidentlib.ParseTimestamp(s.Retrieved)
			switch {
			case err != nil:
				report(at("sources", i, "retrieved"), "sources[%d].retrieved: %v", i, err)
			case r.Time.After(now):
				report(at("sources", i, "retrieved"), "sources[%d].retrieved %s is in the future", i, r)
			}
			src.Retrieved = r
		}
		c.Sources = append(c.Sources, src)
	}

	// Quotes: verbatim text a listed source quotes.
	listed := make(map[string]bool, len(c.Sources))
	for _, s := range c.Sources {
		if s.URL != "" {
			listed[s.URL] = true
		}
	}
	for i, q := range cf.Quoted {
		text := strings.TrimSpace(q.Text)
		switch {
		case text == "":
			report(at("quoted", i), "quoted[%d] has no text", i)
		case len(text) > maxQuoteLen:
			report(at("quoted", i, "text"), "quoted[%d].text is %d characters; a quote is one message, at most %d", i, len(text), maxQuoteLen)
		}
		switch q.Kind {
		case incidentlib.QuoteError, incidentlib.QuoteStatus, incidentlib.QuoteAlert, incidentlib.QuoteLog:
		case "":
			report(at("quoted", i), "quoted[%d]: missing kind (valid: error, status, alert, log)", i)
		default:
			report(at("quoted", i, "kind"), "quoted[%d]: unknown kind %q (valid: error, status, alert, log)", i, q.Kind)
		}
		src := strings.TrimSpace(q.Source)
		switch {
		case src == "":
			report(at("quoted", i), "quoted[%d]: missing source: the url of the listed source that quotes this text", i)
		case !listed[src]:
			report(at("quoted", i, "source"), "quoted[%d].source %q is not the url of one of this case's sources", i, src)
		}
		c.Quotes = append(c.Quotes, incidentlib.Quote{Text: text, Kind: q.Kind, Source: src})
	}

	// Verification.
	switch c.Verification.Status {
	case "":
		report(at("verification"), "missing required field \"verification.status\" (checked, partial or unchecked)")
	case incidentlib.VerificationChecked, incidentlib.VerificationPartial:
		if strings.TrimSpace(c.Verification.Against) == "" {
			report(at("verification"), "verification.against is required when status is %s: name the stored copy the facts were checked against", c.Verification.Status)
		}
	case incidentlib.VerificationUnchecked:
	default:
		report(at("verification", "status"), "unknown verification status %q (valid: checked, partial, unchecked)", c.Verification.Status)
	}

	if c.ID == "" || !incidentlib.ValidCaseID(c.ID) {
		return nil, ps
	}
	return c, ps
}

// maxQuoteLen bounds one quoted message: a quote is a line an engineer
// saw, not a passage of the source.
const maxQuoteLen = 300

// checkURL returns "" for an absolute http(s) URL, or what is wrong.
func checkURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not a valid URL", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("%q is not an http or https URL", s)
	case u.Host == "":
		return fmt.Sprintf("%q has no host", s)
	case strings.ContainsAny(s, " \t\n"):
		return fmt.Sprintf("%q contains white space", s)
	}
	return ""
}

func slugsOf(ts []incidentlib.Term) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Slug
	}
	return out
}

func slugList(ts []incidentlib.Term) string { return strings.Join(slugsOf(ts), ", ") }

// severityRule says in one line which symptoms give which severity.
func severityRule(v *incidentlib.Vocabulary) string {
	var parts []string
	for _, sv := range v.Severities() {
		parts = append(parts, sv.Slug+" from "+strings.Join(sv.Symptoms, ", "))
	}
	return strings.Join(parts, "; ")
}
