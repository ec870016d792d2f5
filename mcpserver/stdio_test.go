package mcpserver

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A client that writes its requests and closes its end gets every answer
// before ServeStdio returns.
func TestStdioAnswersEverythingReadBeforeEOF(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_incidents","arguments":{"query":"dns"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"no/such/method"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := ServeStdio(context.Background(), testLibrary(t), Config{}, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`"id":1,`, `"id":2,`, `"id":3,`, `"id":4,`} {
		if !strings.Contains(out.String(), id) {
			t.Errorf("no answer with %s in:\n%.500s", id, out.String())
		}
	}
}
