package engine

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/incidentlib/incidentlib"
)

// bitset is a set of case numbers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) or(o bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}
func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}
func (b bitset) count() (n int) {
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// The dimensions a case is indexed along: the four tagging facets, and the
// component groups derived from its components.
const (
	dimRootCause = iota
	dimComponent
	dimSymptom
	dimFactor
	dimGroup
	numDims
)

// dimOf maps a tagging facet to its dimension.
func dimOf(f incidentlib.Facet) int {
	switch f {
	case incidentlib.FacetRootCause:
		return dimRootCause
	case incidentlib.FacetComponent:
		return dimComponent
	case incidentlib.FacetSymptom:
		return dimSymptom
	case incidentlib.FacetContributingFactor:
		return dimFactor
	}
	return -1
}

// termLists holds, for every case, a short list of term numbers, all in
// two flat arrays: case c's terms are vals[off[c]:off[c+1]]. Counting a
// result set walks memory in order instead of chasing a slice per case.
type termLists struct {
	off  []uint32
	vals []uint16
}

func (t *termLists) of(c int) []uint16 { return t.vals[t.off[c]:t.off[c+1]] }

// dimension is one facet's (or the groups') terms and who carries them.
type dimension struct {
	terms    []incidentlib.Term // in vocabulary order; a term's number is its position
	no       map[string]int
	lists    termLists
	postings []bitset // per term, the cases that carry it
	df       []int    // per term, how many cases carry it
}

// facetIndex keeps, for every case, the numbers of its terms, and for every
// term the set of its cases: enough to filter and count without Bleve.
type facetIndex struct {
	n    int
	dims [numDims]dimension

	groups      []incidentlib.Group
	termGroupNo []int // component term number → group number

	companies    []string // display names, by company number
	companyNo    map[string]int
	caseCompany  []int32
	severities   []incidentlib.Term
	caseSeverity []int8 // -1 when unknown
	caseYear     []int16
	minYear      int // of the cases whose year is known
	maxYear      int

	newest   []int // case numbers, newest first
	ttr      []int64
	rankOnce sync.Once
	rank     []int32
}

func newFacetIndex(v *incidentlib.Vocabulary, cases []*incidentlib.Case) *facetIndex {
	n := len(cases)
	fi := &facetIndex{n: n, groups: v.Groups(), companyNo: map[string]int{}, severities: v.Severities()}
	for _, f := range incidentlib.Facets {
		fi.dims[dimOf(f)].terms = v.Terms(f)
	}
	for _, g := range fi.groups {
		fi.dims[dimGroup].terms = append(fi.dims[dimGroup].terms, incidentlib.Term{Facet: incidentlib.FacetComponent, Slug: g.Slug, Name: g.Name, Definition: g.Definition})
	}
	for d := range fi.dims {
		dim := &fi.dims[d]
		dim.no = make(map[string]int, len(dim.terms))
		dim.postings = make([]bitset, len(dim.terms))
		dim.df = make([]int, len(dim.terms))
		for i, t := range dim.terms {
			dim.no[t.Slug] = i
			dim.postings[i] = newBitset(n)
		}
		dim.lists.off = make([]uint32, 1, n+1)
	}
	for _, t := range fi.dims[dimComponent].terms {
		fi.termGroupNo = append(fi.termGroupNo, fi.dims[dimGroup].no[t.Group])
	}
	fi.caseCompany = make([]int32, n)
	fi.caseSeverity = make([]int8, n)
	fi.caseYear = make([]int16, n)
	fi.ttr = make([]int64, n)
	fi.minYear = 1 << 30
	add := func(d, ci, tn int) {
		dim := &fi.dims[d]
		if dim.postings[tn].has(ci) {
			return // listed twice, or a second component of one group
		}
		dim.postings[tn].set(ci)
		dim.df[tn]++
		dim.lists.vals = append(dim.lists.vals, uint16(tn))
	}
	for ci, c := range cases {
		for _, f := range incidentlib.Facets {
			d := dimOf(f)
			for _, s := range termsOf(c, f) {
				if tn, ok := fi.dims[d].no[s]; ok {
					add(d, ci, tn)
				}
			}
		}
		for _, tn := range fi.dims[dimComponent].lists.vals[fi.dims[dimComponent].lists.off[ci]:] {
			add(dimGroup, ci, fi.termGroupNo[tn])
		}
		for d := range fi.dims {
			fi.dims[d].lists.off = append(fi.dims[d].lists.off, uint32(len(fi.dims[d].lists.vals)))
		}

		key := strings.ToLower(strings.TrimSpace(c.Company))
		no, ok := fi.companyNo[key]
		if !ok {
			no = len(fi.companies)
			fi.companyNo[key] = no
			fi.companies = append(fi.companies, c.Company)
		}
		fi.caseCompany[ci] = int32(no)
		fi.caseSeverity[ci] = -1
		for si, s := range fi.severities {
			if s.Slug == c.Severity {
				fi.caseSeverity[ci] = int8(si)
			}
		}
		fi.caseYear[ci] = int16(c.Year())
		if y := c.Year(); y != 0 {
			fi.minYear = min(fi.minYear, y)
			fi.maxYear = max(fi.maxYear, y)
		}
		if d, ok := c.TimeToResolve(); ok {
			fi.ttr[ci] = int64(d)
		} else {
			fi.ttr[ci] = -1
		}
	}
	// Newest first; a case that rests on a listing alone comes after
	// every case with a public source, whatever its date; the ID breaks
	// ties, so the order is total. The keys are worked out once, not in
	// each comparison.
	seed := make([]bool, n)
	started := make([]time.Time, n)
	for i, c := range cases {
		seed[i], started[i] = c.SeedListingOnly(), c.Timeline.Date().Time
	}
	fi.newest = make([]int, n)
	for i := range fi.newest {
		fi.newest[i] = i
	}
	slices.SortFunc(fi.newest, func(a, b int) int {
		if seed[a] != seed[b] {
			if seed[a] {
				return 1
			}
			return -1
		}
		if c := started[b].Compare(started[a]); c != 0 {
			return c
		}
		return strings.Compare(cases[b].ID, cases[a].ID)
	})
	return fi
}

func termsOf(c *incidentlib.Case, f incidentlib.Facet) []string {
	switch f {
	case incidentlib.FacetComponent:
		return c.Components
	case incidentlib.FacetSymptom:
		return c.SymptomTerms
	case incidentlib.FacetContributingFactor:
		return c.ContributingFactors
	case incidentlib.FacetRootCause:
		if c.RootCause == "" {
			return nil
		}
		return []string{c.RootCause}
	}
	return nil
}

// rankNewest returns each case's position in newest-first order.
func (fi *facetIndex) rankNewest() []int32 {
	fi.rankOnce.Do(func() {
		fi.rank = make([]int32, fi.n)
		for pos, ci := range fi.newest {
			fi.rank[ci] = int32(pos)
		}
	})
	return fi.rank
}

// maxFilterValues bounds how many values one filter may list.
const maxFilterValues = 50

// filter returns the set of cases that pass every filter, or nil when no
// filter is set (every case passes). Unknown slugs are EINVALID errors that
// name the parameter and list what is valid.
func (fi *facetIndex) filter(f incidentlib.Filters, v *incidentlib.Vocabulary) (bitset, error) {
	if f.IsZero() {
		return nil, nil
	}
	result := newBitset(fi.n)
	for i := range result {
		result[i] = ^uint64(0)
	}
	if tail := fi.n % 64; tail != 0 && len(result) > 0 {
		result[len(result)-1] = (1 << uint(tail)) - 1
	}
	for _, facet := range incidentlib.Facets {
		slugs := f.Of(facet)
		if len(slugs) == 0 {
			continue
		}
		if len(slugs) > maxFilterValues {
			return nil, incidentlib.InvalidParam(string(facet), "at most %d values, got %d", maxFilterValues, len(slugs))
		}
		dim := &fi.dims[dimOf(facet)]
		any := newBitset(fi.n)
		for _, s := range slugs {
			if tn, ok := dim.no[s]; ok {
				any.or(dim.postings[tn])
				continue
			}
			if facet == incidentlib.FacetComponent {
				if g, ok := fi.dims[dimGroup].no[s]; ok {
					any.or(fi.dims[dimGroup].postings[g])
					continue
				}
			}
			return nil, unknownTerm(v, facet, s)
		}
		result.and(any)
	}
	if len(f.Companies) > 0 {
		if len(f.Companies) > maxFilterValues {
			return nil, incidentlib.InvalidParam("company", "at most %d values, got %d", maxFilterValues, len(f.Companies))
		}
		want := map[int32]bool{}
		for _, c := range f.Companies {
			if no, ok := fi.companyNo[strings.ToLower(strings.TrimSpace(c))]; ok {
				want[int32(no)] = true
			}
		}
		fi.keep(result, func(ci int) bool { return want[fi.caseCompany[ci]] })
	}
	if len(f.Severities) > 0 {
		want := map[int8]bool{}
		for _, s := range f.Severities {
			found := false
			for si, t := range fi.severities {
				if t.Slug == s {
					want[int8(si)], found = true, true
				}
			}
			if !found {
				var valid []string
				for _, t := range fi.severities {
					valid = append(valid, t.Slug)
				}
				return nil, incidentlib.InvalidParam("severity", "unknown severity %q; valid: %s", truncate(s, 40), strings.Join(valid, ", "))
			}
		}
		fi.keep(result, func(ci int) bool { return want[fi.caseSeverity[ci]] })
	}
	if f.YearFrom != 0 || f.YearTo != 0 {
		if f.YearFrom < 0 || f.YearFrom > 9999 {
			return nil, incidentlib.InvalidParam("year_from", "must be a year between 1 and 9999")
		}
		if f.YearTo < 0 || f.YearTo > 9999 {
			return nil, incidentlib.InvalidParam("year_to", "must be a year between 1 and 9999")
		}
		if f.YearTo != 0 && f.YearFrom > f.YearTo {
			return nil, incidentlib.InvalidParam("year_from", "year_from %d is after year_to %d", f.YearFrom, f.YearTo)
		}
		fi.keep(result, func(ci int) bool {
			y := int(fi.caseYear[ci])
			return (f.YearFrom == 0 || y >= f.YearFrom) && (f.YearTo == 0 || y <= f.YearTo)
		})
	}
	return result, nil
}

func (fi *facetIndex) keep(b bitset, ok func(int) bool) {
	for w := range b {
		word := b[w]
		for word != 0 {
			bit := bits.TrailingZeros64(word)
			word &^= 1 << uint(bit)
			if ci := w*64 + bit; !ok(ci) {
				b[w] &^= 1 << uint(bit)
			}
		}
	}
}

func unknownTerm(v *incidentlib.Vocabulary, facet incidentlib.Facet, slug string) error {
	valid := v.Slugs(facet)
	if facet == incidentlib.FacetComponent {
		for _, g := range v.Groups() {
			valid = append(valid, g.Slug)
		}
		sort.Strings(valid)
	}
	return incidentlib.InvalidParam(string(facet), "unknown %s %q; valid: %s", strings.ReplaceAll(string(facet), "_", " "), truncate(slug, 60), strings.Join(valid, ", "))
}

// counts tallies the facets, companies, years and severities of a result
// set, given as case numbers, in one pass over it.
func (fi *facetIndex) counts(set []int, res *incidentlib.SearchResult) {
	var tally [dimGroup][]int32
	var lists [dimGroup]*termLists
	for d := range tally {
		tally[d] = make([]int32, len(fi.dims[d].terms))
		lists[d] = &fi.dims[d].lists
	}
	companies := make([]int32, len(fi.companies))
	sev := make([]int32, len(fi.severities))
	years := make([]int32, fi.yearSpan())
	for _, ci := range set {
		for d := range tally {
			l := lists[d]
			for _, t := range l.vals[l.off[ci]:l.off[ci+1]] {
				tally[d][t]++
			}
		}
		companies[fi.caseCompany[ci]]++
		if y := int(fi.caseYear[ci]); y != 0 {
			years[y-fi.minYear]++
		}
		if s := fi.caseSeverity[ci]; s >= 0 {
			sev[s]++
		}
	}
	res.Facets = map[incidentlib.Facet][]incidentlib.FacetCount{}
	for _, f := range incidentlib.Facets {
		res.Facets[f] = fi.facetCounts(dimOf(f), tally[dimOf(f)])
	}
	res.Companies = topCompanies(fi.companies, companies, maxCompanyCounts)
	for i := len(years) - 1; i >= 0; i-- {
		if years[i] > 0 {
			res.Years = append(res.Years, incidentlib.ValueCount{Value: fmt.Sprint(fi.minYear + i), Count: int(years[i])})
		}
	}
	for si, c := range sev {
		if c > 0 {
			res.Severities = append(res.Severities, incidentlib.ValueCount{Value: fi.severities[si].Slug, Count: int(c)})
		}
	}
}

// maxCompanyCounts bounds the company counts of a result: a large corpus
// has thousands of companies, and nobody reads past the first hundred.
const maxCompanyCounts = 100

// topCompanies returns the companies with the most cases, most first, ties
// by name.
func topCompanies(names []string, counts []int32, limit int) []incidentlib.ValueCount {
	var idx []int
	for no, c := range counts {
		if c > 0 {
			idx = append(idx, no)
		}
	}
	less := func(a, b int) bool {
		if counts[a] != counts[b] {
			return counts[a] > counts[b]
		}
		return names[a] < names[b]
	}
	if len(idx) > limit {
		idx = topN(idx, limit, less)
	} else {
		slices.SortFunc(idx, func(a, b int) int {
			if less(a, b) {
				return -1
			}
			if less(b, a) {
				return 1
			}
			return 0
		})
	}
	out := make([]incidentlib.ValueCount, len(idx))
	for i, no := range idx {
		out[i] = incidentlib.ValueCount{Value: names[no], Count: int(counts[no])}
	}
	return out
}

// yearSpan is the number of years from the oldest case's to 9999's bound
// of the newest: the size of a per-year tally.
func (fi *facetIndex) yearSpan() int {
	if fi.maxYear < fi.minYear {
		return 0
	}
	return fi.maxYear - fi.minYear + 1
}

// facetCounts turns per-term tallies into counts, most cases first, ties
// by name, leaving out zeros.
func (fi *facetIndex) facetCounts(d int, n []int32) []incidentlib.FacetCount {
	var out []incidentlib.FacetCount
	for t, c := range n {
		if c > 0 {
			out = append(out, incidentlib.FacetCount{Term: fi.dims[d].terms[t], Count: int(c)})
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Count != out[b].Count {
			return out[a].Count > out[b].Count
		}
		return out[a].Term.Name < out[b].Term.Name
	})
	return out
}
