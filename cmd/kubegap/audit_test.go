package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// run runs the whole program with the given standard input.
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Now: time.Now}
	code = m.Run(context.Background(), args)
	return code, out.String(), errb.String()
}

const cleanService = `apiVersion: v1
kind: ServiceAccount
metadata: {name: ok, namespace: shop}
`

const gappy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        resources: {requests: {memory: 64Mi}, limits: {memory: 64Mi}}
        readinessProbe: {httpGet: {path: /, port: 80}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: NodePort, selector: {app: web}, ports: [{port: 80}]}
`

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAuditExitCodes: the exit code is a CI gate. 0 nothing at or above
// the threshold, 1 findings, 2 usage or input error.
func TestAuditExitCodes(t *testing.T) {
	dir := t.TempDir()
	clean := writeFile(t, dir, "clean.yaml", cleanService)
	bad := writeFile(t, dir, "tree/app/web.yaml", gappy)
	writeFile(t, dir, "tree/notes.txt", "not read")
	broken := writeFile(t, dir, "broken.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: [x\n")
	cfg := writeFile(t, dir, "policy.yaml", "disable: [KG020]\nsuppress:\n- check: KG009\n  namespace: shop\n  name: web\n  reason: a demo\n")
	badCfg := writeFile(t, dir, "bad-policy.yaml", "disabel: [KG020]\n")
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // a fragment
		stderr string
	}{
		{"clean", "", []string{"audit", clean}, 0, "0 findings in 1 object", ""},
		{"findings", "", []string{"audit", bad}, 1, "KG020 Image tag latest or no tag", ""},
		{"directory", "", []string{"audit", filepath.Join(dir, "tree")}, 1, "web.yaml:1", ""},
		{"stdin", gappy, []string{"audit", "-"}, 1, "-:1", ""},
		{"flags after paths", "", []string{"audit", bad, "--min-severity", "high"}, 0, "0 findings", ""},
		{"min severity keeps medium", "", []string{"audit", "--min-severity", "medium", bad}, 1, "KG009", ""},
		{"config suppresses", "", []string{"audit", "--config", cfg, "--min-severity", "medium", bad}, 0, "0 findings", ""},
		{"input problem", "", []string{"audit", broken, clean}, 2, "broken.yaml:3: malformed YAML", ""},
		{"no paths", "", []string{"audit"}, 2, "", "name manifest files"},
		{"missing path", "", []string{"audit", filepath.Join(dir, "nope.yaml")}, 2, "", "no such file"},
		{"bad format", "", []string{"audit", "--format", "xml", clean}, 2, "", `--format "xml"`},
		{"bad severity", "", []string{"audit", "--min-severity", "urgent", clean}, 2, "", `--min-severity "urgent"`},
		{"strict config", "", []string{"audit", "--config", badCfg, clean}, 2, "", "field disabel not found"},
		{"unknown command", "", []string{"scan"}, 2, "", `unknown command "scan"`},
		{"checks", "", []string{"checks"}, 0, "KG024", ""},
		{"checks as JSON", "", []string{"checks", "--format", "json"}, 0, `"fixYAML": "livenessProbe:`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
			if strings.Contains(stdout, "\x1b[") {
				t.Error("colour written to a non-terminal")
			}
		})
	}
}

// TestAuditFormats: JSON and SARIF carry the shipped cases' citations.
func TestAuditFormats(t *testing.T) {
	code, stdout, stderr := run(t, gappy, "audit", "--format", "json", "--base-url", "https://lib.example", "-")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Findings []struct {
			Check string
		}
		Checks map[string]struct {
			Citations []struct{ Case, URL, Reason string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) == 0 {
		t.Fatalf("no findings: %s", stdout)
	}
	cites := rep.Checks[rep.Findings[0].Check].Citations
	if len(cites) == 0 || !strings.HasPrefix(cites[0].URL, "https://lib.example/cases/IL-") || cites[0].Reason == "" {
		t.Fatalf("findings without linked citations: %s", stdout)
	}
	code, stdout, _ = run(t, gappy, "audit", "--format", "sarif", "-")
	if code != 1 || !strings.Contains(stdout, `"version": "2.1.0"`) || !strings.Contains(stdout, `"startLine": 1`) {
		t.Fatalf("exit %d, SARIF:\n%s", code, stdout)
	}
}

// TestDisplayPath: findings name files relative to the working directory
// when they are under it (SARIF locations must resolve in the checkout).
func TestDisplayPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	wd, err := os.Getwd() // the temporary directory may sit behind a symlink
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		filepath.Join(wd, "k8s", "web.yaml"):              filepath.Join("k8s", "web.yaml"),
		"./k8s//web.yaml":                                 filepath.Join("k8s", "web.yaml"),
		filepath.Join(filepath.Dir(wd), "elsewhere.yaml"): filepath.Join(filepath.Dir(wd), "elsewhere.yaml"),
	}
	for in, want := range tests {
		if got := displayPath(in); got != want {
			t.Errorf("displayPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAuditTeamCases: a team's case naming a check in kubegap_checks is
// cited by that check after the shipped cases (with --no-builtin, alone),
// and a case naming a check kubegap lacks is a usage error naming it.
func TestAuditTeamCases(t *testing.T) {
	dir := t.TempDir()
	team := teamCase
	writeFile(t, dir, "IL-9100.yaml", team)
	code, stdout, stderr := run(t, gappy, "audit", "--cases", dir, "-")
	if code != 1 || !strings.Contains(stdout, "IL-9100: the case names KG009 in kubegap_checks") || !strings.Contains(stdout, "IL-0958:") {
		t.Fatalf("exit %d, stderr %s, stdout:\n%s", code, stderr, stdout)
	}
	code, stdout, _ = run(t, gappy, "audit", "--cases", dir, "--no-builtin", "-")
	if code != 1 || !strings.Contains(stdout, "IL-9100:") || strings.Contains(stdout, "IL-0958:") {
		t.Fatalf("--no-builtin: exit %d, stdout:\n%s", code, stdout)
	}
	writeFile(t, dir, "IL-9100.yaml", strings.Replace(team, "[KG009]", "[KG999]", 1))
	code, _, stderr = run(t, gappy, "audit", "--cases", dir, "-")
	if code != 2 || !strings.Contains(stderr, "names KG999 in kubegap_checks, which kubegap does not have") {
		t.Fatalf("unknown check: exit %d, stderr %s", code, stderr)
	}
}

// teamCase is a team's own case naming KG009 in kubegap_checks.
const teamCase = `id: IL-9100
title: Our checkout ran one pod and went down on every deploy
company: Example Co
timeline:
  started: 2024-05-01T10:00:00Z
summary: One replica behind the checkout Service.
symptom_terms: [high-error-rate]
root_cause: config-change
components: [application-database]
kubegap_checks: [KG009]
sources:
  - url: https://example.com/postmortem
    type: official-blog
verification:
  status: unchecked
`
