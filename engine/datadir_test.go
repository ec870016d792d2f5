package engine_test

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine"
)

// indexDir returns the one finished index directory under dataDir.
func indexDir(t *testing.T, dataDir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dataDir, "index-*"))
	var out []string
	for _, d := range m {
		if !strings.Contains(d, ".building-") {
			out = append(out, d)
		}
	}
	if len(out) != 1 {
		t.Fatalf("want one index under %s, have %v", dataDir, m)
	}
	return out[0]
}

// indexFiles lists the files of the index at dir, without the manifest.
func indexFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, "manifest.json") {
			out = append(out, p)
		}
		return nil
	})
	if len(out) == 0 {
		t.Fatal("index has no files")
	}
	return out
}

// openWithin opens an engine over dataDir and fails the test if that takes
// longer than a bound: a start must never wait on a lock without end.
func openWithin(t *testing.T, dataDir string) *engine.Engine {
	t.Helper()
	type result struct {
		e   *engine.Engine
		err error
	}
	done := make(chan result, 1)
	go func() {
		e, err := engine.Open(context.Background(), vocab(t), fixture(), engine.Options{DataDir: dataDir, Logger: testLogger(t)})
		done <- result{e, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("open: %v", r.err)
		}
		return r.e
	case <-time.After(30 * time.Second):
		t.Fatal("open did not return within 30s")
	}
	return nil
}

// checkServes fails unless e answers a known query correctly.
func checkServes(t *testing.T, e *engine.Engine) {
	t.Helper()
	res, err := e.SearchCases(context.Background(), incidentlib.Query{Text: "kafka"})
	if err != nil || res.Total != 1 {
		t.Fatalf("search: %v, %d hits, want 1", err, res.Total)
	}
}

func TestCorruptIndexIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	openWithin(t, dir).Close()
	idx := indexDir(t, dir)
	for _, f := range indexFiles(t, idx) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			openWithin(t, dir).Close() // a sound index again
			f := filepath.Join(indexDir(t, dir), strings.TrimPrefix(f, idx))
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			junk := make([]byte, min(st.Size(), 64<<10))
			for i := range junk {
				junk[i] = 0xff
			}
			fh, err := os.OpenFile(f, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fh.WriteAt(junk, st.Size()/2-int64(len(junk))/2)
			fh.Close()
			e := openWithin(t, dir)
			defer e.Close()
			if e.IndexReused() {
				t.Fatal("a damaged index was reused")
			}
			checkServes(t, e)
		})
	}
	// A missing manifest (an index written by an older build) is rebuilt.
	os.Remove(filepath.Join(indexDir(t, dir), "incidentlib-manifest.json"))
	e := openWithin(t, dir)
	defer e.Close()
	if e.IndexReused() {
		t.Fatal("an index without a manifest was reused")
	}
}

// Two engines on one data directory both serve, from the same index: the
// index is opened read-only with a shared lock. (flock locks belong to an
// open file, so two opens in one process contend as two processes do.)
func TestTwoEnginesShareOneDataDir(t *testing.T) {
	dir := t.TempDir()
	e1 := openWithin(t, dir)
	defer e1.Close()
	e2 := openWithin(t, dir)
	defer e2.Close()
	if !e2.IndexReused() {
		t.Error("the second engine rebuilt the index")
	}
	checkServes(t, e1)
	checkServes(t, e2)
}

func TestLeftoverBuildsRemoved(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, "index-0123.building-p999999999-42")
	old := filepath.Join(dir, "index-0123.building-17")
	live := filepath.Join(dir, "index-0123.building-p"+strconv.Itoa(os.Getppid())+"-7") // a process that runs
	for _, d := range []string{dead, old, live} {
		if err := os.MkdirAll(filepath.Join(d, "index"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	openWithin(t, dir).Close()
	for _, d := range []string{dead, old} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("leftover %s kept", filepath.Base(d))
		}
	}
	if _, err := os.Stat(live); err != nil {
		t.Error("the build directory of a running process was removed")
	}
}

// makeReadOnly makes dir refuse new entries, for root too where the
// file system allows (chattr +i); it returns the undo.
func makeReadOnly(t *testing.T, dir string) func() {
	t.Helper()
	if os.Getuid() == 0 {
		if err := exec.Command("chattr", "+i", dir).Run(); err != nil {
			t.Skipf("running as root and chattr +i failed (%v): cannot make a directory read-only", err)
		}
		return func() { exec.Command("chattr", "-i", dir).Run() }
	}
	os.Chmod(dir, 0o555)
	return func() { os.Chmod(dir, 0o755) }
}

func TestReadOnlyDataDir(t *testing.T) {
	t.Run("valid index is served read-only", func(t *testing.T) {
		dir := t.TempDir()
		openWithin(t, dir).Close()
		undo := makeReadOnly(t, dir)
		defer undo()
		e := openWithin(t, dir)
		defer e.Close()
		if !e.IndexReused() {
			t.Fatal("the index in a read-only directory was not reused")
		}
		checkServes(t, e)
	})
	t.Run("no index: built in memory, and says so", func(t *testing.T) {
		dir := t.TempDir()
		undo := makeReadOnly(t, dir)
		defer undo()
		e := openWithin(t, dir)
		defer e.Close()
		if !strings.HasPrefix(e.IndexLocation(), "memory") {
			t.Fatalf("location %q", e.IndexLocation())
		}
		checkServes(t, e)
	})
}

