package engine

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/incidentlib/incidentlib"
)

// Query-text bounds. Text up to incidentlib.MaxQueryLength is accepted, so
// a pasted alert or paragraph works as a query, but only the first
// maxClauses meaningful words take part: each costs a posting-list walk.
const (
	maxClauses  = 32 // meaningful words and phrases considered
	maxExcluded = 16 // -words and -"phrases"
)

// item is one word or phrase as the query wrote it.
type item struct {
	text   string // folded to single spaces; a phrase has several words
	phrase bool   // quoted, or a hyphenated word such as read-only
	joined bool   // written as one chunk with hyphens (read-only), not quoted
}

// clause is one thing the query asks for: an item, or several joined by OR
// (any of them will do).
type clause struct {
	alts []item
}

// display is how a clause is named back to the user.
func (c clause) display() string {
	parts := make([]string, len(c.alts))
	for i, a := range c.alts {
		parts[i] = a.text
		if a.phrase && strings.Contains(a.text, " ") {
			parts[i] = `"` + a.text + `"`
		}
	}
	return strings.Join(parts, " OR ")
}

// parsedText is query text split by the query syntax: clauses to match and
// items to exclude.
type parsedText struct {
	clauses []clause
	exclude []item
	// signatures recognised in the text before it was parsed; their
	// matches are no longer in the clauses.
	signatures []incidentlib.Signature
}

func (p parsedText) empty() bool {
	return len(p.clauses) == 0 && len(p.exclude) == 0 && len(p.signatures) == 0
}

// parseText splits query text by the library's query syntax, the same in
// every protocol:
//
//	word            the word, or a word of the same stem
//	"a phrase"      the words in that order
//	-word -"a b"    cases holding it are left out (a dash before one or
//	                two characters is a command flag, as in rm -rf: text)
//	a OR b          either will do
//
// Any other punctuation separates words, so the syntax characters of other
// query languages (+ : * ? ~ ^ ( ) [ ] { }) are harmless; an unbalanced
// quote runs to the end of the text. A word written with hyphens
// (read-only, us-east-1) is a phrase of its parts.
func parseText(s string) (parsedText, error) {
	if len(s) > incidentlib.MaxQueryLength {
		return parsedText{}, &incidentlib.Error{Code: incidentlib.ETOOLARGE, Param: "q",
			Message: "the query is " + itoa(len(s)) + " bytes; at most " + itoa(incidentlib.MaxQueryLength) + " are allowed"}
	}
	if !utf8.ValidString(s) {
		return parsedText{}, incidentlib.InvalidParam("q", "the query is not valid UTF-8")
	}
	type token struct {
		it     item
		negate bool
		or     bool // the bare word OR
	}
	var toks []token
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		negate := false
		if r == '-' && i+1 < len(s) && !unicode.IsSpace(rune(s[i+1])) && !isFlag(s[i:]) {
			negate = true
			i++
		}
		if i < len(s) && s[i] == '"' {
			end := strings.IndexByte(s[i+1:], '"')
			var body string
			if end < 0 {
				body, i = s[i+1:], len(s)
			} else {
				body, i = s[i+1:i+1+end], i+2+end
			}
			if words := strings.FieldsFunc(body, notWordRune); len(words) > 0 {
				toks = append(toks, token{it: item{text: strings.Join(words, " "), phrase: true}, negate: negate})
			}
			continue
		}
		j := i
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if unicode.IsSpace(r) || r == '"' {
				break
			}
			j += size
		}
		chunk := s[i:j]
		i = j
		if chunk == "OR" && !negate {
			toks = append(toks, token{or: true})
			continue
		}
		// A chunk is one word, or several written together with hyphens
		// or other punctuation: those are a phrase of their parts.
		words := strings.FieldsFunc(chunk, notWordRune)
		switch {
		case len(words) == 0:
		case len(words) == 1:
			toks = append(toks, token{it: item{text: words[0]}, negate: negate})
		case strings.ContainsAny(chunk, "-"):
			toks = append(toks, token{it: item{text: strings.Join(words, " "), phrase: true, joined: true}, negate: negate})
		default:
			for k, w := range words {
				toks = append(toks, token{it: item{text: w}, negate: negate && k == 0})
			}
		}
	}
	var p parsedText
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		switch {
		case t.or:
			// OR joins the clause before it with the item after it; at
			// either end of the query it is an ordinary word.
			if len(p.clauses) > 0 && k > 0 && !toks[k-1].or && !toks[k-1].negate && k+1 < len(toks) && !toks[k+1].or && !toks[k+1].negate {
				last := &p.clauses[len(p.clauses)-1]
				last.alts = append(last.alts, toks[k+1].it)
				k++
				continue
			}
			p.clauses = append(p.clauses, clause{alts: []item{{text: "or"}}})
		case t.negate:
			if len(p.exclude) == maxExcluded {
				return parsedText{}, incidentlib.InvalidParam("q", "the query excludes more than %d words or phrases", maxExcluded)
			}
			p.exclude = append(p.exclude, t.it)
		default:
			p.clauses = append(p.clauses, clause{alts: []item{t.it}})
		}
	}
	return p, nil
}

// isFlag reports whether s starts with a command-line flag of one or two
// characters (rm -rf, kill -9): that is text to find, not a word to leave
// out.
func isFlag(s string) bool {
	n := 0
	for _, r := range s[1:] {
		if unicode.IsSpace(r) || r == '"' {
			break
		}
		if notWordRune(r) {
			return false
		}
		n++
	}
	return n > 0 && n <= 2
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

// fuzziness allows more typos in longer words; words under four letters
// must match as typed.
func fuzziness(w string) int {
	switch n := utf8.RuneCountInString(w); {
	case n >= 8:
		return 2
	case n >= 4:
		return 1
	}
	return 0
}
