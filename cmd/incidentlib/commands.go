package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/incidentlib/incidentlib/relevance"
)

// moreCommands maps the subcommands that need the engine or a protocol.
// The benchmark harnesses live in their own module (benchmark/), so that
// building the server never fetches or compiles their SQL drivers.
func (m *Main) moreCommands() map[string]func(context.Context, []string) int {
	return map[string]func(context.Context, []string) int{
		"serve":     m.runServe,
		"mcp":       m.runMCP,
		"stats":     m.runStats,
		"migrate":   m.runMigrate,
		"import":    m.runImport,
		"user":      m.runUser,
		"token":     m.runToken,
		"withdraw":  m.runWithdraw,
		"unpublish": m.runWithdraw,
		"purge":     m.runPurge,
		"bench": func(ctx context.Context, args []string) int {
			if len(args) > 0 && args[0] == "relevance" {
				return relevance.Main(ctx, args[1:], m.Stdout, m.Stderr)
			}
			fmt.Fprintln(m.Stderr, "usage: incidentlib bench relevance [-v]\n\nThe speed benchmarks and the load harness are in the benchmark module:\n  go run -C benchmark ./cmd/incidentlib-bench search|load ...")
			return exitUsage
		},
	}
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
