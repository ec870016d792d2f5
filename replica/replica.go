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
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strconv"
	"strings"
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

// Builder makes a library from a vocabulary file and case files. A file
// that cannot be served (it does not parse, or its own id is not the ID it
// is stored under) is left out and reported in skipped, so one bad row
// never keeps the good ones from being served. An error means no library
// could be made at all.
type Builder func(ctx context.Context, vocabulary []byte, cases []incidentlib.StoredCase) (lib Library, skipped []Skipped, err error)

// Updater applies changes to a library Builder (or Updater) made: changed
// cases added or replaced, removed ones deleted. It returns the new
// library and the changed cases it could not serve (those are left out,
// and any earlier version of them too). The old library must go on
// answering as it did until it is closed. An error makes the replica
// rebuild instead.
type Updater func(ctx context.Context, old Library, vocabulary []byte, changed []incidentlib.StoredCase, removed []string) (lib Library, skipped []Skipped, err error)

// Skipped is a case in the store that the library leaves out, and why.
type Skipped struct {
	ID     string
	Seq    int64
	Reason string
}

// Status is what the replica knows of its freshness.
type Status struct {
	Seq      int64     // the last change it serves
	Cases    int       // cases it serves
	Built    time.Time // when the library it serves was built
	Degraded bool      // the store did not answer at the last try
	// Skipped lists the cases in the store that the library leaves out.
	Skipped []Skipped
	// Rejected counts the changes that could not be applied at all since
	// the replica started; each was skipped and the library before it
	// kept serving. LastRejected says why the last one was.
	Rejected     int
	LastRejected string
	Problem      string // why it is degraded, for the operator's log and /readyz
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

	onStatus atomic.Pointer[func(*Status)]
	update   Updater
	inPlace  int // changes applied in place since the last rebuild (Follow's)

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

	publicCases   int
	publicSkipped []Skipped            // public cases left out
	teamSkipped   map[string][]Skipped // each team's private cases left out
}

