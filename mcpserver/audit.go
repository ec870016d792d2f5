package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
)

// This file holds the kubegap tools: audit_kubernetes, which audits
// manifests passed as text through the incidentlib.Auditor in Config, and
// kubegap_checks, which lists the checks with the cases they cite. The
// output types and their Markdown are exported so that `kubegap mcp`
// answers in the same shapes.

// Bounds of the audit tools.
const (
	// MaxManifestBytes bounds the manifests one audit_kubernetes call
	// takes: a large Helm chart's output fits, a whole cluster dump does
	// not (kubegap audit reads those from disk).
	MaxManifestBytes = 1 << 20
	// MaxAuditFindings bounds the findings one answer lists, most severe
	// first; the counts cover every finding.
	MaxAuditFindings = 200
	// checkToolCitations is how many cases kubegap_checks cites for one
	// check.
	checkToolCitations = 10
)

// DefaultAuditBodyBytes is the HTTP body limit when an Auditor is set: room
// for MaxManifestBytes of YAML after JSON escaping doubles its newlines and
// quotes.
const DefaultAuditBodyBytes = 2*MaxManifestBytes + 64<<10

// AuditInput is the input of audit_kubernetes.
type AuditInput struct {
	Manifests   string `json:"manifests" jsonschema:"Kubernetes manifests as YAML or JSON text: one or more documents separated by ---, or a kind: List, e.g. the output of helm template or kustomize build. At most 1 MiB"`
	MinSeverity string `json:"min_severity,omitempty" jsonschema:"report only findings at or above this severity: low (default, everything), medium, high or critical"`
}

