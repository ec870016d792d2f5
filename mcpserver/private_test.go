package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
)

// markupLibrary serves one case whose title carries markup, as a team
// member could write in a private case.
type markupLibrary struct{ incidentlib.Library }

func (l markupLibrary) FindCaseByID(ctx context.Context, id string) (*incidentlib.Case, error) {
	c, err := l.Library.FindCaseByID(ctx, id)
	if err != nil {
		return nil, err
	}
	cp := *c
	cp.Title = `<img src=x onerror=alert(1)> outage`
	return &cp, nil
}

// Issue 21: a team's private answers were labelled cacheScope "public",
// and case text went out with its HTML as it was written.
func TestPrivateAnswersAreMarkedPrivateAndEscaped(t *testing.T) {
	lib := markupLibrary{testLibrary(t)}
	for _, private := range []bool{false, true} {
		cs := connect(t, lib, Config{Private: private})
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "incident://IL-0001"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "public", true: "private"}[private]
		if res.CacheScope != want || (private && res.TTLMs != 0) {
			t.Errorf("Private=%v: cacheScope %q, ttlMs %d; want %q", private, res.CacheScope, res.TTLMs, want)
		}
		if !private {
			continue // the curated public corpus: answers as they are
		}
		if txt := res.Contents[0].Text; strings.Contains(txt, "<img") || !strings.Contains(txt, "&lt;img") {
			t.Errorf("the resource's markdown carries the markup as written: %.200q", txt)
		}
		out := text(call(t, cs, "get_incident", map[string]any{"id": "IL-0001"}, nil))
		if strings.Contains(out, "<img") {
			t.Errorf("get_incident's text carries the markup as written: %.200q", out)
		}
	}
}
