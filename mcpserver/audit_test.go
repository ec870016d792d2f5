package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
)

// fakeAuditor answers like kubegap's Auditor without its checks: a
// document holding "bad:" cannot be read; otherwise every "kind:" line is
// an object with one finding of the check named on the line, in the
// order of fakeChecks.
type fakeAuditor struct {
	extra int // additional low findings, to test the bound
}

func fakeChecks() []incidentlib.Check {
	return []incidentlib.Check{
		{ID: "KG001", Title: "Liveness probe depends on something remote", Severity: incidentlib.CheckHigh,
			Rule: "Liveness checks only the process.", Why: "Restart loops outlive the dependency outage.", Fix: "Probe a local endpoint.",
			FixYAML: "livenessProbe:\n  httpGet: {path: /livez, port: 8080}\n",
			Guards:  []incidentlib.TermRef{{Facet: incidentlib.FacetContributingFactor, Slug: "health-check-dependency"}}},
		{ID: "KG002", Title: "Retries without a brake", Severity: incidentlib.CheckLow,
			Rule: "Retries need outlier detection.", Why: "Retries multiply load.", Fix: "Add outlier detection.",
			Guards: []incidentlib.TermRef{{Facet: incidentlib.FacetContributingFactor, Slug: "retry-amplification"}},
			Cases:  []incidentlib.CheckCase{{ID: "IL-0943", Why: "retries overwhelmed the authorising service"}, {ID: "IL-0790", Why: "retried failures piled up"}}},
	}
}

func (fakeAuditor) Checks() []incidentlib.Check { return fakeChecks() }

func (f fakeAuditor) AuditManifests(ctx context.Context, name string, b []byte) (*incidentlib.AuditReport, error) {
	text := string(b)
	if strings.Contains(text, "bad:") {
		return &incidentlib.AuditReport{Problems: []incidentlib.InputProblem{{
			Object: incidentlib.ObjectRef{File: name, Line: 2}, Message: "line 2: mapping values are not allowed in this context"}}}, nil
	}
	rep := &incidentlib.AuditReport{Skipped: map[string]int{"VirtualService": 1}}
	checks := fakeChecks()
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "kind: ") {
			continue
		}
		rep.Objects++
		c := checks[rep.Objects%2]
		rep.Findings = append(rep.Findings, incidentlib.Finding{
			CheckID: c.ID, Title: c.Title, Severity: c.Severity, Fix: c.Fix, FixYAML: c.FixYAML,
			Object:  incidentlib.ObjectRef{APIVersion: "apps/v1", Kind: strings.TrimPrefix(line, "kind: "), Namespace: "shop", Name: fmt.Sprintf("web-%d", i), File: name, Line: i + 1},
			Message: "spec.template.spec.containers[0].livenessProbe calls another host",
			Citations: []incidentlib.Citation{{CaseID: "IL-0561", Title: "DigitalOcean <auth> timed out", Terms: []string{"retry-amplification"}, Reason: "tagged Retry amplification"},
				{CaseID: "IL-0001", Title: "One", URL: "https://other.example/cases/IL-0001"}},
		})
	}
	for i := 0; i < f.extra; i++ {
		rep.Findings = append(rep.Findings, incidentlib.Finding{CheckID: "KG002", Title: "Retries without a brake", Severity: incidentlib.CheckLow, Message: "m", Fix: "f"})
	}
	return rep, nil
}

const twoObjects = "apiVersion: apps/v1\nkind: Deployment\n---\napiVersion: apps/v1\nkind: StatefulSet\n"

func TestAuditToolsRegisteredOnlyWithAnAuditor(t *testing.T) {
	names := func(cfg Config) []string {
		res, err := connect(t, testLibrary(t), cfg).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			if tool.Name == "audit_kubernetes" || tool.Name == "kubegap_checks" {
				out = append(out, tool.Name)
			}
		}
		return out
	}
	if got := names(Config{}); got != nil {
		t.Errorf("without an auditor: %v", got)
	}
	if got := names(Config{Auditor: fakeAuditor{}}); !cmp.Equal(got, []string{"audit_kubernetes", "kubegap_checks"}) {
		t.Errorf("with an auditor: %v", got)
	}
	if got := names(Config{Checks: fakeChecks()}); !cmp.Equal(got, []string{"kubegap_checks"}) {
		t.Errorf("with a catalogue only: %v", got)
	}
}