// AuditObject names a Kubernetes object a finding or problem is about.
type AuditObject struct {
	APIVersion string `json:"api_version,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	File       string `json:"file,omitempty" jsonschema:"the manifest file, or the label of the text passed in; absent for a live cluster"`
	Line       int    `json:"line,omitempty" jsonschema:"1-based line where the object starts in file"`
}

// AuditCitation is a public incident that shows what a gap costs.
type AuditCitation struct {
	CaseID string `json:"case_id"`
	Title  string `json:"title,omitempty" jsonschema:"the case's title (kubegap_checks only; audit answers cite by ID and reason)"`
	URL    string `json:"url,omitempty" jsonschema:"the case's page in the Incident Library; cite it"`
	Reason string `json:"reason,omitempty" jsonschema:"how the outage shows the gap, in one line"`
	Source string `json:"source,omitempty" jsonschema:"the incident's first public source"`
}

// AuditFinding is one gap on one object.
type AuditFinding struct {
	CheckID   string      `json:"check_id" jsonschema:"the check; its fix YAML and the incidents it cites are under checks"`
	Title     string      `json:"title"`
	Severity  string      `json:"severity" jsonschema:"low, medium, high or critical"`
	Object    AuditObject `json:"object"`
	Message   string      `json:"message" jsonschema:"what is wrong on this object, naming the field"`
	Fix       string      `json:"fix"`
	Patch     string      `json:"patch,omitempty" jsonschema:"the fix as a patch to this object, YAML"`
	PatchType string      `json:"patch_type,omitempty" jsonschema:"strategic (a strategic-merge patch) or json (a JSON patch)"`
}

// AuditCheck is a check that fired, once: its fix snippet and the public
// incidents it cites, each by case ID and one line.
type AuditCheck struct {
	CheckID   string          `json:"check_id"`
	Title     string          `json:"title"`
	FixYAML   string          `json:"fix_yaml,omitempty" jsonschema:"a YAML snippet showing the fix"`
	CheckURL  string          `json:"check_url,omitempty" jsonschema:"the check's page: rule, why, fix and every case it cites"`
	Citations []AuditCitation `json:"citations" jsonschema:"public incidents that show what this gap costs, each with how"`
	Note      string          `json:"note,omitempty" jsonschema:"set when fewer than two public outages showing the gap are known yet"`
}

// AuditProblem is an object or document that could not be audited.
type AuditProblem struct {
	Object  AuditObject `json:"object"`
	Message string      `json:"message"`
}

// SkippedKind counts objects of a kind no check reads.
type SkippedKind struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// SeverityCounts counts findings by severity.
type SeverityCounts struct {
	Critical int `json:"critical"`
	High     int `json:"high"`
	Medium   int `json:"medium"`
	Low      int `json:"low"`
}

// AuditOutput is the outcome of an audit, as the audit tools return it.
type AuditOutput struct {
	Objects     int            `json:"objects" jsonschema:"objects audited"`
	MinSeverity string         `json:"min_severity" jsonschema:"the lowest severity reported"`
	Counts      SeverityCounts `json:"counts" jsonschema:"findings at or above min_severity, by severity, including any left out of findings"`
	Findings    []AuditFinding `json:"findings" jsonschema:"most severe first"`
	Checks      []AuditCheck   `json:"checks" jsonschema:"the checks that fired, by ID: fix YAML and cited incidents, once each"`
	Omitted     int            `json:"omitted,omitempty" jsonschema:"findings left out beyond the first 200; raise min_severity to see the rest"`
	Skipped     []SkippedKind  `json:"skipped,omitempty" jsonschema:"kinds no check reads (custom resources and the like), with counts"`
	Problems    []AuditProblem `json:"problems,omitempty" jsonschema:"documents or objects that could not be read; the rest was audited"`
}

// CheckURL is a kubegap check's page under baseURL; "" when there is no
// base URL (kubegap mcp run without --base-url).
func CheckURL(baseURL, id string) string {
	if baseURL == "" {
		return ""
	}
	return strings.TrimRight(baseURL, "/") + "/checks/" + url.PathEscape(id)
}

// ParseMinSeverity reads a min_severity argument; "" means low.
func ParseMinSeverity(s string) (incidentlib.CheckSeverity, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return incidentlib.CheckLow, nil
	}
	if sev := incidentlib.CheckSeverity(s); sev.Rank() > 0 {
		return sev, nil
	}
	return "", incidentlib.InvalidParam("min_severity", "unknown severity %q; valid: low, medium, high, critical", truncate(s, 40))
}

// NewAuditOutput turns a report into the tools' output: findings below min
// dropped, the rest most severe first and cut to MaxAuditFindings, each
// with its check's page and the citations' case pages under baseURL.
func NewAuditOutput(rep *incidentlib.AuditReport, min incidentlib.CheckSeverity, baseURL string) *AuditOutput {
	if min.Rank() == 0 {
		min = incidentlib.CheckLow
	}
	out := &AuditOutput{Objects: rep.Objects, MinSeverity: string(min), Findings: []AuditFinding{}, Checks: []AuditCheck{}}
	checkSeen := map[string]bool{}
	var kept []incidentlib.Finding
	for _, f := range rep.Findings {
		if f.Severity.Rank() >= min.Rank() {
			kept = append(kept, f)
		}
	}
	// Stable, so that findings of one severity keep the auditor's order
	// (by object).
	slices.SortStableFunc(kept, func(a, b incidentlib.Finding) int { return b.Severity.Rank() - a.Severity.Rank() })
	for i, f := range kept {
		switch f.Severity {
		case incidentlib.CheckCritical:
			out.Counts.Critical++
		case incidentlib.CheckHigh:
			out.Counts.High++
		case incidentlib.CheckMedium:
			out.Counts.Medium++
		default:
			out.Counts.Low++
		}
		if i >= MaxAuditFindings {
			out.Omitted++
			continue
		}
		out.Findings = append(out.Findings, AuditFinding{
			CheckID: f.CheckID, Title: f.Title, Severity: string(f.Severity), Object: auditObject(f.Object),
			Message: f.Message, Fix: f.Fix, Patch: f.Patch, PatchType: f.PatchType,
		})
		if !checkSeen[f.CheckID] {
			checkSeen[f.CheckID] = true
			ac := AuditCheck{CheckID: f.CheckID, Title: f.Title, FixYAML: f.FixYAML, CheckURL: CheckURL(baseURL, f.CheckID), Citations: []AuditCitation{}}
			for _, c := range f.Citations {
				cit := auditCitation(c, baseURL)
				cit.Title = "" // by ID and one line: titles are on the case pages
				ac.Citations = append(ac.Citations, cit)
			}
			if len(f.Citations) < incidentlib.FewCases {
				ac.Note = incidentlib.FewCasesNote
			}
			out.Checks = append(out.Checks, ac)
		}
	}
	for kind, n := range rep.Skipped {
		out.Skipped = append(out.Skipped, SkippedKind{Kind: kind, Count: n})
	}
	slices.SortFunc(out.Skipped, func(a, b SkippedKind) int { return strings.Compare(a.Kind, b.Kind) })
	slices.SortFunc(out.Checks, func(a, b AuditCheck) int { return strings.Compare(a.CheckID, b.CheckID) })
	for _, p := range rep.Problems {
		out.Problems = append(out.Problems, AuditProblem{Object: auditObject(p.Object), Message: p.Message})
	}
	return out
}

func auditObject(o incidentlib.ObjectRef) AuditObject {
	return AuditObject{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, File: o.File, Line: o.Line}
}

func auditCitation(c incidentlib.Citation, baseURL string) AuditCitation {
	u := c.URL
	if u == "" && baseURL != "" {
		u = incidentlib.CaseURL(baseURL, c.CaseID)
	}
	reason := c.Reason
	if reason == "" && len(c.Terms) > 0 {
		reason = "tagged " + strings.Join(c.Terms, ", ")
	}
	return AuditCitation{CaseID: c.CaseID, Title: c.Title, URL: u, Reason: reason, Source: c.Source}
}

// objectName is how the text names an object: "Deployment shop/web
// (manifests.yaml:12)".
func objectName(o AuditObject) string {
	var b strings.Builder
	if o.Kind == "" && o.Name == "" {
		b.WriteString("document")
		if o.File != "" {
			b.WriteString(" at " + o.File)
			if o.Line > 0 {
				fmt.Fprintf(&b, ":%d", o.Line)
			}
		}
		return b.String()
	}
	b.WriteString(orDash(o.Kind))
	b.WriteString(" ")
	if o.Namespace != "" {
		b.WriteString(o.Namespace + "/")
	}
	if o.Name != "" {
		b.WriteString(o.Name)
	} else {
		b.WriteString("(no name)")
	}
	if o.File != "" {
		b.WriteString(" (" + o.File)
		if o.Line > 0 {
			fmt.Fprintf(&b, ":%d", o.Line)
		}
		b.WriteString(")")
	}
	return b.String()
}

// RenderAuditMarkdown is the text of an audit: a summary line, then the
// findings grouped by object, each with its fix (the YAML once per check)
// and the incidents it cites.
func RenderAuditMarkdown(o *AuditOutput) string {
	var b strings.Builder
	total := o.Counts.Critical + o.Counts.High + o.Counts.Medium + o.Counts.Low
	fmt.Fprintf(&b, "# kubegap: %s in %s", plural(total, "finding", "findings"), plural(o.Objects, "object", "objects"))
	if o.MinSeverity != string(incidentlib.CheckLow) {
		fmt.Fprintf(&b, " at %s severity or above", o.MinSeverity)
	}
	b.WriteString("\n\n")
	if total > 0 {
		fmt.Fprintf(&b, "Critical %d · high %d · medium %d · low %d.", o.Counts.Critical, o.Counts.High, o.Counts.Medium, o.Counts.Low)
		if o.Omitted > 0 {
			fmt.Fprintf(&b, " The %d most severe are listed; %d more are left out: raise min_severity to see them.", len(o.Findings), o.Omitted)
		}
		b.WriteString("\n")
	} else if o.Objects > 0 {
		b.WriteString("No gaps found by kubegap's checks.\n")
	}
	var order []string
	groups := map[string][]AuditFinding{}
	for _, f := range o.Findings {
		k := objectName(f.Object)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	for _, k := range order {
		fmt.Fprintf(&b, "\n## %s\n", k)
		for _, f := range groups[k] {
			fmt.Fprintf(&b, "\n- **%s %s** (%s): %s\n", f.CheckID, f.Title, f.Severity, oneLine(f.Message))
			fmt.Fprintf(&b, "  Fix: %s\n", oneLine(f.Fix))
			if f.Patch != "" {
				kind := "strategic-merge patch"
				if f.PatchType == "json" {
					kind = "JSON patch"
				}
				fmt.Fprintf(&b, "  Patch (%s):\n  ```yaml\n", kind)
				for _, l := range strings.Split(strings.TrimRight(f.Patch, "\n"), "\n") {
					b.WriteString("  " + l + "\n")
				}
				b.WriteString("  ```\n")
			}
		}
	}
	if len(o.Checks) > 0 {
		b.WriteString("\n## Why these matter: public outages each check cites\n")
		for _, c := range o.Checks {
			fmt.Fprintf(&b, "\n- **%s** %s.", c.CheckID, c.Title)
			if c.CheckURL != "" {
				fmt.Fprintf(&b, " %s", c.CheckURL)
			}
			b.WriteString("\n")
			for _, cit := range c.Citations {
				fmt.Fprintf(&b, "  - %s: %s", cit.CaseID, oneLine(cit.Reason))
				if u := cmp.Or(cit.URL, cit.Source); u != "" {
					fmt.Fprintf(&b, " (%s)", u)
				}
				b.WriteString("\n")
			}
			if c.Note != "" {
				fmt.Fprintf(&b, "  %s\n", c.Note)
			}
			if c.FixYAML != "" && !hasPatches(o, c.CheckID) {
				b.WriteString("  ```yaml\n")
				for _, l := range strings.Split(strings.TrimRight(c.FixYAML, "\n"), "\n") {
					b.WriteString("  " + l + "\n")
				}
				b.WriteString("  ```\n")
			}
		}
	}
	if len(o.Skipped) > 0 {
		b.WriteString("\nNot audited (no check reads these kinds):")
		for i, s := range o.Skipped {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s ×%d", s.Kind, s.Count)
		}
		b.WriteString(".\n")
	}
	if len(o.Problems) > 0 {
		b.WriteString("\nCould not be read (the rest was audited):\n")
		for _, p := range o.Problems {
			fmt.Fprintf(&b, "- %s: %s\n", objectName(p.Object), oneLine(p.Message))
		}
	}
	return b.String()
}

