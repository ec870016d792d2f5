package incidentlib

import "strings"

// Nearest returns the candidate most likely meant when got is not one of
// them: the closest by edit distance (case-insensitive), or one that
// contains what was typed ("database" → "application-database"). ok is
// false when nothing is close enough to be a plausible typo. Ties go to the
// alphabetically first candidate, so suggestions are stable.
func Nearest(got string, candidates []string) (best string, ok bool) {
	bestDist := 1 << 30
	g := strings.ToLower(got)
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := EditDistance(g, lc)
		if g != "" && (strings.Contains(lc, g) || strings.Contains(g, lc)) {
			d = min(d, 2)
		}
		if d < bestDist || (d == bestDist && c < best) {
			best, bestDist = c, d
		}
	}
	if best == "" || bestDist > max(2, len(got)/3) {
		return "", false
	}
	return best, true
}

// EditDistance is the Levenshtein distance between a and b, counted in
// runes. Strings longer than 200 runes are never typos of a term, so the
// distance is reported as very large without computing it.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 200 || len(rb) > 200 {
		return 1 << 20
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
