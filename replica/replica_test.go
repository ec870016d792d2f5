package replica

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib"
)

// fakeFeed is an in-memory CaseFeed whose changes a test makes by hand.
type fakeFeed struct {
	mu      sync.Mutex
	vocab   []byte
	cases   []incidentlib.StoredCase
	seq     int64
	down    bool
	changed chan struct{}
}

func newFeed() *fakeFeed { return &fakeFeed{vocab: []byte("v1"), changed: make(chan struct{}, 1)} }

func (f *fakeFeed) put(id string) {
	f.mu.Lock()
	f.seq++
	f.cases = append(f.cases, incidentlib.StoredCase{ID: id, Seq: f.seq})
	f.mu.Unlock()
	f.notify()
}

func (f *fakeFeed) setVocab(v string) {
	f.mu.Lock()
	f.seq++
	f.vocab = []byte(v)
	f.cases = append(f.cases, incidentlib.StoredCase{ID: vocabularyID, Seq: f.seq})
	f.mu.Unlock()
	f.notify()
}

func (f *fakeFeed) notify() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

func (f *fakeFeed) setDown(down bool) { f.mu.Lock(); f.down = down; f.mu.Unlock(); f.notify() }

var errDown = errors.New("down")

func (f *fakeFeed) Snapshot(context.Context) ([]byte, []incidentlib.StoredCase, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, nil, 0, errDown
	}
	var cs []incidentlib.StoredCase
	for _, c := range f.cases {
		if c.ID != vocabularyID {
			cs = append(cs, c)
		}
	}
	return f.vocab, cs, f.seq, nil
}

func (f *fakeFeed) Since(_ context.Context, seq int64) ([]incidentlib.StoredCase, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, seq, errDown
	}
	var out []incidentlib.StoredCase
	for _, c := range f.cases {
		if c.Seq > seq {
			out = append(out, c)
		}
	}
	return out, f.seq, nil
}