// hasPatches reports whether every finding of a check carries its own
// patch, so that the check's generic snippet adds nothing.
func hasPatches(o *AuditOutput, id string) bool {
	for _, f := range o.Findings {
		if f.CheckID == id && f.Patch == "" {
			return false
		}
	}
	return true
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// CheckInput is the input of kubegap_checks.
type CheckInput struct {
	ID string `json:"id,omitempty" jsonschema:"a check ID such as KG001, for that check in full with the incidents it cites; leave out to list every check"`
}

// CheckInfo is one kubegap check.
type CheckInfo struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Severity  string          `json:"severity"`
	Rule      string          `json:"rule"`
	Guards    []TermRef       `json:"guards" jsonschema:"vocabulary terms the check guards against: its topic pages (they do not pick its citations)"`
	URL       string          `json:"url,omitempty" jsonschema:"the check's page"`
	Why       string          `json:"why,omitempty"`
	Fix       string          `json:"fix,omitempty"`
	FixYAML   string          `json:"fix_yaml,omitempty"`
	Citations []AuditCitation `json:"citations,omitempty" jsonschema:"with id only: the cases chosen because they show the gap directly, each with how"`
}

// ChecksOutput is the output of kubegap_checks.
type ChecksOutput struct {
	Checks []CheckInfo `json:"checks"`
}

