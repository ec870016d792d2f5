// Package healing keeps a library serving when its search index fails at
// run time (files damaged under a running process, a disk error while
// reading): the first internal failure marks the library unhealthy (the
// server's /readyz says so), starts one rebuild in the background (the
// corpus indexed in memory), and answers the failing request with a 503
// to retry; the rebuilt library takes over once it is ready. It depends
// only on the domain.
package healing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/incidentlib/incidentlib"
)

// Rebuild opens a fresh library over the same corpus (in memory), with the
// function that closes it.
type Rebuild func(ctx context.Context) (incidentlib.Library, func(), error)

// Library is an incidentlib.Library that rebuilds itself after an internal
// failure. It is safe for concurrent use.
type Library struct {
	cur     atomic.Pointer[current]
	rebuild Rebuild
	log     *slog.Logger

	mu         sync.Mutex
	rebuilding bool
	problem    string
	rebuilt    int
	closed     bool
}

type current struct {
	lib   incidentlib.Library
	close func()
}

var _ incidentlib.Library = (*Library)(nil)

// New wraps lib; closeFn releases it (nil: nothing to release).
func New(lib incidentlib.Library, closeFn func(), rebuild Rebuild, log *slog.Logger) *Library {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if closeFn == nil {
		closeFn = func() {}
	}
	l := &Library{rebuild: rebuild, log: log}
	l.cur.Store(&current{lib: lib, close: closeFn})
	return l
}

// Problem says why the library is not fit to take traffic ("" when it is):
// a rebuild is under way, or the last one failed.
func (l *Library) Problem() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.problem
}

// Rebuilt counts the rebuilds that took over.
func (l *Library) Rebuilt() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rebuilt
}

// Close releases the current library.
func (l *Library) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.cur.Load().close()
}

// check passes err through, unless it is an internal failure of the index
// (not the caller's input, not a deadline or a hang-up): then it starts a
// rebuild and returns a 503 to retry.
func (l *Library) check(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		incidentlib.ErrorCode(err) != incidentlib.EINTERNAL {
		return err
	}
	l.startRebuild(err)
	return &incidentlib.Error{Code: incidentlib.EUNAVAILABLE,
		Message: "The search index failed and is being rebuilt; retry in a few seconds."}
}

// guard turns a panic inside the library (a damaged index file can make
// the index library read past a slice) into an internal failure.
func (l *Library) guard(ctx context.Context, errp *error) {
	if v := recover(); v != nil {
		*errp = l.check(ctx, fmt.Errorf("index library panicked: %v", v))
	}
}

func (l *Library) startRebuild(cause error) {
	l.mu.Lock()
	if l.rebuilding || l.closed {
		l.mu.Unlock()
		return
	}
	l.rebuilding = true
	l.problem = "the search index failed; rebuilding it in memory"
	l.mu.Unlock()
	l.log.Error("search index failed; rebuilding it in memory while serving", "err", cause)
	go func() {
		lib, closeFn, err := l.rebuild(context.Background())
		l.mu.Lock()
		defer l.mu.Unlock()
		l.rebuilding = false
		if err != nil {
			l.problem = "the search index failed and could not be rebuilt"
			l.log.Error("rebuilding the search index", "err", err)
			return
		}
		if l.closed {
			closeFn()
			return
		}
		old := l.cur.Swap(&current{lib: lib, close: closeFn})
		l.problem = ""
		l.rebuilt++
		l.log.Warn("search index rebuilt in memory; serving from it")
		// Requests still running on the old library finish on it (each
		// is bounded by the query timeout); it is closed a minute later.
		time.AfterFunc(time.Minute, old.close)
	}()
}

func (l *Library) lib() incidentlib.Library { return l.cur.Load().lib }

func (l *Library) Vocabulary() *incidentlib.Vocabulary { return l.lib().Vocabulary() }

func (l *Library) FindCaseByID(ctx context.Context, id string) (c *incidentlib.Case, err error) {
	defer l.guard(ctx, &err)
	c, err = l.lib().FindCaseByID(ctx, id)
	return c, l.check(ctx, err)
}

func (l *Library) SearchCases(ctx context.Context, q incidentlib.Query) (r *incidentlib.SearchResult, err error) {
	defer l.guard(ctx, &err)
	r, err = l.lib().SearchCases(ctx, q)
	return r, l.check(ctx, err)
}

func (l *Library) SimilarCases(ctx context.Context, id string, k int) (r []incidentlib.Related, err error) {
	defer l.guard(ctx, &err)
	r, err = l.lib().SimilarCases(ctx, id, k)
	return r, l.check(ctx, err)
}

func (l *Library) FindTopic(ctx context.Context, f incidentlib.Facet, slug string, q incidentlib.Query) (t *incidentlib.Topic, err error) {
	defer l.guard(ctx, &err)
	t, err = l.lib().FindTopic(ctx, f, slug, q)
	return t, l.check(ctx, err)
}

func (l *Library) Cases(ctx context.Context) (cs []*incidentlib.Case, err error) {
	defer l.guard(ctx, &err)
	cs, err = l.lib().Cases(ctx)
	return cs, l.check(ctx, err)
}

func (l *Library) Stats(ctx context.Context) (s *incidentlib.Stats, err error) {
	defer l.guard(ctx, &err)
	s, err = l.lib().Stats(ctx)
	return s, l.check(ctx, err)
}