func (f *fakeFeed) Wait(ctx context.Context) error {
	select {
	case <-f.changed:
	case <-time.After(50 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return errDown
	}
	return nil
}

// countingLibrary is a library that knows only how many cases it was built
// from and with which vocabulary.
type countingLibrary struct {
	incidentlib.Library
	cases int
	vocab string
}

func (countingLibrary) Close() error { return nil }

// build leaves out a case whose ID starts with "bad" (as the real builder
// leaves out a file it cannot serve), and fails as a whole on a case
// "IL-boom" (as a library that cannot be built at all).
func build(_ context.Context, vocab []byte, cs []incidentlib.StoredCase) (Library, []Skipped, error) {
	if vocab == nil {
		return nil, nil, ErrNoLibrary
	}
	if string(vocab) == "broken" {
		return nil, nil, errors.New("the vocabulary does not load")
	}
	n := 0
	var skipped []Skipped
	for _, c := range cs {
		switch {
		case c.ID == "IL-boom":
			return nil, nil, errors.New("duplicate case ID IL-0000")
		case strings.HasPrefix(c.ID, "bad"):
			skipped = append(skipped, Skipped{ID: c.ID, Seq: c.Seq, Reason: "its file's id is IL-0000"})
		default:
			n++
		}
	}
	return countingLibrary{cases: n, vocab: string(vocab)}, skipped, nil
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestReplicaFollowsTheFeed(t *testing.T) {
	feed := newFeed()
	feed.put("IL-0001")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := Open(ctx, feed, build, nil)
	if err != nil {
		t.Fatal(err)
	}
	go r.Follow(ctx)
	lib := func() countingLibrary { return r.libs.Load().public.(*onceLibrary).Library.(countingLibrary) }
	if lib().cases != 1 {
		t.Fatalf("built from %d cases, want 1", lib().cases)
	}
	feed.put("IL-0002")
	eventually(t, "the second case is served", func() bool { return lib().cases == 2 })
	feed.put("IL-0001") // a new version of a case replaces it
	eventually(t, "the replica reaches the feed's last change", func() bool { return r.Status().Seq == 3 })
	if lib().cases != 2 {
		t.Errorf("after a case changed: %d cases, want 2", lib().cases)
	}
	feed.setVocab("v2")
	eventually(t, "the new vocabulary is used", func() bool { return lib().vocab == "v2" })

	feed.setDown(true)
	eventually(t, "the replica says it is degraded", func() bool { return r.Status().Degraded })
	if lib().cases != 2 {
		t.Error("the replica stopped serving while the store was down")
	}
	feed.setDown(false)
	feed.put("IL-0003")
	eventually(t, "the replica catches up after the store returns", func() bool { return lib().cases == 3 && !r.Status().Degraded })
}

func TestOpenNeedsALibraryInTheStore(t *testing.T) {
	feed := newFeed()
	feed.vocab = nil
	if _, err := Open(context.Background(), feed, build, nil); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("Open on an empty store = %v, want ErrNoLibrary", err)
	}
	feed = newFeed()
	feed.down = true
	if _, err := Open(context.Background(), feed, build, nil); err == nil {
		t.Error("Open with the store down succeeded")
	}
}

func TestPrivateCasesStayInTheirTeamsLibrary(t *testing.T) {
	feed := newFeed()
	feed.put("IL-0001")
	feed.mu.Lock()
	feed.seq++
	feed.cases = append(feed.cases, incidentlib.StoredCase{ID: "IL-9000", Team: "acme", Seq: feed.seq})
	feed.mu.Unlock()
	r, err := Open(context.Background(), feed, build, nil)
	if err != nil {
		t.Fatal(err)
	}
	count := func(lib incidentlib.Library) int {
		switch l := lib.(type) {
		case teamView:
			return l.lib().(*onceLibrary).Library.(countingLibrary).cases
		}
		t.Fatalf("unexpected library %T", lib)
		return 0
	}
	if n := count(r.Library); n != 1 {
		t.Errorf("public library has %d cases, want the public one alone", n)
	}
	if n := count(r.ForTeam("acme")); n != 2 {
		t.Errorf("acme's library has %d cases, want the public one and its own", n)
	}
	if n := count(r.ForTeam("other")); n != 1 {
		t.Errorf("another team's library has %d cases, want the public one alone", n)
	}
}

// Issue 21: a change no library could be built with stopped a replica
// from applying any later change, and took /readyz with it.
func TestABadChangeIsSkippedLoudlyAndLaterOnesApply(t *testing.T) {
	feed := newFeed()
	feed.put("IL-0001")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := Open(ctx, feed, build, nil)
	if err != nil {
		t.Fatal(err)
	}
	var statuses []*Status
	var mu sync.Mutex
	r.OnStatus(func(st *Status) { mu.Lock(); statuses = append(statuses, st); mu.Unlock() })
	go r.Follow(ctx)
	lib := func() countingLibrary { return r.libs.Load().public.(*onceLibrary).Library.(countingLibrary) }

	feed.put("IL-boom")
	eventually(t, "the bad change is skipped", func() bool { return r.Status().Rejected == 1 })
	if lib().cases != 1 {
		t.Errorf("after a bad change the replica serves %d cases, want the 1 it served before", lib().cases)
	}
	if w := r.Status().Warning(); !strings.Contains(w, "could not be applied and was skipped") || !strings.Contains(w, "duplicate case ID") {
		t.Errorf("Warning() = %q, want it to say a change was skipped and why", w)
	}
	feed.put("IL-0002")
	eventually(t, "a later change applies", func() bool { return lib().cases == 2 })
	if st := r.Status(); st.Rejected != 1 || st.LastRejected != "" || st.Warning() != "" {
		t.Errorf("after a good change: %+v, warning %q; want the count kept and the warning gone", st, st.Warning())
	}

	feed.put("bad-1")
	eventually(t, "a case the builder leaves out is reported", func() bool { return len(r.Status().Skipped) == 1 })
	if lib().cases != 2 || !strings.Contains(r.Status().Warning(), "1 case in the store is left out of the library: bad-1") {
		t.Errorf("serving %d cases, warning %q", lib().cases, r.Status().Warning())
	}
	feed.setVocab("broken")
	eventually(t, "a vocabulary that does not load is skipped", func() bool { return r.Status().Rejected == 2 })
	if lib().vocab != "v1" || lib().cases != 2 {
		t.Errorf("after a broken vocabulary: %+v, want the last good library", lib())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(statuses) < 4 {
		t.Errorf("OnStatus saw %d statuses, want one per change", len(statuses))
	}
}

// Issue 21: a replica restarted over a store holding a bad row exited,
// so every pod would crash-loop at its next rollout.
func TestOpenServesTheGoodCasesBesideABadOne(t *testing.T) {
	feed := newFeed()
	feed.put("IL-0001")
	feed.put("bad-1")
	feed.put("bad-2")
	r, err := Open(context.Background(), feed, build, nil)
	if err != nil {
		t.Fatalf("Open with bad rows in the store: %v", err)
	}
	if n := r.libs.Load().public.(*onceLibrary).Library.(countingLibrary).cases; n != 1 {
		t.Errorf("serving %d cases, want the good one", n)
	}
	if st := r.Status(); len(st.Skipped) != 2 || !strings.Contains(st.Warning(), "2 cases in the store are left out") {
		t.Errorf("status %+v, warning %q", st, st.Warning())
	}
}

// countingUpdater applies changes to a countingLibrary, counting calls;
// a changed case "bad-…" is left out as the builder would.
type countingUpdater struct {
	mu    sync.Mutex
	calls int
}

func (u *countingUpdater) update(_ context.Context, old Library, vocab []byte, changed []incidentlib.StoredCase, removed []string) (Library, []Skipped, error) {
	u.mu.Lock()
	u.calls++
	u.mu.Unlock()
	l := old.(countingLibrary)
	var skipped []Skipped
	for _, c := range changed {
		if strings.HasPrefix(c.ID, "bad") {
			skipped = append(skipped, Skipped{ID: c.ID, Seq: c.Seq, Reason: "bad"})
			continue
		}
		l.cases++ // every change in these tests is a new case
	}
	l.cases -= len(removed)
	return l, skipped, nil
}

func (u *countingUpdater) count() int { u.mu.Lock(); defer u.mu.Unlock(); return u.calls }

// A change is applied in place when the updater can; what it cannot (a
// team's first private case, a vocabulary) is rebuilt.
func TestChangesAreAppliedInPlace(t *testing.T) {
	feed := newFeed()
	feed.put("IL-0001")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	builds := 0
	var mu sync.Mutex
	counted := func(ctx context.Context, v []byte, cs []incidentlib.StoredCase) (Library, []Skipped, error) {
		mu.Lock()
		builds++
		mu.Unlock()
		return build(ctx, v, cs)
	}
	r, err := Open(ctx, feed, counted, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := &countingUpdater{}
	r.SetUpdater(u.update)
	go r.Follow(ctx)
	lib := func() countingLibrary { return r.libs.Load().public.(*onceLibrary).Library.(countingLibrary) }
	nbuilds := func() int { mu.Lock(); defer mu.Unlock(); return builds }

	feed.put("IL-0002")
	eventually(t, "the change is served", func() bool { return lib().cases == 2 })
	if u.count() != 1 || nbuilds() != 1 {
		t.Errorf("updater called %d times, builder %d; want the change applied in place", u.count(), nbuilds())
	}
	feed.put("bad-1")
	eventually(t, "a bad change is left out", func() bool { return len(r.Status().Skipped) == 1 })
	if lib().cases != 2 || nbuilds() != 1 {
		t.Errorf("after a bad change: %d cases, %d builds", lib().cases, nbuilds())
	}
	// A team's first private case adds a library: rebuilt.
	feed.mu.Lock()
	feed.seq++
	feed.cases = append(feed.cases, incidentlib.StoredCase{ID: "IL-9000", Team: "acme", Seq: feed.seq})
	feed.mu.Unlock()
	feed.notify()
	eventually(t, "the team's library is built", func() bool { _, ok := r.libs.Load().teams["acme"]; return ok })
	if nbuilds() != 2 {
		t.Errorf("%d builds after a team's first private case, want 2 (the team's library built)", nbuilds())
	}
	// A public change then goes in place to the public and the team's library.
	calls := u.count()
	feed.put("IL-0003")
	eventually(t, "the public change reaches the team", func() bool {
		tl := r.libs.Load().teams["acme"]
		return tl != nil && tl.(*onceLibrary).Library.(countingLibrary).cases == 4
	})
	if u.count() != calls+2 {
		t.Errorf("updater called %d more times, want 2 (public and the team)", u.count()-calls)
	}
	if st := r.Status(); len(st.Skipped) != 1 || st.Skipped[0].ID != "bad-1" {
		t.Errorf("skipped after later changes: %+v, want bad-1 kept", st.Skipped)
	}
}
