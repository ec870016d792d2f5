// Package overlap finds the runs of words a case shares with its sources.
//
// The corpus takes facts from public postmortems but never their sentences.
// A run of six or more words that a case field shares with a source is the
// mark of a sentence carried over, so contributors run this check on every
// case against the text of every source it lists.
//
// Words are compared after folding case, punctuation, accents on Latin
// letters and the common British/US spelling pairs (-ise/-ize, -our/-or,
// -yse/-yze, -tre/-ter, doubled l before -ed/-ing), so a copy cannot hide
// behind either. Facts may still be shared: words that hold a digit (dates,
// times, counts, versions) and words the case puts in quotes or backticks
// (error messages, labels, setting names) match but do not count towards the
// six.
package overlap

import (
	"html"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MinWords is the shortest run that counts as carried over.
const MinWords = 6

// Field is a piece of case text, named for the report ("summary",
// "action_items[2].text").
type Field struct {
	Name string
	Text string
}

// Source is the text of one source page.
type Source struct {
	Name string
	Text string
}

// Run is one run of words a case field shares with a source.
type Run struct {
	Field  string
	Source string
	Words  int    // words that count towards the minimum
	Text   string // the run as the case writes it
}

// token is one word of a text: its folded form for comparison, where it
// stands in the original text, and whether it is free (a number or quoted).
type token struct {
	key        string
	start, end int
	free       bool
}

// Find returns every run of at least min counted words that a field shares
// with a source, longest first. A min below 2 means MinWords.
func Find(fields []Field, sources []Source, min int) []Run {
	if min < 2 {
		min = MinWords
	}
	var runs []Run
	for _, s := range sources {
		st := tokenize(s.Text, false)
		index := make(map[string][]int, len(st))
		for j, t := range st {
			index[t.key] = append(index[t.key], j)
		}
		for _, f := range fields {
			runs = append(runs, findIn(f, tokenize(f.Text, true), s.Name, st, index, min)...)
		}
	}
	sort.SliceStable(runs, func(a, b int) bool { return runs[a].Words > runs[b].Words })
	return runs
}

// findIn reports the maximal shared runs of one field against one source,
// at most one per stretch of the field: where several source places match
// the same field words, the longest is kept.
func findIn(f Field, ft []token, source string, st []token, index map[string][]int, min int) []Run {
	var out []Run
	covered := -1 // field tokens before this index are already reported
	for i := 0; i < len(ft); i++ {
		if i < covered {
			continue
		}
		bestLen, bestCount := 0, 0
		for _, j := range index[ft[i].key] {
			if i > 0 && j > 0 && ft[i-1].key == st[j-1].key {
				continue // not the start of a maximal run
			}
			n, count := 0, 0
			for i+n < len(ft) && j+n < len(st) && ft[i+n].key == st[j+n].key {
				if !ft[i+n].free {
					count++
				}
				n++
			}
			if count > bestCount || (count == bestCount && n > bestLen) {
				bestLen, bestCount = n, count
			}
		}
		if bestCount >= min {
			out = append(out, Run{
				Field:  f.Name,
				Source: source,
				Words:  bestCount,
				Text:   f.Text[ft[i].start:ft[i+bestLen-1].end],
			})
			covered = i + bestLen
		}
	}
	return out
}

// tokenize splits text into folded words. With quotes set, words inside
// double quotes, curly quotes or backticks are marked free.
func tokenize(text string, quotes bool) []token {
	var out []token
	inQuote := false
	var quoteClose rune
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if quotes {
			switch {
			case inQuote && r == quoteClose:
				inQuote = false
				i += size
				continue
			case !inQuote && (r == '"' || r == '`' || r == '“'):
				inQuote = true
				quoteClose = r
				if r == '“' {
					quoteClose = '”'
				}
				i += size
				continue
			}
		}
		if !isWordRune(r) {
			i += size
			continue
		}
		start := i
		var b strings.Builder
		digit := false
		for i < len(text) {
			r, size = utf8.DecodeRuneInString(text[i:])
			if r == '\'' || r == '’' {
				// An apostrophe inside a word joins it ("don't"); at its
				// edge it is punctuation.
				if i+size < len(text) {
					if next, _ := utf8.DecodeRuneInString(text[i+size:]); isWordRune(next) && b.Len() > 0 {
						i += size
						continue
					}
				}
				break
			}
			if !isWordRune(r) {
				break
			}
			if unicode.IsDigit(r) {
				digit = true
			}
			b.WriteRune(fold(r))
			i += size
		}
		out = append(out, token{key: spelling(b.String()), start: start, end: i, free: digit || inQuote})
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// fold lowers a letter and drops the accent of common Latin letters, so
// "café" and "cafe" compare equal.
func fold(r rune) rune {
	r = unicode.ToLower(r)
	switch r {
	case 'à', 'á', 'â', 'ã', 'ä', 'å':
		return 'a'
	case 'ç':
		return 'c'
	case 'è', 'é', 'ê', 'ë':
		return 'e'
	case 'ì', 'í', 'î', 'ï':
		return 'i'
	case 'ñ':
		return 'n'
	case 'ò', 'ó', 'ô', 'õ', 'ö':
		return 'o'
	case 'ù', 'ú', 'û', 'ü':
		return 'u'
	}
	return r
}

// spellingRules fold British spellings onto American ones. Both sides of a
// comparison are folded the same way, so a rule that also touches an
// unrelated word can only make the check stricter, never let a copy pass.
var spellingRules = []struct{ from, to string }{
	{"isation", "ization"}, {"isations", "izations"},
	{"ise", "ize"}, {"ised", "ized"}, {"ises", "izes"}, {"ising", "izing"},
	{"yse", "yze"}, {"ysed", "yzed"}, {"ysing", "yzing"},
	{"our", "or"}, {"ours", "ors"},
	{"tre", "ter"}, {"tres", "ters"},
	{"lled", "led"}, {"lling", "ling"},
	{"ogue", "og"}, {"ogues", "ogs"},
	{"ence", "ense"}, // licence/defence
}

func spelling(w string) string {
	if len(w) < 5 {
		return w
	}
	for _, r := range spellingRules {
		if strings.HasSuffix(w, r.from) {
			return w[:len(w)-len(r.from)] + r.to
		}
	}
	return w
}

var (
	dropElements = regexp.MustCompile(`(?is)<(script|style|noscript|svg|head)\b.*?</(script|style|noscript|svg|head)\s*>`)
	comments     = regexp.MustCompile(`(?s)<!--.*?-->`)
	blockTags    = regexp.MustCompile(`(?i)</?(p|div|br|li|ul|ol|h[1-6]|tr|td|th|table|section|article|header|footer|pre|blockquote)\b[^>]*>`)
	tags         = regexp.MustCompile(`(?s)<[^>]*>`)
)

// TextFromHTML turns a saved web page into plain text: scripts, styles and
// comments dropped, block elements ended with a line break so that words of
// two paragraphs do not join, entities decoded.
func TextFromHTML(page string) string {
	s := dropElements.ReplaceAllString(page, " ")
	s = comments.ReplaceAllString(s, " ")
	s = blockTags.ReplaceAllString(s, "\n")
	s = tags.ReplaceAllString(s, "")
	return html.UnescapeString(s)
}

// LooksLikeHTML reports whether a text is a web page rather than plain text.
func LooksLikeHTML(s string) bool {
	head := strings.ToLower(s[:min(len(s), 2048)])
	return strings.Contains(head, "<html") || strings.Contains(head, "<!doctype html") ||
		strings.Contains(head, "<body") || strings.Contains(head, "<p>") || strings.Contains(head, "<div")
}
