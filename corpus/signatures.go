package corpus

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
)

// Bounds on a signature, so that recognising every signature in a query
// of the longest allowed length stays cheap and a signature's clause
// costs a bounded number of posting-list walks.
const (
	maxSignatureMatch   = 16  // literals and patterns of one signature
	maxSignatureSearch  = 10  // search words and phrases of one signature
	maxSignatureTerms   = 3   // vocabulary terms of one signature
	maxPatternBytes     = 120 // one regular expression
	maxLiteralBytes     = 80  // one literal
	maxSignatureNameLen = 40
)

type signaturesFile struct {
	Boilerplate []string `yaml:"boilerplate"`
	Signatures  []struct {
		Name     string   `yaml:"name"`
		Means    string   `yaml:"means"`
		Match    []string `yaml:"match"`
		Patterns []string `yaml:"patterns"`
		Search   []string `yaml:"search"`
		Terms    []string `yaml:"terms"`
		Why      string   `yaml:"why"`
	} `yaml:"signatures"`
}

// facetKeys names the facets as the search data files write them.
var facetKeys = map[string]incidentlib.Facet{
	"root_causes":          incidentlib.FacetRootCause,
	"components":           incidentlib.FacetComponent,
	"symptoms":             incidentlib.FacetSymptom,
	"contributing_factors": incidentlib.FacetContributingFactor,
}

