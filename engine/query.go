package engine

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/search/query"

	"incidentlib"
)

// Query-text limits: a query longer than this is refused; more words than
// maxQueryTerms are refused too, since each costs a posting-list walk.
const maxQueryTerms = 32

// parsedText is query text split into bare words and quoted phrases.
type parsedText struct {
	words   []string
	phrases []string
}

func (p parsedText) empty() bool { return len(p.words) == 0 && len(p.phrases) == 0 }

// parseText splits query text. Double quotes delimit phrases; an unbalanced
// quote is ignored. Every other character is text, so syntax characters of
// other query languages (+ - : * ? ~ ^ ( ) [ ] { }) are harmless.
func parseText(s string) (parsedText, error) {
	if len(s) > incidentlib.MaxQueryLength {
		return parsedText{}, &incidentlib.Error{Code: incidentlib.ETOOLARGE, Param: "q",
			Message: "the query is " + itoa(len(s)) + " bytes; at most " + itoa(incidentlib.MaxQueryLength) + " are allowed"}
	}
	if !utf8.ValidString(s) {
		return parsedText{}, incidentlib.InvalidParam("q", "the query is not valid UTF-8")
	}
	var p parsedText
	parts := strings.Split(s, `"`)
	balanced := len(parts)%2 == 1
	for i, part := range parts {
		inPhrase := i%2 == 1 && (balanced || i < len(parts)-1)
		if inPhrase {
			if f := strings.Join(strings.FieldsFunc(part, notWordRune), " "); f != "" {
				p.phrases = append(p.phrases, f)
			}
			continue
		}
		p.words = append(p.words, strings.FieldsFunc(part, notWordRune)...)
	}
	if n := len(p.words) + len(p.phrases); n > maxQueryTerms {
		return parsedText{}, incidentlib.InvalidParam("q", "the query has %d words and phrases; at most %d are allowed", n, maxQueryTerms)
	}
	return p, nil
}

func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '.' && r != '_' && r != '/'
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// analyzedTerms runs text through the index's analyzer and returns the
// terms it would index (lower-cased, stemmed, stop words removed).
func analyzedTerms(a analysis.Analyzer, text string) []string {
	var out []string
	for _, tok := range a.Analyze([]byte(text)) {
		out = append(out, string(tok.Term))
	}
	return out
}

// buildQuery turns parsed text into a Bleve query: every word and phrase
// must match (AND), each in any text field, with the fields' boosts. With
// fuzzy set, words tolerate one or two typos. It returns nil when no word
// survives analysis (only stop words), and the analyzed terms for snippets.
func buildQuery(a analysis.Analyzer, p parsedText, fuzzy bool) (query.Query, []string) {
	var must []query.Query
	var terms []string
	anyField := func(make func(field string) query.Query) query.Query {
		var alts []query.Query
		for _, f := range textFields {
			q := make(f.name)
			q.(query.BoostableQuery).SetBoost(f.boost)
			alts = append(alts, q)
		}
		return query.NewDisjunctionQuery(alts)
	}
	for _, w := range p.words {
		ts := analyzedTerms(a, w)
		if len(ts) == 0 {
			continue
		}
		terms = append(terms, ts...)
		must = append(must, anyField(func(field string) query.Query {
			m := query.NewMatchQuery(w)
			m.SetField(field)
			m.SetOperator(query.MatchQueryOperatorAnd)
			if fuzzy {
				m.SetFuzziness(fuzziness(w))
			}
			return m
		}))
	}
	for _, ph := range p.phrases {
		ts := analyzedTerms(a, ph)
		if len(ts) == 0 {
			continue
		}
		terms = append(terms, ts...)
		must = append(must, anyField(func(field string) query.Query {
			m := query.NewMatchPhraseQuery(ph)
			m.SetField(field)
			if fuzzy {
				m.SetFuzziness(fuzziness(ph))
			}
			return m
		}))
	}
	if len(must) == 0 {
		return nil, nil
	}
	return query.NewConjunctionQuery(must), terms
}

// fuzziness allows more typos in longer words; short words must match.
func fuzziness(w string) int {
	switch n := utf8.RuneCountInString(w); {
	case n >= 8:
		return 2
	case n >= 4:
		return 1
	}
	return 0
}
