package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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
