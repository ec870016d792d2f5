package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine/enginetest"
)

const testBaseURL = "https://incidents.example.org"

// testLibrary is the shipped corpus in an in-memory engine, opened once
// per test binary.
func testLibrary(t testing.TB) incidentlib.Library { return enginetest.Shipped(t) }

// connect returns a client session talking to a fresh server over the
// in-memory transport.
func connect(t testing.TB, lib incidentlib.Library, cfg Config) *mcp.ClientSession {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = testBaseURL
	}
	ctx := context.Background()
	srv := NewServer(lib, cfg)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// call calls a tool and decodes its structured content into out (when
// non-nil). It fails the test on a protocol error.
func call(t testing.TB, cs *mcp.ClientSession, tool string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", tool, args, err)
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", tool, b, err)
		}
	}
	return res
}

// text joins the text content of a result.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// stdioChildEnv makes the test binary an MCP server on its standard input
// and output, so that real clients can start it as a stdio server, as they
// would start `incidentlib mcp`.
const stdioChildEnv = "INCIDENTLIB_MCP_STDIO_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(stdioChildEnv) == "1" {
		lib := testLibrary(fatalTB{})
		err := ServeStdio(context.Background(), lib, Config{BaseURL: testBaseURL, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}, os.Stdin, os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fatalTB lets testLibrary run outside a test, in the stdio child.
type fatalTB struct{ testing.TB }

func (fatalTB) Helper() {}
func (fatalTB) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
