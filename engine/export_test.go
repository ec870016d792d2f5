package engine

import "github.com/incidentlib/incidentlib"

// Hooks for the external tests: they need the engine's own view of a case's
// neighbours to check the pruned search against brute force.

// BruteForceSimilarity scores every case against the case with the given ID
// the slow way: every dimension's shared terms, plus the text tie-break.
func (e *Engine) BruteForceSimilarity(id string) map[string]float64 {
	si, fi := e.similarity, e.facets
	self := e.byID[id]
	out := map[string]float64{}
	for j, c := range e.cases {
		if j == self {
			continue
		}
		var s float64
		for d := range fi.dims {
			for _, t := range fi.dims[d].lists.of(self) {
				if fi.dims[d].postings[t].has(j) {
					s += float64(si.weights[d][t])
				}
			}
		}
		out[c.ID] = s + textTieBreakWeight*jaccard(si.words[self], si.words[j])
	}
	return out
}

// TermsOf exposes termsOf.
func TermsOf(c *incidentlib.Case, f incidentlib.Facet) []string { return termsOf(c, f) }

// SnippetsWithAndWithoutPrefilter returns a case's snippets for query text,
// computed with the prefix filter and without it.
func (e *Engine) SnippetsWithAndWithoutPrefilter(c *incidentlib.Case, text string) (with, without []incidentlib.Snippet) {
	p, err := parseText(text)
	if err != nil {
		return nil, nil
	}
	r, err := e.reader()
	if err != nil {
		return nil, nil
	}
	defer r.Close()
	pl, err := e.newPlan(r, p)
	if err != nil {
		return nil, nil
	}
	terms := pl.snippetTerms()
	return e.snippetsFiltered(c, terms, false, true), e.snippetsFiltered(c, terms, false, false)
}

// SetDiskFault makes the stages of the build on disk fail as f says; the
// returned function undoes it.
func SetDiskFault(f func(stage string) error) (undo func()) {
	diskFault = f
	return func() { diskFault = nil }
}
