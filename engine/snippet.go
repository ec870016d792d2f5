package engine

import (
	"strings"
	"unicode/utf8"

	"github.com/incidentlib/incidentlib"
)

// Snippet sizes, in bytes of case text.
const (
	snippetWidth = 220
	maxSnippets  = 2
)

// snippetsFiltered finds where the query's terms occur in a case's text and
// cuts up to maxSnippets windows around them, best field first, with the
// prefix filter chosen by the caller, so a test can check that the filter
// never changes a snippet. Search itself uses snippetsFrom on fields it has
// analyzed once for both snippets and reasons.
func (e *Engine) snippetsFiltered(c *incidentlib.Case, terms []string, fuzzy, prefilter bool) []incidentlib.Snippet {
	return e.snippetsFrom(c, terms, fuzzy, prefilter, nil)
}

// analyzedField is one field of a case run through the analyzer, shared by
// snippets and "why it matched" so a hit's text is analyzed once. Fields
// the prefix filter ruled out have no tokens.
type analyzedField struct {
	field  string
	text   string
	tokens *fieldTokens // nil when not analyzed
}

// caseFields are the fields snippets and reasons look at, in the order
// snippets prefer them.
func caseFields(c *incidentlib.Case) []fieldText {
	out := []fieldText{{"title", c.Title}, {"company", c.Company}}
	for _, q := range c.Quotes {
		out = append(out, fieldText{"quoted", q.Text})
	}
	return append(append(out, fieldText{"summary", c.Summary}), bodyTexts(c)...)
}

