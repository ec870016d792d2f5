package engine

import (
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/incidentlib/incidentlib"
)

// maxSignatures bounds the signatures one query is searched for: each
// becomes a clause of at most a few search phrases (the catalogue's own
// bound), so a pasted log of many errors costs no more than a few words.
const maxSignatures = 4

// recognizer finds error signatures and noise in pasted text. It is built
// once from the catalogue; every expression is RE2 (linear in the text),
// and the text is at most incidentlib.MaxQueryLength bytes.
type recognizer struct {
	sigs        []compiledSignature
	boilerplate *regexp.Regexp // field names of pasted output, before ':' or '='
}

type compiledSignature struct {
	sig incidentlib.Signature
	re  *regexp.Regexp
}

// noise is text of pasted logs and command output that names no symptom:
// it is replaced by a space before the query is parsed. The order matters:
// whole stack-frame lines first, then timestamps before the bare times
// and numbers they hold.
var noise = []struct {
	re   *regexp.Regexp
	repl string
}{
	// Stack frames: Go (goroutine headers, "pkg.fn(0x…)" and
	// "/path/file.go:42 +0x1d"), Java ("at pkg.Class.method(File.java:42)"),
	// Python ("File "x.py", line 3, in f").
	{regexp.MustCompile(`(?m)^[ \t]*goroutine \d+ \[[^\]\n]*\]:?[ \t]*$`), " "},
	{regexp.MustCompile(`(?m)^[ \t]*[\w./*()-]+\((?:0x[0-9a-f]+(?:, )?|\.\.\.)*\)[ \t]*$`), " "},
	{regexp.MustCompile(`(?m)^[ \t]*\S+\.(?:go|java|py|rb|js|ts|rs|c|cc|cpp|kt|scala):\d+(?: \+0x[0-9a-f]+)?[ \t]*$`), " "},
	{regexp.MustCompile(`(?m)^[ \t]*at [\w.$<>]+\([^)\n]*\)[ \t]*$`), " "},
	{regexp.MustCompile(`(?m)^[ \t]*File "[^"\n]+", line \d+(?:, in \S+)?[ \t]*$`), " "},
	// Timestamps: ISO 8601, RFC 1123 and syslog dates, times of day, zones.
	{regexp.MustCompile(`\b\d{4}[-/]\d{2}[-/]\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b`), " "},
	{regexp.MustCompile(`(?i)\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,? \d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{4}\b`), " "},
	{regexp.MustCompile(`(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec) +\d{1,2} (?:\d{4} )?(?:\d{2}:\d{2}:\d{2})`), " "},
	{regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z\b)?`), " "},
	{regexp.MustCompile(`(?:^|\s)[+-]\d{4}\b`), " "},
	// Identifiers: UUIDs, Kubernetes pod names (the workload's name is
	// kept: coredns-7d9f8c6b5-x2x4z is coredns), long hex ids and hashes.
	{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), " "},
	{regexp.MustCompile(`\b([a-z][a-z0-9]*(?:-[a-z][a-z0-9]*)*)-[0-9a-f]{8,10}-[0-9a-z]{5}\b`), "$1"},
	{regexp.MustCompile(`(?i)\b(?:sha256:)?(?:0x[0-9a-f]+|[0-9a-f]{8,})\b`), ""}, // "": only what hexID says is an id
	// Addresses: IPv4 and IPv6 with their ports, bare ports.
	{regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b`), " "},
	{regexp.MustCompile(`(?i)\b[0-9a-f]{1,4}(?::[0-9a-f]{0,4}){3,7}\b`), " "},
	{regexp.MustCompile(`\[::\](?::\d{1,5})?`), " "},
	{regexp.MustCompile(`:\d{2,5}\b`), " "},
	// File paths of two or more segments.
	{regexp.MustCompile(`(?:^|[\s"'=(])(?:/[\w.@-]+){2,}/?`), " "},
}

// hexID tells a hex identifier (0x…, or eight or more hex characters
// holding both a digit and a letter) from a word such as "deadbeef" or a
// number such as 20261201.
func hexID(s string) bool {
	s = strings.TrimPrefix(strings.ToLower(s), "sha256:")
	if strings.HasPrefix(s, "0x") {
		return true
	}
	return strings.ContainsAny(s, "0123456789") && strings.ContainsAny(s, "abcdef")
}

