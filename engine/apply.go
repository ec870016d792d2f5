package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"

	"github.com/incidentlib/incidentlib"
)

// sharedIndex is one search index and the engines that answer from
// snapshots of it: Open makes the first, each Apply the next. The index
// closes with the last of them.
type sharedIndex struct {
	idx      bleve.Index
	inMemory bool

	mu     sync.Mutex
	refs   int
	latest *Engine // the only engine Apply may be called on
}

// refCounted is the index library's snapshot: each reader handed out
// holds a reference, given back by its Close.
type refCounted interface {
	AddRef()
}

// pin takes the index's current snapshot as the one this engine answers
// from. An index library that does not give snapshots leaves snap nil:
// each query then reads the index as it is (it is never written).
func (e *Engine) pin() {
	adv, err := e.idx.Advanced()
	if err != nil {
		return
	}
	r, err := adv.Reader()
	if err != nil {
		return
	}
	if _, ok := r.(refCounted); !ok {
		r.Close()
		return
	}
	e.snap = r
}

// release gives back this engine's snapshot, and closes the index when no
// engine answers from it any more. It runs once.
func (e *Engine) release() error {
	var err error
	e.closeOnce.Do(func() {
		if e.snap != nil {
			e.snap.Close()
		}
		s := e.shared
		if s == nil {
			err = e.idx.Close()
			return
		}
		s.mu.Lock()
		s.refs--
		last := s.refs == 0
		s.mu.Unlock()
		if last {
			err = s.idx.Close()
		}
	})
	return err
}

// Apply returns an engine over this one's cases with changed added or
// replaced and the cases named in removed deleted. It indexes only the
// changed cases, into the same in-memory index, and rebuilds what it keeps
// beside the index (facet counts, similar-case data, the map of the
// index's document numbers) from the cases in memory, so a change costs
// the analysis of its own cases rather than a whole new index.
//
// This engine goes on answering exactly as before (from its own snapshot
// of the index) until it is closed; close it once requests using it are
// done. Apply may be called only on the newest engine over an index, and
// only on an index built in memory (Options.DataDir empty).
func (e *Engine) Apply(ctx context.Context, changed []*incidentlib.Case, removed []string) (*Engine, error) {
	s := e.shared
	if s == nil || !s.inMemory || e.snap == nil {
		return nil, errors.New("engine: Apply needs an index built in memory")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latest != e || s.refs == 0 {
		return nil, errors.New("engine: Apply is for the newest engine over an index")
	}
	byID := make(map[string]*incidentlib.Case, len(e.cases)+len(changed))
	for _, c := range e.cases {
		byID[c.ID] = c
	}
	b := s.idx.NewBatch()
	for _, id := range removed {
		if _, ok := byID[id]; ok {
			delete(byID, id)
			b.Delete(id)
		}
	}
	for _, c := range changed {
		if c == nil || strings.TrimSpace(c.ID) == "" {
			return nil, errors.New("engine: Apply was given a case without an ID")
		}
		byID[c.ID] = c
		if err := b.Index(c.ID, docFor(c)); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.idx.Batch(b); err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	sorted := make([]*incidentlib.Case, 0, len(byID))
	for _, c := range byID {
		sorted = append(sorted, c)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	n := &Engine{vocab: e.vocab, cases: sorted, byID: make(map[string]int, len(sorted)), idx: s.idx, shared: s,
		reused: false, where: e.where, queryTimeout: e.queryTimeout, tokens: newTokenCache(DefaultTokenCacheTokens)}
	for i, c := range sorted {
		n.byID[c.ID] = i
	}
	n.pin()
	if n.snap == nil {
		return nil, errors.New("engine: the index gave no snapshot")
	}
	s.refs++ // n holds the index from here; release gives it back
	var err error
	if n.docNum, err = safeDocNumbers(n, n.byID); err != nil {
		s.mu.Unlock()
		n.release()
		s.mu.Lock()
		return nil, fmt.Errorf("search index: %w", err)
	}
	n.facets = newFacetIndex(n.vocab, sorted)
	// Cases only replaced (the same IDs, so the same positions): the
	// similar-case data is changed where their words are, from the second
	// Apply on (Open keeps no word counts).
	replacedOnly := len(removed) == 0 && len(sorted) == len(e.cases) && e.similarity != nil
	var pos []int
	seen := map[int]bool{}
	for _, c := range changed {
		i, ok := e.byID[c.ID]
		if !ok || seen[i] {
			replacedOnly = false
			break
		}
		seen[i] = true
		pos = append(pos, i)
	}
	if replacedOnly {
		n.similarity, replacedOnly = e.similarity.replacing(sorted, e.cases, n.facets, pos)
	}
	if !replacedOnly {
		// The word hashes of the cases that did not change carry over
		// (from the second Apply on: Open keeps none).
		hashes := make(map[*incidentlib.Case][]uint32, len(sorted))
		if e.similarity != nil && e.similarity.hashes != nil {
			for _, c := range sorted {
				if ws, ok := e.similarity.hashes[c]; ok {
					hashes[c] = ws
				}
			}
		}
		n.similarity = newSimilarityIndexReusing(n.vocab, sorted, n.facets, hashes)
	}
	n.lex = newLexicon(n.analyzer(), n.vocab)
	// What search learns from the corpus is learned again from the new
	// one: the signatures the quotes show, the words' weights and the
	// spellings typos are corrected to.
	n.signatures = e.signatures
	n.quoteShows = n.signatures.inQuotes(sorted)
	n.weights = newWordWeights(n.vocab, sorted)
	n.spelled = &spellings{}
	n.leaningEnabled = e.leaningEnabled
	s.latest = n
	return n, nil
}