// TestIndexFaultTrials overwrites random ranges of random index files at
// random offsets, then starts an engine: every start must serve correct
// results (reusing a sound index or rebuilding a damaged one) and never
// crash. INCIDENTLIB_FAULT_TESTS sets the number of trials (CI runs a few;
// the figure in docs/performance.md is from a run of 200).
func TestIndexFaultTrials(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("INCIDENTLIB_FAULT_TESTS"))
	if n <= 0 {
		t.Skip("set INCIDENTLIB_FAULT_TESTS=N to run N index-corruption trials")
	}
	dir := t.TempDir()
	openWithin(t, dir).Close()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	rebuilt := 0
	for trial := range n {
		files := indexFiles(t, indexDir(t, dir))
		f := files[rng.IntN(len(files))]
		st, err := os.Stat(f)
		if err != nil || st.Size() == 0 {
			continue
		}
		size := 1 + rng.Int64N(min(st.Size(), 64<<10))
		off := rng.Int64N(st.Size())
		junk := make([]byte, size)
		for i := range junk {
			junk[i] = byte(rng.IntN(256))
		}
		fh, err := os.OpenFile(f, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteAt(junk, off)
		fh.Close()
		e := openWithin(t, dir)
		if !e.IndexReused() {
			rebuilt++
		}
		checkServes(t, e)
		e.Close()
		_ = trial
	}
	t.Logf("%d trials: %d rebuilt, %d reused (the bytes written equalled what was there), 0 crashes", n, rebuilt, n-rebuilt)
}

// TestHelperHoldIndex is not a test: run by the test below in a process
// of its own, it holds an index open for writing, as an older binary did.
func TestHelperHoldIndex(t *testing.T) {
	path := os.Getenv("INCIDENTLIB_HOLD_INDEX")
	if path == "" {
		t.Skip("helper process for TestIndexHeldForWritingIsNotWaitedOn")
	}
	idx, err := bleve.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	os.Stdout.WriteString("held\n")
	time.Sleep(20 * time.Second)
}

// An index held open for writing by another process (as an older binary
// did) is never waited on: opening it for writing changes its lock file,
// so it no longer matches its manifest and is rebuilt beside it (and were
// the files unchanged, the lock wait would be bounded and the index built
// in memory). Either way the start is quick and serves.
func TestIndexHeldForWritingIsNotWaitedOn(t *testing.T) {
	dir := t.TempDir()
	openWithin(t, dir).Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldIndex$")
	cmd.Env = append(os.Environ(), "INCIDENTLIB_HOLD_INDEX="+indexDir(t, dir))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("helper: %q %v", buf, err)
	}
	start := time.Now()
	e := openWithin(t, dir)
	defer e.Close()
	if e.IndexReused() {
		t.Fatalf("reused an index another process holds for writing (%s)", e.IndexLocation())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
	checkServes(t, e)
}

// testLogger sends the engine's log to the test's log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, nil))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// A data directory whose file system is full (simulated: every write of
// the build fails with ENOSPC) gives an engine that serves from memory
// and says so, not an error (issue 22: serve and mcp exited 1 at every
// start).
func TestFullDataDirServesFromMemory(t *testing.T) {
	for _, stage := range []string{"build", "manifest"} {
		t.Run(stage, func(t *testing.T) {
			defer engine.SetDiskFault(func(s string) error {
				if s == stage {
					return &os.PathError{Op: "write", Path: "index", Err: syscall.ENOSPC}
				}
				return nil
			})()
			dir := t.TempDir()
			e := openWithin(t, dir)
			defer e.Close()
			if loc := e.IndexLocation(); !strings.HasPrefix(loc, "memory") || !strings.Contains(loc, "no space left") {
				t.Errorf("location %q", loc)
			}
			checkServes(t, e)
			if m, _ := filepath.Glob(filepath.Join(dir, "index-*")); len(m) != 0 {
				t.Errorf("left behind %v", m)
			}
		})
	}
}

// Two corpora in one data directory (serve --cases DIR and a plain mcp)
// keep each other's index: neither is removed while in use, nor soon
// after (issue 22: each deleted the other's at every start).
func TestTwoCorporaKeepEachOthersIndex(t *testing.T) {
	dir := t.TempDir()
	all := fixture()
	open := func(cases []*incidentlib.Case) *engine.Engine {
		e, err := engine.Open(context.Background(), vocab(t), cases, engine.Options{DataDir: dir, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a := open(all)
	b := open(all[1:])
	if b.IndexReused() {
		t.Fatal("a different corpus reused the index")
	}
	checkServes(t, a)
	a.Close()
	b.Close()
	a = open(all)
	defer a.Close()
	if !a.IndexReused() {
		t.Error("the first corpus's index was removed when the second was built")
	}
	b = open(all[1:])
	defer b.Close()
	if !b.IndexReused() {
		t.Error("the second corpus's index was removed")
	}
}
