// Package synthetic generates corpora of synthetic cases and query sets
// over them, deterministic for a seed: the large corpora that the engine's
// scale tests and the benchmark harness run against.
package synthetic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/incidentlib/incidentlib"
)

// DefaultSeed makes every run generate the same corpus and queries.
const DefaultSeed = 20260824

// Shape of the synthetic corpus.
const (
	tailWords    = 30000 // rare pseudo-words after contentWords in the ranking
	companies    = 5000
	stopShare    = 0.42 // share of tokens that are stop words
	topicShare   = 0.12 // share of content tokens drawn from the case's own topic words
	wordZipfS    = 1.07 // Zipf exponent over content and tail words
	facetZipfS   = 1.2  // Zipf exponent over each facet's terms
	companyZipfS = 1.1
	// FirstYear and LastYear bound the years of generated cases.
	FirstYear = 2008
	LastYear  = 2026
)

// Target byte sizes of each text field; together about 3.5 KB per case.
var fieldBytes = struct {
	summary, symptoms, trigger, detection, remediation, lessons int
}{400, 580, 480, 480, 300, 580} // remediation: three steps of this size

// zipf draws ranks 0..n-1 with probability proportional to 1/(rank+1+v)^s,
// from a precomputed cumulative table, so it works for any s > 0.
type zipf struct{ cdf []float64 }

func newZipf(n int, s, v float64) *zipf {
	z := &zipf{cdf: make([]float64, n)}
	sum := 0.0
	for i := range n {
		sum += 1 / math.Pow(float64(i)+1+v, s)
		z.cdf[i] = sum
	}
	for i := range z.cdf {
		z.cdf[i] /= sum
	}
	return z
}

func (z *zipf) draw(r *rand.Rand) int {
	u := r.Float64()
	i := sort.SearchFloat64s(z.cdf, u)
	if i >= len(z.cdf) {
		i = len(z.cdf) - 1
	}
	return i
}

// Generator makes synthetic cases. The same seed and vocabulary always give
// the same corpus.
type Generator struct {
	vocab     *incidentlib.Vocabulary
	seed      uint64
	words     []string // content words, then the rare tail
	wordZipf  *zipf
	stopZipf  *zipf
	companies []string
	compZipf  *zipf
	facetTerm map[incidentlib.Facet][]string // terms in popularity order
	facetZipf map[incidentlib.Facet]*zipf
	termWords map[string][]string // slug → words of its name, lower-case
	sevZipf   *zipf
	sevs      []string
	yearZipf  *zipf
}

// NewGenerator prepares the word, company and facet distributions for a
// seed. Facet term popularity is shuffled by the seed, so that which terms
// are common does not follow the vocabulary file's order.
func NewGenerator(v *incidentlib.Vocabulary, seed uint64) *Generator {
	r := rand.New(rand.NewPCG(seed, 0x1bc1))
	g := &Generator{
		vocab:     v,
		seed:      seed,
		facetTerm: map[incidentlib.Facet][]string{},
		facetZipf: map[incidentlib.Facet]*zipf{},
		termWords: map[string][]string{},
	}
	seen := map[string]bool{}
	for _, w := range contentWords {
		if !seen[w] {
			seen[w] = true
			g.words = append(g.words, w)
		}
	}
	for len(g.words) < len(contentWords)+tailWords {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			g.words = append(g.words, w)
		}
	}
	g.wordZipf = newZipf(len(g.words), wordZipfS, 2)
	g.stopZipf = newZipf(len(stopWords), 1.0, 1)

	names := map[string]bool{}
	for len(g.companies) < companies {
		name := companyFirst[r.IntN(len(companyFirst))]
		if s := companySecond[r.IntN(len(companySecond))]; s != "" {
			name += " " + s
		}
		if names[name] {
			name = fmt.Sprintf("%s %d", name, len(g.companies))
		}
		names[name] = true
		g.companies = append(g.companies, name)
	}
	g.compZipf = newZipf(len(g.companies), companyZipfS, 1)

	for _, f := range incidentlib.Facets {
		var slugs []string
		for _, t := range v.Terms(f) {
			slugs = append(slugs, t.Slug)
			g.termWords[t.Slug] = strings.FieldsFunc(strings.ToLower(t.Name), func(r rune) bool {
				return !unicode.IsLetter(r) && !unicode.IsDigit(r)
			})
		}
		r.Shuffle(len(slugs), func(i, j int) { slugs[i], slugs[j] = slugs[j], slugs[i] })
		g.facetTerm[f] = slugs
		g.facetZipf[f] = newZipf(max(len(slugs), 1), facetZipfS, 1)
	}
	for _, s := range v.Severities() {
		g.sevs = append(g.sevs, s.Slug)
	}
	g.sevZipf = newZipf(max(len(g.sevs), 1), 0.8, 1)
	// Recent years hold more cases: rank 0 is the last year.
	g.yearZipf = newZipf(LastYear-FirstYear+1, 0.6, 3)
	return g
}

// CaseID names the i-th synthetic case (0-based). Six digits keep IDs of a
// 100,000-case corpus the same width, so they sort as numbers do.
func CaseID(i int) string { return fmt.Sprintf("IL-%06d", i+1) }

