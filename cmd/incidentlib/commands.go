package main

import (
	"context"
	"runtime/debug"

	"incidentlib/benchmark"
)

// moreCommands maps the subcommands that need the engine or a protocol.
func (m *Main) moreCommands() map[string]func(context.Context, []string) int {
	return map[string]func(context.Context, []string) int{
		"serve":   m.runServe,
		"mcp":     m.runMCP,
		"stats":   m.runStats,
		"migrate": m.runMigrate,
		"import":  m.runImport,
		"user":    m.runUser,
		"token":   m.runToken,
		"bench": func(ctx context.Context, args []string) int {
			return benchmark.Main(ctx, args, m.Stdout, m.Stderr)
		},
	}
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