// LoadSignatures parses and checks the signatures file against v: every
// signature has a name, a meaning, something to match, words to search
// and a reason; literals are lower-case and belong to one signature;
// patterns compile; terms exist.
func LoadSignatures(name string, data []byte, v *incidentlib.Vocabulary) (incidentlib.Signatures, Problems) {
	var ps Problems
	report := func(line int, msg string) { ps = append(ps, Problem{File: name, Line: line, Message: msg}) }
	if !utf8.Valid(data) {
		report(firstInvalidUTF8Line(data), "the file is not valid UTF-8")
		return incidentlib.Signatures{}, ps
	}
	root, errs := parseDocument(data)
	for _, e := range errs {
		report(e.line, e.msg)
	}
	if root == nil {
		return incidentlib.Signatures{}, ps
	}
	if root.Kind != yaml.MappingNode {
		report(root.Line, "not a signatures file: expected a mapping with boilerplate and signatures")
		return incidentlib.Signatures{}, ps
	}
	checkKeys(root, reflect.TypeOf(signaturesFile{}), "", report)
	var sf signaturesFile
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&sf); err != nil {
		for _, e := range yamlErrorMessages(err, "wrong type") {
			report(e.line, e.msg)
		}
		return incidentlib.Signatures{}, ps
	}
	var out incidentlib.Signatures
	seenBP := map[string]bool{}
	for i, b := range sf.Boilerplate {
		line := lineOf(root, "boilerplate", i)
		if msg := checkExpression(b); msg != "" {
			report(line, fmt.Sprintf("boilerplate: %q %s", b, msg))
			continue
		}
		if seenBP[b] {
			report(line, fmt.Sprintf("boilerplate: %q is listed twice", b))
		}
		seenBP[b] = true
		out.Boilerplate = append(out.Boilerplate, b)
	}
	if len(sf.Signatures) == 0 {
		report(lineOf(root, "signatures"), "signatures: the list is empty or missing")
	}
	owner := map[string]string{} // literal → signature name
	names := map[string]bool{}
	for i, s := range sf.Signatures {
		line := lineOf(root, "signatures", i)
		where := fmt.Sprintf("signatures[%d]", i)
		if s.Name != "" {
			where = fmt.Sprintf("signature %q", s.Name)
		}
		switch {
		case strings.TrimSpace(s.Name) == "":
			report(line, where+": name is missing")
		case len(s.Name) > maxSignatureNameLen:
			report(line, fmt.Sprintf("%s: the name is longer than %d bytes", where, maxSignatureNameLen))
		case names[strings.ToLower(s.Name)]:
			report(line, where+": another signature has this name")
		}
		names[strings.ToLower(s.Name)] = true
		if strings.TrimSpace(s.Means) == "" {
			report(line, where+": means is missing; say in plain words what the string means")
		}
		if strings.TrimSpace(s.Why) == "" {
			report(line, where+": why is missing; say where engineers meet the string and how the cases write it")
		}
		if len(s.Match)+len(s.Patterns) == 0 {
			report(line, where+": match or patterns is needed; a signature must recognise something")
		}
		if n := len(s.Match) + len(s.Patterns); n > maxSignatureMatch {
			report(line, fmt.Sprintf("%s: %d literals and patterns; at most %d", where, n, maxSignatureMatch))
		}
		for k, m := range s.Match {
			ml := lineOf(root, "signatures", i, "match", k)
			switch {
			case strings.TrimSpace(m) == "":
				report(ml, where+": a literal is empty")
				continue
			case m != strings.ToLower(m):
				report(ml, fmt.Sprintf("%s: literal %q must be lower-case (it matches any case)", where, m))
			case len(m) > maxLiteralBytes:
				report(ml, fmt.Sprintf("%s: literal %q is longer than %d bytes", where, m, maxLiteralBytes))
			case len(literalWords(m)) == 0:
				report(ml, fmt.Sprintf("%s: literal %q holds no letters or digits", where, m))
			}
			key := strings.Join(literalWords(m), " ")
			if o, dup := owner[key]; dup {
				report(ml, fmt.Sprintf("%s: literal %q is already matched by %q; a literal belongs to one signature", where, m, o))
			}
			owner[key] = s.Name
		}
		for k, p := range s.Patterns {
			pl := lineOf(root, "signatures", i, "patterns", k)
			if len(p) > maxPatternBytes {
				report(pl, fmt.Sprintf("%s: pattern %q is longer than %d bytes", where, p, maxPatternBytes))
				continue
			}
			if _, err := regexp.Compile("(?i)" + p); err != nil {
				report(pl, fmt.Sprintf("%s: pattern %q is not a valid regular expression: %v", where, p, err))
			}
		}
		if len(s.Search) == 0 {
			report(line, where+": search is missing; list the words the cases write for the symptom")
		}
		if len(s.Search) > maxSignatureSearch {
			report(line, fmt.Sprintf("%s: %d search words; at most %d", where, len(s.Search), maxSignatureSearch))
		}
		for k, w := range s.Search {
			if msg := checkExpression(w); msg != "" {
				report(lineOf(root, "signatures", i, "search", k), fmt.Sprintf("%s: search %q %s", where, w, msg))
			}
		}
		if len(s.Terms) > maxSignatureTerms {
			report(line, fmt.Sprintf("%s: %d terms; at most %d", where, len(s.Terms), maxSignatureTerms))
		}
		sig := incidentlib.Signature{Name: s.Name, Means: s.Means, Match: s.Match, Patterns: s.Patterns, Search: s.Search, Why: s.Why}
		for k, ref := range s.Terms {
			tl := lineOf(root, "signatures", i, "terms", k)
			key, slug, ok := strings.Cut(ref, "/")
			f, known := facetKeys[key]
			if !ok || !known {
				report(tl, fmt.Sprintf("%s: term %q must be facet/slug, the facet one of root_causes, components, symptoms, contributing_factors", where, ref))
				continue
			}
			t, found := v.Term(f, slug)
			if !found {
				report(tl, fmt.Sprintf("%s: %q is not a %s slug in the vocabulary%s", where, slug, f, didYouMean(slug, v.Slugs(f))))
				continue
			}
			sig.Terms = append(sig.Terms, t)
		}
		out.Signatures = append(out.Signatures, sig)
	}
	if len(ps) > 0 {
		return incidentlib.Signatures{}, ps
	}
	return out, nil
}

// literalWords splits a literal into the words it matches, ignoring the
// punctuation between them, as search does.
func literalWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
