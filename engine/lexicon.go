package engine

import (
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/incidentlib/incidentlib"
)

// questionWords carry no weight in a query: they are how people and agents
// ask ("have others seen this?", "what happened when …"), not what they ask
// about. English stop words are dropped by the analyzer already; these are
// compared after stemming.
var questionWords = []string{
	"anyone", "anybody", "someone", "somebody", "others", "other", "seen", "see", "ever",
	"what", "which", "who", "whom", "why", "how", "when", "where", "happened", "happen", "happens",
	"similar", "like", "example", "examples", "case", "cases", "incident", "incidents",
	"find", "show", "look", "looking", "know", "known", "anything", "something", "please",
	"help", "our", "we", "us", "i", "me", "my", "you", "your", "has", "have", "had", "did", "do", "does",
	"can", "could", "would", "should", "will", "got", "get", "getting", "there", "also", "just",
	"thing", "things", "way", "any", "happening", "went",
	"else", "tell", "about", "elsewhere", "ones", "been",
}

// expression is a vocabulary term's name, slug or alias, or one expression
// of a synonym set, as the analyzer sees it.
type expression struct {
	tokens []string
	text   string // as written in the data file
	// Exactly one of term and synonyms is set.
	term     *incidentlib.Term
	synonyms int // index of the synonym set, when term is nil
}

// lexicon finds vocabulary terms and synonyms in a query.
type lexicon struct {
	question map[string]bool
	byFirst  map[string][]expression // by first token
	sets     [][]expression          // synonym sets, analyzed
	setWhy   []string
	terms    []incidentlib.Term // every tagging term, for suggestions
	// termTokens are, per term (in terms' order), the analyzed tokens of
	// its name and aliases, so suggestions need not analyze them again.
	termTokens []map[string]bool
	// forms are the other forms of irregular verbs, by analyzed form.
	forms map[string][]string
}

func newLexicon(a analysis.Analyzer, v *incidentlib.Vocabulary) *lexicon {
	lx := &lexicon{question: map[string]bool{}, byFirst: map[string][]expression{}, forms: verbForms(a)}
	for _, w := range questionWords {
		for _, t := range analyzedTerms(a, w) {
			lx.question[t] = true
		}
	}
	add := func(e expression) {
		if len(e.tokens) == 0 {
			return
		}
		for _, o := range lx.byFirst[e.tokens[0]] {
			if o.term == e.term && o.synonyms == e.synonyms && equalTokens(o.tokens, e.tokens) {
				return
			}
		}
		lx.byFirst[e.tokens[0]] = append(lx.byFirst[e.tokens[0]], e)
	}
	for _, f := range incidentlib.Facets {
		for _, t := range v.Terms(f) {
			term := t
			lx.terms = append(lx.terms, term)
			toks := map[string]bool{}
			names := append([]string{t.Name, strings.ReplaceAll(t.Slug, "-", " ")}, t.Aliases...)
			for _, n := range names {
				e := expression{tokens: analyzedTerms(a, n), text: n, term: &term, synonyms: -1}
				for _, tok := range e.tokens {
					toks[tok] = true
				}
				add(e)
			}
			lx.termTokens = append(lx.termTokens, toks)
		}
	}
	for i, s := range v.Synonyms() {
		var set []expression
		for _, x := range s.Expressions {
			e := expression{tokens: analyzedTerms(a, x), text: x, synonyms: i}
			set = append(set, e)
			add(e)
		}
		lx.sets = append(lx.sets, set)
		lx.setWhy = append(lx.setWhy, s.Why)
	}
	return lx
}

func equalTokens(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// streamToken is one analyzed token of the query with the clause it
// belongs to (-1 for a question word, which belongs to none).
type streamToken struct {
	term   string
	clause int
}

// found is an expression found in a query, and the clauses it spans.
type found struct {
	expr expression
	span uint32
}

// find lists the expressions that occur as a run of tokens in the query's
// token stream, longest first at each position.
func (lx *lexicon) find(stream []streamToken) []found {
	var out []found
	for i := range stream {
		for _, e := range lx.byFirst[stream[i].term] {
			if i+len(e.tokens) > len(stream) {
				continue
			}
			var span uint32
			ok := true
			for k, t := range e.tokens {
				if stream[i+k].term != t {
					ok = false
					break
				}
				if c := stream[i+k].clause; c >= 0 {
					span |= 1 << uint(c)
				}
			}
			if ok && span != 0 {
				out = append(out, found{expr: e, span: span})
			}
		}
	}
	return out
}
