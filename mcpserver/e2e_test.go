package mcpserver

// End-to-end tests with MCP clients nobody here wrote: the go-sdk client
// over HTTP and stdio, the MCP Inspector CLI and the official conformance
// suite. They are switched on by INCIDENTLIB_MCP_CLIENT_TESTS=1; see
// docs/mcp.md for what to install.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment of the end-to-end tests.
const (
	clientTestsEnv = "INCIDENTLIB_MCP_CLIENT_TESTS" // "1" runs them
	// Optional: test a server started elsewhere instead of this package's.
	urlEnv      = "INCIDENTLIB_MCP_URL"       // e.g. http://127.0.0.1:8080/mcp
	stdioCmdEnv = "INCIDENTLIB_MCP_STDIO_CMD" // e.g. "/tmp/incidentlib mcp"
	// Optional: the client commands; by default looked up on PATH.
	inspectorEnv   = "INCIDENTLIB_MCP_INSPECTOR"   // the inspector bin
	conformanceEnv = "INCIDENTLIB_MCP_CONFORMANCE" // the conformance bin
)

// conformanceScenarios are the suite's server scenarios that apply to a
// read-only library server. The others exercise test tools, resources and
// prompts (test_simple_text, test://static-text, …) that only the suite's
// reference server has, or features this server does not offer
// (subscriptions, sampling, elicitation, SSE streams, logging).
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"resources-list",
	"prompts-list",
	"completion-complete",
	"dns-rebinding-protection",
}

func requireClientTests(t *testing.T) {
	t.Helper()
	if os.Getenv(clientTestsEnv) != "1" {
		t.Skipf("set %s=1 to run real MCP clients (see docs/mcp.md)", clientTestsEnv)
	}
}

