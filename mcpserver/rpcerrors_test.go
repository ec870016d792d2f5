package mcpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Every refusal of a POST to /mcp is a JSON-RPC error, whatever was wrong.
func TestHTTPRefusalsAreJSONRPC(t *testing.T) {
	ts := httptest.NewServer(NewHTTPHandler(testLibrary(t), Config{MaxBodyBytes: 1 << 20}))
	defer ts.Close()
	big := strings.Repeat("x", 10<<20)
	for _, tt := range []struct {
		name    string
		body    io.Reader
		chunked bool
		status  int
		code    float64
	}{
		{"malformed", strings.NewReader(`{not json`), false, 400, -32700},
		{"unknown method", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"no/such"}`), false, 200, -32601},
		{"batch", strings.NewReader(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`), false, 400, -32600},
		{"oversize with length", strings.NewReader(big), false, 413, -32600},
		{"oversize chunked", io.MultiReader(strings.NewReader(big)), true, 413, -32600},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", ts.URL, tt.body)
			if tt.chunked {
				req.ContentLength = -1
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var m struct {
				Error struct {
					Code    float64 `json:"code"`
					Message string  `json:"message"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
				t.Fatalf("status %d, body not JSON: %v", resp.StatusCode, err)
			}
			if resp.StatusCode != tt.status || m.Error.Code != tt.code || m.Error.Message == "" {
				t.Errorf("status %d code %v %q, want %d %v", resp.StatusCode, m.Error.Code, m.Error.Message, tt.status, tt.code)
			}
		})
	}
}
