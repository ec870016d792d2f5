package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/mcpserver"
)

// startMCP runs `kubegap mcp` with args, as a client would start it, and
// connects the SDK's client to its standard input and output.
func startMCP(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errOut bytes.Buffer
	m := &Main{Stdin: inR, Stdout: outW, Stderr: &errOut, Now: time.Now}
	done := make(chan int, 1)
	go func() {
		done <- m.Run(ctx, append([]string{"mcp"}, args...))
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr: %s)", err, errOut.String())
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		select {
		case code := <-done:
			if code != exitOK {
				t.Errorf("kubegap mcp exited %d: %s", code, errOut.String())
			}
		case <-time.After(10 * time.Second):
			t.Error("kubegap mcp did not stop when its input closed")
		}
		cancel()
	})
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if out != nil && !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return res, strings.Join(text, "\n")
}

const retryFixture = "../../kubegap/testdata/checks/KG003/fail-no-destinationrule.yaml"

// TestMCP starts one server (each start loads the library) for the
// audits and for the bad input.
func TestMCP(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := startMCP(t, "--base-url", "http://lib.example/", "--kubeconfig", kubeconfig)
	t.Run("audits", func(t *testing.T) { testMCPAudits(t, cs) })
	t.Run("bad input", func(t *testing.T) { testMCPBadInput(t, cs, dir) })
}

func testMCPAudits(t *testing.T, cs *mcp.ClientSession) {
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s is not annotated read-only", tool.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"audit_cluster", "audit_manifests", "kubegap_checks"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	// A file on disk, a directory, and the same manifest as text all give
	// KG003 citing the DigitalOcean case, linked under --base-url.
	text, err := os.ReadFile(retryFixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() // a directory read recursively
	if err := os.MkdirAll(filepath.Join(dir, "istio"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "istio", "routes.yaml"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{
		{"paths": []string{retryFixture}},
		{"paths": []string{dir}},
		{"manifests": string(text)},
	} {
		var out mcpserver.AuditOutput
		res, md := callTool(t, cs, "audit_manifests", args, &out)
		if res.IsError {
			t.Fatalf("%v: %s", args, md)
		}
		found := false
		for _, f := range out.Findings {
			if f.CheckID == "KG003" && f.Object.Line == 0 {
				t.Errorf("%v: finding %+v", args, f)
			}
		}
		for _, c := range out.Checks {
			if c.CheckID != "KG003" {
				continue
			}
			for _, cit := range c.Citations {
				found = found || (cit.CaseID == "IL-0790" && cit.URL == "http://lib.example/cases/IL-0790" && cit.Reason != "")
			}
			if c.CheckURL != "http://lib.example/checks/KG003" {
				t.Errorf("%v: check %+v", args, c)
			}
		}
		if !found || !strings.Contains(md, "KG003") || !strings.Contains(md, "IL-0790") {
			t.Errorf("%v: no KG003 finding citing IL-0790:\n%s", args, md)
		}
	}

	var checks mcpserver.ChecksOutput
	if res, md := callTool(t, cs, "kubegap_checks", map[string]any{"id": "KG003"}, &checks); res.IsError || len(checks.Checks) != 1 || len(checks.Checks[0].Citations) == 0 {
		t.Errorf("kubegap_checks KG003: %s", md)
	}
}

// Bad input is a tool result with isError and a message naming what is
// wrong; the server keeps serving.
func testMCPBadInput(t *testing.T, cs *mcp.ClientSession, dir string) {
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: Deployment\nmetadata: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"audit_manifests", map[string]any{}, "give paths"},
		{"audit_manifests", map[string]any{"paths": []string{"x.yaml"}, "manifests": "kind: Pod"}, "not both"},
		{"audit_manifests", map[string]any{"paths": []string{"-"}}, "pass text as manifests instead"},
		{"audit_manifests", map[string]any{"paths": []string{filepath.Join(dir, "missing.yaml")}}, "missing.yaml: no such file or directory"},
		{"audit_manifests", map[string]any{"paths": []string{bad}}, "nothing was audited, because nothing could be read:\n- document at " + bad + ":2: malformed YAML"},
		{"audit_manifests", map[string]any{"manifests": "kind: Pod", "min_severity": "urgent"}, "min_severity"},
		{"audit_manifests", map[string]any{"manifests": strings.Repeat("#", mcpserver.MaxManifestBytes+1)}, "over the limit"},
		{"audit_cluster", map[string]any{"context": "nowhere"}, "nowhere"},
		{"kubegap_checks", map[string]any{"id": "KG999"}, `no kubegap check "KG999"`},
	} {
		res, md := callTool(t, cs, tc.tool, tc.args, nil)
		if !res.IsError || !strings.Contains(md, tc.want) {
			t.Errorf("%s %v: isError %v, %q; want an error holding %q", tc.tool, tc.args, res.IsError, truncateForTest(md), tc.want)
		}
	}
}

func truncateForTest(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func TestMCPUsage(t *testing.T) {
	var errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errOut, Now: time.Now}
	for _, args := range [][]string{{"mcp", "extra"}, {"mcp", "--max-citations", "0"}, {"mcp", "--config", "/nonexistent/policy.yaml"}} {
		errOut.Reset()
		if code := m.Run(context.Background(), args); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errOut.String())
		}
	}
}

