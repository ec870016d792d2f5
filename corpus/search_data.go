package corpus

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/vocabulary"
)

// Bounds on the search data files: an alias or synonym is a short name,
// not a sentence.
const (
	maxExpressionWords = 5
	maxExpressionBytes = 60
)

// LoadShippedVocabulary loads the shipped vocabulary with its aliases,
// synonyms and error signatures, reporting the problems of all four files.
func LoadShippedVocabulary() (*incidentlib.Vocabulary, Problems) {
	v, ps := LoadVocabulary(vocabulary.FileName, vocabulary.YAML)
	if v == nil {
		return nil, ps
	}
	v, aps := LoadAliases(vocabulary.AliasesFileName, vocabulary.AliasesYAML, v)
	ps = append(ps, aps...)
	if v == nil {
		return nil, ps
	}
	sets, sps := LoadSynonyms(vocabulary.SynonymsFileName, vocabulary.SynonymsYAML)
	ps = append(ps, sps...)
	sigs, gps := LoadSignatures(vocabulary.SignaturesFileName, vocabulary.SignaturesYAML, v)
	ps = append(ps, gps...)
	if len(ps) > 0 {
		return nil, ps
	}
	return v.WithSynonyms(sets).WithSignatures(sigs), nil
}

type aliasesFile struct {
	RootCauses          map[string][]string `yaml:"root_causes"`
	Components          map[string][]string `yaml:"components"`
	Symptoms            map[string][]string `yaml:"symptoms"`
	ContributingFactors map[string][]string `yaml:"contributing_factors"`
}

// checkExpression reports what is wrong with an alias or synonym, or "".
func checkExpression(s string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "is empty"
	case s != strings.ToLower(s):
		return "must be lower-case"
	case s != strings.Join(strings.Fields(s), " "):
		return "must be words separated by single spaces"
	case len(s) > maxExpressionBytes:
		return fmt.Sprintf("is longer than %d bytes", maxExpressionBytes)
	case len(strings.Fields(s)) > maxExpressionWords:
		return fmt.Sprintf("has more than %d words", maxExpressionWords)
	}
	return ""
}

