package kubegap

import (
	"context"
	"strings"
	"sync"

	"github.com/incidentlib/incidentlib"
)

// Citer finds the cases that show what a check's gap costs.
type Citer interface {
	Cite(ctx context.Context, c incidentlib.Check) []incidentlib.Citation
}

// LibraryCiter cites, for each check, up to max of the library's cases
// tagged with any of the check's guarded terms, newest first. The terms are
// resolved at run time, so a case added to the corpus (or loaded with
// --cases) is cited without a code change. The search is
// incidentlib.CitedCases, the one the web pages, the JSON API and the MCP
// server cite through, so a check cites the same cases everywhere. baseURL,
// when set, makes each citation link to the case's page. Answers are cached
// per check for the citer's life.
func LibraryCiter(lib incidentlib.Library, baseURL string, max int) Citer {
	if max <= 0 {
		max = 5
	}
	return &libraryCiter{lib: lib, baseURL: strings.TrimRight(baseURL, "/"), max: max, cache: map[string][]incidentlib.Citation{}}
}

type libraryCiter struct {
	lib     incidentlib.Library
	baseURL string
	max     int

	mu    sync.Mutex
	cache map[string][]incidentlib.Citation
}

func (l *libraryCiter) Cite(ctx context.Context, c incidentlib.Check) []incidentlib.Citation {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cs, ok := l.cache[c.ID]; ok {
		return cs
	}
	if len(c.Guards) == 0 {
		return nil
	}
	cs, err := incidentlib.CitedCases(ctx, l.lib, c, l.max, l.baseURL)
	if err != nil {
		return nil // not cached: a cancelled audit must not poison later ones
	}
	l.cache[c.ID] = cs
	return cs
}