// TestMCPCitesFromTable: kubegap mcp cites as kubegap audit does, from the
// compiled-in citation table (the same cases with the same lines, in the
// same order), then a team's cases (--cases) that name the check; with
// --no-builtin only those; and a team case naming a check kubegap lacks
// stops the server at start with a message naming it, as it stops an audit.
func TestMCPCitesFromTable(t *testing.T) {
	code, stdout, stderr := run(t, gappy, "audit", "--format", "json", "-")
	if code != exitFindings {
		t.Fatalf("audit: exit %d: %s", code, stderr)
	}
	var rep struct {
		Checks map[string]struct {
			Citations []struct{ Case, Title, Reason string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range rep.Checks["KG009"].Citations {
		want = append(want, c.Case+" | "+c.Title+" | "+c.Reason)
	}
	if len(want) == 0 {
		t.Fatal("the audit cites nothing for KG009; the comparison would prove nothing")
	}

	dir := t.TempDir()
	team := strings.Replace(strings.Replace(teamCase, "IL-9100", "IL-9101", 1), "Our checkout", "Our basket", 1)
	writeFile(t, dir, "IL-9101.yaml", team)
	cited := func(cs *mcp.ClientSession) []string {
		t.Helper()
		var out mcpserver.ChecksOutput
		res, md := callTool(t, cs, "kubegap_checks", map[string]any{"id": "KG009"}, &out)
		if res.IsError || len(out.Checks) != 1 {
			t.Fatalf("kubegap_checks KG009: %s", md)
		}
		var got []string
		for _, c := range out.Checks[0].Citations {
			got = append(got, c.CaseID+" | "+c.Title+" | "+c.Reason)
		}
		return got
	}
	teamLine := "IL-9101 | Our basket ran one pod and went down on every deploy | " + incidentlib.TeamCaseWhy("KG009")
	if diff := cmp.Diff(append(slices.Clone(want), teamLine), cited(startMCP(t, "--cases", dir))); diff != "" {
		t.Errorf("kubegap mcp --cases cites differently from the table (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{teamLine}, cited(startMCP(t, "--cases", dir, "--no-builtin"))); diff != "" {
		t.Errorf("--no-builtin (-want +got):\n%s", diff)
	}

	writeFile(t, dir, "IL-9101.yaml", strings.Replace(team, "[KG009]", "[KG999]", 1))
	var errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errOut, Now: time.Now}
	if code := m.Run(context.Background(), []string{"mcp", "--cases", dir}); code != exitUsage || !strings.Contains(errOut.String(), "names KG999 in kubegap_checks, which kubegap does not have") {
		t.Errorf("a case naming KG999: exit %d, stderr %q", code, errOut.String())
	}
}
