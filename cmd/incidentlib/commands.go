package main

import (
	"context"
	"runtime/debug"
)

// moreCommands maps the subcommands that need the engine or a protocol.
// The benchmark harnesses live in their own module (benchmark/), so that
// building the server never fetches or compiles their SQL drivers.
func (m *Main) moreCommands() map[string]func(context.Context, []string) int {
	return map[string]func(context.Context, []string) int{
		"serve":   m.runServe,
		"mcp":     m.runMCP,
		"stats":   m.runStats,
		"migrate": m.runMigrate,
		"import":  m.runImport,
		"user":    m.runUser,
		"token":   m.runToken,
	}
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
