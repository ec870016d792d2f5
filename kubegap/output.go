package kubegap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/incidentlib/incidentlib"
)

// TextOptions shapes the human report.
type TextOptions struct {
	Color bool // ANSI colours, for a terminal
}

// WriteText writes the report for a person: problems first, then the
// findings grouped by object, each with its fix and the cases it cites,
// then the fix snippets of the checks that fired, then a summary.
func WriteText(w io.Writer, rep *incidentlib.AuditReport, opt TextOptions) error {
	ew := &errWriter{w: w}
	paint := func(code, s string) string {
		if !opt.Color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	sevColor := map[incidentlib.CheckSeverity]string{incidentlib.CheckCritical: "1;31", incidentlib.CheckHigh: "31", incidentlib.CheckMedium: "33", incidentlib.CheckLow: "36"}
	if len(rep.Problems) > 0 {
		ew.printf("%s\n", paint("1", "Could not audit:"))
		for _, p := range rep.Problems {
			ew.printf("  %s: %s\n", location(p.Object), p.Message)
		}
		ew.printf("\n")
	}
	var last incidentlib.ObjectRef
	fired := map[string]incidentlib.Finding{}
	for i, f := range rep.Findings {
		if i == 0 || f.Object != last {
			if i > 0 {
				ew.printf("\n")
			}
			ew.printf("%s  %s\n", paint("1", objectName(f.Object)), paint("2", location(f.Object)))
			last = f.Object
		}
		sev := strings.ToUpper(string(f.Severity))
		ew.printf("  %s %s %s\n", paint(sevColor[f.Severity], fmt.Sprintf("%-8s", sev)), f.CheckID, f.Title)
		ew.printf("      %s\n", f.Message)
		ew.printf("      Fix: %s\n", f.Fix)
		if f.Patch != "" {
			ew.printf("      Patch (%s):\n", patchTypeName(f.PatchType))
			for _, l := range strings.Split(strings.TrimRight(f.Patch, "\n"), "\n") {
				ew.printf("        %s\n", l)
			}
		}
		if len(f.Citations) > 0 {
			ids := citationIDs(f.Citations)
			ew.printf("      Seen in: %s (how each shows the gap: under %s below)\n", strings.Join(ids, ", "), f.CheckID)
		}
		if _, ok := fired[f.CheckID]; !ok {
			fired[f.CheckID] = f
		}
	}
	if len(fired) > 0 {
		ids := make([]string, 0, len(fired))
		for id := range fired {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		ew.printf("\n%s\n", paint("1", "How to fix, and the incidents each check guards against:"))
		for _, id := range ids {
			f := fired[id]
			ew.printf("\n%s %s\n", paint("1", id), f.Title)
			for _, l := range strings.Split(strings.TrimRight(f.FixYAML, "\n"), "\n") {
				ew.printf("    %s\n", l)
			}
			for _, c := range f.Citations {
				link := firstNonEmpty(c.URL, c.Source)
				if link != "" {
					link = "\n      " + paint("2", link)
				}
				ew.printf("  %s: %s%s\n", c.CaseID, firstNonEmpty(c.Reason, c.Title), link)
			}
			if len(f.Citations) < incidentlib.FewCases {
				ew.printf("  %s\n", incidentlib.FewCasesNote)
			}
		}
		ew.printf("\n")
	}
	ew.printf("%s\n", summaryLine(rep))
	return ew.err
}

func summaryLine(rep *incidentlib.AuditReport) string {
	counts := map[incidentlib.CheckSeverity]int{}
	for _, f := range rep.Findings {
		counts[f.Severity]++
	}
	var parts []string
	for i := len(incidentlib.CheckSeverities) - 1; i >= 0; i-- {
		s := incidentlib.CheckSeverities[i]
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	line := fmt.Sprintf("%d %s in %d %s", len(rep.Findings), plural(len(rep.Findings), "finding"), rep.Objects, plural(rep.Objects, "object"))
	if len(parts) > 0 {
		line = fmt.Sprintf("%d %s (%s) in %d %s", len(rep.Findings), plural(len(rep.Findings), "finding"), strings.Join(parts, ", "), rep.Objects, plural(rep.Objects, "object"))
	}
	if len(rep.Skipped) > 0 {
		kinds := make([]string, 0, len(rep.Skipped))
		for k, n := range rep.Skipped {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(kinds)
		line += "; not audited: " + strings.Join(kinds, ", ")
	}
	if len(rep.Problems) > 0 {
		line += fmt.Sprintf("; %d %s", len(rep.Problems), plural(len(rep.Problems), "input problem"))
	}
	return line + "."
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

func objectName(r incidentlib.ObjectRef) string {
	if r.Namespace != "" {
		return r.Kind + " " + r.Namespace + "/" + r.Name
	}
	if r.Kind == "" {
		return r.Name
	}
	return r.Kind + " " + r.Name
}

func location(r incidentlib.ObjectRef) string {
	switch {
	case r.File != "" && r.Line > 0:
		return fmt.Sprintf("%s:%d", r.File, r.Line)
	case r.File != "":
		return r.File
	}
	return objectName(r)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// The JSON report. Its schema is documented in docs/kubegap.md; fields are
// only ever added.

// JSONReport is the JSON form of an audit.
type JSONReport struct {
	Tool     string         `json:"tool"`
	Version  string         `json:"version"`
	Objects  int            `json:"objects"`
	Skipped  map[string]int `json:"skipped"`
	Summary  map[string]int `json:"summary"`
	Findings []JSONFinding  `json:"findings"`
	// Checks holds, once per check that fired, its fix snippet and the
	// cases it cites; findings name their check by ID.
	Checks   map[string]JSONCheck `json:"checks"`
	Problems []JSONProblem        `json:"problems"`
}

// JSONCheck is a check that fired: its fix and citations, once.
type JSONCheck struct {
	Title     string         `json:"title"`
	FixYAML   string         `json:"fixYAML"`
	Citations []JSONCitation `json:"citations"`
	// Note says so when fewer than two public outages showing the gap are
	// known yet.
	Note string `json:"note,omitempty"`
}

// JSONObject names an object.
type JSONObject struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	File       string `json:"file,omitempty"`
	Line       int    `json:"line,omitempty"`
}

// JSONFinding is one finding.
type JSONFinding struct {
	Check     string     `json:"check"` // its fix snippet and citations: checks[check]
	Title     string     `json:"title"`
	Severity  string     `json:"severity"`
	Object    JSONObject `json:"object"`
	Message   string     `json:"message"`
	Fix       string     `json:"fix"`
	Patch     string     `json:"patch,omitempty"`     // the fix as a patch to this object, YAML
	PatchType string     `json:"patchType,omitempty"` // strategic (strategic-merge) or json (JSON patch)
}

// JSONCitation is one cited case.
type JSONCitation struct {
	Case   string `json:"case"`
	Title  string `json:"title"`
	URL    string `json:"url,omitempty"`
	Source string `json:"source,omitempty"`
	Reason string `json:"reason,omitempty"` // how the outage shows the gap, one line
}

// JSONProblem is one input problem.
type JSONProblem struct {
	Object  JSONObject `json:"object"`
	Message string     `json:"message"`
}

func jsonObject(r incidentlib.ObjectRef) JSONObject {
	return JSONObject{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, File: r.File, Line: r.Line}
}

// NewJSONReport converts a report to its JSON form.
func NewJSONReport(rep *incidentlib.AuditReport, version string) JSONReport {
	out := JSONReport{Tool: "kubegap", Version: version, Objects: rep.Objects, Skipped: map[string]int{}, Summary: map[string]int{},
		Findings: []JSONFinding{}, Checks: map[string]JSONCheck{}, Problems: []JSONProblem{}}
	for _, s := range incidentlib.CheckSeverities {
		out.Summary[string(s)] = 0
	}
	for k, n := range rep.Skipped {
		out.Skipped[k] = n
	}
	for _, f := range rep.Findings {
		jf := JSONFinding{Check: f.CheckID, Title: f.Title, Severity: string(f.Severity), Object: jsonObject(f.Object),
			Message: f.Message, Fix: f.Fix, Patch: f.Patch, PatchType: f.PatchType}
		out.Findings = append(out.Findings, jf)
		if _, ok := out.Checks[f.CheckID]; !ok {
			jc := JSONCheck{Title: f.Title, FixYAML: f.FixYAML, Citations: []JSONCitation{}}
			for _, c := range f.Citations {
				jc.Citations = append(jc.Citations, JSONCitation{Case: c.CaseID, Title: c.Title, URL: c.URL, Source: c.Source, Reason: c.Reason})
			}
			if len(f.Citations) < incidentlib.FewCases {
				jc.Note = incidentlib.FewCasesNote
			}
			out.Checks[f.CheckID] = jc
		}
		out.Summary[string(f.Severity)]++
	}
	for _, p := range rep.Problems {
		out.Problems = append(out.Problems, JSONProblem{Object: jsonObject(p.Object), Message: p.Message})
	}
	return out
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep *incidentlib.AuditReport, version string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(NewJSONReport(rep, version))
}

// SARIFOptions shapes the SARIF log.
type SARIFOptions struct {
	Version string // the tool's version
	BaseURL string // the library's site, for rule help links; "" for none
	Citer   Citer  // cites every rule's cases in its help; nil for none
}

// WriteSARIF writes a SARIF 2.1.0 log that code-scanning services accept:
// one rule per check with its help (markdown, with the cases it cites),
// one result per finding located at file and line, input problems as tool
// notifications.
func WriteSARIF(ctx context.Context, w io.Writer, rep *incidentlib.AuditReport, opt SARIFOptions) error {
	checks := Checks()
	ruleIndex := map[string]int{}
	rules := make([]map[string]any, 0, len(checks))
	for i, c := range checks {
		ruleIndex[c.ID] = i
		var cites []incidentlib.Citation
		if opt.Citer != nil {
			cites = opt.Citer.Cite(ctx, c)
		}
		rule := map[string]any{
			"id":                   c.ID,
			"name":                 ruleName(c.Title),
			"shortDescription":     map[string]any{"text": c.Title},
			"fullDescription":      map[string]any{"text": c.Rule},
			"help":                 map[string]any{"text": helpText(c, cites), "markdown": helpMarkdown(c, cites)},
			"defaultConfiguration": map[string]any{"level": sarifLevel(c.Severity)},
			"properties": map[string]any{
				"tags":      []string{"kubernetes", "reliability"},
				"precision": "high",
				"severity":  string(c.Severity),
				"citations": citationIDs(cites),
			},
		}
		if opt.BaseURL != "" {
			rule["helpUri"] = strings.TrimRight(opt.BaseURL, "/") + "/checks/" + c.ID
		}
		rules = append(rules, rule)
	}
	results := make([]map[string]any, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		results = append(results, map[string]any{
			"ruleId":              f.CheckID,
			"ruleIndex":           ruleIndex[f.CheckID],
			"level":               sarifLevel(f.Severity),
			"message":             map[string]any{"text": objectName(f.Object) + ": " + f.Message},
			"locations":           []any{sarifLocation(f.Object)},
			"partialFingerprints": map[string]any{"kubegapFinding/v1": fingerprint(f)},
			"properties":          resultProperties(f),
		})
	}
	notes := make([]map[string]any, 0, len(rep.Problems))
	for _, p := range rep.Problems {
		n := map[string]any{"level": "error", "message": map[string]any{"text": p.Message}}
		if p.Object.File != "" || p.Object.Name != "" {
			n["locations"] = []any{sarifLocation(p.Object)}
		}
		notes = append(notes, n)
	}
	driver := map[string]any{"name": "kubegap", "rules": rules}
	if opt.Version != "" {
		driver["version"] = opt.Version
	}
	if opt.BaseURL != "" {
		driver["informationUri"] = strings.TrimRight(opt.BaseURL, "/") + "/checks"
	}
	log := map[string]any{
		"version": "2.1.0",
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"runs": []any{map[string]any{
			"tool":        map[string]any{"driver": driver},
			"results":     results,
			"invocations": []any{map[string]any{"executionSuccessful": true, "toolExecutionNotifications": notes}},
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// resultProperties are a SARIF result's properties: its severity and, when
// there is one, the patch that fixes it. Citations are the rule's.
func resultProperties(f incidentlib.Finding) map[string]any {
	p := map[string]any{"severity": string(f.Severity)}
	if f.Patch != "" {
		p["patch"] = f.Patch
		p["patchType"] = f.PatchType
	}
	return p
}

func patchTypeName(t string) string {
	if t == "json" {
		return "JSON patch"
	}
	return "strategic-merge patch"
}

func sarifLevel(s incidentlib.CheckSeverity) string {
	switch s {
	case incidentlib.CheckCritical, incidentlib.CheckHigh:
		return "error"
	case incidentlib.CheckMedium:
		return "warning"
	}
	return "note"
}

func sarifLocation(r incidentlib.ObjectRef) map[string]any {
	loc := map[string]any{}
	if r.File != "" {
		phys := map[string]any{"artifactLocation": map[string]any{"uri": filepath.ToSlash(r.File)}}
		if r.Line > 0 {
			phys["region"] = map[string]any{"startLine": r.Line}
		}
		loc["physicalLocation"] = phys
	}
	if r.Name != "" {
		fq := r.Kind + "/" + r.Name
		if r.Namespace != "" {
			fq = r.Namespace + "/" + fq
		}
		loc["logicalLocations"] = []any{map[string]any{"name": r.Name, "fullyQualifiedName": fq, "kind": "object"}}
	}
	return loc
}

// fingerprint identifies a finding across runs whatever line it moves to.
func fingerprint(f incidentlib.Finding) string {
	h := sha256.Sum256([]byte(strings.Join([]string{f.CheckID, f.Object.Kind, f.Object.Namespace, f.Object.Name, f.Message}, "\x00")))
	return hex.EncodeToString(h[:16])
}

// ruleName turns a title into the PascalCase name SARIF rules carry.
func ruleName(title string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(title, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		rs := []rune(w)
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

func citationIDs(cs []incidentlib.Citation) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.CaseID)
	}
	return out
}

func helpText(c incidentlib.Check, cites []incidentlib.Citation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nWhy: %s\n\nFix: %s\n\n%s", c.Rule, c.Why, c.Fix, c.FixYAML)
	if len(cites) > 0 {
		b.WriteString("\nCases:\n")
		for _, ct := range cites {
			fmt.Fprintf(&b, "- %s: %s %s\n", ct.CaseID, firstNonEmpty(ct.Reason, ct.Title), firstNonEmpty(ct.URL, ct.Source))
		}
	}
	if len(cites) < incidentlib.FewCases {
		b.WriteString("\n" + incidentlib.FewCasesNote + "\n")
	}
	return b.String()
}

func helpMarkdown(c incidentlib.Check, cites []incidentlib.Citation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n%s\n\n**Why it matters.** %s\n\n**Fix.** %s\n\n```yaml\n%s```\n", c.Title, c.Rule, c.Why, c.Fix, c.FixYAML)
	if len(cites) > 0 {
		b.WriteString("\n**Incidents that show the cost:**\n\n")
		for _, ct := range cites {
			if link := firstNonEmpty(ct.URL, ct.Source); link != "" {
				fmt.Fprintf(&b, "- [%s](%s): %s\n", ct.CaseID, link, firstNonEmpty(ct.Reason, ct.Title))
			} else {
				fmt.Fprintf(&b, "- %s: %s\n", ct.CaseID, firstNonEmpty(ct.Reason, ct.Title))
			}
		}
	}
	if len(cites) < incidentlib.FewCases {
		b.WriteString("\n" + incidentlib.FewCasesNote + "\n")
	}
	return b.String()
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
