// Package replica serves the library from a shared store: it builds a
// searchable library from the store's snapshot, follows the store's change
// feed, and swaps in a rebuilt library after each change, so every replica
// behind a load balancer answers from its own memory and sees a case
// published through any other within about a second. When the store stops
// answering, the replica goes on serving the last library it built and
// says it is degraded.
package replica

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"incidentlib"
)

// Library is a library the replica can retire once a newer one serves.
type Library interface {
	incidentlib.Library
	Close() error
}

// Builder makes a library from a vocabulary file and case files. It
// decides what to do with a file that does not validate (the store should
// hold none: writes are validated first).
type Builder func(ctx context.Context, vocabulary []byte, cases []incidentlib.StoredCase) (Library, error)

// Status is what the replica knows of its freshness.
type Status struct {
	Seq      int64     // the last change it serves
	Cases    int       // cases it serves
	Built    time.Time // when the library it serves was built
	Degraded bool      // the store did not answer at the last try
	Problem  string    // why, for the operator's log and /readyz
}

// Replica is an incidentlib.Library kept current from a CaseFeed.
type Replica struct {
	feed  incidentlib.CaseFeed
	build Builder
	log   *slog.Logger

	lib    atomic.Pointer[Library]
	status atomic.Pointer[Status]

	mu    sync.Mutex // guards vocab and cases, touched by Open and Follow
	vocab []byte
	cases map[string]incidentlib.StoredCase
}

// retireAfter is how long a replaced library stays open for the requests
// that were already using it.
const retireAfter = 30 * time.Second

// Open builds the first library from a snapshot of the feed. It fails when
// the store does not answer: a replica with nothing to serve is not ready.
func Open(ctx context.Context, feed incidentlib.CaseFeed, build Builder, log *slog.Logger) (*Replica, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Replica{feed: feed, build: build, log: log}
	if err := r.reload(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// reload rebuilds from a fresh snapshot.
func (r *Replica) reload(ctx context.Context) error {
	vocab, cases, seq, err := r.feed.Snapshot(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.vocab = vocab
	r.cases = make(map[string]incidentlib.StoredCase, len(cases))
	for _, c := range cases {
		r.cases[c.ID] = c
	}
	r.mu.Unlock()
	return r.rebuild(ctx, seq)
}

func (r *Replica) rebuild(ctx context.Context, seq int64) error {
	r.mu.Lock()
	files := make([]incidentlib.StoredCase, 0, len(r.cases))
	for _, c := range r.cases {
		files = append(files, c)
	}
	vocab := r.vocab
	r.mu.Unlock()
	start := time.Now()
	lib, err := r.build(ctx, vocab, files)
	if err != nil {
		return err
	}
	old := r.lib.Swap(&lib)
	r.status.Store(&Status{Seq: seq, Cases: len(files), Built: time.Now()})
	r.log.Info("library built from the store", "seq", seq, "cases", len(files), "took", time.Since(start).Round(time.Millisecond))
	if old != nil {
		time.AfterFunc(retireAfter, func() { (*old).Close() })
	}
	return nil
}

// Follow keeps the library current until ctx ends: it waits for the feed to
// announce a change (or for its poll interval), reads what changed and
// rebuilds. Store failures are retried with backoff while the last library
// keeps serving.
func (r *Replica) Follow(ctx context.Context) {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		if backoff > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
		err := r.feed.Wait(ctx)
		if err == nil {
			err = r.catchUp(ctx)
		}
		if err == nil || ctx.Err() != nil {
			backoff = 0
			continue
		}
		backoff = min(max(2*backoff, 250*time.Millisecond), 5*time.Second)
		st := *r.Status()
		if !st.Degraded {
			r.log.Warn("the store does not answer; serving the last library", "seq", st.Seq, "err", err)
		}
		st.Degraded, st.Problem = true, "the store does not answer; serving the library as of change "+strconv.FormatInt(st.Seq, 10)
		r.status.Store(&st)
	}
}

// catchUp applies every change after the one served.
func (r *Replica) catchUp(ctx context.Context) error {
	seq := r.Status().Seq
	changed, next, err := r.feed.Since(ctx, seq)
	if err != nil {
		return err
	}
	if len(changed) == 0 {
		if st := r.Status(); st.Degraded {
			r.log.Info("the store answers again", "seq", st.Seq)
			st2 := *st
			st2.Degraded, st2.Problem = false, ""
			r.status.Store(&st2)
		}
		return nil
	}
	for _, c := range changed {
		if c.ID == vocabularyID {
			// A new vocabulary can change how every case reads: start over.
			return r.reload(ctx)
		}
	}
	r.mu.Lock()
	for _, c := range changed {
		r.cases[c.ID] = c
	}
	r.mu.Unlock()
	return r.rebuild(ctx, next)
}

// vocabularyID is the ID a feed gives a change of the vocabulary.
const vocabularyID = "vocabulary"

// Status reports the replica's freshness.
func (r *Replica) Status() *Status { return r.status.Load() }

// Close closes the library being served.
func (r *Replica) Close() error {
	if l := r.lib.Load(); l != nil {
		return (*l).Close()
	}
	return nil
}

func (r *Replica) current() incidentlib.Library { return *r.lib.Load() }

var _ incidentlib.Library = (*Replica)(nil)

// Vocabulary implements incidentlib.Library.
func (r *Replica) Vocabulary() *incidentlib.Vocabulary { return r.current().Vocabulary() }

// FindCaseByID implements incidentlib.Library.
func (r *Replica) FindCaseByID(ctx context.Context, id string) (*incidentlib.Case, error) {
	return r.current().FindCaseByID(ctx, id)
}

// SearchCases implements incidentlib.Library.
func (r *Replica) SearchCases(ctx context.Context, q incidentlib.Query) (*incidentlib.SearchResult, error) {
	return r.current().SearchCases(ctx, q)
}

// SimilarCases implements incidentlib.Library.
func (r *Replica) SimilarCases(ctx context.Context, id string, k int) ([]incidentlib.Related, error) {
	return r.current().SimilarCases(ctx, id, k)
}

// FindTopic implements incidentlib.Library.
func (r *Replica) FindTopic(ctx context.Context, f incidentlib.Facet, slug string, q incidentlib.Query) (*incidentlib.Topic, error) {
	return r.current().FindTopic(ctx, f, slug, q)
}

// Cases implements incidentlib.Library.
func (r *Replica) Cases(ctx context.Context) ([]*incidentlib.Case, error) {
	return r.current().Cases(ctx)
}

// Stats implements incidentlib.Library.
func (r *Replica) Stats(ctx context.Context) (*incidentlib.Stats, error) {
	return r.current().Stats(ctx)
}

// ErrNoLibrary is returned by Open's builder when the store holds no
// vocabulary yet (nothing was imported).
var ErrNoLibrary = errors.New("the store holds no library yet: run incidentlib import --store first")