// skipped lists every case left out of some library, by ID.
func (l *libraries) skipped() []Skipped {
	out := append([]Skipped{}, l.publicSkipped...)
	for _, s := range l.teamSkipped {
		out = append(out, s...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (st *Status) skips(id string, seq int64) bool {
	for _, s := range st.Skipped {
		if s.ID == id && s.Seq == seq {
			return true
		}
	}
	return false
}

// Warning says what an operator should know of the library served, or ""
// when all is well: the store not answering, cases left out, a change
// skipped. /readyz shows it (and still answers 200: reads work).
func (st *Status) Warning() string {
	var parts []string
	if st.Degraded {
		parts = append(parts, st.Problem)
	}
	if n := len(st.Skipped); n > 0 {
		var names []string
		for i, s := range st.Skipped {
			if i == 3 {
				names = append(names, "…")
				break
			}
			names = append(names, s.ID+" ("+s.Reason+")")
		}
		word := "cases in the store are"
		if n == 1 {
			word = "case in the store is"
		}
		parts = append(parts, fmt.Sprintf("%d %s left out of the library: %s", n, word, strings.Join(names, "; ")))
	}
	if st.LastRejected != "" {
		parts = append(parts, st.LastRejected)
	}
	return strings.Join(parts, "; ")
}

// retireAfter is how long a replaced library stays open for the requests
// that were already using it.
const retireAfter = 30 * time.Second

// Open builds the first library from a snapshot of the feed. It fails when
// the store does not answer: a replica with nothing to serve is not ready.
// Cases the builder cannot serve are left out (Status().Skipped names
// them); they never keep the replica from starting.
func Open(ctx context.Context, feed incidentlib.CaseFeed, build Builder, log *slog.Logger) (*Replica, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Replica{feed: feed, build: build, log: log}
	r.Library = teamView{r: r}
	if err := r.reload(ctx); err != nil {
		var be *buildError
		if errors.As(err, &be) {
			return nil, be.err
		}
		return nil, err
	}
	return r, nil
}

// SetUpdater makes the replica apply a change to the libraries it serves
// in place (see Updater) rather than rebuild them, falling back to a
// rebuild when the updater cannot. Call it before Follow.
func (r *Replica) SetUpdater(u Updater) { r.update = u }

// OnStatus calls f with every new status (after each change applied,
// skipped or failed to read), for metrics.
func (r *Replica) OnStatus(f func(*Status)) {
	r.onStatus.Store(&f)
	f(r.Status())
}

func (r *Replica) setStatus(st *Status) {
	r.status.Store(st)
	if f := r.onStatus.Load(); f != nil {
		(*f)(st)
	}
}

// buildError is a library that could not be built from what the store
// holds (as opposed to a store that does not answer).
type buildError struct{ err error }

func (e *buildError) Error() string { return e.err.Error() }

// reload rebuilds every library from a fresh snapshot. Nothing changes
// when it fails: the libraries served go on serving.
func (r *Replica) reload(ctx context.Context) error {
	vocab, cases, seq, err := r.feed.Snapshot(ctx)
	if err != nil {
		return err
	}
	byID := make(map[string]incidentlib.StoredCase, len(cases))
	for _, c := range cases {
		byID[c.ID] = c
	}
	next, retire, err := r.rebuild(ctx, vocab, byID, true, nil)
	if err != nil {
		return &buildError{err}
	}
	r.mu.Lock()
	r.vocab, r.cases = vocab, byID
	r.mu.Unlock()
	r.inPlace = 0
	r.swap(next, retire, seq)
	return nil
}

// rebuild builds the libraries that changes touched: teams names the
// teams whose private cases changed, and all means every library (a public
// case changed, or it is the first build). It changes nothing served; swap
// does.
func (r *Replica) rebuild(ctx context.Context, vocab []byte, cases map[string]incidentlib.StoredCase, all bool, teams map[string]bool) (*libraries, []Library, error) {
	var public []incidentlib.StoredCase
	private := map[string][]incidentlib.StoredCase{}
	for _, c := range cases {
		if c.Team == "" {
			public = append(public, c)
		} else {
			private[c.Team] = append(private[c.Team], c)
		}
	}
	start := time.Now()
	old := r.libs.Load()
	next := &libraries{teams: map[string]Library{}, teamSkipped: map[string][]Skipped{}, publicCases: len(public)}
	var retire, made []Library
	fail := func(err error) (*libraries, []Library, error) {
		for _, l := range made {
			l.Close()
		}
		return nil, nil, err
	}
	if all || old == nil {
		lib, skipped, err := r.buildOnce(ctx, vocab, public)
		if err != nil {
			return fail(err)
		}
		made = append(made, lib)
		next.public, next.publicSkipped = lib, skipped
		if old != nil {
			retire = append(retire, old.public)
		}
	} else {
		next.public, next.publicSkipped = old.public, old.publicSkipped
	}
	for team, own := range private {
		if !all && old != nil && !teams[team] {
			if lib, ok := old.teams[team]; ok {
				next.teams[team], next.teamSkipped[team] = lib, old.teamSkipped[team]
				continue
			}
		}
		lib, skipped, err := r.buildOnce(ctx, vocab, append(append([]incidentlib.StoredCase{}, public...), own...))
		if err != nil {
			return fail(err)
		}
		made = append(made, lib)
		next.teams[team] = lib
		for _, sk := range skipped {
			if cases[sk.ID].Team == team {
				next.teamSkipped[team] = append(next.teamSkipped[team], sk)
			}
		}
		if old != nil && old.teams[team] != nil {
			retire = append(retire, old.teams[team])
		}
	}
	if old != nil {
		for team, lib := range old.teams {
			if _, ok := next.teams[team]; !ok {
				retire = append(retire, lib) // the team has no private case left
			}
		}
	}
	r.log.Info("library built from the store", "public_cases", len(public), "teams", len(private), "took", time.Since(start).Round(time.Millisecond))
	return next, retire, nil
}

// buildOnce builds a library whose Close runs once, however many times it
// is called (at retirement and at the replica's Close, in either order).
func (r *Replica) buildOnce(ctx context.Context, vocab []byte, cases []incidentlib.StoredCase) (Library, []Skipped, error) {
	lib, skipped, err := r.build(ctx, vocab, cases)
	if err != nil {
		return nil, nil, err
	}
	return &onceLibrary{Library: lib}, skipped, nil
}

type onceLibrary struct {
	Library
	once sync.Once
	err  error
}

func (l *onceLibrary) Close() error {
	l.once.Do(func() { l.err = l.Library.Close() })
	return l.err
}

// swap serves next from now on, as of change seq, and retires what it
// replaced once the requests using it are done.
func (r *Replica) swap(next *libraries, retire []Library, seq int64) {
	r.libs.Store(next)
	skipped := next.skipped()
	prev := r.Status()
	st := &Status{Seq: seq, Cases: next.publicCases, Built: time.Now(), Skipped: skipped}
	if prev != nil {
		st.Rejected = prev.Rejected
	}
	for _, sk := range skipped {
		if prev == nil || !prev.skips(sk.ID, sk.Seq) {
			r.log.Error("a case in the store cannot be served and is left out; fix or withdraw it", "case", sk.ID, "seq", sk.Seq, "reason", sk.Reason)
		}
	}
	r.setStatus(st)
	if len(retire) > 0 {
		time.AfterFunc(retireAfter, func() {
			for _, l := range retire {
				l.Close()
			}
		})
	}
}

// reject skips changes up to seq that no library could be built with: the
// libraries served before them go on serving, and the status says so.
func (r *Replica) reject(seq int64, err error) {
	st := *r.Status()
	st.Seq, st.Rejected = seq, st.Rejected+1
	st.LastRejected = "change " + strconv.FormatInt(seq, 10) + " could not be applied and was skipped: " + err.Error()
	r.log.Error("a change in the store could not be applied; it is skipped and the library before it goes on serving", "seq", seq, "err", err)
	r.setStatus(&st)
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
		r.setStatus(&st)
	}
}

// catchUp applies every change after the one served. A change no library
// can be built with is skipped (see reject); only a store that does not
// answer is an error.
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
			r.setStatus(&st2)
		}
		return nil
	}
	for _, c := range changed {
		if c.ID == vocabularyID {
			// A new vocabulary can change how every case reads: start over.
			err := r.reload(ctx)
			var be *buildError
			if errors.As(err, &be) {
				r.reject(next, be.err)
				return nil
			}
			return err
		}
	}
	all, teams := false, map[string]bool{}
	r.mu.Lock()
	cases := maps.Clone(r.cases)
	vocab := r.vocab
	r.mu.Unlock()
	for _, c := range changed {
		if prev, ok := cases[c.ID]; ok && prev.Team != c.Team {
			all = true // a case moved between public and private
			teams[prev.Team] = true
		}
		if c.Team == "" {
			all = true
		} else {
			teams[c.Team] = true
		}
		if c.Withdrawn {
			delete(cases, c.ID) // withdrawn
		} else {
			cases[c.ID] = c
		}
	}
	libs, retire, err := r.apply(ctx, vocab, cases, changed)
	if err == nil {
		r.inPlace++
	} else {
		if !errors.Is(err, errNoUpdate) {
			r.log.Warn("a change could not be applied in place; rebuilding", "seq", next, "err", err)
		}
		libs, retire, err = r.rebuild(ctx, vocab, cases, all || r.inPlace >= MaxInPlace, teams)
		if err == nil && (all || r.inPlace >= MaxInPlace) {
			r.inPlace = 0
		}
	}
	if err != nil {
		r.reject(next, err)
		return nil
	}
	r.mu.Lock()
	r.cases = cases
	r.mu.Unlock()
	r.swap(libs, retire, next)
	return nil
}

