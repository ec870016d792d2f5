package engine

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func TestTopNMatchesAFullSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		size := 1 + r.IntN(500)
		set := make([]int, size)
		key := make([]int, size)
		for i := range set {
			set[i] = i
			key[i] = r.IntN(50) // many ties, broken by index
		}
		less := func(a, b int) bool {
			if key[a] != key[b] {
				return key[a] < key[b]
			}
			return a < b
		}
		n := 1 + r.IntN(size)
		before := slices.Clone(set)
		got := topN(set, n, less)
		if !slices.Equal(set, before) {
			t.Fatal("topN changed its input")
		}
		want := slices.Clone(set)
		sort.Slice(want, func(i, j int) bool { return less(want[i], want[j]) })
		if !slices.Equal(got, want[:n]) {
			t.Fatalf("size %d n %d: got %v want %v", size, n, got, want[:n])
		}
	}
}
