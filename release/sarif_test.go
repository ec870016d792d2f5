package release

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSARIFForCodeScanning checks what the CI recipe uploads to code
// scanning: kubegap's SARIF for a directory of manifests (or, when
// KUBEGAP_SARIF names one, the file .ci/run made from the rendered chart)
// follows the OASIS SARIF 2.1.0 schema that package kubegap keeps in its
// testdata, and has results on files and lines.
func TestSARIFForCodeScanning(t *testing.T) {
	root := repoRoot(t)
	log := []byte(nil)
	wantResults := true
	if f := os.Getenv("KUBEGAP_SARIF"); f != "" {
		var err error
		if log, err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
		wantResults = false // the chart has no findings: an empty run is right
	} else {
		bin, err := builtBinaries()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(bin, "kubegap"), "audit", filepath.Join("testdata", "manifests"), "--format", "sarif")
		log, _ = cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			t.Fatalf("kubegap audit --format sarif on manifests with gaps: exit %d, want 1", code)
		}
	}
	schema := sarifSchema(t, filepath.Join(root, "kubegap", "testdata", "sarif", "sarif-schema-2.1.0.json"))
	var instance map[string]any
	if err := json.Unmarshal(log, &instance); err != nil {
		t.Fatalf("the SARIF log is not JSON: %v", err)
	}
	if instance["version"] != "2.1.0" {
		t.Errorf("SARIF version %v, want 2.1.0", instance["version"])
	}
	if err := schema.Validate(instance); err != nil {
		t.Fatalf("the SARIF log does not follow the 2.1.0 schema: %v", err)
	}
	runs, _ := instance["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	results, _ := runs[0].(map[string]any)["results"].([]any)
	if !wantResults {
		t.Logf("%d results", len(results))
		return
	}
	if len(results) == 0 {
		t.Fatal("no results for manifests with gaps")
	}
	first := results[0].(map[string]any)
	loc, _ := first["locations"].([]any)
	if len(loc) == 0 || loc[0].(map[string]any)["physicalLocation"] == nil {
		t.Errorf("a result without a physical location cannot be placed on a line: %v", first)
	}
	// The schema must be able to fail.
	first["level"] = "fatal"
	if err := schema.Validate(instance); err == nil {
		t.Error("a result with level \"fatal\" passed the schema: the validation is not running")
	}
}

// sarifSchema reads the OASIS schema. It is written in draft-04, whose
// keywords it uses mean the same in draft-07 but for the schema's own
// "id", which draft-07 spells "$id".
func sarifSchema(t *testing.T, path string) *jsonschema.Resolved {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["$schema"] = "http://json-schema.org/draft-07/schema#"
	doc["$id"] = doc["id"]
	delete(doc, "id")
	raw, _ = json.Marshal(doc)
	var schema jsonschema.Schema
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("reading the SARIF schema: %v", err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("resolving the SARIF schema: %v", err)
	}
	return resolved
}
