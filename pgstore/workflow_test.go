package pgstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/pgstore/pgstoretest"
)

func account(t *testing.T, s *Store, name, team string, role incidentlib.Role) *incidentlib.Account {
	t.Helper()
	a, err := s.AddAccount(context.Background(), name, team, role)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := incidentlib.ErrorCode(err); got != code {
		t.Errorf("%s: error %v (code %q), want code %q", what, err, got, code)
	}
}

func TestTokens(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	account(t, s, "ana", "payments", incidentlib.RoleSubmitter)
	tok, exp, err := s.CreateToken(ctx, "ana", "api", "laptop", time.Hour)
	if err != nil || !strings.HasPrefix(tok, tokenPrefix) || time.Until(exp) > time.Hour {
		t.Fatalf("CreateToken = %q, %v, %v", tok, exp, err)
	}
	a, err := s.Authenticate(ctx, tok)
	if err != nil || a.Name != "ana" || a.Team != "payments" || a.Role != incidentlib.RoleSubmitter {
		t.Fatalf("Authenticate = %+v, %v", a, err)
	}
	var stored int
	s.pool.QueryRow(ctx, `SELECT count(*) FROM tokens WHERE hash = $1`, tok).Scan(&stored)
	if stored != 0 {
		t.Error("the token itself is stored; only its hash may be")
	}
	if ok, err := s.RevokeToken(ctx, tok); !ok || err != nil {
		t.Fatalf("RevokeToken = %v, %v", ok, err)
	}
	_, err = s.Authenticate(ctx, tok)
	wantCode(t, "a revoked token", err, incidentlib.EUNAUTHORIZED)
	expired, _, _ := s.CreateToken(ctx, "ana", "api", "", time.Millisecond)
	time.Sleep(1100 * time.Millisecond) // expiry is kept to the second
	_, err = s.Authenticate(ctx, expired)
	wantCode(t, "an expired token", err, incidentlib.EUNAUTHORIZED)
	_, err = s.Authenticate(ctx, "ilt_nonsense")
	wantCode(t, "a made-up token", err, incidentlib.EUNAUTHORIZED)
	_, _, err = s.CreateToken(ctx, "nobody", "api", "", 0)
	wantCode(t, "a token for no account", err, incidentlib.ENOTFOUND)
	_, err = s.AddAccount(ctx, "ana", "", incidentlib.RoleReader)
	wantCode(t, "a second account named ana", err, incidentlib.ECONFLICT)
	_, err = s.AddAccount(ctx, "Bad Name", "", incidentlib.RoleReader)
	wantCode(t, "a bad account name", err, incidentlib.EINVALID)
	_, err = s.AddAccount(ctx, "bob", "", "owner")
	wantCode(t, "an unknown role", err, incidentlib.EINVALID)
}

const draftBody = "title: t\ncompany: c\n"