// Cases returns n synthetic cases.
func (g *Generator) Cases(n int) []*incidentlib.Case {
	out := make([]*incidentlib.Case, n)
	for i := range out {
		out[i] = g.Case(i)
	}
	return out
}

// Case returns the i-th synthetic case. Each case has its own random
// stream, so case i is the same whatever n is.
func (g *Generator) Case(i int) *incidentlib.Case {
	r := rand.New(rand.NewPCG(g.seed, uint64(i)+1))
	c := &incidentlib.Case{ID: CaseID(i), Company: g.companies[g.compZipf.draw(r)]}

	pick := func(f incidentlib.Facet, lo, hi int) []string {
		terms := g.facetTerm[f]
		if len(terms) == 0 {
			return nil
		}
		want := lo + r.IntN(hi-lo+1)
		var out []string
		for tries := 0; len(out) < want && tries < 20; tries++ {
			s := terms[g.facetZipf[f].draw(r)]
			dup := false
			for _, o := range out {
				dup = dup || o == s
			}
			if !dup {
				out = append(out, s)
			}
		}
		return out
	}
	if r.Float64() < 0.9 {
		if rc := pick(incidentlib.FacetRootCause, 1, 1); len(rc) == 1 {
			c.RootCause = rc[0]
		}
	}
	c.Components = pick(incidentlib.FacetComponent, 1, 4)
	c.SymptomTerms = pick(incidentlib.FacetSymptom, 1, 3)
	c.ContributingFactors = pick(incidentlib.FacetContributingFactor, 0, 3)
	if len(g.sevs) > 0 && r.Float64() < 0.8 {
		c.Severity = g.sevs[g.sevZipf.draw(r)]
	}

	// A case keeps returning to a few topic words, some of them the names of
	// its own components and symptoms, as a real write-up does.
	var topic []string
	for _, s := range append(append([]string{c.RootCause}, c.Components...), c.SymptomTerms...) {
		topic = append(topic, g.termWords[s]...)
	}
	for range 4 {
		topic = append(topic, g.words[g.wordZipf.draw(r)])
	}
	tg := &textGen{g: g, r: r, topic: topic}

	c.Title = tg.title()
	c.Summary = tg.prose(fieldBytes.summary)
	c.Symptoms = tg.prose(fieldBytes.symptoms)
	c.Trigger = tg.prose(fieldBytes.trigger)
	c.Detection = tg.prose(fieldBytes.detection)
	for range 3 {
		c.Remediation = append(c.Remediation, tg.prose(fieldBytes.remediation))
	}
	c.Lessons = tg.prose(fieldBytes.lessons)

	year := LastYear - g.yearZipf.draw(r)
	start := time.Date(year, time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), 0, 0, time.UTC)
	c.Timeline.Started = incidentlib.Timestamp{Time: start}
	if r.Float64() < 0.8 {
		detect := time.Duration(1+r.ExpFloat64()*12) * time.Minute
		c.Timeline.Detected = incidentlib.Timestamp{Time: start.Add(detect)}
		// Log-normal resolution times: most incidents last an hour or two,
		// a few last days.
		resolve := time.Duration(math.Exp(4+1.2*r.NormFloat64())) * time.Minute
		c.Timeline.Resolved = incidentlib.Timestamp{Time: start.Add(detect + resolve)}
	}
	c.Verification.Status = incidentlib.VerificationUnchecked
	c.Origin = "synthetic"
	return c
}

// textGen writes prose for one case.
type textGen struct {
	g     *Generator
	r     *rand.Rand
	topic []string
}

func (t *textGen) content() string {
	if len(t.topic) > 0 && t.r.Float64() < topicShare {
		return t.topic[t.r.IntN(len(t.topic))]
	}
	return t.g.words[t.g.wordZipf.draw(t.r)]
}

func (t *textGen) word() string {
	if t.r.Float64() < stopShare {
		return stopWords[t.g.stopZipf.draw(t.r)]
	}
	return t.content()
}

// prose writes sentences until about size bytes: it stops when the next
// sentence, of about avgSentence bytes, would overshoot by more than half.
func (t *textGen) prose(size int) string {
	const avgSentence = 100
	var b strings.Builder
	b.Grow(size + 2*avgSentence)
	for b.Len() == 0 || b.Len()+avgSentence/2 < size {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		n := 6 + t.r.IntN(17)
		for i := range n {
			w := t.word()
			if i == 0 {
				w = capitalize(w)
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
			if i > 1 && i < n-2 && t.r.IntN(12) == 0 {
				b.WriteByte(',')
			}
		}
		b.WriteByte('.')
	}
	return b.String()
}

func (t *textGen) title() string {
	n := 6 + t.r.IntN(6)
	words := make([]string, n)
	for i := range words {
		if i > 0 && t.r.Float64() < 0.25 {
			words[i] = stopWords[t.g.stopZipf.draw(t.r)]
		} else {
			words[i] = t.content()
		}
	}
	words[0] = capitalize(words[0])
	return strings.Join(words, " ")
}

func capitalize(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[n:]
}
