package engine

import (
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// spellings is the corpus's own word list: every word of four letters or
// more its cases write, with the number of cases writing it. A typo is
// corrected to the corpus word nearest by edit distance, the most written
// first ("replcation" → replication, written by 26 cases, not "related"):
// matching typos against stems instead compared a misspelled whole word
// with cut-down ones.
type spellings struct {
	once  sync.Once
	words []spelledWord // by length, then word
	byLen [maxFuzzyRunes + 2]int
}

type spelledWord struct {
	word string
	df   int32
}

func (e *Engine) spellingList() *spellings {
	s := e.spelled
	s.once.Do(func() {
		df := map[string]int32{}
		seen := map[string]bool{}
		for _, c := range e.cases {
			clear(seen)
			for _, f := range caseFields(c) {
				for _, w := range strings.FieldsFunc(f.text, func(r rune) bool { return !unicode.IsLetter(r) }) {
					n := utf8.RuneCountInString(w)
					if n < 4 || n > maxFuzzyRunes {
						continue
					}
					w = strings.ToLower(w)
					if !seen[w] {
						seen[w] = true
						df[w]++
					}
				}
			}
		}
		for w, n := range df {
			s.words = append(s.words, spelledWord{w, n})
		}
		sort.Slice(s.words, func(i, j int) bool {
			li, lj := utf8.RuneCountInString(s.words[i].word), utf8.RuneCountInString(s.words[j].word)
			if li != lj {
				return li < lj
			}
			return s.words[i].word < s.words[j].word
		})
		l := 0
		for i := range s.byLen {
			for l < len(s.words) && utf8.RuneCountInString(s.words[l].word) < i {
				l++
			}
			s.byLen[i] = l
		}
	})
	return s
}

// nearestWords returns up to n corpus words within d edits of word
// (a swap of two neighbouring letters is one edit), nearest first, then
// the most written.
func (s *spellings) nearestWords(word string, d, n int) []string {
	word = strings.ToLower(word)
	lw := utf8.RuneCountInString(word)
	from, to := max(lw-d, 0), min(lw+d+1, len(s.byLen)-1)
	type cand struct {
		word string
		dist int
		df   int32
	}
	var cands []cand
	rw := []rune(word)
	for _, sw := range s.words[s.byLen[from]:s.byLen[to]] {
		if dist := damerau(rw, []rune(sw.word), d); dist <= d && sw.word != word {
			cands = append(cands, cand{sw.word, dist, sw.df})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		if cands[i].df != cands[j].df {
			return cands[i].df > cands[j].df
		}
		return cands[i].word < cands[j].word
	})
	// Only the nearest words are offered: a word two edits away is no
	// reading of a typo that one edit explains ("replcation" is
	// replication, not revocation).
	var out []string
	for _, c := range cands[:min(n, len(cands))] {
		if c.dist > cands[0].dist {
			break
		}
		out = append(out, c.word)
	}
	return out
}

// damerau is the edit distance of a and b counting a swap of neighbours
// as one edit; past limit it stops early and returns limit+1.
func damerau(a, b []rune, limit int) int {
	if abs(len(a)-len(b)) > limit {
		return limit + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
