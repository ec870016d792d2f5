package main

import "context"

// moreCommands maps the subcommands that need the engine or a protocol.
func (m *Main) moreCommands() map[string]func(context.Context, []string) int {
	return map[string]func(context.Context, []string) int{}
}
