package engine

import (
	"context"
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/incidentlib/incidentlib"
)

// snippetTerms are the analyzed terms snippets mark: the query's own words
// and the synonyms and spellings that stood in for them.
func (pl *plan) snippetTerms() []string {
	var out []string
	for _, m := range pl.matchers {
		for _, s := range m.seqs {
			out = append(out, s...)
		}
	}
	return out
}

// spanDisplay names the clauses of a span as the query wrote them.
func (pl *plan) spanDisplay(span uint32) string {
	var parts []string
	for ci, c := range pl.clauses {
		if span&(1<<uint(ci)) != 0 {
			parts = append(parts, c.display)
		}
	}
	return strings.Join(parts, " ")
}

// why says how a hit matched the plan: every matcher that holds for it,
// with the fields it was found in, and the recognised terms it is tagged
// with. It analyzes only the case's own text, for the hits of one page.
func (e *Engine) why(c *incidentlib.Case, pl *plan, analyzed []analyzedField) ([]incidentlib.Match, []incidentlib.Term) {
	type field struct {
		name   string
		tokens []string
	}
	var fields []field
	for _, f := range analyzed {
		if f.tokens == nil || len(f.tokens.terms) == 0 {
			continue
		}
		fields = append(fields, field{f.field, f.tokens.terms})
	}
	var out []incidentlib.Match
	var terms []incidentlib.Term
	for _, m := range pl.matchers {
		if m.kind == matchYear {
			if c.Year() == m.year {
				out = append(out, incidentlib.Match{Word: pl.spanDisplay(m.span), Via: m.via, Fields: []string{"started"}})
			}
			continue
		}
		if m.kind == matchQuoted {
			sig := pl.clauses[bits.TrailingZeros32(m.span)].sig
			if !slices.Contains(e.quoteShows[sig.Name], e.byID[c.ID]) {
				continue
			}
			if i := slices.IndexFunc(out, func(x incidentlib.Match) bool { return x.Signature && x.Word == sig.Name }); i >= 0 {
				if !slices.Contains(out[i].Fields, "quoted") {
					out[i].Fields = append([]string{"quoted"}, out[i].Fields...)
				}
				continue
			}
			out = append(out, incidentlib.Match{Word: sig.Name, Via: sig.Means, Signature: true, Fields: []string{"quoted"}})
			continue
		}
		if m.kind == matchLeaning {
			if slices.Contains(termsOf(c, m.term.Facet), m.term.Slug) {
				out = append(out, incidentlib.Match{Word: pl.spanDisplay(m.span), Via: m.term.Name, Fields: []string{string(m.term.Facet)}})
			}
			continue
		}
		if m.kind == matchTerm {
			if slices.Contains(termsOf(c, m.term.Facet), m.term.Slug) {
				terms = append(terms, *m.term)
				out = append(out, incidentlib.Match{Word: pl.spanDisplay(m.span), Via: m.term.Name, Fields: []string{string(m.term.Facet)}})
			}
			continue
		}
		var in []string
		for _, f := range fields {
			if slices.Contains(in, f.name) {
				continue
			}
			for _, s := range m.seqs {
				if containsRun(f.tokens, s) {
					in = append(in, f.name)
					break
				}
			}
		}
		if len(in) == 0 {
			continue
		}
		mt := incidentlib.Match{Word: pl.spanDisplay(m.span), Fields: in}
		switch m.kind {
		case matchSignature:
			mt.Via, mt.Signature = m.via, true
		case matchSynonym:
			mt.Via = m.via
		case matchFuzzy:
			if w, ok := pl.spelled[m.via]; ok {
				mt.Via = w
			} else {
				mt.Via = e.surfaceForm(m.via, mt.Word)
			}
		}
		out = append(out, mt)
	}
	return out, terms
}

// containsRun reports whether run occurs in tokens, in order and adjacent.
func containsRun(tokens, run []string) bool {
	if len(run) == 0 {
		return false
	}
outer:
	for i := 0; i+len(run) <= len(tokens); i++ {
		for k, t := range run {
			if tokens[i+k] != t {
				continue outer
			}
		}
		return true
	}
	return false
}

// surfaceFormCases bounds how many cases surfaceForm reads for the forms a
// stem is written in.
const surfaceFormCases = 8

// surfaceForm turns an indexed stem ("databas") back into a word the cases
// write ("database"), by reading a few cases that hold it: of the forms
// they write ("database", "databases"), the one nearest to what was typed
// reads best in a "did you mean". Reading one case only made the answer
// depend on which case the index lists first, which changes as cases are
// added.
func (e *Engine) surfaceForm(stem, typed string) string {
	r, err := e.reader()
	if err != nil {
		return stem
	}
	defer r.Close()
	a := e.analyzer()
	typed = strings.ToLower(typed)
	// Only words that begin as the stem does can analyze to it.
	prefix := stem[:min(len(stem), 3)]
	best, bestD := "", -1
	read := map[int]bool{}
	for _, f := range textFields {
		if len(read) == surfaceFormCases || bestD == 0 {
			break
		}
		tfr, err := r.TermFieldReader(context.Background(), []byte(stem), f.name, false, false, false)
		if err != nil {
			continue
		}
		for len(read) < surfaceFormCases && bestD != 0 {
			d, err := tfr.Next(nil)
			if err != nil || d == nil {
				break
			}
			num := binary.BigEndian.Uint64(d.ID)
			if num >= uint64(len(e.docNum)) || e.docNum[num] < 0 || read[int(e.docNum[num])] {
				continue
			}
			ci := int(e.docNum[num])
			read[ci] = true
			c := e.cases[ci]
			for _, ft := range append([]fieldText{{"title", c.Title}, {"company", c.Company}, {"summary", c.Summary}}, bodyTexts(c)...) {
				for _, w := range strings.FieldsFunc(strings.ToLower(ft.text), notLetterOrDigit) {
					if !strings.HasPrefix(w, prefix) {
						continue
					}
					toks := a.Analyze([]byte(w))
					if len(toks) != 1 || string(toks[0].Term) != stem {
						continue
					}
					if d := incidentlib.EditDistance(w, typed); bestD < 0 || d < bestD || (d == bestD && w < best) {
						best, bestD = w, d
					}
				}
			}
		}
		tfr.Close()
	}
	if best != "" {
		return best
	}
	return stem
}