func newRecognizer(cat incidentlib.Signatures) *recognizer {
	rz := &recognizer{}
	for _, s := range cat.Signatures {
		var alts []string
		for _, m := range s.Match {
			words := strings.FieldsFunc(m, notLetterOrDigit)
			for i, w := range words {
				words[i] = regexp.QuoteMeta(w)
			}
			if len(words) > 0 {
				alts = append(alts, `\b`+strings.Join(words, `[^\pL\pN]+`)+`\b`)
			}
		}
		alts = append(alts, s.Patterns...)
		if len(alts) == 0 {
			continue
		}
		re, err := regexp.Compile(`(?i)(?:` + strings.Join(alts, "|") + `)`)
		if err != nil {
			continue // the loader has refused such a file; a hand-built catalogue may not have been
		}
		rz.sigs = append(rz.sigs, compiledSignature{sig: s, re: re})
	}
	if len(cat.Boilerplate) > 0 {
		var names []string
		for _, b := range cat.Boilerplate {
			words := strings.Fields(b)
			for i, w := range words {
				words[i] = regexp.QuoteMeta(w)
			}
			names = append(names, strings.Join(words, `[ \t_-]+`))
		}
		sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
		rz.boilerplate = regexp.MustCompile(`(?i)(?:^|[\s,;{("'])["']?(?:` + strings.Join(names, "|") + `)["']?[ \t]*[:=]`)
	}
	return rz
}

// recognize returns the signatures the text shows (at most maxSignatures,
// in the order they first appear) and the text with their matches and the
// noise of pasted output removed. Where two signatures' matches overlap,
// the one listed first in the catalogue wins ("lookup … on …:53 … i/o
// timeout" is DNS, not a timeout): the catalogue lists the specific first.
func (rz *recognizer) recognize(text string) (string, []incidentlib.Signature) {
	if rz == nil {
		return text, nil
	}
	type span struct {
		from, to, sig int
	}
	var spans []span
	for i, cs := range rz.sigs {
		for _, loc := range cs.re.FindAllStringIndex(text, -1) {
			spans = append(spans, span{loc[0], loc[1], i})
		}
	}
	var sigs []incidentlib.Signature
	if len(spans) > 0 {
		// spans are in catalogue order: a signature listed earlier (the
		// more specific) takes a text that a later one also matches, and
		// its span grows to cover both.
		// Overlapping matches are joined into one span (a chain of
		// overlaps too, so that the spans kept never overlap), named by the
		// signature listed first in the catalogue among them.
		sort.SliceStable(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
		var kept []span
		for _, s := range spans {
			if s.to <= s.from {
				continue
			}
			if n := len(kept); n > 0 && s.from < kept[n-1].to {
				k := &kept[n-1]
				k.to = max(k.to, s.to)
				k.sig = min(k.sig, s.sig)
				continue
			}
			kept = append(kept, s)
		}
		var b strings.Builder
		last := 0
		seen := map[int]bool{}
		for _, s := range kept {
			b.WriteString(text[last:s.from])
			b.WriteString(" ")
			if plainWords(text[s.from:s.to]) {
				// Words as a person types them ("deadlock", "too many
				// connections") stay words of the query beside the
				// signature; an identifier or a code does not.
				b.WriteString(text[s.from:s.to])
				b.WriteString(" ")
			}
			last = s.to
			if !seen[s.sig] && len(sigs) < maxSignatures {
				seen[s.sig] = true
				sigs = append(sigs, rz.sigs[s.sig].sig)
			}
		}
		b.WriteString(text[last:])
		text = b.String()
	}
	return dropNoise(text, rz.boilerplate), sigs
}

// plainWords reports whether s is ordinary words: letters and spaces
// only, no capital inside a word (OOMKilled, CrashLoopBackOff are
// identifiers).
func plainWords(s string) bool {
	for _, w := range strings.Fields(s) {
		for i, r := range w {
			if !unicode.IsLetter(r) || (i > 0 && unicode.IsUpper(r)) {
				return false
			}
		}
	}
	return strings.TrimSpace(s) != ""
}

// inQuotes lists, by signature name, the cases whose quotes (what people
// saw) show the signature.
func (rz *recognizer) inQuotes(cases []*incidentlib.Case) map[string][]int {
	out := map[string][]int{}
	for ci, c := range cases {
		for _, cs := range rz.sigs {
			for _, q := range c.Quotes {
				if cs.re.MatchString(q.Text) {
					out[cs.sig.Name] = append(out[cs.sig.Name], ci)
					break
				}
			}
		}
	}
	return out
}

// dropNoise removes what names no symptom from pasted text: stack frames,
// timestamps, ids, addresses, paths and the field names of the output.
func dropNoise(text string, boilerplate *regexp.Regexp) string {
	for _, n := range noise {
		if n.repl == "" {
			text = n.re.ReplaceAllStringFunc(text, func(s string) string {
				if hexID(s) {
					return " "
				}
				return s
			})
			continue
		}
		text = n.re.ReplaceAllString(text, n.repl)
	}
	if boilerplate != nil {
		text = boilerplate.ReplaceAllString(text, " ")
	}
	// logfmt and JSON keys: the values carry the meaning.
	text = logKey.ReplaceAllString(text, " ")
	return text
}

// logKey is a logfmt or JSON key ("level=", "msg=", `"error":`).
var logKey = regexp.MustCompile(`(?:^|[\s,{])"?[a-zA-Z_][\w.]*"?(?:=|":)`)