// e2eURL is the Streamable HTTP endpoint under test: the one in urlEnv, or
// this package's handler on a loopback port at /mcp.
func e2eURL(t *testing.T) string {
	t.Helper()
	if u := os.Getenv(urlEnv); u != "" {
		return u
	}
	mux := http.NewServeMux()
	// A rate limit a test suite firing requests back to back stays under.
	mux.Handle("/mcp", NewHTTPHandler(testLibrary(t), Config{BaseURL: testBaseURL, RateLimit: 500, RateBurst: 500}))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// e2eStdio is the command of the stdio server under test: the one in
// stdioCmdEnv, or this test binary in its server mode.
func e2eStdio() (argv, env []string) {
	if c := os.Getenv(stdioCmdEnv); c != "" {
		return strings.Fields(c), nil
	}
	return []string{os.Args[0]}, []string{stdioChildEnv + "=1"}
}

func TestE2EGoSDKClient(t *testing.T) {
	requireClientTests(t)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	argv, env := e2eStdio()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	for name, tr := range map[string]mcp.Transport{
		"http":  &mcp.StreamableClientTransport{Endpoint: e2eURL(t)},
		"stdio": &mcp.CommandTransport{Command: cmd},
	} {
		t.Run(name, func(t *testing.T) {
			cs, err := client.Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			exercise(t, cs)
		})
	}
}

// The tools of the server, sorted: the library's, and those added when an
// Auditor is configured (incidentlib serve and mcp configure kubegap's).
var (
	libraryTools   = []string{"get_incident", "get_topic", "list_incidents", "search_incidents", "similar_incidents", "vocab"}
	withAuditTools = []string{"audit_kubernetes", "get_incident", "get_topic", "kubegap_checks", "list_incidents", "search_incidents", "similar_incidents", "vocab"}
)

// exerciseAudit runs the audit tools of a server that has them: a route
// retrying with no brake must give findings, each citing cases by URL, and
// malformed YAML a tool error.
func exerciseAudit(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	const manifests = "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: payments, namespace: shop}\n" +
		"spec:\n  hosts: [payments]\n  http:\n  - route:\n    - destination: {host: payments}\n    retries: {attempts: 3, retryOn: 5xx}\n"
	var out AuditOutput
	res := call(t, cs, "audit_kubernetes", map[string]any{"manifests": manifests}, &out)
	if res.IsError || out.Objects != 1 || len(out.Findings) == 0 {
		t.Fatalf("audit_kubernetes: %.500s", text(res))
	}
	cited := false
	for _, c := range out.Checks {
		for _, cit := range c.Citations {
			cited = true
			if !strings.Contains(cit.URL, "/cases/IL-") || cit.Reason == "" {
				t.Errorf("check %s cites %+v", c.CheckID, cit)
			}
		}
		if len(c.Citations) < 2 && c.Note == "" {
			t.Errorf("check %s cites %d cases and does not say few are known", c.CheckID, len(c.Citations))
		}
	}
	if !cited || len(out.Checks) == 0 {
		t.Errorf("no check of %+v cites a case", out.Checks)
	}
	if res := call(t, cs, "audit_kubernetes", map[string]any{"manifests": "kind: Pod\nmetadata: [\n"}, nil); !res.IsError || !strings.Contains(text(res), "manifests:2") {
		t.Errorf("audit_kubernetes on malformed YAML: want a tool error naming manifests:2, got %.300s", text(res))
	}
	var checks ChecksOutput
	if res := call(t, cs, "kubegap_checks", map[string]any{}, &checks); res.IsError || len(checks.Checks) == 0 {
		t.Errorf("kubegap_checks: %.300s", text(res))
	}
}

// exercise calls every tool, prompt and resource kind once, and each tool
// once with a bad argument, checking what any server of this library must
// answer whatever its corpus and base URL.
func exercise(t *testing.T, cs *mcp.ClientSession) {
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, libraryTools) && !slices.Equal(names, withAuditTools) {
		t.Errorf("tools %v, want %v, or with an auditor %v", names, libraryTools, withAuditTools)
	}
	if slices.Contains(names, "audit_kubernetes") {
		exerciseAudit(t, cs)
	}
	var page CasePage
	if res := call(t, cs, "list_incidents", map[string]any{"limit": 3}, &page); res.IsError || len(page.Cases) == 0 {
		t.Fatalf("list_incidents: %s", text(res))
	}
	id := page.Cases[0].ID
	var d CaseDetail
	if res := call(t, cs, "get_incident", map[string]any{"id": id}, &d); res.IsError || !strings.HasSuffix(d.URL, "/cases/"+id) {
		t.Fatalf("get_incident: %s", text(res))
	}
	firstWords := strings.Join(strings.Fields(d.Title)[:min(8, len(strings.Fields(d.Title)))], " ")
	ok := map[string]map[string]any{
		"search_incidents":  {"query": firstWords, "limit": 3},
		"similar_incidents": {"id": id, "limit": 2},
		"vocab":             {"facet": "component"},
		"get_topic":         {"facet": "component", "slug": d.Components[0].Slug, "limit": 2},
	}
	for tool, args := range ok {
		res := call(t, cs, tool, args, nil)
		if res.IsError || res.StructuredContent == nil || !strings.Contains(text(res), "`") && !strings.Contains(text(res), "/cases/") {
			t.Errorf("%s(%v): %.300s", tool, args, text(res))
		}
	}
	bad := map[string]map[string]any{
		"search_incidents":  {"query": "x", "symptom": []string{"no-such-symptom"}},
		"list_incidents":    {"cursor": "nonsense"},
		"get_incident":      {"id": "IL-9999"},
		"similar_incidents": {"id": "nope"},
		"get_topic":         {"facet": "component", "slug": "no-such-component"},
		"vocab":             {"facet": "colour"},
	}
	for tool, args := range bad {
		if res := call(t, cs, tool, args, nil); !res.IsError || text(res) == "" {
			t.Errorf("%s(%v): want a tool error, got %.200s", tool, args, text(res))
		}
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "incident://" + id})
	if err != nil || !strings.Contains(res.Contents[0].Text, d.Title) {
		t.Errorf("read incident://%s: %v", id, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: vocabularyURI}); err != nil {
		t.Errorf("read vocabulary: %v", err)
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: promptLearn, Arguments: map[string]string{"incident": id}})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, d.URL) {
		t.Errorf("prompt %s: %v", promptLearn, err)
	}
}

// lookTool finds a client command: from env, else on PATH.
func lookTool(t *testing.T, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found: install it (see docs/mcp.md) or set %s", name, env)
	}
	return p
}

// inspector runs the Inspector CLI against a target and returns its JSON
// output and exit code.
func inspector(t *testing.T, bin string, target []string, args ...string) (map[string]any, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	argv := append([]string{"--cli"}, args...)
	argv = append(argv, "--")
	argv = append(argv, target...)
	cmd := exec.CommandContext(ctx, bin, argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("inspector %v: %v", args, err)
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("inspector %v: exit %d, output not JSON: %v\nstdout: %.500s\nstderr: %.2000s", args, code, err, stdout.String(), stderr.String())
	}
	return out, code
}

