package synthetic

import "testing"

// The uncached search stream must not repeat within a run, or the cache
// would answer part of it and the figure would measure the cache.
func TestSearchMixDoesNotRepeat(t *testing.T) {
	seen := map[string]bool{}
	for i := range int64(50000) {
		u := SearchMix(i)
		if seen[u] {
			t.Fatalf("request %d repeats %s", i, u)
		}
		seen[u] = true
	}
}