func TestDraftLifecycle(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	author := account(t, s, "ana", "payments", incidentlib.RoleSubmitter)
	reviewer := account(t, s, "rui", "payments", incidentlib.RoleReviewer)
	outsider := account(t, s, "oz", "search", incidentlib.RoleReviewer)
	reader := account(t, s, "rita", "payments", incidentlib.RoleReader)

	_, err := s.CreateDraft(ctx, reader, "", false, []byte(draftBody))
	wantCode(t, "a reader writing a draft", err, incidentlib.EFORBIDDEN)

	d, err := s.CreateDraft(ctx, author, "", true, []byte(draftBody))
	if err != nil || d.State != incidentlib.DraftOpen || !d.Private || d.Team != "payments" {
		t.Fatalf("CreateDraft = %+v, %v", d, err)
	}
	_, err = s.FindDraft(ctx, outsider, d.ID)
	wantCode(t, "another team reading the draft", err, incidentlib.ENOTFOUND)
	_, err = s.UpdateDraft(ctx, reviewer, d.ID, []byte("x"))
	wantCode(t, "someone else editing the draft", err, incidentlib.EFORBIDDEN)
	_, err = s.ReviewDraft(ctx, reviewer, d.ID, true, "")
	wantCode(t, "approving a draft not submitted", err, incidentlib.ECONFLICT)
	if _, err := s.SubmitDraft(ctx, author, d.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.ReviewDraft(ctx, author, d.ID, true, "")
	wantCode(t, "a submitter approving", err, incidentlib.EFORBIDDEN)
	_, err = s.ReviewDraft(ctx, outsider, d.ID, true, "")
	wantCode(t, "a reviewer of another team approving", err, incidentlib.ENOTFOUND)
	ret, err := s.ReviewDraft(ctx, reviewer, d.ID, false, "add the timeline")
	if err != nil || ret.State != incidentlib.DraftReturned || ret.ReviewNote != "add the timeline" {
		t.Fatalf("return = %+v, %v", ret, err)
	}
	if _, err := s.UpdateDraft(ctx, author, d.ID, []byte("id: IL-0000\n"+draftBody+"summary: s\n")); err != nil {
		t.Fatal(err)
	}
	s.SubmitDraft(ctx, author, d.ID)
	pub, err := s.ReviewDraft(ctx, reviewer, d.ID, true, "thanks")
	if err != nil || pub.State != incidentlib.DraftPublished || pub.CaseID != "IL-9000" || !strings.HasPrefix(string(pub.Content), "id: IL-9000\n") {
		t.Fatalf("publish = %+v (%q), %v", pub, pub.Content, err)
	}
	_, cases, _, _ := s.Snapshot(ctx)
	if len(cases) != 1 || cases[0].ID != "IL-9000" || cases[0].Team != "payments" {
		t.Fatalf("store holds %+v, want IL-9000 private to payments", cases)
	}

	// An edit of the published case becomes its second version.
	edit, err := s.CreateDraft(ctx, author, "IL-9000", false, []byte("id: IL-9000\n"+draftBody+"summary: better\n"))
	if err != nil || !edit.Private {
		t.Fatalf("edit draft = %+v, %v", edit, err)
	}
	s.SubmitDraft(ctx, author, edit.ID)
	if _, err := s.ReviewDraft(ctx, reviewer, edit.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	vs, err := s.CaseHistory(ctx, author, "IL-9000")
	if err != nil || len(vs) != 2 || !strings.Contains(string(vs[1].Content), "better") {
		t.Fatalf("history = %+v, %v", vs, err)
	}
	_, err = s.CaseHistory(ctx, outsider, "IL-9000")
	wantCode(t, "another team reading a private case's history", err, incidentlib.ENOTFOUND)
	_, err = s.CreateDraft(ctx, outsider, "IL-9000", false, []byte(draftBody))
	wantCode(t, "another team editing a private case", err, incidentlib.ENOTFOUND)

	// Public drafts draw from the public range.
	p, _ := s.CreateDraft(ctx, author, "", false, []byte(draftBody))
	s.SubmitDraft(ctx, author, p.ID)
	p, err = s.ReviewDraft(ctx, reviewer, p.ID, true, "")
	if err != nil || p.CaseID != "IL-5000" {
		t.Fatalf("public publish = %+v, %v; want IL-5000", p, err)
	}
	list, _, err := s.ListDrafts(ctx, reviewer, incidentlib.DraftPublished, 1)
	if err != nil || len(list) != 3 {
		t.Errorf("ListDrafts(published) = %d drafts, %v; want 3", len(list), err)
	}
	var actions int
	s.pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE object LIKE 'draft %'`).Scan(&actions)
	if actions < 10 {
		t.Errorf("audit log has %d draft actions, want every change recorded", actions)
	}
}

func TestWritesFailFastWhenTheDatabaseIsDown(t *testing.T) {
	url := pgstoretest.Database(t)
	proxy, via := pgstoretest.NewProxy(t, url)
	ctx := context.Background()
	s, err := Open(ctx, via)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Migrate(ctx)
	a := account(t, s, "ana", "", incidentlib.RoleSubmitter)
	proxy.Cut()
	start := time.Now()
	_, err = s.CreateDraft(ctx, a, "", false, []byte(draftBody))
	wantCode(t, "a write with the database down", err, incidentlib.EUNAVAILABLE)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the failed write took %v; it should fail fast", d)
	}
}

// Issue 21: a line "id: x" inside a multi-line quoted title took the ID a
// publication gave, and the case went on loading as the file's own id.
func TestPublishGivesTheIDToTheDocumentNotToALine(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	author := account(t, s, "ana", "payments", incidentlib.RoleSubmitter)
	reviewer := account(t, s, "rui", "payments", incidentlib.RoleReviewer)
	crafted := "title: \"Outage\nid: x\n continued\"\ncompany: c\nid: IL-0000\n"
	var published []string
	for range 2 {
		d, err := s.CreateDraft(ctx, author, "", false, []byte(crafted))
		if err != nil {
			t.Fatal(err)
		}
		s.SubmitDraft(ctx, author, d.ID)
		d, err = s.ReviewDraft(ctx, reviewer, d.ID, true, "")
		if err != nil {
			t.Fatalf("publish: %v", err)
		}
		published = append(published, d.CaseID)
	}
	_, cases, _, _ := s.Snapshot(ctx)
	if len(cases) != 2 {
		t.Fatalf("store holds %d cases, want 2", len(cases))
	}
	for i, c := range cases {
		var doc struct{ ID, Title string }
		if err := yaml.Unmarshal(c.Content, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.ID != c.ID || c.ID != published[i] {
			t.Errorf("case stored as %s (published as %s) reads as %q:\n%s", c.ID, published[i], doc.ID, c.Content)
		}
		if doc.Title != "Outage id: x continued" {
			t.Errorf("the title became %q", doc.Title)
		}
	}
}

func TestPublishRefusesWhatTheCheckRefuses(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	author := account(t, s, "ana", "payments", incidentlib.RoleAdmin)
	d, _ := s.CreateDraft(ctx, author, "", false, []byte("- not\n- a case\n"))
	s.SubmitDraft(ctx, author, d.ID)
	_, err := s.ReviewDraft(ctx, author, d.ID, true, "")
	wantCode(t, "publishing a file that is not a case", err, incidentlib.EINVALID)
	if _, cases, _, _ := s.Snapshot(ctx); len(cases) != 0 {
		t.Errorf("a refused draft was published: %d cases", len(cases))
	}
	s.SetPublishCheck(nil)
	d2, _ := s.CreateDraft(ctx, author, "", false, []byte(draftBody))
	s.SubmitDraft(ctx, author, d2.ID)
	if _, err := s.ReviewDraft(ctx, author, d2.ID, true, ""); err == nil {
		t.Error("a store without a publish check published a draft unchecked")
	}
}

// Issue 21: a draft save against a silent database hung for minutes, and
// went on after its client had left.
func TestWritesEndWhenTheDatabaseIsSilent(t *testing.T) {
	url := pgstoretest.Database(t)
	proxy, via := pgstoretest.NewProxy(t, url)
	ctx := context.Background()
	s, err := Open(ctx, via)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Migrate(ctx)
	a := account(t, s, "ana", "", incidentlib.RoleSubmitter)
	s.SetWriteTimeout(2 * time.Second)
	proxy.Freeze()
	defer proxy.Thaw()
	start := time.Now()
	_, err = s.CreateDraft(ctx, a, "", false, []byte(draftBody))
	wantCode(t, "a draft saved against a silent database", err, incidentlib.EUNAVAILABLE)
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the save took %v; the write timeout is 2s", d)
	}
	if msg := incidentlib.ErrorMessage(err); !strings.Contains(msg, "did not answer in time") && !strings.Contains(msg, "does not answer") {
		t.Errorf("message %q does not say the database did not answer", msg)
	}
	// A client that leaves ends its write at once.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(200*time.Millisecond, cancel)
	start = time.Now()
	_, err = s.CreateDraft(cctx, a, "", false, []byte(draftBody))
	if err == nil {
		t.Fatal("a write whose client left succeeded against a silent database")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the write went on %v after its client left", d)
	}
}

// A publication that waits for the write lock (another writer stuck)
// gives up within the write timeout instead of queueing for ever.
func TestWritesDoNotWaitForeverForTheWriteLock(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	a := account(t, s, "ana", "", incidentlib.RoleAdmin)
	d, _ := s.CreateDraft(ctx, a, "", false, []byte(draftBody))
	s.SubmitDraft(ctx, a, d.ID)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, writeLock); err != nil {
		t.Fatal(err)
	}
	s.SetWriteTimeout(time.Second)
	start := time.Now()
	_, err = s.ReviewDraft(ctx, a, d.ID, true, "")
	wantCode(t, "a publication waiting for the write lock", err, incidentlib.EUNAVAILABLE)
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("the publication waited %v", el)
	}
}

func TestWithdrawAndPurge(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	a := account(t, s, "ana", "", incidentlib.RoleMaintainer)
	if _, err := s.Import(ctx, []byte("vocab"), []incidentlib.StoredCase{caseFile("IL-0001", "title: one\n"), caseFile("IL-0002", "title: two\n")}, "import"); err != nil {
		t.Fatal(err)
	}
	edit, _ := s.CreateDraft(ctx, a, "IL-0001", false, []byte("id: IL-0001\ntitle: one, with a secret\n"))
	s.SubmitDraft(ctx, a, edit.ID)
	if _, err := s.ReviewDraft(ctx, a, edit.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	edit, _ = s.CreateDraft(ctx, a, "IL-0001", false, []byte("id: IL-0001\ntitle: one, redacted\n"))
	s.SubmitDraft(ctx, a, edit.ID)
	s.ReviewDraft(ctx, a, edit.ID, true, "")
	_, _, seq, _ := s.Snapshot(ctx)

	// Purge keeps the version served and deletes the ones before it.
	res, err := s.Purge(ctx, "IL-0001", "maint")
	if err != nil || res.Versions != 2 || res.Drafts != 1 || res.Case {
		t.Fatalf("Purge = %+v, %v; want 2 old versions and 1 draft", res, err)
	}
	vs, _ := s.Versions(ctx, "IL-0001")
	if len(vs) != 1 || !strings.Contains(string(vs[0].Content), "redacted") {
		t.Errorf("after the purge: %d versions; want the current one alone", len(vs))
	}
	var secret int
	s.pool.QueryRow(ctx, `SELECT count(*) FROM drafts WHERE content LIKE '%secret%'`).Scan(&secret)
	if secret != 0 {
		t.Error("a purged version's text is still in a draft")
	}

	// Withdraw takes the case out of snapshots and tells followers.
	if err := s.Withdraw(ctx, "IL-0002", "maint", "published by mistake"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "withdrawing it twice", s.Withdraw(ctx, "IL-0002", "maint", ""), incidentlib.ENOTFOUND)
	wantCode(t, "withdrawing a case that is not there", s.Withdraw(ctx, "IL-0404", "maint", ""), incidentlib.ENOTFOUND)
	changed, _, err := s.Since(ctx, seq)
	if err != nil || len(changed) != 1 || changed[0].ID != "IL-0002" || !changed[0].Withdrawn || len(changed[0].Content) != 0 {
		t.Fatalf("Since after the withdrawal = %+v, %v", changed, err)
	}
	_, cases, _, _ := s.Snapshot(ctx)
	if len(cases) != 1 || cases[0].ID != "IL-0001" {
		t.Errorf("snapshot after the withdrawal holds %d cases, want IL-0001 alone", len(cases))
	}
	res, err = s.Purge(ctx, "IL-0002", "maint")
	if err != nil || res.Versions != 1 || !res.Case {
		t.Fatalf("Purge of a withdrawn case = %+v, %v; want every version and the case emptied", res, err)
	}
	var left int
	s.pool.QueryRow(ctx, `SELECT count(*) FROM cases WHERE id = 'IL-0002' AND content = ''`).Scan(&left)
	if left != 1 {
		t.Error("the withdrawn case's record is gone or still holds its text")
	}
	_, err = s.Purge(ctx, "IL-0404", "maint")
	wantCode(t, "purging a case that is not there", err, incidentlib.ENOTFOUND)
}

// Issue 21: a session signed in again for a fresh 12 hours, worked as a
// Bearer token, and outlived the token that made it.
func TestSessionsAreBoundToTheirToken(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	account(t, s, "ana", "payments", incidentlib.RoleSubmitter)
	tok, _, _ := s.CreateToken(ctx, "ana", "api", "laptop", time.Hour)
	a, session, exp, err := s.StartSession(ctx, tok)
	if err != nil || a.Name != "ana" {
		t.Fatalf("StartSession = %+v, %v", a, err)
	}
	if time.Until(exp) > time.Hour+time.Second {
		t.Errorf("the session expires %v from now, after the token that made it", time.Until(exp).Round(time.Second))
	}
	if a, err := s.SessionAccount(ctx, session); err != nil || a.Name != "ana" {
		t.Fatalf("SessionAccount = %+v, %v", a, err)
	}
	_, err = s.Authenticate(ctx, session)
	wantCode(t, "a session as a Bearer token", err, incidentlib.EUNAUTHORIZED)
	_, _, _, err = s.StartSession(ctx, session)
	wantCode(t, "a session signing in for another", err, incidentlib.EUNAUTHORIZED)
	_, err = s.SessionAccount(ctx, tok)
	wantCode(t, "an API token as a session", err, incidentlib.EUNAUTHORIZED)

	if ok, err := s.RevokeToken(ctx, tok); !ok || err != nil {
		t.Fatal(ok, err)
	}
	_, err = s.SessionAccount(ctx, session)
	wantCode(t, "a session after its token was revoked", err, incidentlib.EUNAUTHORIZED)

	// A session from a short token dies when the token expires.
	short, _, _ := s.CreateToken(ctx, "ana", "api", "", time.Second)
	_, shortSession, _, err := s.StartSession(ctx, short)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	_, err = s.SessionAccount(ctx, shortSession)
	wantCode(t, "a session after its token expired", err, incidentlib.EUNAUTHORIZED)

	// Sessions per account are bounded: the oldest end.
	many, _, _ := s.CreateToken(ctx, "ana", "api", "", time.Hour)
	var sessions []string
	for range MaxSessionsPerAccount + 3 {
		_, ss, _, err := s.StartSession(ctx, many)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, ss)
	}
	_, err = s.SessionAccount(ctx, sessions[0])
	wantCode(t, "the oldest session past the limit", err, incidentlib.EUNAUTHORIZED)
	if _, err := s.SessionAccount(ctx, sessions[len(sessions)-1]); err != nil {
		t.Errorf("the newest session: %v", err)
	}
	var signIns int
	s.pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'session.start' AND actor = 'ana'`).Scan(&signIns)
	if signIns != MaxSessionsPerAccount+5 {
		t.Errorf("audit log holds %d sign-ins, want %d", signIns, MaxSessionsPerAccount+5)
	}

	// Disabling the account ends everything it holds.
	n, err := s.DisableAccount(ctx, "ana", "admin")
	if err != nil || n == 0 {
		t.Fatalf("DisableAccount = %d, %v", n, err)
	}
	_, err = s.Authenticate(ctx, many)
	wantCode(t, "a token of a disabled account", err, incidentlib.EUNAUTHORIZED)
	_, err = s.SessionAccount(ctx, sessions[len(sessions)-1])
	wantCode(t, "a session of a disabled account", err, incidentlib.EUNAUTHORIZED)
	_, err = s.DisableAccount(ctx, "nobody", "admin")
	wantCode(t, "disabling no account", err, incidentlib.ENOTFOUND)
}

// Issue 21: any team rewrote any public case (the shipped corpus and other
// teams' cases) with only its own review, and every account read every
// public case's old versions.
func TestPublicCasesBelongToTheTeamThatPublishedThem(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	if _, err := s.Import(ctx, []byte("vocab"), []incidentlib.StoredCase{caseFile("IL-0001", "title: shipped\n")}, "import"); err != nil {
		t.Fatal(err)
	}
	payAuthor := account(t, s, "ana", "payments", incidentlib.RoleAdmin)
	payReviewer := account(t, s, "rui", "payments", incidentlib.RoleReviewer)
	other := account(t, s, "oz", "search", incidentlib.RoleAdmin)
	maint := account(t, s, "mae", "", incidentlib.RoleMaintainer)

	d, _ := s.CreateDraft(ctx, payAuthor, "", false, []byte(draftBody))
	s.SubmitDraft(ctx, payAuthor, d.ID)
	pub, err := s.ReviewDraft(ctx, payReviewer, d.ID, true, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateDraft(ctx, other, pub.CaseID, false, []byte(draftBody))
	wantCode(t, "another team editing a team's public case", err, incidentlib.EFORBIDDEN)
	_, err = s.CreateDraft(ctx, payAuthor, "IL-0001", false, []byte(draftBody))
	wantCode(t, "a team editing the shipped corpus", err, incidentlib.EFORBIDDEN)
	if _, err := s.CreateDraft(ctx, payAuthor, pub.CaseID, false, []byte(draftBody)); err != nil {
		t.Errorf("the owning team editing its case: %v", err)
	}
	m, err := s.CreateDraft(ctx, maint, "IL-0001", false, []byte("id: IL-0001\ntitle: corrected\n"))
	if err != nil {
		t.Fatalf("a maintainer editing the shipped corpus: %v", err)
	}
	s.SubmitDraft(ctx, maint, m.ID)
	if _, err := s.ReviewDraft(ctx, maint, m.ID, true, ""); err != nil {
		t.Errorf("a maintainer publishing a shipped case's edit: %v", err)
	}

	_, err = s.CaseHistory(ctx, other, pub.CaseID)
	wantCode(t, "another team reading a public case's history", err, incidentlib.EFORBIDDEN)
	_, err = s.CaseHistory(ctx, nil, pub.CaseID)
	wantCode(t, "no account reading a public case's history", err, incidentlib.EFORBIDDEN)
	if vs, err := s.CaseHistory(ctx, payReviewer, pub.CaseID); err != nil || len(vs) != 1 {
		t.Errorf("the owning team's history = %d versions, %v", len(vs), err)
	}
	if vs, err := s.CaseHistory(ctx, maint, "IL-0001"); err != nil || len(vs) != 2 {
		t.Errorf("a maintainer's history of a shipped case = %d versions, %v", len(vs), err)
	}
}

// Issue 21: an account wrote 1,000 drafts in 22 s and 50 × 1 MB in 19 s,
// with no bound but the request rate (which --rate-limit 0 removed).
func TestDraftQuotas(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	a := account(t, s, "ana", "payments", incidentlib.RoleSubmitter)
	for i := range MaxOpenDrafts {
		if _, err := s.CreateDraft(ctx, a, "", false, []byte(draftBody)); err != nil {
			t.Fatalf("draft %d: %v", i+1, err)
		}
	}
	_, err := s.CreateDraft(ctx, a, "", false, []byte(draftBody))
	wantCode(t, "a draft past the count quota", err, incidentlib.EFORBIDDEN)
	if err != nil && !strings.Contains(incidentlib.ErrorMessage(err), "open drafts") {
		t.Errorf("message %q does not name the quota", incidentlib.ErrorMessage(err))
	}

	b := account(t, s, "bob", "payments", incidentlib.RoleSubmitter)
	big := []byte(strings.Repeat("x", 1<<20))
	var last *incidentlib.Draft
	for i := range MaxOpenDraftBytes >> 20 {
		if last, err = s.CreateDraft(ctx, b, "", false, big); err != nil {
			t.Fatalf("1 MiB draft %d: %v", i+1, err)
		}
	}
	_, err = s.CreateDraft(ctx, b, "", false, big)
	wantCode(t, "a draft past the byte quota", err, incidentlib.EFORBIDDEN)
	_, err = s.UpdateDraft(ctx, b, last.ID, append(big, 'y'))
	wantCode(t, "an update past the byte quota", err, incidentlib.EFORBIDDEN)
	if _, err := s.UpdateDraft(ctx, b, last.ID, []byte(draftBody)); err != nil {
		t.Errorf("an update that shrinks a draft: %v", err)
	}

	// The team's list pages past the first hundred (it used to stop at 200).
	total := MaxOpenDrafts + MaxOpenDraftBytes>>20
	first, more, err := s.ListDrafts(ctx, a, "", 1)
	if err != nil || len(first) != incidentlib.DraftsPerPage || !more {
		t.Fatalf("page 1: %d drafts, more %v, %v", len(first), more, err)
	}
	second, more, err := s.ListDrafts(ctx, a, "", 2)
	if err != nil || len(second) != total-incidentlib.DraftsPerPage || more {
		t.Errorf("page 2: %d drafts, more %v, %v; want %d and no more", len(second), more, err, total-incidentlib.DraftsPerPage)
	}
}

// Issue 21: every team's private cases drew from one shared range, so a
// team's first case number told it how many others had published.
func TestEachTeamHasItsOwnPrivateIDs(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	publish := func(a *incidentlib.Account) string {
		t.Helper()
		d, err := s.CreateDraft(ctx, a, "", true, []byte(draftBody))
		if err != nil {
			t.Fatal(err)
		}
		s.SubmitDraft(ctx, a, d.ID)
		d, err = s.ReviewDraft(ctx, a, d.ID, true, "")
		if err != nil {
			t.Fatal(err)
		}
		return d.CaseID
	}
	pay := account(t, s, "ana", "payments", incidentlib.RoleAdmin)
	search := account(t, s, "oz", "search", incidentlib.RoleAdmin)
	conf := account(t, s, "cy", "configured", incidentlib.RoleAdmin)
	s.SetIDRanges(DefaultPublicRange, map[string]IDRange{"configured": {From: 9100, To: 9149}})
	got := []string{publish(pay), publish(pay), publish(search), publish(conf), publish(search)}
	want := []string{"IL-9000", "IL-9001", "IL-9150", "IL-9100", "IL-9151"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("publication %d got %s, want %s (all: %v)", i+1, got[i], want[i], got)
		}
	}
}

// Importing the files again (after an upgrade) never brings back a case
// a maintainer withdrew, nor its purged text.
func TestImportLeavesWithdrawnCasesAlone(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	files := []incidentlib.StoredCase{caseFile("IL-0001", "title: one\n")}
	if _, err := s.Import(ctx, []byte("vocab"), files, "import"); err != nil {
		t.Fatal(err)
	}
	if err := s.Withdraw(ctx, "IL-0001", "maint", "wrong"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Purge(ctx, "IL-0001", "maint"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Import(ctx, nil, []incidentlib.StoredCase{caseFile("IL-0001", "title: one, changed\n")}, "import")
	if err != nil || res.Updated != 0 || res.Unchanged != 1 {
		t.Fatalf("import over a withdrawn case = %+v, %v; want it left alone", res, err)
	}
	if _, cases, _, _ := s.Snapshot(ctx); len(cases) != 0 {
		t.Errorf("the withdrawn case is back: %d cases", len(cases))
	}
	if vs, _ := s.Versions(ctx, "IL-0001"); len(vs) != 0 {
		t.Errorf("the import stored %d versions of a withdrawn case", len(vs))
	}
}