func TestE2EInspectorCLI(t *testing.T) {
	requireClientTests(t)
	bin := lookTool(t, inspectorEnv, "inspector")
	argv, env := e2eStdio()
	var stdioTarget []string
	for _, e := range env {
		stdioTarget = append(stdioTarget, "-e", e)
	}
	targets := map[string][]string{
		"http":  {e2eURL(t)},
		"stdio": argv,
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			var extra []string
			if name == "stdio" {
				extra = stdioTarget
			}
			run := func(args ...string) (map[string]any, int) {
				return inspector(t, bin, target, append(extra, args...)...)
			}
			out, _ := run("--method", "tools/list")
			var names []string
			for _, tl := range out["tools"].([]any) {
				tm := tl.(map[string]any)
				names = append(names, tm["name"].(string))
				if tm["outputSchema"] == nil || tm["annotations"].(map[string]any)["readOnlyHint"] != true {
					t.Errorf("%s: no output schema or readOnlyHint", tm["name"])
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, libraryTools) && !slices.Equal(names, withAuditTools) {
				t.Errorf("tools %v, want %v, or with an auditor %v", names, libraryTools, withAuditTools)
			}

			out, code := run("--method", "tools/call", "--tool-name", "list_incidents", "--tool-arg", "limit=2", "--tool-arg", `sort=oldest`)
			if code != 0 || out["isError"] == true {
				t.Fatalf("list_incidents: exit %d %v", code, out)
			}
			first := out["structuredContent"].(map[string]any)["cases"].([]any)[0].(map[string]any)
			id := first["id"].(string)
			out, _ = run("--method", "tools/call", "--tool-name", "get_incident", "--tool-arg", "id="+id)
			comps := out["structuredContent"].(map[string]any)["components"].([]any)
			comp := "database"
			if len(comps) > 0 {
				comp = comps[0].(map[string]any)["slug"].(string)
			}
			for _, c := range [][]string{
				{"search_incidents", "query=database failover", `component=["` + comp + `"]`, "limit=3"},
				{"get_incident", "id=" + id},
				{"similar_incidents", "id=" + id, "limit=3"},
				{"get_topic", "facet=component", "slug=" + comp, "limit=2"},
				{"vocab", "facet=root_cause"},
				{"vocab"},
			} {
				args := []string{"--method", "tools/call", "--tool-name", c[0]}
				for _, a := range c[1:] {
					args = append(args, "--tool-arg", a)
				}
				out, code := run(args...)
				if code != 0 || out["isError"] == true || out["structuredContent"] == nil {
					t.Errorf("%v: exit %d, %.300v", c, code, out)
				}
			}
			out, code = run("--method", "tools/call", "--tool-name", "get_incident", "--tool-arg", "id=IL-9999")
			if out["isError"] != true || code == 0 {
				t.Errorf("get_incident IL-9999: exit %d, %v; want a tool error", code, out)
			}

			out, _ = run("--method", "resources/list")
			if n := len(out["resources"].([]any)); n < 2 {
				t.Errorf("%d resources", n)
			}
			out, _ = run("--method", "resources/read", "--uri", "incident://"+id)
			contents := out["contents"].([]any)
			if len(contents) != 1 || !strings.Contains(contents[0].(map[string]any)["text"].(string), "# "+id) {
				t.Errorf("resources/read incident://%s: %.300v", id, out)
			}
			out, _ = run("--method", "resources/read", "--uri", vocabularyURI)
			if out["contents"] == nil {
				t.Errorf("resources/read %s: %.300v", vocabularyURI, out)
			}
			out, _ = run("--method", "prompts/get", "--prompt-name", promptReview, "--prompt-args", "design=a write-through cache in front of one Postgres primary", "components="+comp)
			if out["messages"] == nil {
				t.Errorf("prompts/get %s: %.300v", promptReview, out)
			}
		})
	}
}

// TestE2EConformance runs the official conformance suite's server
// scenarios that apply, against the HTTP endpoint on a loopback address.
func TestE2EConformance(t *testing.T) {
	requireClientTests(t)
	bin := lookTool(t, conformanceEnv, "conformance")
	url := e2eURL(t)
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "server", "--url", url, "--scenario", sc, "-o", dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("conformance %s: %v\n%s", sc, err, out)
			}
			passed, failed := conformanceChecks(t, dir)
			if passed == 0 || failed != 0 {
				t.Fatalf("conformance %s: %d passed, %d failed\n%s", sc, passed, failed, out)
			}
			t.Logf("conformance %s: %d checks passed", sc, passed)
		})
	}
}

// conformanceChecks counts the checks in the suite's result files.
func conformanceChecks(t *testing.T, dir string) (passed, failed int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var checks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if json.Unmarshal(b, &checks) != nil {
			return nil // not a checks file
		}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				passed++
			case "FAILURE":
				failed++
				t.Errorf("check %s failed (see %s)", c.ID, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return passed, failed
}
