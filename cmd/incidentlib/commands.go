package main

import (
	"context"
	"runtime/debug"

	"incidentlib/benchmark"
	"incidentlib/relevance"
)

// moreCommands maps the subcommands that need the engine or a protocol.
func (m *Main) moreCommands() map[string]func(context.Context, []string) int {
	return map[string]func(context.Context, []string) int{
		"serve": m.runServe,
		"mcp":   m.runMCP,
		"stats": m.runStats,
		"bench": func(ctx context.Context, args []string) int {
			if len(args) > 0 && args[0] == "relevance" {
				return relevance.Main(ctx, args[1:], m.Stdout, m.Stderr)
			}
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