// MaxInPlace is how many changes a replica applies in place before it
// rebuilds its libraries whole: the index library keeps replaced
// documents in its statistics (BM25 scores drift a little from a fresh
// build) and adds a segment per change, and a rebuild starts both afresh.
const MaxInPlace = 200

// errNoUpdate says a change is not one the updater can apply in place.
var errNoUpdate = errors.New("not applicable in place")

// apply applies changed (already in cases) to the libraries served, in
// place: the public library gets the public changes, each team's library
// the public changes and its own. It changes nothing served; swap does.
// Changes it cannot apply (no updater, a case moving between public and
// private, a team's first or last private case) answer errNoUpdate, and
// the caller rebuilds.
func (r *Replica) apply(ctx context.Context, vocab []byte, cases map[string]incidentlib.StoredCase, changed []incidentlib.StoredCase) (*libraries, []Library, error) {
	old := r.libs.Load()
	if r.update == nil || old == nil || r.inPlace >= MaxInPlace {
		return nil, nil, errNoUpdate
	}
	r.mu.Lock()
	prev := r.cases
	r.mu.Unlock()
	type delta struct {
		changed []incidentlib.StoredCase
		removed []string
		ids     map[string]bool
	}
	add := func(d *delta, c incidentlib.StoredCase) {
		if d.ids == nil {
			d.ids = map[string]bool{}
		}
		d.ids[c.ID] = true
		if c.Withdrawn {
			d.removed = append(d.removed, c.ID)
		} else {
			d.changed = append(d.changed, c)
		}
	}
	var public delta
	own := map[string]*delta{}
	for _, c := range changed {
		if p, ok := prev[c.ID]; ok && p.Team != c.Team {
			return nil, nil, errNoUpdate
		}
		if c.Team == "" {
			add(&public, c)
			continue
		}
		if own[c.Team] == nil {
			own[c.Team] = &delta{}
		}
		add(own[c.Team], c)
	}
	// Teams after the change: a team's first private case, or its last one
	// withdrawn, changes the set of libraries; rebuild then.
	teamsNow := map[string]bool{}
	for _, c := range cases {
		if c.Team != "" {
			teamsNow[c.Team] = true
		}
	}
	if len(teamsNow) != len(old.teams) {
		return nil, nil, errNoUpdate
	}
	for t := range teamsNow {
		if old.teams[t] == nil {
			return nil, nil, errNoUpdate
		}
	}
	start := time.Now()
	var made, retire []Library
	fail := func(err error) (*libraries, []Library, error) {
		for _, l := range made {
			l.Close()
		}
		return nil, nil, err
	}
	keep := func(skipped []Skipped, ids map[string]bool) []Skipped {
		var out []Skipped
		for _, s := range skipped {
			if !ids[s.ID] {
				out = append(out, s)
			}
		}
		return out
	}
	next := &libraries{teams: map[string]Library{}, teamSkipped: map[string][]Skipped{}, publicSkipped: old.publicSkipped}
	for _, c := range cases {
		if c.Team == "" {
			next.publicCases++
		}
	}
	step := func(lib Library, d delta) (Library, []Skipped, error) {
		inner := lib
		if o, ok := lib.(*onceLibrary); ok {
			inner = o.Library
		}
		nl, skipped, err := r.update(ctx, inner, vocab, d.changed, d.removed)
		if err != nil {
			return nil, nil, err
		}
		w := &onceLibrary{Library: nl}
		made = append(made, w)
		retire = append(retire, lib)
		return w, skipped, nil
	}
	next.public = old.public
	if len(public.ids) > 0 {
		lib, skipped, err := step(old.public, public)
		if err != nil {
			return fail(err)
		}
		next.public, next.publicSkipped = lib, append(keep(old.publicSkipped, public.ids), skipped...)
	}
	for team, lib := range old.teams {
		d := delta{changed: public.changed, removed: public.removed, ids: map[string]bool{}}
		if o := own[team]; o != nil {
			d.changed = append(append([]incidentlib.StoredCase{}, d.changed...), o.changed...)
			d.removed = append(append([]string{}, d.removed...), o.removed...)
			d.ids = o.ids
		}
		if len(d.changed)+len(d.removed) == 0 {
			next.teams[team], next.teamSkipped[team] = lib, old.teamSkipped[team]
			continue
		}
		nl, skipped, err := step(lib, d)
		if err != nil {
			return fail(err)
		}
		next.teams[team] = nl
		next.teamSkipped[team] = keep(old.teamSkipped[team], d.ids)
		for _, s := range skipped {
			if cases[s.ID].Team == team {
				next.teamSkipped[team] = append(next.teamSkipped[team], s)
			}
		}
	}
	r.log.Info("change applied in place", "changed", len(changed), "took", time.Since(start).Round(time.Millisecond))
	return next, retire, nil
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
