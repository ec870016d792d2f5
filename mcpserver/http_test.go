package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func post(t *testing.T, url, host, origin, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestHTTPHandler(t *testing.T) {
	lib := testLibrary(t)
	ts := httptest.NewServer(NewHTTPHandler(lib, Config{BaseURL: "https://incidents.example.org", MaxBodyBytes: 4096, RateBurst: 1000}))
	defer ts.Close()
	port := ts.URL[strings.LastIndexByte(ts.URL, ':')+1:]

	// The SDK's own client, over the real HTTP transport.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var page CasePage
	if res := call(t, cs, "list_incidents", map[string]any{"limit": 1}, &page); res.IsError || len(page.Cases) != 1 {
		t.Errorf("list over HTTP: %q", text(res))
	}
	cs.Close()

	for _, tc := range []struct {
		name, host, origin, body string
		want                     int
	}{
		{"loopback host", "127.0.0.1:" + port, "", initializeBody, 200},
		{"localhost with its origin", "localhost:" + port, "http://localhost:" + port, initializeBody, 200},
		{"public host of BaseURL", "incidents.example.org", "https://incidents.example.org", initializeBody, 200},
		{"rebinding host", "evil.example.com", "", initializeBody, 403},
		{"rebinding host and origin", "evil.example.com", "http://evil.example.com", initializeBody, 403},
		{"foreign origin", "127.0.0.1:" + port, "https://evil.example.com", initializeBody, 403},
		{"origin null", "127.0.0.1:" + port, "null", initializeBody, 403},
		{"body over the limit", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, ts.URL, tc.host, tc.origin, tc.body)
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 200 && resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("content type %q, want plain JSON", resp.Header.Get("Content-Type"))
			}
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("a stateless server set a session ID")
			}
		})
	}
	if resp, err := http.Get(ts.URL); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v, want 405", resp.StatusCode, err)
	}
}

func TestHTTPRateLimit(t *testing.T) {
	ts := httptest.NewServer(NewHTTPHandler(testLibrary(t), Config{RateLimit: 0.001, RateBurst: 3}))
	defer ts.Close()
	var codes []int
	for range 5 {
		resp := post(t, ts.URL, "", "", initializeBody)
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
	}
	want := []int{200, 200, 200, 429, 429}
	for i := range want {
		if codes[i] != want[i] {
			t.Fatalf("statuses %v, want %v", codes, want)
		}
	}
}

func TestHostAndOriginMatching(t *testing.T) {
	hosts := []string{"localhost", "::1", "mcp.example.org:8443"}
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:9": true, "[::1]:80": true, "mcp.example.org:8443": true,
		"mcp.example.org": false, "mcp.example.org:443": false, "localhost.evil.com": false, "": false, "localhost:x": false,
	} {
		if got := hostAllowed(host, hosts); got != want {
			t.Errorf("hostAllowed(%q) = %v", host, got)
		}
	}
	origins := []string{"http://localhost", "https://app.example.org"}
	for origin, want := range map[string]bool{
		"http://localhost:3000": true, "https://app.example.org": true, "http://app.example.org": false,
		"https://localhost": false, "null": false, "https://app.example.org.evil.com": false,
	} {
		if got := originAllowed(origin, origins); got != want {
			t.Errorf("originAllowed(%q) = %v", origin, got)
		}
	}
	if !hostAllowed("anything", []string{"*"}) || !originAllowed("https://x.org", []string{"*"}) {
		t.Errorf("* does not allow everything")
	}
}
