package replica

import (
	"context"
	"errors"
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

func build(_ context.Context, vocab []byte, cs []incidentlib.StoredCase) (Library, error) {
	if vocab == nil {
		return nil, ErrNoLibrary
	}
	return countingLibrary{cases: len(cs), vocab: string(vocab)}, nil
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
	lib := func() countingLibrary { return r.libs.Load().public.(countingLibrary) }
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
			return l.lib().(countingLibrary).cases
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
