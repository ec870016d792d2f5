package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib/mcpserver"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Now: time.Now}
	code = m.Run(context.Background(), args)
	return code, out.String(), errOut.String()
}

func TestValidateExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  string // a line stdout must hold
		err  string // a line stderr must hold
	}{
		{"shipped corpus is clean", []string{"validate"}, 0, "", "no problems"},
		{"a clean directory alone", []string{"validate", "--no-builtin", "../../corpus/testdata/good"}, 0, "", "ok: 2 cases"},
		{"problems exit 1 and name file and line", []string{"validate", "--no-builtin", "../../corpus/testdata/broken"}, 1,
			`../../corpus/testdata/broken/IL-9001.yaml:10: unknown root cause "config-chang" (did you mean "config-change"?)`, "problems"},
		{"a missing directory is a usage error", []string{"validate", "no/such/dir"}, 2, "", "no/such/dir"},
		{"an empty directory alone is a usage error", []string{"validate", "--no-builtin", "testdata/empty"}, 2, "", "no .yaml case files"},
		{"nothing to check is a usage error", []string{"validate", "--no-builtin"}, 2, "", "no case directory was given"},
		{"an unknown flag is a usage error", []string{"validate", "--frobnicate"}, 2, "", "flag provided but not defined"},
		{"no command", nil, 2, "", "usage: incidentlib"},
		{"unknown command", []string{"frob"}, 2, "", `unknown command "frob"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.err) {
				t.Errorf("stdout %q should contain %q; stderr %q should contain %q", out, tt.out, errOut, tt.err)
			}
		})
	}
}

func TestListAndTeamCases(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../corpus/testdata/good/IL-9000.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "IL-9000.yaml"), data, 0o644)
	code, out, errOut := run(t, "list", "--cases", dir)
	if code != 0 || !strings.Contains(out, "IL-9000\t2024-05-01T10:00:00Z\tExample Co\tA fixture case") || !strings.Contains(out, "IL-0561\t") {
		t.Fatalf("list with a team directory: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = run(t, "list", "--no-builtin", "--cases", dir)
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("list --no-builtin: exit %d, output %q, want the one team case", code, out)
	}
	// A team case that reuses a shipped ID is refused, naming both files.
	shipped, _ := os.ReadFile("../../cases/IL-0561.yaml")
	os.WriteFile(filepath.Join(dir, "IL-0561.yaml"), shipped, 0o644)
	code, _, errOut = run(t, "list", "--cases", dir)
	if code != 1 || !strings.Contains(errOut, "duplicate ID IL-0561: cases/IL-0561.yaml, a built-in case compiled into this binary, already has it (to check copies of the built-in cases on their own, add --no-builtin)") {
		t.Fatalf("colliding ID: exit %d, stderr %q", code, errOut)
	}
}

func TestStatsFlagsThinTerms(t *testing.T) {
	code, out, errOut := run(t, "stats")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"cases", "ROOT CAUSE", "COMPONENT", "SYMPTOM", "CONTRIBUTING FACTOR", "FIELD", "time_to_resolve", "verification: checked"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats output lacks %q", want)
		}
	}
}

// stats --missing lists, in ID order, the cases that do not know a field,
// so a curator knows which to complete; the count on standard error agrees
// with the FIELD table.
func TestStatsMissing(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("../../corpus/testdata/good/IL-9000.yaml")
	if err != nil {
		t.Skip("fixture moved:", err)
	}
	writeCase := func(id string, body []byte) {
		b := strings.Replace(string(body), "IL-9000", id, -1)
		if err := os.WriteFile(filepath.Join(dir, id+".yaml"), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeCase("IL-9102", good)
	writeCase("IL-9101", good)
	code, out, errOut := run(t, "stats", "--no-builtin", "--cases", dir, "--missing", "region")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "IL-9101\t") || !strings.HasPrefix(lines[1], "IL-9102\t") {
		t.Errorf("stats --missing region listed:\n%s", out)
	}
	if !strings.Contains(errOut, "2 of 2 cases do not know region") {
		t.Errorf("stderr: %q", errOut)
	}
	code, out, _ = run(t, "stats", "--no-builtin", "--cases", dir, "--missing", "time_to_resolve")
	if code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("stats --missing time_to_resolve: exit %d, listed %q (both cases know it)", code, out)
	}
	// A duration a case does not know comes with why: what of its
	// timeline its sources give, so a curator sees what is missing.
	noEnd := strings.Replace(string(good), "IL-9000", "IL-9103", -1)
	noEnd = regexp.MustCompile(`(?m)^  (resolved|mitigated|detected): .*\n`).ReplaceAllString(noEnd, "")
	noEnd = regexp.MustCompile(`(?m)^time_to_(resolve|detect): .*\n`).ReplaceAllString(noEnd, "")
	if err := os.WriteFile(filepath.Join(dir, "IL-9103.yaml"), []byte(noEnd), 0o644); err != nil {
		t.Fatal(err)
	}
	dayOnly := regexp.MustCompile(`(?m)^  started: (\d{4}-\d\d-\d\d)T.*$`).ReplaceAllString(string(good), "  started: $1")
	dayOnly = strings.Replace(dayOnly, "IL-9000", "IL-9104", -1)
	if err := os.WriteFile(filepath.Join(dir, "IL-9104.yaml"), []byte(dayOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	reported := strings.Replace(string(good), "IL-9000", "IL-9105", -1)
	reported = regexp.MustCompile(`(?m)^  started: .*$`).ReplaceAllString(reported, "  reported: 2024-05-03")
	if err := os.WriteFile(filepath.Join(dir, "IL-9105.yaml"), []byte(reported), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "stats", "--no-builtin", "--cases", dir, "--missing", "time_to_resolve")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "IL-9105\t") || !strings.Contains(out, "no start (its sources give only when it was made public)") {
		t.Errorf("a case without a start is not listed with why:\n%s", out)
	}
	for _, want := range []string{
		"IL-9103\t", "no end time (resolved) and no stated time to resolve",
		"IL-9104\t", "starts only to the day",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stats --missing time_to_resolve lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "IL-9101") || !strings.Contains(errOut, "3 of 5 cases do not know time_to_resolve") {
		t.Errorf("stats --missing time_to_resolve: out %q, stderr %q", out, errOut)
	}
	code, out, _ = run(t, "stats", "--no-builtin", "--cases", dir, "--missing", "time_to_detect")
	if code != 0 || !strings.Contains(out, "no detection time (detected) and no stated time to detect") {
		t.Errorf("stats --missing time_to_detect: exit %d:\n%s", code, out)
	}
	code, _, errOut = run(t, "stats", "--missing", "durations")
	if code != 2 || !strings.Contains(errOut, `--missing "durations" is not a field; valid: started (exact time)`) {
		t.Errorf("unknown field: exit %d, stderr %q", code, errOut)
	}
}

// TestServeEndToEnd starts the real command on a random port and reads each
// protocol's front door the way a user would.
func TestServeEndToEnd(t *testing.T) {
	ctx := context.Background()
	srv := serveForTest(t, "--data", "-", "--log-level", "warn")
	base := srv.Base
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Live as soon as it listens, before the library is loaded.
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz %d", code)
	}
	srv.waitReady()
	checks := []struct{ path, want string }{
		{"/cases/IL-0561", "DigitalOcean"},
		{"/api/v1/cases/IL-0561/similar", "same root cause"},
		{"/metrics", "incidentlib_cases"},
		// kubegap's catalogue is wired into the pages and the API, citing
		// the shipped corpus.
		{"/cases/IL-0790", `href="/checks/KG003"`},
		{"/checks", "KG001"},
		{"/checks/KG003", `href="/cases/IL-0790"`},
		{"/api/v1/checks/KG003", `"id":"IL-0790"`},
	}
	for _, c := range checks {
		code, body := get(c.path)
		if code != 200 || !strings.Contains(body, c.want) {
			t.Errorf("GET %s: %d, body lacks %q", c.path, code, c.want)
		}
	}

	// The MCP endpoint audits manifests with kubegap's real checks.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "audit_kubernetes", Arguments: map[string]any{"manifests": retriesWithoutBrake}})
	if err != nil || res.IsError {
		t.Fatalf("audit_kubernetes: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out mcpserver.AuditOutput
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	cited := false
	for _, c := range out.Checks {
		for _, cit := range c.Citations {
			cited = cited || (c.CheckID == "KG003" && cit.CaseID == "IL-0790" && cit.URL == base+"/cases/IL-0790")
		}
	}
	if !cited {
		t.Errorf("audit_kubernetes over HTTP: no KG003 finding citing IL-0790 at %s: %s", base, b)
	}
	cs.Close()

	if code := srv.stop(); code != 0 {
		t.Errorf("serve exited %d after shutdown: %s", code, srv.Logs.String())
	}
}

// retriesWithoutBrake is an Istio route that retries a host with no
// DestinationRule to brake it.
const retriesWithoutBrake = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: payments
  namespace: shop
spec:
  hosts:
  - payments
  http:
  - route:
    - destination:
        host: payments
    retries:
      attempts: 3
      retryOn: 5xx
`

// --rate-limit 0 turns the limit off on every surface, MCP included; the
// log has one line per request (none of the protocol library's own) and a
// line at shutdown.
func TestServeRateLimitOffAndLogs(t *testing.T) {
	srv := serveForTest(t, "--data", "-", "--rate-limit", "0", "--log-format", "json")
	srv.waitReady()
	base := srv.Base
	const n = 80 // twice the burst the MCP endpoint once applied whatever the flag said
	for i := range n {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("MCP request %d: %d with --rate-limit 0", i, resp.StatusCode)
		}
	}
	if code := srv.stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	logs := srv.Logs.String()
	if got := strings.Count(logs, `"msg":"request"`); got != n {
		t.Errorf("%d request lines for %d requests", got, n)
	}
	if c := strings.Count(logs, "\n") - strings.Count(logs, `"msg":"request"`); c > 8 {
		t.Errorf("%d lines besides the request lines:\n%s", c, logs)
	}
	if !strings.Contains(logs, `"msg":"shutdown"`) {
		t.Errorf("no shutdown line:\n%s", logs)
	}
}

func TestServeRefusesBadLimitFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--rate-limit", "-1"},
		{"serve", "--log-format", "xml"},
		{"serve", "--max-inflight", "-2"},
		{"serve", "--search-nice", "-1"},
		{"serve", "--search-nice", "20"},
	} {
		if code, _, errOut := run(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// `incidentlib help` lists every command there is (issue 22: five that
// the README lists were missing).
func TestHelpListsEveryCommand(t *testing.T) {
	var out syncBuffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: discard{}, Stderr: &out, Now: time.Now}
	if code := m.Run(context.Background(), []string{"help"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	names := []string{"validate", "list", "overlap"}
	for name := range m.moreCommands() {
		names = append(names, name)
	}
	for _, name := range names {
		if !strings.Contains(out.String(), "\n  "+name+" ") {
			t.Errorf("help does not list %s:\n%s", name, out.String())
		}
	}
}
