package kubegap

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/incidentlib/incidentlib"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixedCiter cites one made-up case per check, so the golden reports do
// not change whenever the shipped corpus gains a case.
type fixedCiter struct{}

func (fixedCiter) Cite(_ context.Context, c incidentlib.Check) []incidentlib.Citation {
	return []incidentlib.Citation{{CaseID: "IL-0" + c.ID[2:], Title: "A made-up case for " + c.ID,
		URL: "https://incidents.example.org/cases/IL-0" + c.ID[2:], Source: "https://status.example.com/" + c.ID,
		Reason: "how a made-up outage shows the gap of " + c.ID}}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); run go test ./kubegap -update if the change is meant:\n%s", name, diff)
	}
}

func mixedReport(t *testing.T) *incidentlib.AuditReport {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "golden", "mixed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a := NewAuditor(fixedCiter{}, Policy{})
	rep, err := a.AuditManifests(context.Background(), "testdata/golden/mixed.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestGoldenText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, mixedReport(t), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "mixed.txt", b.Bytes())
	var c bytes.Buffer
	if err := WriteText(&c, mixedReport(t), TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(c.Bytes(), []byte("\x1b[")) || bytes.Contains(b.Bytes(), []byte("\x1b[")) {
		t.Error("colour must appear only when asked for")
	}
}

func TestGoldenJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, mixedReport(t), "test"); err != nil {
		t.Fatal(err)
	}
	golden(t, "mixed.json", b.Bytes())
}

func TestGoldenSARIF(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSARIF(context.Background(), &b, mixedReport(t), SARIFOptions{Version: "test", BaseURL: "https://incidents.example.org", Citer: fixedCiter{}}); err != nil {
		t.Fatal(err)
	}
	golden(t, "mixed.sarif", b.Bytes())
	validateSARIF(t, b.Bytes())
}

// validateSARIF checks a log against the OASIS SARIF 2.1.0 JSON schema
// (testdata/sarif). The schema is written in draft-04, whose keywords it
// uses mean the same in draft-07 except the schema's own "id", which
// draft-07 calls "$id": the test renames those two before validating.
func validateSARIF(t *testing.T, log []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "sarif", "sarif-schema-2.1.0.json"))
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
	var instance any
	if err := json.Unmarshal(log, &instance); err != nil {
		t.Fatal(err)
	}
	if err := resolved.Validate(instance); err != nil {
		t.Fatalf("the SARIF log does not follow the 2.1.0 schema: %v", err)
	}
	// The schema must be able to fail: a result with a bad level.
	var bad map[string]any
	_ = json.Unmarshal(log, &bad)
	run := bad["runs"].([]any)[0].(map[string]any)
	if results, _ := run["results"].([]any); len(results) > 0 {
		results[0].(map[string]any)["level"] = "fatal"
		if err := resolved.Validate(bad); err == nil {
			t.Error("a result with level \"fatal\" passed the schema; the validation is not running")
		}
	}
}