func TestAuditKubernetes(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{Auditor: fakeAuditor{}})
	var out AuditOutput
	res := call(t, cs, "audit_kubernetes", map[string]any{"manifests": twoObjects}, &out)
	if res.IsError {
		t.Fatalf("error: %s", text(res))
	}
	if out.Objects != 2 || len(out.Findings) != 2 || out.Counts != (SeverityCounts{High: 1, Low: 1}) || out.MinSeverity != "low" {
		t.Fatalf("output: %+v", out)
	}
	f := out.Findings[0] // most severe first
	if f.CheckID != "KG001" || f.Object.Kind != "StatefulSet" || f.Object.Line != 5 {
		t.Errorf("first finding: %+v", f)
	}
	// Citations come once per check, by ID and one line, without titles.
	if len(out.Checks) != 2 || out.Checks[0].CheckID != "KG001" || out.Checks[0].CheckURL != testBaseURL+"/checks/KG001" {
		t.Fatalf("checks: %+v", out.Checks)
	}
	wantCits := []AuditCitation{
		{CaseID: "IL-0561", URL: testBaseURL + "/cases/IL-0561", Reason: "tagged Retry amplification"},
		{CaseID: "IL-0001", URL: "https://other.example/cases/IL-0001"}, // the auditor's own URL is kept
	}
	if diff := cmp.Diff(wantCits, out.Checks[0].Citations); diff != "" {
		t.Errorf("citations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]SkippedKind{{Kind: "VirtualService", Count: 1}}, out.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	md := text(res)
	for _, want := range []string{
		"# kubegap: 2 findings in 2 objects",
		"## StatefulSet shop/web-4 (manifests:5)",
		"- **KG001 Liveness probe depends on something remote** (high): spec.template.spec.containers[0].livenessProbe calls another host",
		"  ```yaml\n  livenessProbe:\n    httpGet: {path: /livez, port: 8080}\n  ```",
		"  - IL-0561: tagged Retry amplification (" + testBaseURL + "/cases/IL-0561)",
		"Not audited (no check reads these kinds): VirtualService ×1.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("text lacks %q:\n%s", want, md)
		}
	}

	// min_severity drops what is below it, from the list and the counts.
	out = AuditOutput{}
	call(t, cs, "audit_kubernetes", map[string]any{"manifests": twoObjects, "min_severity": "high"}, &out)
	if len(out.Findings) != 1 || out.Findings[0].Severity != "high" || out.Counts != (SeverityCounts{High: 1}) {
		t.Errorf("min_severity high: %+v", out)
	}
}

func TestAuditKubernetesBounds(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{Auditor: fakeAuditor{extra: MaxAuditFindings + 50}})
	var out AuditOutput
	call(t, cs, "audit_kubernetes", map[string]any{"manifests": twoObjects}, &out)
	if len(out.Findings) != MaxAuditFindings || out.Omitted != 52 || out.Counts.Low != MaxAuditFindings+51 || out.Findings[0].Severity != "high" {
		t.Errorf("%d findings, %d omitted, counts %+v, first %s", len(out.Findings), out.Omitted, out.Counts, out.Findings[0].Severity)
	}
}

// Bad input comes back as a tool result with isError and a message that
// says what is wrong, never as a protocol error.
func TestAuditKubernetesBadInput(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{Auditor: fakeAuditor{}})
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"malformed YAML", map[string]any{"manifests": "kind: Pod\nbad: [\n"}, "nothing was audited, because nothing could be read:\n- document at manifests:2: line 2: mapping values are not allowed"},
		{"empty", map[string]any{"manifests": "  \n"}, "manifests is empty"},
		{"too large", map[string]any{"manifests": strings.Repeat("#", MaxManifestBytes+1)}, "manifests: 1048577 bytes is over the limit of 1048576 (1 MiB)"},
		{"unknown severity", map[string]any{"manifests": twoObjects, "min_severity": "urgent"}, "min_severity"},
		{"no manifests", map[string]any{}, "manifests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, "audit_kubernetes", tc.args, nil)
			if !res.IsError || !strings.Contains(text(res), tc.want) {
				t.Errorf("isError %v, text %q; want an error holding %q", res.IsError, truncate(text(res), 300), tc.want)
			}
		})
	}
}

