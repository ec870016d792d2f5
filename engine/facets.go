package engine

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"sync"

	"incidentlib"
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
func (b bitset) clone() bitset { return append(bitset(nil), b...) }
func (b bitset) count() (n int) {
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// facetIndex keeps, for every case, the numbers of its terms, and for every
// term the set of its cases: enough to filter and count without Bleve.
type facetIndex struct {
	n int
	// terms[f] is the facet's vocabulary in file order; a term's number is
	// its position.
	terms  map[incidentlib.Facet][]incidentlib.Term
	termNo map[incidentlib.Facet]map[string]int
	// caseTerms[f][c] lists the term numbers case c carries in facet f.
	caseTerms map[incidentlib.Facet][][]uint16
	postings  map[incidentlib.Facet][]bitset

	groups      []incidentlib.Group
	groupNo     map[string]int
	caseGroups  [][]uint16 // component groups per case
	groupPost   []bitset
	termGroupNo []int // component term number → group number

	companies    []string // display names, by company number
	companyNo    map[string]int
	caseCompany  []int
	severities   []incidentlib.Term
	caseSeverity []int // -1 when unknown
	caseYear     []int

	newest   []int // case numbers, newest first
	rankOnce sync.Once
	rank     []int32
	longest  []int // case numbers, longest time to resolve first, unknown last
	ttr      []int64
}

func newFacetIndex(v *incidentlib.Vocabulary, cases []*incidentlib.Case) *facetIndex {
	n := len(cases)
	fi := &facetIndex{
		n:          n,
		terms:      map[incidentlib.Facet][]incidentlib.Term{},
		termNo:     map[incidentlib.Facet]map[string]int{},
		caseTerms:  map[incidentlib.Facet][][]uint16{},
		postings:   map[incidentlib.Facet][]bitset{},
		groups:     v.Groups(),
		groupNo:    map[string]int{},
		companyNo:  map[string]int{},
		severities: v.Severities(),
	}
	for i, g := range fi.groups {
		fi.groupNo[g.Slug] = i
		fi.groupPost = append(fi.groupPost, newBitset(n))
	}
	for _, f := range incidentlib.Facets {
		ts := v.Terms(f)
		fi.terms[f] = ts
		fi.termNo[f] = map[string]int{}
		fi.postings[f] = make([]bitset, len(ts))
		for i, t := range ts {
			fi.termNo[f][t.Slug] = i
			fi.postings[f][i] = newBitset(n)
		}
		fi.caseTerms[f] = make([][]uint16, n)
	}
	for _, t := range fi.terms[incidentlib.FacetComponent] {
		fi.termGroupNo = append(fi.termGroupNo, fi.groupNo[t.Group])
	}
	fi.caseGroups = make([][]uint16, n)
	fi.caseCompany = make([]int, n)
	fi.caseSeverity = make([]int, n)
	fi.caseYear = make([]int, n)
	fi.ttr = make([]int64, n)
	for ci, c := range cases {
		for _, f := range incidentlib.Facets {
			var slugs []string
			if f == incidentlib.FacetRootCause {
				if c.RootCause != "" {
					slugs = []string{c.RootCause}
				}
			} else {
				slugs = termsOf(c, f)
			}
			for _, s := range slugs {
				if tn, ok := fi.termNo[f][s]; ok {
					fi.caseTerms[f][ci] = append(fi.caseTerms[f][ci], uint16(tn))
					fi.postings[f][tn].set(ci)
					if f == incidentlib.FacetComponent {
						g := fi.termGroupNo[tn]
						if !fi.groupPost[g].has(ci) {
							fi.caseGroups[ci] = append(fi.caseGroups[ci], uint16(g))
							fi.groupPost[g].set(ci)
						}
					}
				}
			}
		}
		key := strings.ToLower(strings.TrimSpace(c.Company))
		no, ok := fi.companyNo[key]
		if !ok {
			no = len(fi.companies)
			fi.companyNo[key] = no
			fi.companies = append(fi.companies, c.Company)
		}
		fi.caseCompany[ci] = no
		fi.caseSeverity[ci] = -1
		for si, s := range fi.severities {
			if s.Slug == c.Severity {
				fi.caseSeverity[ci] = si
			}
		}
		fi.caseYear[ci] = c.Year()
		if d, ok := c.TimeToResolve(); ok {
			fi.ttr[ci] = int64(d)
		} else {
			fi.ttr[ci] = -1
		}
	}
	fi.newest = make([]int, n)
	for i := range fi.newest {
		fi.newest[i] = i
	}
	sort.SliceStable(fi.newest, func(a, b int) bool {
		ca, cb := cases[fi.newest[a]], cases[fi.newest[b]]
		ta, tb := ca.Timeline.Started.Time, cb.Timeline.Started.Time
		if !ta.Equal(tb) {
			return ta.After(tb)
		}
		return ca.ID > cb.ID
	})
	fi.longest = append([]int(nil), fi.newest...)
	sort.SliceStable(fi.longest, func(a, b int) bool { return fi.ttr[fi.longest[a]] > fi.ttr[fi.longest[b]] })
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
		any := newBitset(fi.n)
		for _, s := range slugs {
			if tn, ok := fi.termNo[facet][s]; ok {
				any.or(fi.postings[facet][tn])
				continue
			}
			if facet == incidentlib.FacetComponent {
				if g, ok := fi.groupNo[s]; ok {
					any.or(fi.groupPost[g])
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
		want := map[int]bool{}
		for _, c := range f.Companies {
			if no, ok := fi.companyNo[strings.ToLower(strings.TrimSpace(c))]; ok {
				want[no] = true
			}
		}
		fi.keep(result, func(ci int) bool { return want[fi.caseCompany[ci]] })
	}
	if len(f.Severities) > 0 {
		want := map[int]bool{}
		for _, s := range f.Severities {
			found := false
			for si, t := range fi.severities {
				if t.Slug == s {
					want[si], found = true, true
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
			y := fi.caseYear[ci]
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
// set, given as case numbers.
func (fi *facetIndex) counts(set []int, res *incidentlib.SearchResult) {
	res.Facets = map[incidentlib.Facet][]incidentlib.FacetCount{}
	for _, f := range incidentlib.Facets {
		n := make([]int, len(fi.terms[f]))
		ct := fi.caseTerms[f]
		for _, ci := range set {
			for _, t := range ct[ci] {
				n[t]++
			}
		}
		res.Facets[f] = fi.facetCounts(f, n)
	}
	companies := make([]int, len(fi.companies))
	years := map[int]int{}
	sev := make([]int, len(fi.severities))
	for _, ci := range set {
		companies[fi.caseCompany[ci]]++
		years[fi.caseYear[ci]]++
		if s := fi.caseSeverity[ci]; s >= 0 {
			sev[s]++
		}
	}
	for no, c := range companies {
		if c > 0 {
			res.Companies = append(res.Companies, incidentlib.ValueCount{Value: fi.companies[no], Count: c})
		}
	}
	sort.SliceStable(res.Companies, func(a, b int) bool {
		if res.Companies[a].Count != res.Companies[b].Count {
			return res.Companies[a].Count > res.Companies[b].Count
		}
		return res.Companies[a].Value < res.Companies[b].Value
	})
	for y, c := range years {
		if y != 0 {
			res.Years = append(res.Years, incidentlib.ValueCount{Value: fmt.Sprint(y), Count: c})
		}
	}
	sort.Slice(res.Years, func(a, b int) bool { return res.Years[a].Value > res.Years[b].Value })
	for si, c := range sev {
		if c > 0 {
			res.Severities = append(res.Severities, incidentlib.ValueCount{Value: fi.severities[si].Slug, Count: c})
		}
	}
}

// facetCounts turns per-term tallies into sorted counts, leaving out zeros.
func (fi *facetIndex) facetCounts(f incidentlib.Facet, n []int) []incidentlib.FacetCount {
	var out []incidentlib.FacetCount
	for t, c := range n {
		if c > 0 {
			out = append(out, incidentlib.FacetCount{Term: fi.terms[f][t], Count: c})
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
