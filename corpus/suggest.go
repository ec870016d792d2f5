package corpus

import (
	"fmt"
	"strings"
)

// didYouMean returns ` (did you mean "x"?)` naming the closest candidate, or
// "" when none is close enough to be a plausible typo.
func didYouMean(got string, candidates []string) string {
	best, bestDist := "", 1<<30
	g := strings.ToLower(got)
	for _, c := range candidates {
		d := editDistance(g, strings.ToLower(c))
		// A candidate that contains what was typed (or the reverse) is a
		// good guess even when far in edits: "database" → "application-database".
		if strings.Contains(c, g) || strings.Contains(g, c) {
			d = min(d, 2)
		}
		if d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	limit := max(2, len(got)/3)
	if best == "" || bestDist > limit {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b, by runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 200 || len(rb) > 200 {
		return 1 << 20 // not a typo of a slug; don't spend time on it
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
