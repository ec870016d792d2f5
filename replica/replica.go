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

	"github.com/incidentlib/incidentlib"
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
	// Library is the public library, following the rebuilds.
	incidentlib.Library

	feed  incidentlib.CaseFeed
	build Builder
	log   *slog.Logger

	libs   atomic.Pointer[libraries]
	status atomic.Pointer[Status]

	mu    sync.Mutex // guards vocab and cases, touched by Open and Follow
	vocab []byte
	cases map[string]incidentlib.StoredCase
}

// libraries are what a replica serves: the public library, and for each
// team with private cases a library of the public cases and its own. A
// private case is in no other library, so no search, count, similar case,
// feed or export of another team or of the public can reach it.
type libraries struct {
	public Library
	teams  map[string]Library
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
	r.Library = teamView{r: r}
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
	return r.rebuild(ctx, seq, true, nil)
}

// rebuild builds the libraries that changes touched: teams names the
// teams whose private cases changed, and all means every library (a public
// case changed, or it is the first build).
func (r *Replica) rebuild(ctx context.Context, seq int64, all bool, teams map[string]bool) error {
	r.mu.Lock()
	vocab := r.vocab
	var public []incidentlib.StoredCase
	private := map[string][]incidentlib.StoredCase{}
	for _, c := range r.cases {
		if c.Team == "" {
			public = append(public, c)
		} else {
			private[c.Team] = append(private[c.Team], c)
		}
	}
	r.mu.Unlock()
	start := time.Now()
	old := r.libs.Load()
	next := &libraries{teams: map[string]Library{}}
	var retire []Library
	if all || old == nil {
		lib, err := r.build(ctx, vocab, public)
		if err != nil {
			return err
		}
		next.public = lib
		if old != nil {
			retire = append(retire, old.public)
		}
	} else {
		next.public = old.public
	}
	for team, own := range private {
		if !all && old != nil && !teams[team] {
			if lib, ok := old.teams[team]; ok {
				next.teams[team] = lib
				continue
			}
		}
		lib, err := r.build(ctx, vocab, append(append([]incidentlib.StoredCase{}, public...), own...))
		if err != nil {
			return err
		}
		next.teams[team] = lib
		if old != nil && old.teams[team] != nil {
			retire = append(retire, old.teams[team])
		}
	}
	r.libs.Store(next)
	r.status.Store(&Status{Seq: seq, Cases: len(public), Built: time.Now()})
	r.log.Info("library built from the store", "seq", seq, "public_cases", len(public), "teams", len(private), "took", time.Since(start).Round(time.Millisecond))
	if len(retire) > 0 {
		time.AfterFunc(retireAfter, func() {
			for _, l := range retire {
				l.Close()
			}
		})
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
	all, teams := false, map[string]bool{}
	r.mu.Lock()
	for _, c := range changed {
		if prev, ok := r.cases[c.ID]; ok && prev.Team != c.Team {
			all = true // a case moved between public and private
		}
		if c.Team == "" {
			all = true
		} else {
			teams[c.Team] = true
		}
		r.cases[c.ID] = c
	}
	r.mu.Unlock()
	return r.rebuild(ctx, next, all, teams)
}

// vocabularyID is the ID a feed gives a change of the vocabulary.
const vocabularyID = "vocabulary"

// Status reports the replica's freshness.
func (r *Replica) Status() *Status { return r.status.Load() }

// Close closes the libraries being served.
func (r *Replica) Close() error {
	l := r.libs.Load()
	if l == nil {
		return nil
	}
	err := l.public.Close()
	for _, t := range l.teams {
		t.Close()
	}
	return err
}

// ForTeam returns the library a team's signed-in users read: the public
// cases and the team's own private ones.
func (r *Replica) ForTeam(team string) incidentlib.Library {
	if team == "" {
		return r
	}
	return teamView{r: r, team: team}
}

// Teams returns the teams that have private cases.
func (r *Replica) Teams() []string {
	var out []string
	for t := range r.libs.Load().teams {
		out = append(out, t)
	}
	return out
}

var _ incidentlib.Library = (*Replica)(nil)

// teamView is a team's library, following the replica's rebuilds.
type teamView struct {
	r    *Replica
	team string
}

func (v teamView) lib() incidentlib.Library {
	l := v.r.libs.Load()
	if t, ok := l.teams[v.team]; ok {
		return t
	}
	return l.public
}

func (v teamView) Vocabulary() *incidentlib.Vocabulary { return v.lib().Vocabulary() }
func (v teamView) FindCaseByID(ctx context.Context, id string) (*incidentlib.Case, error) {
	return v.lib().FindCaseByID(ctx, id)
}
func (v teamView) SearchCases(ctx context.Context, q incidentlib.Query) (*incidentlib.SearchResult, error) {
	return v.lib().SearchCases(ctx, q)
}
func (v teamView) SimilarCases(ctx context.Context, id string, k int) ([]incidentlib.Related, error) {
	return v.lib().SimilarCases(ctx, id, k)
}
func (v teamView) FindTopic(ctx context.Context, f incidentlib.Facet, slug string, q incidentlib.Query) (*incidentlib.Topic, error) {
	return v.lib().FindTopic(ctx, f, slug, q)
}
func (v teamView) Cases(ctx context.Context) ([]*incidentlib.Case, error) { return v.lib().Cases(ctx) }
func (v teamView) Stats(ctx context.Context) (*incidentlib.Stats, error)  { return v.lib().Stats(ctx) }

// ErrNoLibrary is returned by Open's builder when the store holds no
// vocabulary yet (nothing was imported).
var ErrNoLibrary = errors.New("the store holds no library yet: run incidentlib import --store first")

// Feed returns the store the replica follows (which may also offer the
// write path).
func (r *Replica) Feed() incidentlib.CaseFeed { return r.feed }
