package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAnswerSizes prints the size of the answers to the examples of
// docs/mcp.md, in characters and in tokens estimated as characters / 4,
// for the table there. INCIDENTLIB_MCP_SIZES=1 turns it on.
func TestAnswerSizes(t *testing.T) {
	if os.Getenv("INCIDENTLIB_MCP_SIZES") != "1" {
		t.Skip("set INCIDENTLIB_MCP_SIZES=1 to print the answer sizes")
	}
	cs := connect(t, testLibrary(t), Config{})
	ctx := context.Background()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search_incidents", map[string]any{"query": "hedged retries"}},
		{"search_incidents", map[string]any{"query": "our auth service fell over when a database migration made a query slow and clients retried"}},
		{"list_incidents", map[string]any{"limit": 10}},
		{"get_topic", map[string]any{"facet": "root_cause", "slug": "config-change"}},
		{"similar_incidents", map[string]any{"id": "IL-0561"}},
		{"get_incident", map[string]any{"id": "IL-0561"}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", c.tool, err, res)
		}
		b, _ := json.Marshal(res)
		a, _ := json.Marshal(c.args)
		if os.Getenv("INCIDENTLIB_MCP_SIZES_SPLIT") == "1" {
			sc, _ := json.Marshal(res.StructuredContent)
			fmt.Printf("  text %d, structured %d\n", len(b)-len(sc), len(sc))
			if c.tool == "search_incidents" {
				fmt.Printf("%.3000s\n", sc)
			}
		}
		fmt.Printf("| `%s %s` | %d | %d |\n", c.tool, a, len(b), len(b)/4)
	}
	var n, pages int
	var cursor string
	for {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if pages == 0 {
			fmt.Printf("| `resources/list` (first page) | %d | %d |\n", len(b), len(b)/4)
		}
		n += len(b)
		pages++
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	fmt.Printf("| `resources/list`, all %d pages | %d | %d |\n", pages, n, n/4)
	tl, _ := cs.ListTools(ctx, nil)
	b, _ := json.Marshal(tl)
	fmt.Printf("| `tools/list` | %d | %d |\n", len(b), len(b)/4)
}

// Compact answers (issue 22): one source per hit, the remediation when
// asked, resources listed in pages, and output schemas that hold no
// ["null","array"] union and declare only what each tool fills.
func TestCompactAnswers(t *testing.T) {
	cs := connect(t, testLibrary(t), Config{})
	var page CasePage
	call(t, cs, "search_incidents", map[string]any{"query": "retry storm", "remediation": true}, &page)
	withFix := 0
	for _, c := range page.Cases {
		if c.Source == "" {
			t.Errorf("%s: no source", c.ID)
		}
		if len(c.Remediation) > 0 {
			withFix++
		}
	}
	if len(page.Cases) == 0 || withFix == 0 {
		t.Errorf("remediation asked, %d of %d hits carry it", withFix, len(page.Cases))
	}
	var plain CasePage
	call(t, cs, "search_incidents", map[string]any{"query": "retry storm"}, &plain)
	for _, c := range plain.Cases {
		if len(c.Remediation) > 0 {
			t.Errorf("%s: remediation not asked for, given", c.ID)
		}
	}
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil || len(res.Resources) > 100 || res.NextCursor == "" {
		t.Errorf("resources/list: %v, %d resources, next cursor %q", err, len(res.Resources), res.NextCursor)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "audit_kubernetes" || tool.Name == "kubegap_checks" {
			continue
		}
		b, _ := json.Marshal(tool.OutputSchema)
		if strings.Contains(string(b), `"null"`) {
			t.Errorf("%s: output schema has a null union", tool.Name)
		}
		if (tool.Name == "list_incidents" || tool.Name == "get_topic") && (strings.Contains(string(b), `"suggestions"`) || strings.Contains(string(b), `"excerpt"`)) {
			t.Errorf("%s declares fields only search fills", tool.Name)
		}
	}
}