// LoadAliases parses and checks the aliases file against v and returns a
// vocabulary whose terms carry their aliases. Every tagging term must have
// at least one alias; an alias may not repeat the term's name or slug, nor
// belong to two terms of one facet.
func LoadAliases(name string, data []byte, v *incidentlib.Vocabulary) (*incidentlib.Vocabulary, Problems) {
	var ps Problems
	report := func(line int, msg string) { ps = append(ps, Problem{File: name, Line: line, Message: msg}) }
	if !utf8.Valid(data) {
		report(firstInvalidUTF8Line(data), "the file is not valid UTF-8")
		return nil, ps
	}
	root, errs := parseDocument(data)
	for _, e := range errs {
		report(e.line, e.msg)
	}
	if root == nil {
		return nil, ps
	}
	if root.Kind != yaml.MappingNode {
		report(root.Line, "not an aliases file: expected a mapping with root_causes, components, symptoms, contributing_factors")
		return nil, ps
	}
	checkKeys(root, reflect.TypeOf(aliasesFile{}), "", report)
	var af aliasesFile
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&af); err != nil {
		for _, e := range yamlErrorMessages(err, "wrong type") {
			report(e.line, e.msg)
		}
		return nil, ps
	}
	lists := map[incidentlib.Facet]struct {
		key string
		m   map[string][]string
	}{
		incidentlib.FacetRootCause:          {"root_causes", af.RootCauses},
		incidentlib.FacetComponent:          {"components", af.Components},
		incidentlib.FacetSymptom:            {"symptoms", af.Symptoms},
		incidentlib.FacetContributingFactor: {"contributing_factors", af.ContributingFactors},
	}
	terms := map[incidentlib.Facet][]incidentlib.Term{}
	for _, f := range incidentlib.Facets {
		l := lists[f]
		owner := map[string]string{} // alias → slug, within the facet
		slugs := make([]string, 0, len(l.m))
		for s := range l.m {
			slugs = append(slugs, s)
		}
		sort.Strings(slugs)
		for _, s := range slugs {
			if _, ok := v.Term(f, s); !ok {
				report(lineOf(root, l.key, s), fmt.Sprintf("%s: %q is not a %s slug in the vocabulary%s", l.key, s, f, didYouMean(s, v.Slugs(f))))
			}
		}
		for _, t := range v.Terms(f) {
			aliases, ok := l.m[t.Slug]
			if !ok || len(aliases) == 0 {
				report(lineOf(root, l.key), fmt.Sprintf("%s: %q has no aliases; every term needs at least one", l.key, t.Slug))
				continue
			}
			own := map[string]bool{strings.ToLower(t.Name): true, strings.ReplaceAll(strings.ToLower(t.Name), "-", " "): true, strings.ReplaceAll(t.Slug, "-", " "): true, t.Slug: true}
			seen := map[string]bool{}
			for i, a := range aliases {
				line := lineOf(root, l.key, t.Slug, i)
				if msg := checkExpression(a); msg != "" {
					report(line, fmt.Sprintf("%s: alias %q of %q %s", l.key, a, t.Slug, msg))
					continue
				}
				switch {
				case own[a]:
					report(line, fmt.Sprintf("%s: alias %q of %q repeats the term's name or slug, which search already knows", l.key, a, t.Slug))
				case seen[a]:
					report(line, fmt.Sprintf("%s: alias %q of %q is listed twice", l.key, a, t.Slug))
				case owner[a] != "":
					report(line, fmt.Sprintf("%s: alias %q of %q is already an alias of %q; an alias names one term", l.key, a, t.Slug, owner[a]))
				}
				seen[a] = true
				owner[a] = t.Slug
			}
			t.Aliases = aliases
			terms[f] = append(terms[f], t)
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	var sev, src []incidentlib.Term
	sev = append(sev, v.Severities()...)
	src = append(src, v.SourceTypes()...)
	return incidentlib.NewVocabulary(terms, v.Groups(), sev, src).WithSynonyms(v.Synonyms()), nil
}

type synonymsFile struct {
	Synonyms []struct {
		Expressions []string `yaml:"expressions"`
		Why         string   `yaml:"why"`
	} `yaml:"synonyms"`
}

// LoadSynonyms parses and checks the synonyms file: every set has two or
// more expressions and says why, and an expression belongs to one set.
func LoadSynonyms(name string, data []byte) ([]incidentlib.SynonymSet, Problems) {
	var ps Problems
	report := func(line int, msg string) { ps = append(ps, Problem{File: name, Line: line, Message: msg}) }
	if !utf8.Valid(data) {
		report(firstInvalidUTF8Line(data), "the file is not valid UTF-8")
		return nil, ps
	}
	root, errs := parseDocument(data)
	for _, e := range errs {
		report(e.line, e.msg)
	}
	if root == nil {
		return nil, ps
	}
	if root.Kind != yaml.MappingNode {
		report(root.Line, "not a synonyms file: expected a mapping with synonyms")
		return nil, ps
	}
	checkKeys(root, reflect.TypeOf(synonymsFile{}), "", report)
	var sf synonymsFile
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&sf); err != nil {
		for _, e := range yamlErrorMessages(err, "wrong type") {
			report(e.line, e.msg)
		}
		return nil, ps
	}
	if len(sf.Synonyms) == 0 {
		report(lineOf(root, "synonyms"), "synonyms: the list is empty or missing")
	}
	setOf := map[string]int{}
	var out []incidentlib.SynonymSet
	for i, s := range sf.Synonyms {
		line := lineOf(root, "synonyms", i)
		if len(s.Expressions) < 2 {
			report(line, fmt.Sprintf("synonyms[%d]: a set needs two or more expressions", i))
		}
		if strings.TrimSpace(s.Why) == "" {
			report(line, fmt.Sprintf("synonyms[%d]: why is missing; say how the corpus and postmortems write these", i))
		}
		for k, x := range s.Expressions {
			xl := lineOf(root, "synonyms", i, "expressions", k)
			if msg := checkExpression(x); msg != "" {
				report(xl, fmt.Sprintf("synonyms[%d]: %q %s", i, x, msg))
				continue
			}
			if prev, dup := setOf[x]; dup {
				report(xl, fmt.Sprintf("synonyms[%d]: %q is already in set %d; an expression belongs to one set", i, x, prev))
			}
			setOf[x] = i
		}
		out = append(out, incidentlib.SynonymSet{Expressions: s.Expressions, Why: s.Why})
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return out, nil
}