// NewCheckInfo describes a check; guards are named from v.
func NewCheckInfo(c incidentlib.Check, v *incidentlib.Vocabulary, baseURL string) CheckInfo {
	ci := CheckInfo{ID: c.ID, Title: c.Title, Severity: string(c.Severity), Rule: c.Rule, Guards: []TermRef{}, URL: CheckURL(baseURL, c.ID)}
	for _, g := range c.Guards {
		ci.Guards = append(ci.Guards, TermRef{Slug: g.Slug, Name: incidentlib.TermName(v, g)})
	}
	return ci
}

// RenderChecksMarkdown is the text of kubegap_checks.
func RenderChecksMarkdown(o *ChecksOutput) string {
	var b strings.Builder
	if len(o.Checks) == 1 && o.Checks[0].Why != "" {
		c := o.Checks[0]
		fmt.Fprintf(&b, "# %s %s (%s)\n\n%s\n\nWhy: %s\n\nFix: %s\n", c.ID, c.Title, c.Severity, c.Rule, oneLine(c.Why), oneLine(c.Fix))
		if c.FixYAML != "" {
			fmt.Fprintf(&b, "\n```yaml\n%s\n```\n", strings.TrimRight(c.FixYAML, "\n"))
		}
		fmt.Fprintf(&b, "\nGuards against: %s.", refs(c.Guards))
		if c.URL != "" {
			fmt.Fprintf(&b, " Page: %s", c.URL)
		}
		b.WriteString("\n")
		if len(c.Citations) < incidentlib.FewCases {
			b.WriteString("\n" + incidentlib.FewCasesNote + "\n")
		}
		if len(c.Citations) > 0 {
			b.WriteString("\nCites:\n")
			for i, cit := range c.Citations {
				fmt.Fprintf(&b, "%d. **%s** %s, %s\n", i+1, cit.CaseID, cit.Title, cit.Reason)
				if u := cmp.Or(cit.URL, cit.Source); u != "" {
					fmt.Fprintf(&b, "   %s\n", u)
				}
			}
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s. Call kubegap_checks with id for one in full with the incidents it cites; audit_kubernetes runs them on manifests.\n\n", plural(len(o.Checks), "kubegap check", "kubegap checks"))
	for _, c := range o.Checks {
		fmt.Fprintf(&b, "- **%s** %s (%s): %s Guards against %s.\n", c.ID, c.Title, c.Severity, c.Rule, refs(c.Guards))
	}
	return b.String()
}

var severityEnum = []any{"low", "medium", "high", "critical"}

// addAuditTools registers audit_kubernetes when an Auditor is configured,
// and kubegap_checks when a check catalogue is known.
func (h *handlers) addAuditTools(s *mcp.Server) {
	if h.cfg.Auditor != nil {
		mcp.AddTool(s, h.tool(&mcp.Tool{
			Name:  "audit_kubernetes",
			Title: "Audit Kubernetes manifests",
			Description: "Audits Kubernetes manifests passed as text (YAML or JSON; several documents, kind: List, the output of helm template or kustomize build; at most 1 MiB) with kubegap's read-only checks: probes that restart pods when a dependency fails, retries without a brake, missing disruption budgets, single replicas, unsafe rollouts and more. " +
				"Each finding names the object and field, says how to fix it (with YAML), and cites the public incidents in this library where the same gap caused an outage. " +
				"Use it when writing or reviewing manifests, and cite the incidents when you explain a finding. Nothing is applied or contacted: the text is only read.",
			// No maxLength on manifests: the SDK's refusal would echo the
			// whole text back to the model. The handler checks the size and
			// says so in one line; the transport bounds the request.
			InputSchema: schemaFor[AuditInput](func(p map[string]*jsonschema.Schema) {
				p["min_severity"].Enum = severityEnum
			}),
			Annotations: readOnly("Audit Kubernetes manifests"),
		}), h.auditKubernetes)
	}
	if len(h.checks) > 0 {
		mcp.AddTool(s, h.tool(&mcp.Tool{
			Name:  "kubegap_checks",
			Title: "kubegap checks",
			Description: "Lists kubegap's checks for Kubernetes (ID, title, severity, the rule, the vocabulary terms each guards against), or, given id, one check in full: why it matters, the fix with YAML, and the incidents in this library it cites. " +
				"Use it to explain a finding of audit_kubernetes or to see which outages a Kubernetes setting guards against. " + citeInstruction,
			InputSchema: schemaFor[CheckInput](nil),
			Annotations: readOnly("kubegap checks"),
		}), h.kubegapChecks)
	}
}

func (h *handlers) auditKubernetes(ctx context.Context, _ *mcp.CallToolRequest, in AuditInput) (*mcp.CallToolResult, *AuditOutput, error) {
	if strings.TrimSpace(in.Manifests) == "" {
		return nil, nil, toolError{"manifests is empty: pass the YAML or JSON text of the manifests, e.g. the output of helm template"}
	}
	if len(in.Manifests) > MaxManifestBytes {
		return nil, nil, toolError{fmt.Sprintf("manifests: %d bytes is over the limit of %d (1 MiB); audit fewer documents per call", len(in.Manifests), MaxManifestBytes)}
	}
	min, err := ParseMinSeverity(in.MinSeverity)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	// Wait for a slot for half the call's time at most, so that a busy
	// server says so rather than time out.
	wait := time.NewTimer(h.cfg.CallTimeout / 2)
	defer wait.Stop()
	select {
	case h.auditSlots <- struct{}{}:
		defer func() { <-h.auditSlots }()
	case <-wait.C:
		return nil, nil, toolError{"the server is busy with other audits; try again in a few seconds"}
	case <-ctx.Done():
		return nil, nil, toolError{"the server is busy with other audits; try again in a few seconds"}
	}
	rep, err := h.cfg.Auditor.AuditManifests(ctx, "manifests", []byte(in.Manifests))
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	return AuditResult(rep, min, h.cfg.BaseURL)
}

// AuditResult is an audit tool's answer: the output and its Markdown, or,
// when nothing could be read at all, an error result naming each problem
// so that the model can fix its input.
func AuditResult(rep *incidentlib.AuditReport, min incidentlib.CheckSeverity, baseURL string) (*mcp.CallToolResult, *AuditOutput, error) {
	out := NewAuditOutput(rep, min, baseURL)
	if rep.Objects == 0 && len(out.Problems) > 0 {
		var b strings.Builder
		b.WriteString("nothing was audited, because nothing could be read:")
		for i, p := range out.Problems {
			if i == 10 {
				fmt.Fprintf(&b, " … and %d more", len(out.Problems)-i)
				break
			}
			fmt.Fprintf(&b, "\n- %s: %s", objectName(p.Object), oneLine(p.Message))
		}
		return nil, nil, toolError{b.String()}
	}
	return textResult(RenderAuditMarkdown(out)), out, nil
}

func (h *handlers) kubegapChecks(ctx context.Context, _ *mcp.CallToolRequest, in CheckInput) (*mcp.CallToolResult, *ChecksOutput, error) {
	v := h.lib.Vocabulary()
	out := &ChecksOutput{Checks: []CheckInfo{}}
	if strings.TrimSpace(in.ID) == "" {
		for _, c := range h.checks {
			out.Checks = append(out.Checks, NewCheckInfo(c, v, h.cfg.BaseURL))
		}
		return textResult(RenderChecksMarkdown(out)), out, nil
	}
	c, err := incidentlib.FindCheck(h.checks, strings.TrimSpace(in.ID))
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	ci := NewCheckInfo(c, v, h.cfg.BaseURL)
	ci.Why, ci.Fix, ci.FixYAML = c.Why, c.Fix, c.FixYAML
	cits, err := incidentlib.CitedCases(ctx, h.lib, c, checkToolCitations, h.cfg.BaseURL)
	if err != nil {
		return nil, nil, h.toolErr(err)
	}
	ci.Citations = []AuditCitation{}
	for _, cit := range cits {
		ci.Citations = append(ci.Citations, auditCitation(cit, h.cfg.BaseURL))
	}
	out.Checks = append(out.Checks, ci)
	return textResult(RenderChecksMarkdown(out)), out, nil
}
