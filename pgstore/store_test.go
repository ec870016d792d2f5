package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/pgstore/pgstoretest"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, pgstoretest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s.SetPublishCheck(testPublishCheck)
	return s
}

// testPublishCheck gives the ID as serve does (on the parsed document) and
// checks only that the file's own id is then the one given.
func testPublishCheck(content []byte, id string) ([]byte, []incidentlib.Problem) {
	out, _, err := corpus.SetCaseID(content, id)
	if err != nil {
		return nil, []incidentlib.Problem{{Message: err.Error()}}
	}
	var doc struct{ ID string }
	if err := yaml.Unmarshal(out, &doc); err != nil || doc.ID != id {
		return nil, []incidentlib.Problem{{Message: fmt.Sprintf("the file's id is %q, not %s", doc.ID, id)}}
	}
	return out, nil
}

func caseFile(id, body string) incidentlib.StoredCase {
	return incidentlib.StoredCase{ID: id, Name: id + ".yaml", Content: []byte("id: " + id + "\n" + body)}
}

func TestMigrateIsIdempotent(t *testing.T) {
	s := openTest(t)
	applied, err := s.Migrate(context.Background())
	if err != nil || len(applied) != 0 {
		t.Fatalf("second Migrate applied %v, err %v; want nothing", applied, err)
	}
}

func TestImportAddsUpdatesAndKeepsVersions(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	first := []incidentlib.StoredCase{caseFile("IL-9001", "title: one\n"), caseFile("IL-9002", "title: two\n")}
	res, err := s.Import(ctx, []byte("vocab v1"), first, "alice")
	if err != nil || res.Added != 2 || res.Updated != 0 || !res.VocabularyChanged {
		t.Fatalf("first import = %+v, %v; want 2 added and the vocabulary written", res, err)
	}
	res, err = s.Import(ctx, []byte("vocab v1"), first, "alice")
	if err != nil || res.Unchanged != 2 || res.Added+res.Updated != 0 || res.VocabularyChanged || res.Seq != 0 {
		t.Fatalf("same import again = %+v, %v; want everything unchanged", res, err)
	}
	changed := []incidentlib.StoredCase{caseFile("IL-9001", "title: one, corrected\n")}
	res, err = s.Import(ctx, nil, changed, "bob")
	if err != nil || res.Updated != 1 {
		t.Fatalf("changed import = %+v, %v; want 1 updated", res, err)
	}
	vs, err := s.Versions(ctx, "IL-9001")
	if err != nil || len(vs) != 2 || vs[0].CreatedBy != "alice" || vs[1].CreatedBy != "bob" || string(vs[1].Content) != string(changed[0].Content) {
		t.Fatalf("versions = %+v, %v; want alice's then bob's", vs, err)
	}
	vocab, cases, seq, err := s.Snapshot(ctx)
	if err != nil || string(vocab) != "vocab v1" || len(cases) != 2 || seq != res.Seq {
		t.Fatalf("snapshot: vocab %q, %d cases, seq %d (want %d), err %v", vocab, len(cases), seq, res.Seq, err)
	}
}

func TestFailedImportWritesNothing(t *testing.T) {
	s := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var files []incidentlib.StoredCase
	for i := range 20 {
		files = append(files, caseFile(fmt.Sprintf("IL-%04d", 9000+i), "title: x\n"))
	}
	s.beforeRow = func(i int) {
		if i == 10 {
			cancel() // the connection goes away halfway through
		}
	}
	if _, err := s.Import(ctx, []byte("vocab"), files, "alice"); err == nil {
		t.Fatal("import that lost its connection halfway reported success")
	}
	s.beforeRow = nil
	vocab, cases, _, err := s.Snapshot(context.Background())
	if err != nil || vocab != nil || len(cases) != 0 {
		t.Fatalf("after a failed import: vocab %q, %d cases, err %v; want nothing written", vocab, len(cases), err)
	}
}

func TestFeedAnnouncesChanges(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	res, err := s.Import(ctx, []byte("vocab"), []incidentlib.StoredCase{caseFile("IL-9001", "a: 1\n")}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(ctx); err != nil { // starts listening
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	start := time.Now()
	go func() { waited <- s.Wait(ctx) }()
	time.Sleep(50 * time.Millisecond)
	if _, err := s.Import(ctx, nil, []incidentlib.StoredCase{caseFile("IL-9002", "a: 2\n")}, "bob"); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Wait returned after %v; a notification should end it at once", d)
	}
	changed, seq, err := s.Since(ctx, res.Seq)
	if err != nil || len(changed) != 1 || changed[0].ID != "IL-9002" || seq <= res.Seq {
		t.Fatalf("Since(%d) = %v, %d, %v; want IL-9002 alone", res.Seq, changed, seq, err)
	}
	if changed, _, _ := s.Since(ctx, seq); len(changed) != 0 {
		t.Errorf("Since(last) = %v, want nothing", changed)
	}
}

func TestUnavailableDatabase(t *testing.T) {
	url := pgstoretest.Database(t)
	proxy, via := pgstoretest.NewProxy(t, url)
	ctx := context.Background()
	s, err := Open(ctx, via)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	if _, _, err := s.Since(ctx, 0); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Since with the database cut off = %v, want ErrUnavailable", err)
	}
	proxy.Restore(t)
	if _, _, err := s.Since(ctx, 0); err != nil {
		t.Errorf("Since after the database came back = %v", err)
	}
}

func TestOpenRejectsABadURLWithoutEchoingIt(t *testing.T) {
	_, err := Open(context.Background(), "postgres://user:secret@host:notaport/db")
	if err == nil || incidentlib.ErrorCode(err) != incidentlib.EINVALID {
		t.Fatalf("Open(bad URL) = %v, want an invalid-parameter error", err)
	}
	if msg := err.Error(); strings.Contains(msg, "secret") {
		t.Errorf("error %q shows the password", msg)
	}
}

// The database going away in the middle of an import leaves nothing
// half-written.
func TestImportCutOffHalfway(t *testing.T) {
	url := pgstoretest.Database(t)
	proxy, via := pgstoretest.NewProxy(t, url)
	ctx := context.Background()
	s, err := Open(ctx, via)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var files []incidentlib.StoredCase
	for i := range 20 {
		files = append(files, caseFile(fmt.Sprintf("IL-%04d", 9000+i), "title: x\n"))
	}
	s.beforeRow = func(i int) {
		if i == 10 {
			proxy.Cut()
		}
	}
	if _, err := s.Import(ctx, []byte("vocab"), files, "alice"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("import cut off halfway = %v, want ErrUnavailable", err)
	}
	direct, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	vocab, cases, _, err := direct.Snapshot(ctx)
	if err != nil || vocab != nil || len(cases) != 0 {
		t.Fatalf("after the cut: vocab %q, %d cases, err %v; want nothing written", vocab, len(cases), err)
	}
}