// mayHold reports whether text holds any of the prefixes, case-folded.
func mayHold(text string, prefixes []string) bool {
	if prefixes == nil {
		return true
	}
	lower := strings.ToLower(text)
	for _, p := range prefixes {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}

// stemPrefixes are the stems less their last two letters: the Porter
// stemmer rewrites at most the last two letters of what it keeps, so a
// word can only stem to t if its text holds t's prefix.
func stemPrefixes(terms []string) []string {
	var out []string
	for _, t := range terms {
		r := []rune(t)
		out = append(out, string(r[:max(1, len(r)-2)]))
	}
	return out
}

// snippetsFrom is snippets over fields already analyzed (nil: analyze
// them here).
func (e *Engine) snippetsFrom(c *incidentlib.Case, terms []string, fuzzy, prefilter bool, pre []analyzedField) []incidentlib.Snippet {
	if len(terms) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, t := range terms {
		want[t] = true
	}
	matches := func(term string) bool {
		if want[term] {
			return true
		}
		if fuzzy {
			for t := range want {
				if d := fuzziness(t); d > 0 && incidentlib.EditDistance(term, t) <= d {
					return true
				}
			}
		}
		return false
	}
	// A field can only match if its text holds the start of a query stem:
	// the Porter stemmer rewrites at most the last two letters of what it
	// keeps, so a stem less its last two letters is always a prefix of the
	// words it came from. Fields without any such prefix are not analyzed,
	// which halves the cost of a page of snippets. Typo matching has no such
	// guarantee, so the fuzzy path analyzes everything.
	var prefixes []string
	if prefilter {
		for t := range want {
			r := []rune(t)
			prefixes = append(prefixes, string(r[:max(1, len(r)-2)]))
		}
	}
	mayMatch := func(text string) bool {
		if prefixes == nil {
			return true
		}
		lower := strings.ToLower(text)
		for _, p := range prefixes {
			if strings.Contains(lower, p) {
				return true
			}
		}
		return false
	}
	a := e.analyzer()
	type candidate struct {
		field  string
		text   string
		spans  [][2]int
		unique int
	}
	var cands []candidate
	fields := append([]fieldText{{"title", c.Title}, {"summary", c.Summary}}, bodyTexts(c)...)
	if pre != nil {
		for _, f := range pre {
			if f.field == "company" || f.tokens == nil {
				continue
			}
			var spans [][2]int
			seen := map[string]bool{}
			for i, term := range f.tokens.terms {
				if matches(term) {
					spans = append(spans, [2]int{int(f.tokens.start[i]), int(f.tokens.end[i])})
					seen[term] = true
				}
			}
			if len(spans) > 0 {
				cands = append(cands, candidate{f.field, f.text, spans, len(seen)})
			}
		}
		fields = nil
	}
	// Fields are tried in the order snippets prefer them. Once two fields
	// other than the title hold every query term, no later field can rank
	// above them, so the rest are not analyzed.
	complete := 0
	for _, f := range fields {
		if complete == maxSnippets {
			break
		}
		if f.text == "" || !mayMatch(f.text) {
			continue
		}
		var spans [][2]int
		seen := map[string]bool{}
		for _, tok := range a.Analyze([]byte(f.text)) {
			if term := string(tok.Term); matches(term) {
				spans = append(spans, [2]int{tok.Start, tok.End})
				seen[term] = true
			}
		}
		if len(spans) > 0 {
			cands = append(cands, candidate{f.field, f.text, spans, len(seen)})
			if !fuzzy && f.field != "title" && len(seen) == len(want) {
				complete++
			}
		}
	}
	// Prefer fields that hold more of the distinct query terms; the title
	// is already shown beside every hit, so it only serves as a last resort.
	best := func(i, j int) bool {
		if (cands[i].field == "title") != (cands[j].field == "title") {
			return cands[j].field == "title"
		}
		return cands[i].unique > cands[j].unique
	}
	for i := 1; i < len(cands); i++ {
		for j := i; j > 0 && best(j, j-1); j-- {
			cands[j], cands[j-1] = cands[j-1], cands[j]
		}
	}
	var out []incidentlib.Snippet
	for _, cd := range cands {
		if len(out) == maxSnippets || (cd.field == "title" && len(out) > 0) {
			break
		}
		out = append(out, cut(cd.field, cd.text, cd.spans))
	}
	return out
}

// cut returns a window of text around the first span, with every span
// inside the window marked.
func cut(field, text string, spans [][2]int) incidentlib.Snippet {
	start := spans[0][0] - snippetWidth/4
	if start < 0 {
		start = 0
	}
	start = wordStart(text, start)
	end := start + snippetWidth
	if end >= len(text) {
		end = len(text)
	} else {
		end = wordEnd(text, end)
	}
	sn := incidentlib.Snippet{Field: field}
	add := func(s string, match bool) {
		if s != "" {
			sn.Parts = append(sn.Parts, incidentlib.SnippetPart{Text: s, Match: match})
		}
	}
	prefix, suffix := "", ""
	if start > 0 {
		prefix = "…"
	}
	if end < len(text) {
		suffix = "…"
	}
	pos := start
	for _, sp := range spans {
		if sp[0] < pos || sp[1] > end {
			continue
		}
		add(clean(text[pos:sp[0]]), false)
		add(text[sp[0]:sp[1]], true)
		pos = sp[1]
	}
	add(clean(text[pos:end]), false)
	if len(sn.Parts) > 0 {
		sn.Parts[0].Text = prefix + strings.TrimLeft(sn.Parts[0].Text, " ")
		last := &sn.Parts[len(sn.Parts)-1]
		last.Text = strings.TrimRight(last.Text, " ") + suffix
	}
	return sn
}

// clean folds runs of white space (line breaks included) into one space,
// keeping a space at either end, so a snippet reads as one line and the
// words around a match stay apart from it.
func clean(s string) string {
	folded := strings.Join(strings.Fields(s), " ")
	if folded == "" {
		if s != "" {
			return " "
		}
		return ""
	}
	if isSpace(s[0]) {
		folded = " " + folded
	}
	if isSpace(s[len(s)-1]) {
		folded += " "
	}
	return folded
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' }

// wordStart moves i back to the start of a word (and of a rune).
func wordStart(s string, i int) int {
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	for j := i; j > 0 && i-j < 30; j-- {
		if s[j-1] == ' ' || s[j-1] == '\n' {
			return j
		}
	}
	return i
}

// wordEnd moves i forward to the end of a word (and of a rune).
func wordEnd(s string, i int) int {
	for j := i; j < len(s) && j-i < 30; j++ {
		if s[j] == ' ' || s[j] == '\n' {
			return j
		}
	}
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}