func TestKubegapChecksTool(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{Auditor: fakeAuditor{}})
	var list ChecksOutput
	res := call(t, cs, "kubegap_checks", map[string]any{}, &list)
	if res.IsError || len(list.Checks) != 2 || list.Checks[1].URL != testBaseURL+"/checks/KG002" || list.Checks[0].Citations != nil {
		t.Fatalf("list: %+v %s", list, text(res))
	}
	if diff := cmp.Diff([]TermRef{{Slug: "retry-amplification", Name: "Retry amplification"}}, list.Checks[1].Guards); diff != "" {
		t.Errorf("guards (-want +got):\n%s", diff)
	}

	var one ChecksOutput
	res = call(t, cs, "kubegap_checks", map[string]any{"id": "kg002"}, &one)
	if res.IsError || len(one.Checks) != 1 {
		t.Fatalf("one: %s", text(res))
	}
	c := one.Checks[0]
	// The citations are the library's own, as the domain finds them.
	want, err := incidentlib.CitedCases(context.Background(), testLibrary(t), fakeChecks()[1], checkToolCitations, testBaseURL)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || len(c.Citations) != len(want) || c.Citations[0].CaseID != want[0].CaseID || c.Citations[0].URL != want[0].URL || c.Citations[0].Reason != "retries overwhelmed the authorising service" || c.Citations[0].Title == "" {
		t.Errorf("citations %+v, want those of CitedCases %+v", c.Citations, want)
	}
	if !strings.Contains(text(res), "# KG002 Retries without a brake (low)") || !strings.Contains(text(res), want[0].URL) {
		t.Errorf("text:\n%s", text(res))
	}

	res = call(t, cs, "kubegap_checks", map[string]any{"id": "KG999"}, nil)
	if !res.IsError || !strings.Contains(text(res), `there is no kubegap check "KG999"; the checks are KG001 to KG002`) {
		t.Errorf("unknown check: %v %s", res.IsError, text(res))
	}
}

// The HTTP endpoint takes a 1 MiB manifest once an auditor is set, and
// keeps its smaller limit otherwise.
func TestAuditBodyLimit(t *testing.T) {
	if got := (Config{Auditor: fakeAuditor{}}).withDefaults().MaxBodyBytes; got != DefaultAuditBodyBytes {
		t.Errorf("with an auditor: %d", got)
	}
	if got := (Config{}).withDefaults().MaxBodyBytes; got != DefaultMaxBodyBytes {
		t.Errorf("without: %d", got)
	}
}

// Without a base URL (kubegap mcp with no library site) nothing links to
// a page that does not exist; the auditor's own URLs and sources remain.
func TestAuditOutputWithoutBaseURL(t *testing.T) {
	rep, err := fakeAuditor{}.AuditManifests(context.Background(), "m.yaml", []byte(twoObjects))
	if err != nil {
		t.Fatal(err)
	}
	rep.Findings[0].Citations[0].Source = "https://status.example/1"
	out := NewAuditOutput(rep, "", "")
	c := out.Checks[1] // KG002, the check of the Deployment's finding
	if c.CheckID != "KG002" || c.CheckURL != "" || c.Citations[0].URL != "" || c.Citations[1].URL != "https://other.example/cases/IL-0001" {
		t.Errorf("URLs without a base: %+v", c)
	}
	md := RenderAuditMarkdown(out)
	if !strings.Contains(md, "  - IL-0561: tagged Retry amplification (https://status.example/1)") || strings.Contains(md, "](/") {
		t.Errorf("text:\n%s", md)
	}
}

// blockingAuditor holds every audit until release is closed.
type blockingAuditor struct {
	fakeAuditor
	started chan struct{}
	release chan struct{}
}

func (b blockingAuditor) AuditManifests(ctx context.Context, name string, m []byte) (*incidentlib.AuditReport, error) {
	b.started <- struct{}{}
	<-b.release
	return b.fakeAuditor.AuditManifests(ctx, name, m)
}

// Audits beyond MaxConcurrentAudits wait, then are told the server is
// busy; the running one is not disturbed.
func TestAuditConcurrencyBound(t *testing.T) {
	a := blockingAuditor{started: make(chan struct{}, 1), release: make(chan struct{})}
	cs := connect(t, testLibrary(t), Config{Auditor: a, MaxConcurrentAudits: 1, CallTimeout: 4 * time.Second})
	first := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "audit_kubernetes", Arguments: map[string]any{"manifests": twoObjects}})
		first <- res
	}()
	<-a.started
	res := call(t, cs, "audit_kubernetes", map[string]any{"manifests": twoObjects}, nil)
	if !res.IsError || !strings.Contains(text(res), "busy with other audits") {
		t.Errorf("second audit: isError %v, %q", res.IsError, text(res))
	}
	close(a.release)
	if res := <-first; res == nil || res.IsError {
		t.Errorf("the first audit failed: %+v", res)
	}
}
