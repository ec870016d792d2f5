package web

import (
	"net/http"
	"strings"

	"github.com/incidentlib/incidentlib"
)

// checkPageCases is how many cited cases a check page lists, newest first;
// the topic pages of the guarded terms list every one.
const checkPageCases = 50

type checkIndexPage struct {
	Checks  []checkRow
	Command string
	JSONURL string
}

type checkRow struct {
	checkLink
	Rule   string
	Guards []termLink
}

type checkPage struct {
	Check        incidentlib.Check
	Severity     string
	Guards       []termLink
	Cases        []citedView
	Complete     bool // Cases holds every case carrying a guarded term
	Command      string
	AgentCommand string
	IndexURL     string
	JSONURL      string
}

type citedView struct {
	caseView
	Reason string
}

// guardLinks links a check's guarded terms to their topic pages.
func (s *server) guardLinks(c incidentlib.Check) []termLink {
	out := make([]termLink, 0, len(c.Guards))
	for _, g := range c.Guards {
		l := s.term(g.Facet, g.Slug)
		l.Name = incidentlib.TermName(s.vocab, g)
		out = append(out, l)
	}
	return out
}

// showCheckIndexPage renders /checks: every kubegap check with its rule and
// the terms it guards against.
func (s *server) showCheckIndexPage(w http.ResponseWriter, r *http.Request) error {
	ip := checkIndexPage{Command: kubegapCommand, JSONURL: s.baseURL(r) + "/api/v1/checks"}
	for i, c := range s.cfg.Checks {
		ip.Checks = append(ip.Checks, checkRow{checkLink: checkLinks(s.cfg.Checks[i : i+1])[0], Rule: c.Rule, Guards: s.guardLinks(c)})
	}
	p := s.newPage(r, "kubegap checks")
	p.Description = "The checks of kubegap, the read-only Kubernetes audit, each with the public incidents it guards against."
	p.Canonical = s.baseURL(r) + checkIndexURL
	p.Nav = "checks"
	p.Content = ip
	return s.render(w, "checks", p)
}

// showCheckPage renders /checks/{id}: a check's rule, why it matters, the
// fix, and the cases it cites with the reason for each.
func (s *server) showCheckPage(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	c, err := incidentlib.FindCheck(s.cfg.Checks, id)
	if err != nil {
		return err
	}
	if c.ID != id {
		http.Redirect(w, r, checkURL(c.ID), http.StatusMovedPermanently)
		return nil
	}
	cited, complete, err := incidentlib.CitingCases(r.Context(), s.lib, c, checkPageCases)
	if err != nil {
		return err
	}
	base := s.baseURL(r)
	cp := checkPage{
		Check: c, Severity: severityName(c.Severity), Guards: s.guardLinks(c), Complete: complete,
		Command: kubegapCommand, AgentCommand: kubegapAgentCommand, IndexURL: checkIndexURL, JSONURL: base + "/api/v1" + checkURL(c.ID),
	}
	for _, cc := range cited {
		cp.Cases = append(cp.Cases, citedView{caseView: s.caseView(cc.Case), Reason: cc.Why})
	}
	p := s.newPage(r, c.ID+": "+c.Title)
	p.Description = c.Rule
	p.Canonical = base + checkURL(c.ID)
	p.Nav = "checks"
	p.Content = cp
	return s.render(w, "check", p)
}

// severityName capitalises a check severity for display: "High".
func severityName(sev incidentlib.CheckSeverity) string {
	s := string(sev)
	if s == "" {
		return "–"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