// notLetterOrDigit splits text into the words a case writes.
func notLetterOrDigit(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// describe fills in what a result says about its query: the recognised
// terms with their counts, the words that matched nothing, whether a typo
// fallback was used, and suggestions when results are few.
func (e *Engine) describe(pl *plan, res *incidentlib.SearchResult) {
	for _, t := range pl.terms {
		fc := incidentlib.FacetCount{Term: t}
		for _, c := range res.Facets[t.Facet] {
			if c.Term.Slug == t.Slug {
				fc.Count = c.Count
			}
		}
		res.Terms = append(res.Terms, fc)
	}
	for ci, pc := range pl.clauses {
		if pc.covered == 0 {
			res.Unmatched = append(res.Unmatched, pc.display)
		} else if len(pl.fuzzy[ci]) > 0 {
			res.Fuzzy = true
		}
	}
	for ci, pc := range pl.clauses {
		if pc.word == "" || len(res.Suggestions) == maxSuggestions {
			continue
		}
		_, fuzzed := pl.fuzzy[ci]
		if pc.covered > 0 && !fuzzed && res.Total >= suggestBelow {
			continue
		}
		s := incidentlib.Suggestion{Word: pc.word}
		for _, stem := range pl.fuzzy[ci] {
			w, ok := pl.spelled[stem]
			if !ok {
				w = e.surfaceForm(stem, pc.word)
			}
			if !slices.Contains(s.Spellings, w) {
				s.Spellings = append(s.Spellings, w)
			}
		}
		s.Terms = e.nearTerms(pc.word, pc.seqs[0][0], pl)
		if len(s.Spellings) > 0 || len(s.Terms) > 0 {
			res.Suggestions = append(res.Suggestions, s)
		}
	}
}

// nearTerms returns up to three vocabulary terms whose name, slug or alias
// holds the word, or failing that is spelled like it; terms the query
// already names are left out.
func (e *Engine) nearTerms(word, stem string, pl *plan) []incidentlib.Term {
	recognised := func(t incidentlib.Term) bool {
		for _, r := range pl.terms {
			if r.Facet == t.Facet && r.Slug == t.Slug {
				return true
			}
		}
		return false
	}
	var holding []incidentlib.Term
	for i, t := range e.lex.terms {
		if !recognised(t) && e.lex.termTokens[i][stem] {
			holding = append(holding, t)
		}
	}
	if len(holding) == 0 {
		var names []string
		byName := map[string]incidentlib.Term{}
		for _, t := range e.lex.terms {
			if recognised(t) {
				continue
			}
			for _, n := range append([]string{t.Name}, t.Aliases...) {
				names = append(names, n)
				if _, ok := byName[n]; !ok {
					byName[n] = t
				}
			}
		}
		if n, ok := incidentlib.Nearest(word, names); ok {
			holding = append(holding, byName[n])
		}
	}
	sort.SliceStable(holding, func(i, j int) bool {
		return e.facets.dims[dimOf(holding[i].Facet)].df[e.facets.dims[dimOf(holding[i].Facet)].no[holding[i].Slug]] >
			e.facets.dims[dimOf(holding[j].Facet)].df[e.facets.dims[dimOf(holding[j].Facet)].no[holding[j].Slug]]
	})
	if len(holding) > 3 {
		holding = holding[:3]
	}
	return holding
}

// analyzeHit analyzes a hit's fields in reading order until every clause
// the case matched through its text has been found and two fields beyond
// the title hold a match (enough for the snippets). A page of hits costs
// a bounded amount of analysis whatever the cases' length.
func (e *Engine) analyzeHit(ci int, pl *plan, prefixes []string, matched uint32) []analyzedField {
	c := e.cases[ci]
	a := e.analyzer()
	var textSpan uint32
	for _, m := range pl.matchers {
		if len(m.seqs) > 0 {
			textSpan |= m.span
		}
	}
	need := matched & textSpan
	var found uint32
	excerpts := 0
	var out []analyzedField
	for fi, f := range caseFields(c) {
		af := analyzedField{field: f.field, text: f.text}
		if (found&need != need || excerpts < maxSnippets) && f.text != "" && mayHold(f.text, prefixes) {
			af.tokens = e.tokens.get(fieldKey{ci: int32(ci), field: int32(fi)}, f.text, a)
			ts := af.tokens.terms
			var here uint32
			for _, m := range pl.matchers {
				for _, seq := range m.seqs {
					if here&m.span != m.span && containsRun(ts, seq) {
						here |= m.span
					}
				}
			}
			found |= here
			if here != 0 && f.field != "title" && f.field != "company" {
				excerpts++
			}
		}
		out = append(out, af)
	}
	return out
}
