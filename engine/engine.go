// Package engine implements incidentlib.Library over an in-memory corpus:
// a Bleve index (BM25) for full-text search, and per-case term IDs kept in
// memory for filters, exact facet counts and similar cases.
package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/incidentlib/incidentlib"
)

// Options configures an Engine.
type Options struct {
	// DataDir holds the index between runs. Empty builds the index in
	// memory on every start.
	DataDir string
	// Logger receives start-up timings; nil discards them.
	Logger *slog.Logger
	// QueryTimeout bounds the run time of one query; 0 means
	// DefaultQueryTimeout.
	QueryTimeout time.Duration
	// Leaning turns on the learned relatedness of words and terms
	// (weight.go): a word ranks higher the matching cases tagged with the
	// term its cases lean towards. Off by default: on the tuning part of
	// the judged set it changed nothing (docs/search.md).
	Leaning bool
}

// Engine answers queries over one corpus. It is safe for concurrent use.
type Engine struct {
	vocab *incidentlib.Vocabulary
	cases []*incidentlib.Case // sorted by ID; a case's position is its number
	byID  map[string]int

	idx    bleve.Index
	docNum []int32 // Bleve internal document number → case number
	// snap is the snapshot of idx this engine answers from (docNum holds
	// its numbers); shared counts the engines over idx (see Apply).
	snap      index.IndexReader
	shared    *sharedIndex
	closeOnce sync.Once

	facets     *facetIndex
	similarity *similarityIndex
	lex        *lexicon
	signatures *recognizer
	// quoteShows lists, by signature name, the cases whose quoted error
	// messages and alerts show it.
	quoteShows map[string][]int
	weights    *wordWeights
	spelled    *spellings // built on the first typo
	// leaningEnabled: words rank the cases tagged with the term their
	// cases lean towards (Options.Leaning).
	leaningEnabled bool
	reused         bool
	where          string

	queryTimeout time.Duration

	statsOnce sync.Once
	stats     *incidentlib.Stats
	matches   sync.Pool // *matchBuffers for run
	tokens    *tokenCache
}

var _ incidentlib.Library = (*Engine)(nil)

// Open indexes cases (or reuses the index under opts.DataDir when the corpus
// has not changed) and returns a ready engine.
func Open(ctx context.Context, v *incidentlib.Vocabulary, cases []*incidentlib.Case, opts Options) (*Engine, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	sorted := make([]*incidentlib.Case, len(cases))
	copy(sorted, cases)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	e := &Engine{vocab: v, cases: sorted, byID: make(map[string]int, len(sorted)), queryTimeout: opts.QueryTimeout,
		tokens: newTokenCache(DefaultTokenCacheTokens)}
	if e.queryTimeout <= 0 {
		e.queryTimeout = DefaultQueryTimeout
	}
	for i, c := range sorted {
		if _, dup := e.byID[c.ID]; dup {
			return nil, fmt.Errorf("duplicate case ID %s", c.ID)
		}
		e.byID[c.ID] = i
	}
	idx, reused, where, err := openIndex(ctx, sorted, opts.DataDir, log)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	e.idx, e.reused, e.where = idx, reused, where
	e.shared = &sharedIndex{idx: idx, refs: 1, latest: e, inMemory: opts.DataDir == ""}
	e.pin()
	if e.docNum, err = safeDocNumbers(e, e.byID); err != nil {
		e.release()
		return nil, fmt.Errorf("search index: %w", err)
	}
	e.facets = newFacetIndex(v, sorted)
	e.similarity = newSimilarityIndex(v, sorted, e.facets)
	e.lex = newLexicon(e.analyzer(), v)
	e.signatures = newRecognizer(v.Signatures())
	e.quoteShows = e.signatures.inQuotes(sorted)
	e.weights = newWordWeights(v, sorted)
	e.spelled = &spellings{}
	e.leaningEnabled = opts.Leaning
	log.Debug("engine ready", "cases", len(sorted), "index_reused", reused, "took", time.Since(start).Round(time.Millisecond))
	return e, nil
}

// IndexReused reports whether Open found an index for this corpus on disk.
func (e *Engine) IndexReused() bool { return e.reused }

// IndexLocation says where the index lives: its directory, or "memory"
// and why (no data directory, a directory that is not writable, a lock
// held by another process).
func (e *Engine) IndexLocation() string { return e.where }

// Close releases the index.
func (e *Engine) Close() error { return e.release() }

// Vocabulary implements incidentlib.Library.
func (e *Engine) Vocabulary() *incidentlib.Vocabulary { return e.vocab }

// FindCaseByID implements incidentlib.Library.
// IDs are normalised first: il-561, IL-561 and 561 all name IL-0561.
func (e *Engine) FindCaseByID(_ context.Context, id string) (*incidentlib.Case, error) {
	if i, ok := e.byID[strings.ToUpper(strings.TrimSpace(id))]; ok {
		return e.cases[i], nil // as written (synthetic corpora use longer IDs)
	}
	norm, valid := incidentlib.NormalizeCaseID(id)
	if !valid {
		return nil, &incidentlib.Error{Code: incidentlib.EINVALID, Param: "id", Message: fmt.Sprintf("%q is not a case ID; case IDs look like IL-0561 (il-561 and 561 work too)", truncate(id, 40))}
	}
	i, ok := e.byID[norm]
	if !ok {
		return nil, &incidentlib.Error{Code: incidentlib.ENOTFOUND, Param: "id", Message: fmt.Sprintf("no case %s in the library", norm)}
	}
	return e.cases[i], nil
}

// Cases implements incidentlib.Library: every case, newest first.
func (e *Engine) Cases(_ context.Context) ([]*incidentlib.Case, error) {
	out := make([]*incidentlib.Case, len(e.cases))
	for i, n := range e.facets.newest {
		out[i] = e.cases[n]
	}
	return out, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
