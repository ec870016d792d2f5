package kubegap

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/cases"
)

// citationsYAML is the hand-chosen citation table: for each check, the
// cases that show its gap directly, each with one line saying how.
//
//go:embed citations.yaml
var citationsYAML []byte

type tableEntry struct {
	Case string `yaml:"case"`
	Why  string `yaml:"why"`
}

// citationTable parses citations.yaml once. TestCitationTable proves it
// parses and keeps it true to the corpus.
var citationTable = sync.OnceValues(func() (map[string][]incidentlib.CheckCase, error) {
	return parseCitationTable(citationsYAML)
})

func parseCitationTable(data []byte) (map[string][]incidentlib.CheckCase, error) {
	var raw map[string][]tableEntry
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("citations.yaml: %w", err)
	}
	out := make(map[string][]incidentlib.CheckCase, len(raw))
	for id, es := range raw {
		l := make([]incidentlib.CheckCase, 0, len(es))
		for _, e := range es {
			l = append(l, incidentlib.CheckCase{ID: strings.TrimSpace(e.Case), Why: strings.TrimSpace(e.Why)})
		}
		out[id] = l
	}
	return out, nil
}

// chosenCases returns a check's cases from the table (nil when the table
// is broken, which the tests rule out).
func chosenCases(id string) []incidentlib.CheckCase {
	t, err := citationTable()
	if err != nil {
		return nil
	}
	return slices.Clone(t[id])
}

// Citer finds the cases that show what a check's gap costs.
type Citer interface {
	Cite(ctx context.Context, c incidentlib.Check) []incidentlib.Citation
}

// LibraryCiter cites through a library (incidentlib.CitedCases, the same
// function the web pages, the JSON API and the MCP server use): the
// check's chosen cases the library holds, then the library's cases that
// name the check in kubegap_checks, at most max. baseURL, when set, makes
// each citation link to the case's page. Answers are cached per check.
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
	cs, err := incidentlib.CitedCases(ctx, l.lib, c, l.max, l.baseURL)
	if err != nil {
		return nil // not cached: a cancelled audit must not poison later ones
	}
	l.cache[c.ID] = cs
	return cs
}

// TableOptions shapes a TableCiter.
type TableOptions struct {
	BaseURL string // the library's site: each citation links to URL/cases/ID
	Max     int    // shipped cases cited per check, and team cases as many again; 0 means 5
	// NoBuiltin cites only Team: the shipped cases chosen for each check
	// are left out.
	NoBuiltin bool
	// Team are a team's own cases: each is cited by the checks it names in
	// kubegap_checks, after the chosen ones, newest first.
	Team []*incidentlib.Case
}

// TableCiter cites from the citation table without indexing the corpus:
// a check's chosen cases are read from the shipped case files one by one,
// only for the checks that are cited, so an audit costs no more than the
// few cases its findings name.
func TableCiter(opt TableOptions) Citer {
	if opt.Max <= 0 {
		opt.Max = 5
	}
	opt.BaseURL = strings.TrimRight(opt.BaseURL, "/")
	return &tableCiter{opt: opt, cases: map[string]*incidentlib.Case{}, cache: map[string][]incidentlib.Citation{}}
}

type tableCiter struct {
	opt TableOptions

	mu    sync.Mutex
	cases map[string]*incidentlib.Case // shipped cases read so far; nil entry: not found
	cache map[string][]incidentlib.Citation
}

func (t *tableCiter) Cite(_ context.Context, c incidentlib.Check) []incidentlib.Citation {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cs, ok := t.cache[c.ID]; ok {
		return cs
	}
	out := []incidentlib.Citation{}
	seen := map[string]bool{}
	if !t.opt.NoBuiltin {
		for _, cc := range c.Cases {
			if len(out) == t.opt.Max {
				break
			}
			cs := t.shipped(cc.ID)
			if cs == nil || seen[cs.ID] {
				continue
			}
			seen[cs.ID] = true
			out = append(out, incidentlib.NewCitation(cs, cc.Why, t.opt.BaseURL))
		}
	}
	var named []*incidentlib.Case
	for _, cs := range t.opt.Team {
		if !seen[cs.ID] && slices.Contains(cs.KubegapChecks, c.ID) {
			seen[cs.ID] = true
			named = append(named, cs)
		}
	}
	sort.SliceStable(named, func(i, j int) bool {
		a, b := named[i].Timeline.Date().Time, named[j].Timeline.Date().Time
		if !a.Equal(b) {
			return a.After(b)
		}
		return named[i].ID > named[j].ID
	})
	// A team's own outages are what it asked for (--cases): they never
	// lose their place to the shipped ones, each list bounded on its own.
	for _, cs := range named[:min(len(named), t.opt.Max)] {
		out = append(out, incidentlib.NewCitation(cs, incidentlib.TeamCaseWhy(c.ID), t.opt.BaseURL))
	}
	t.cache[c.ID] = out
	return out
}

// shippedCase is the little of a case file a citation needs.
type shippedCase struct {
	ID      string `yaml:"id"`
	Title   string `yaml:"title"`
	Sources []struct {
		URL string `yaml:"url"`
	} `yaml:"sources"`
}

// shipped reads one shipped case by ID from the compiled-in corpus, or nil.
func (t *tableCiter) shipped(id string) *incidentlib.Case {
	if cs, ok := t.cases[id]; ok {
		return cs
	}
	cs := readShippedCase(id)
	t.cases[id] = cs
	return cs
}

func readShippedCase(id string) *incidentlib.Case {
	if !fs.ValidPath(id) || strings.ContainsAny(id, "/\\") {
		return nil
	}
	data, err := fs.ReadFile(cases.FS, id+".yaml")
	if err != nil {
		return nil
	}
	var sc shippedCase
	if err := yaml.Unmarshal(data, &sc); err != nil || sc.ID != id {
		return nil
	}
	cs := &incidentlib.Case{ID: sc.ID, Title: strings.TrimSpace(sc.Title)}
	for _, s := range sc.Sources {
		cs.Sources = append(cs.Sources, incidentlib.Source{URL: s.URL})
	}
	return cs
}

// UnknownChecks lists, for each case, the kubegap_checks entries that name
// no check kubegap has: "IL-0001 names KG999, which kubegap does not have".
func UnknownChecks(cs []*incidentlib.Case) []string {
	known := map[string]bool{}
	for _, c := range Checks() {
		known[c.ID] = true
	}
	var out []string
	for _, c := range cs {
		for _, id := range c.KubegapChecks {
			if !known[id] {
				out = append(out, fmt.Sprintf("%s (%s) names %s in kubegap_checks, which kubegap does not have (it has %s to %s)",
					c.ID, c.Origin, id, Checks()[0].ID, Checks()[len(Checks())-1].ID))
			}
		}
	}
	return out
}
