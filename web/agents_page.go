package web

import "net/http"

// agentsPage is /agents: how to connect an AI tool to the library.
type agentsPage struct {
	MCPURL string
	APIURL string
}

// showAgentsPage renders /agents, the page for people about connecting
// Claude Code, Codex or Cursor; a browser that opens /mcp lands here.
func (s *server) showAgentsPage(w http.ResponseWriter, r *http.Request) error {
	base := s.baseURL(r)
	p := s.newPage(r, "Connect an AI tool")
	p.Description = "Connect Claude Code, Codex or Cursor to the Incident Library's MCP server to search and cite public incidents."
	p.Canonical = base + "/agents"
	p.Content = agentsPage{MCPURL: base + "/mcp", APIURL: base + "/api/v1/"}
	return s.render(w, "agents", p)
}
