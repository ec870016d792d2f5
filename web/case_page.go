package web

import (
	"net/http"

	"github.com/incidentlib/incidentlib"
)

// relatedOnCasePage is how many similar cases a case page lists.
const relatedOnCasePage = 12

type casePage struct {
	Case    caseView
	Related []relatedView
	Kubegap kubegapView
	JSONURL string
	Similar string
	MCPURL  string
	// Preview marks a draft's case shown before publication: no links
	// for scripts, which cannot fetch it yet.
	Preview bool
	// EditURL is where a signed-in contributor proposes an edit of the
	// case ("" where the library takes no contributions).
	EditURL string
}

type relatedView struct {
	caseView
	Reason string
}

// showCasePage renders /cases/{id}: every section of a case, in the order
// the seed page gives them.
func (s *server) showCasePage(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	c, err := s.lib.FindCaseByID(r.Context(), id)
	switch incidentlib.ErrorCode(err) {
	case incidentlib.EINVALID, incidentlib.ENOTFOUND:
		// A malformed ID in a path is a page that does not exist; either
		// way the reader is told in words, not in a parameter's terms.
		return &incidentlib.Error{Code: incidentlib.ENOTFOUND, Message: "The library has no case " + truncate(id, 40) +
			". Case IDs look like IL-0561; search for the company or the outage to find it."}
	}
	if err != nil {
		return err
	}
	if c.ID != id {
		http.Redirect(w, r, caseURL(c.ID), http.StatusMovedPermanently)
		return nil
	}
	related, err := s.lib.SimilarCases(r.Context(), c.ID, relatedOnCasePage)
	if err != nil {
		return err
	}
	base := s.baseURL(r)
	cv := s.caseView(c)
	p := s.newPage(r, c.ID+": "+c.Title)
	p.Description = c.Title
	p.OGType = "article"
	p.Canonical = base + cv.URL
	cp := casePage{
		Case:    cv,
		Kubegap: s.kubegap("This case involves", cv.Components, incidentlib.ChecksForCase(s.cfg.Checks, s.vocab, c)),
		JSONURL: base + "/api/v1/cases/" + c.ID,
		Similar: base + "/api/v1/cases/" + c.ID + "/similar",
		MCPURL:  base + "/mcp",
	}
	if s.cfg.Contribute {
		cp.EditURL = "/drafts/new?case=" + c.ID
	}
	for _, rel := range related {
		cp.Related = append(cp.Related, relatedView{caseView: s.caseView(rel.Case), Reason: rel.Reason()})
	}
	p.Content = cp
	return s.render(w, "case", p)
}
