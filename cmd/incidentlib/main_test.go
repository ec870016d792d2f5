package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		{"a clean directory alone", []string{"validate", "--no-builtin", "../../corpus/testdata/good"}, 0, "", "ok: 1 cases"},
		{"problems exit 1 and name file and line", []string{"validate", "--no-builtin", "../../corpus/testdata/broken"}, 1,
			`../../corpus/testdata/broken/IL-9001.yaml:10: unknown root cause "config-chang" (did you mean "config-change"?)`, "problems"},
		{"a missing directory is a usage error", []string{"validate", "no/such/dir"}, 2, "", "no/such/dir"},
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
	if code != 1 || !strings.Contains(errOut, "duplicate ID IL-0561: cases/IL-0561.yaml already has it") {
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

// TestServeEndToEnd starts the real command on a random port and reads each
// protocol's front door the way a user would.
func TestServeEndToEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	var errOut bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errOut, Now: time.Now, OnListen: func(a string) { addrc <- a }}
	done := make(chan int, 1)
	go func() {
		done <- m.Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", "-", "--log-level", "warn"})
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, errOut.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not listen")
	}
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz %d", code)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code, _ := get("/readyz"); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
	checks := []struct{ path, want string }{
		{"/cases/IL-0561", "DigitalOcean"},
		{"/api/v1/cases/IL-0561/similar", "same root cause"},
		{"/metrics", "incidentlib_cases"},
	}
	for _, c := range checks {
		code, body := get(c.path)
		if code != 200 || !strings.Contains(body, c.want) {
			t.Errorf("GET %s: %d, body lacks %q", c.path, code, c.want)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited %d after shutdown: %s", code, errOut.String())
		}
	case <-time.After(15 * time.Second):
		t.Error("serve did not shut down")
	}
}
