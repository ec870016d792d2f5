package incidentlib

import (
	"slices"
	"sort"
)

// Facet names one dimension of the controlled vocabulary.
type Facet string

// The facets a case is tagged along.
const (
	FacetRootCause          Facet = "root_cause"
	FacetComponent          Facet = "component"
	FacetSymptom            Facet = "symptom"
	FacetContributingFactor Facet = "contributing_factor"
)

// Facets lists the tagging facets in the order pages show them.
var Facets = []Facet{FacetRootCause, FacetComponent, FacetSymptom, FacetContributingFactor}

// ParseFacet accepts a facet's name ("root_cause") or its URL segment
// ("root-causes").
func ParseFacet(s string) (Facet, bool) {
	for _, f := range Facets {
		if s == string(f) || s == f.PathSegment() {
			return f, true
		}
	}
	return "", false
}

// PathSegment is the facet's plural URL segment: "root-causes".
func (f Facet) PathSegment() string {
	switch f {
	case FacetRootCause:
		return "root-causes"
	case FacetComponent:
		return "components"
	case FacetSymptom:
		return "symptoms"
	case FacetContributingFactor:
		return "contributing-factors"
	}
	return ""
}

// Title is the facet's display name: "Root cause".
func (f Facet) Title() string {
	switch f {
	case FacetRootCause:
		return "Root cause"
	case FacetComponent:
		return "Component"
	case FacetSymptom:
		return "Symptom"
	case FacetContributingFactor:
		return "Contributing factor"
	}
	return string(f)
}

// Term is one entry of the vocabulary.
type Term struct {
	Facet      Facet
	Slug       string
	Name       string
	Definition string
	Group      string // component group slug; components only
	// Symptoms are, for a severity, the symptoms that give it: a case's
	// severity is the most severe one any of its symptoms gives.
	Symptoms []string
	// Aliases are other ways people write the term ("retry storm" for
	// Retry amplification). A query that names a term by its name, slug
	// or an alias ranks the cases tagged with it.
	Aliases []string
}

// SynonymSet is a set of expressions that mean the same in the library's
// cases (auth, authentication, authorization). Search matches any of them
// for any other, both ways, at query time.
type SynonymSet struct {
	Expressions []string // lower-case words or phrases; the first is the one shown
	Why         string   // how the corpus and postmortems write it
}

// Signature is an error message, status or alert text engineers paste
// into a search ("OOMKilled", "too many open files"): recognised in a
// query, it is searched for what it means, and the result says so
// ("OOMKilled → out of memory").
type Signature struct {
	Name     string   // the string engineers know, as the result names it
	Means    string   // the plain words shown after the arrow
	Match    []string // lower-case literals, matched at word boundaries whatever the punctuation between their words
	Patterns []string // regular expressions (RE2), matched case-insensitively against the query as written
	Search   []string // words and phrases the cases write for the symptom
	Terms    []Term   // vocabulary terms it points at
	Why      string   // where engineers meet it and how the cases write it
}

// Signatures is the catalogue of error signatures, with the field names of
// pasted output ("Last State:", "Exit Code:") that carry no meaning.
type Signatures struct {
	Signatures  []Signature
	Boilerplate []string
}

// Group is a family of components ("Database" holds "Application database").
type Group struct {
	Slug       string
	Name       string
	Definition string
}

// Vocabulary is the controlled vocabulary. Build it with NewVocabulary; it is
// read-only afterwards and safe for concurrent use.
type Vocabulary struct {
	terms       map[Facet][]Term
	bySlug      map[Facet]map[string]int
	groups      []Group
	groupBySlug map[string]int
	severities  []Term
	sourceTypes []Term
	synonyms    []SynonymSet
	signatures  Signatures
}

// NewVocabulary indexes the given terms. It does not validate them; package
// corpus does.
func NewVocabulary(terms map[Facet][]Term, groups []Group, severities, sourceTypes []Term) *Vocabulary {
	v := &Vocabulary{
		terms:       map[Facet][]Term{},
		bySlug:      map[Facet]map[string]int{},
		groups:      groups,
		groupBySlug: map[string]int{},
		severities:  severities,
		sourceTypes: sourceTypes,
	}
	for f, ts := range terms {
		v.terms[f] = ts
		v.bySlug[f] = map[string]int{}
		for i, t := range ts {
			v.bySlug[f][t.Slug] = i
		}
	}
	for i, g := range groups {
		v.groupBySlug[g.Slug] = i
	}
	return v
}

// WithSynonyms returns a copy of v that carries the given synonym sets.
func (v *Vocabulary) WithSynonyms(sets []SynonymSet) *Vocabulary {
	c := *v
	c.synonyms = sets
	return &c
}

// WithSignatures returns a copy of v that carries the error signatures.
func (v *Vocabulary) WithSignatures(s Signatures) *Vocabulary {
	c := *v
	c.signatures = s
	return &c
}

// Signatures returns the error signatures search recognises in queries.
func (v *Vocabulary) Signatures() Signatures { return v.signatures }

// Synonyms returns the synonym sets search expands queries with.
func (v *Vocabulary) Synonyms() []SynonymSet { return v.synonyms }

// Terms returns the terms of a facet in file order.
func (v *Vocabulary) Terms(f Facet) []Term { return v.terms[f] }

// Term looks up a term by facet and slug.
func (v *Vocabulary) Term(f Facet, slug string) (Term, bool) {
	i, ok := v.bySlug[f][slug]
	if !ok {
		return Term{}, false
	}
	return v.terms[f][i], true
}

// Groups returns the component groups in file order.
func (v *Vocabulary) Groups() []Group { return v.groups }

// Group looks up a component group by slug.
func (v *Vocabulary) Group(slug string) (Group, bool) {
	i, ok := v.groupBySlug[slug]
	if !ok {
		return Group{}, false
	}
	return v.groups[i], true
}

// GroupMembers returns the slugs of the components in a group.
func (v *Vocabulary) GroupMembers(group string) []string {
	var out []string
	for _, t := range v.terms[FacetComponent] {
		if t.Group == group {
			out = append(out, t.Slug)
		}
	}
	return out
}

// Severities returns the closed list of severities, most severe first.
func (v *Vocabulary) Severities() []Term { return v.severities }

// SeverityFor is the severity that a case with the given symptoms has: the
// most severe severity that any of them gives, or "" when it has none.
func (v *Vocabulary) SeverityFor(symptoms []string) string {
	for _, sv := range v.severities {
		for _, s := range symptoms {
			if slices.Contains(sv.Symptoms, s) {
				return sv.Slug
			}
		}
	}
	return ""
}

// Severity looks up a severity by slug.
func (v *Vocabulary) Severity(slug string) (Term, bool) { return find(v.severities, slug) }

// SourceTypes returns the closed list of source types.
func (v *Vocabulary) SourceTypes() []Term { return v.sourceTypes }

// SourceType looks up a source type by slug.
func (v *Vocabulary) SourceType(slug string) (Term, bool) { return find(v.sourceTypes, slug) }

// Slugs returns the sorted slugs of a facet, for messages that list what is
// valid.
func (v *Vocabulary) Slugs(f Facet) []string {
	out := make([]string, 0, len(v.terms[f]))
	for _, t := range v.terms[f] {
		out = append(out, t.Slug)
	}
	sort.Strings(out)
	return out
}

func find(ts []Term, slug string) (Term, bool) {
	for _, t := range ts {
		if t.Slug == slug {
			return t, true
		}
	}
	return Term{}, false
}
