package mcpserver

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the tool schema snapshots in testdata/tools")

// TestToolSchemaSnapshots pins each tool's name, description, annotations
// and schemas, as a client sees them, so that the contract with models
// cannot drift unnoticed. Refresh with go test ./mcpserver -run Snapshots -update.
func TestToolSchemaSnapshots(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{Auditor: fakeAuditor{}}) // every tool, the audit ones included
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "tools")
	seen := map[string]bool{}
	for _, tool := range res.Tools {
		got, err := json.MarshalIndent(tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, tool.Name+".json")
		seen[filepath.Base(path)] = true
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no snapshot (run with -update): %v", tool.Name, err)
			continue
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s schema changed (-snapshot +served); if on purpose, run with -update:\n%s", tool.Name, diff)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		if !seen[filepath.Base(f)] && !*update {
			t.Errorf("snapshot %s has no tool", f)
		}
	}
}
