package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
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

// A bad line gets a JSON-RPC error and the session goes on (issue 22: a
// non-JSON line, a batch or over-deep JSON ended it with exit 1, once
// losing the answer to the request read just before).
func TestStdioBadLinesGetErrorsAndTheSessionGoesOn(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`this is not json`,
		`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`,
		deep,
		`{"jsonrpc":"2.0","id":10,"method":"ping","params":{"a":` + deep + `}}`,
		`42`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_incidents","arguments":{"query":"dns"}}}`,
		``,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := ServeStdio(context.Background(), testLibrary(t), Config{}, strings.NewReader(in), &out); err != nil {
		t.Fatalf("ServeStdio: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var parse, invalid int
	ids := map[string]bool{}
	for _, l := range lines {
		var m struct {
			ID    json.RawMessage
			Error *struct {
				Code    int
				Message string
			}
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("an answer that is not JSON: %.200s", l)
		}
		ids[string(m.ID)] = true
		if m.Error != nil {
			switch m.Error.Code {
			case -32700:
				parse++
			case -32600:
				invalid++
			}
		}
	}
	for _, id := range []string{"1", "2", "3", "4", "10"} {
		if !ids[id] {
			t.Errorf("no answer with id %s in:\n%.1500s", id, out.String())
		}
	}
	if parse != 1 || invalid != 4 {
		t.Errorf("%d parse errors and %d invalid requests, want 1 and 4:\n%.1500s", parse, invalid, out.String())
	}
}
