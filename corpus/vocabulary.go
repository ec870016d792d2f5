package corpus

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
)

type vocabularyFile struct {
	RootCauses          []termFile `yaml:"root_causes"`
	ComponentGroups     []termFile `yaml:"component_groups"`
	Components          []termFile `yaml:"components"`
	Symptoms            []termFile `yaml:"symptoms"`
	ContributingFactors []termFile `yaml:"contributing_factors"`
	Severities          []termFile `yaml:"severities"`
	SourceTypes         []termFile `yaml:"source_types"`
}

type termFile struct {
	Slug       string `yaml:"slug"`
	Name       string `yaml:"name"`
	Definition string `yaml:"definition"`
	Group      string `yaml:"group"`
	// Symptoms are, for a severity, the symptoms that give it.
	Symptoms []string `yaml:"symptoms"`
}

var slugPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// LoadVocabulary parses and checks a vocabulary file. name is how the file
// is named in problems.
func LoadVocabulary(name string, data []byte) (*incidentlib.Vocabulary, Problems) {
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
		report(root.Line, "not a vocabulary: expected a mapping with root_causes, components, …")
		return nil, ps
	}
	checkKeys(root, reflect.TypeOf(vocabularyFile{}), "", report)
	var vf vocabularyFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&vf); err != nil {
		for _, e := range yamlErrorMessages(err, "wrong type") {
			report(e.line, e.msg)
		}
		return nil, ps
	}

	groups := map[string]bool{}
	var domainGroups []incidentlib.Group
	checkList := func(key string, list []termFile, needGroup bool) []incidentlib.Term {
		if len(list) == 0 {
			report(lineOf(root, key), fmt.Sprintf("%s: the list is empty or missing", key))
		}
		seen := map[string]int{}
		var out []incidentlib.Term
		for i, t := range list {
			line := lineOf(root, key, i)
			switch {
			case t.Slug == "":
				report(line, fmt.Sprintf("%s[%d]: missing slug", key, i))
				continue
			case !slugPattern.MatchString(t.Slug):
				report(lineOf(root, key, i, "slug"), fmt.Sprintf("%s: slug %q must be lower-case words joined by hyphens", key, t.Slug))
			}
			if prev, dup := seen[t.Slug]; dup {
				report(line, fmt.Sprintf("%s: slug %q is already defined on line %d", key, t.Slug, prev))
			}
			seen[t.Slug] = line
			if t.Name == "" {
				report(line, fmt.Sprintf("%s: %q has no name", key, t.Slug))
			}
			if t.Definition == "" {
				report(line, fmt.Sprintf("%s: %q has no definition", key, t.Slug))
			}
			if needGroup && !groups[t.Group] {
				valid := make([]string, 0, len(domainGroups))
				for _, g := range domainGroups {
					valid = append(valid, g.Slug)
				}
				report(lineOf(root, key, i, "group"), fmt.Sprintf("component %q: unknown group %q%s", t.Slug, t.Group, didYouMean(t.Group, valid)))
			}
			if !needGroup && t.Group != "" && key != "component_groups" {
				report(lineOf(root, key, i, "group"), fmt.Sprintf("%s: only components have a group", key))
			}
			out = append(out, incidentlib.Term{Slug: t.Slug, Name: t.Name, Definition: t.Definition, Group: t.Group})
		}
		return out
	}
	for _, g := range checkList("component_groups", vf.ComponentGroups, false) {
		groups[g.Slug] = true
		domainGroups = append(domainGroups, incidentlib.Group{Slug: g.Slug, Name: g.Name, Definition: g.Definition})
	}
	withFacet := func(f incidentlib.Facet, ts []incidentlib.Term) []incidentlib.Term {
		for i := range ts {
			ts[i].Facet = f
		}
		return ts
	}
	terms := map[incidentlib.Facet][]incidentlib.Term{
		incidentlib.FacetRootCause:          withFacet(incidentlib.FacetRootCause, checkList("root_causes", vf.RootCauses, false)),
		incidentlib.FacetComponent:          withFacet(incidentlib.FacetComponent, checkList("components", vf.Components, true)),
		incidentlib.FacetSymptom:            withFacet(incidentlib.FacetSymptom, checkList("symptoms", vf.Symptoms, false)),
		incidentlib.FacetContributingFactor: withFacet(incidentlib.FacetContributingFactor, checkList("contributing_factors", vf.ContributingFactors, false)),
	}
	severities := checkList("severities", vf.Severities, false)
	checkSeverityRule(vf, severities, report)
	sourceTypes := checkList("source_types", vf.SourceTypes, false)
	if len(ps) > 0 {
		return nil, ps
	}
	return incidentlib.NewVocabulary(terms, domainGroups, severities, sourceTypes), nil
}

// checkSeverityRule checks the rule that gives a case its severity: every
// symptom is listed under exactly one severity, and only severities list
// symptoms. It copies each severity's symptoms into its domain term.
func checkSeverityRule(vf vocabularyFile, severities []incidentlib.Term, report func(int, string)) {
	for _, l := range [][]termFile{vf.RootCauses, vf.ComponentGroups, vf.Components, vf.Symptoms, vf.ContributingFactors, vf.SourceTypes} {
		for _, t := range l {
			if len(t.Symptoms) > 0 {
				report(0, fmt.Sprintf("%s lists symptoms: only severities do", t.Slug))
			}
		}
	}
	known := map[string]bool{}
	for _, t := range vf.Symptoms {
		known[t.Slug] = true
	}
	given := map[string]string{}
	for i, sv := range vf.Severities {
		for _, sym := range sv.Symptoms {
			switch {
			case !known[sym]:
				report(0, fmt.Sprintf("severity %s lists %q, which is not a symptom", sv.Slug, sym))
			case given[sym] != "":
				report(0, fmt.Sprintf("symptom %s is listed under both %s and %s: each symptom gives one severity", sym, given[sym], sv.Slug))
			default:
				given[sym] = sv.Slug
			}
		}
		if i < len(severities) && severities[i].Slug == sv.Slug {
			severities[i].Symptoms = sv.Symptoms
		}
	}
	for _, t := range vf.Symptoms {
		if given[t.Slug] == "" {
			report(0, fmt.Sprintf("symptom %s gives no severity: list it under one of the severities", t.Slug))
		}
	}
}

// firstInvalidUTF8Line returns the 1-based line of the first byte that is
// not valid UTF-8.
func firstInvalidUTF8Line(data []byte) int {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		i += size
	}
	return line
}
