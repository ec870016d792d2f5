package httpapi

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestOpenAPILint checks the served document with an independent OpenAPI
// 3.1 linter (Redocly CLI), which knows the specification's rules better
// than our own tests. It is a heavy test: it runs only when
// INCIDENTLIB_OPENAPI_LINT=1, and needs the redocly command on PATH or
// named by INCIDENTLIB_REDOCLY.
func TestOpenAPILint(t *testing.T) {
	if os.Getenv("INCIDENTLIB_OPENAPI_LINT") != "1" {
		t.Skip("set INCIDENTLIB_OPENAPI_LINT=1 (and install @redocly/cli) to lint the OpenAPI document")
	}
	bin := os.Getenv("INCIDENTLIB_REDOCLY")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("redocly"); err != nil {
			t.Skip("redocly not found: npm install -g @redocly/cli, or set INCIDENTLIB_REDOCLY to its path")
		}
	}
	doc := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(doc, newAPI(t, Config{BaseURL: "http://127.0.0.1:8080"}).openapiBytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := filepath.Abs(filepath.Join("testdata", "redocly.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "lint", "--config", cfg, "--max-problems", "50", doc)
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redocly lint: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
