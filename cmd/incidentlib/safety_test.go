package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/pgstore"
	"github.com/incidentlib/incidentlib/pgstore/pgstoretest"
)

// waitFor polls a URL until its body contains want. The wait is long: a
// replica rebuilds its library for each change, which takes seconds on a
// loaded 2-core machine (TestMeasureStore measures it).
func waitFor(t *testing.T, what, url, token, want string) string {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		_, body, _ := fetch(t, "GET", url, token, "")
		if strings.Contains(body, want) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("never: %s (%s answers %.300q)", what, url, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Issue 21, High 1: a draft whose multi-line title held a line "id: x"
// published a case that loaded under another ID; two of them froze every
// replica and made restarts crash-loop.
func TestACraftedDraftCannotTakeTheReplicasDown(t *testing.T) {
	url := pgstoretest.Database(t)
	if code, _, errOut := run(t, "import", "--store", url); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	ana := token(t, url, "ana", "payments", "submitter")
	rui := token(t, url, "rui", "payments", "reviewer")
	base := startServe(t, "--store", url)

	crafted := strings.Replace(strings.Replace(newCase, "id: IL-9700\n", "", 1),
		"title: A made-up test outage of the quokka scheduler, published through one replica\n",
		"title: \"A made-up test outage of the quokka scheduler\nid: x\n with a line that looks like an id\"\n", 1) + "id: IL-0000\n"
	var ids []string
	for range 2 {
		code, body, _ := fetch(t, "POST", base+"/api/v1/drafts", ana, draftJSONBody(crafted, false))
		if code != 201 {
			t.Fatalf("create: %d %s", code, body)
		}
		var d struct {
			ID int64 `json:"id"`
		}
		jsonDecode(t, body, &d)
		fetch(t, "POST", base+"/api/v1/drafts/"+itoa(d.ID)+"/submit", ana, "")
		code, body, _ = fetch(t, "POST", base+"/api/v1/drafts/"+itoa(d.ID)+"/review", rui, `{"approve":true}`)
		if code != 200 {
			t.Fatalf("approve: %d %s", code, body)
		}
		var pub struct {
			CaseID string `json:"case_id"`
		}
		jsonDecode(t, body, &pub)
		ids = append(ids, pub.CaseID)
	}
	for _, id := range ids {
		body := waitFor(t, id+" served under its own ID", base+"/api/v1/cases/"+id, "", `"id":"`+id+`"`)
		if !strings.Contains(body, "with a line that looks like an id") {
			t.Errorf("%s lost its title: %.300s", id, body)
		}
	}
	if code, body, _ := fetch(t, "GET", base+"/readyz", "", ""); code != 200 || strings.TrimSpace(body) != "ready" {
		t.Errorf("/readyz after the crafted drafts: %d %q, want plain ready", code, body)
	}

	// A store that holds bad rows all the same (written by hand, or by an
	// older version): a replica starts on the good ones and says so.
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bad := strings.Replace(newCase, "IL-9700", "IL-0001", 1)
	if _, err := st.Import(context.Background(), nil, []incidentlib.StoredCase{
		{ID: "IL-5100", Name: "IL-5100.yaml", Content: []byte(bad)},
		{ID: "IL-5101", Name: "IL-5101.yaml", Content: []byte(bad + "# another\n")},
	}, "hand"); err != nil {
		t.Fatal(err)
	}
	// The running replica skips them loudly and goes on applying changes.
	waitFor(t, "the running replica reports the bad rows", base+"/readyz", "", "2 cases in the store are left out")
	restarted := serveForTest(t, "--log-level", "warn", "--store", url)
	restarted.waitReady()
	code, body, _ := fetch(t, "GET", restarted.Base+"/readyz", "", "")
	if code != 200 || !strings.Contains(body, "IL-5100 (its file's id is \"IL-0001\", not IL-5100)") {
		t.Errorf("/readyz of a replica started over bad rows: %d %q", code, body)
	}
	if code, _, _ := fetch(t, "GET", restarted.Base+"/api/v1/cases/"+ids[0], "", ""); code != 200 {
		t.Errorf("the restarted replica does not serve %s: %d", ids[0], code)
	}
	_, metrics, _ := fetch(t, "GET", restarted.Base+"/metrics", "", "")
	if !strings.Contains(metrics, "incidentlib_store_cases_left_out 2") {
		t.Errorf("metrics do not count the cases left out:\n%s", grepLines(metrics, "incidentlib_store"))
	}

	// A maintainer withdraws them; every replica drops them.
	for _, id := range []string{"IL-5100", "IL-5101"} {
		if code, _, errOut := run(t, "withdraw", id, "--reason", "written by hand with the wrong id", "--store", url); code != 0 {
			t.Fatalf("withdraw %s: %s", id, errOut)
		}
	}
	for _, b := range []string{base, restarted.Base} {
		waitFor(t, "the replica is plain ready again", b+"/readyz", "", "ready\n")
	}
	if code, _, errOut := run(t, "withdraw", ids[1], "--reason", "test", "--store", url); code != 0 {
		t.Fatalf("withdraw %s: %s", ids[1], errOut)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, _ := fetch(t, "GET", base+"/api/v1/cases/"+ids[1], "", "")
		if code == 404 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still served after its withdrawal: %d", ids[1], code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, _, errOut := run(t, "purge", ids[1], "--store", url); code != 0 || !strings.Contains(errOut, "1 old versions deleted") {
		t.Errorf("purge: %d %s", code, errOut)
	}
	if code, _, errOut := run(t, "withdraw", "IL-4040", "--reason", "x", "--store", url); code == 0 || !strings.Contains(errOut, "no published case IL-4040") {
		t.Errorf("withdrawing a case that is not there: %d %s", code, errOut)
	}
	if code, _, errOut := run(t, "user", "disable", "ana", "--store", url); code != 0 || !strings.Contains(errOut, "revoked") {
		t.Errorf("user disable: %d %s", code, errOut)
	}
	if code, _, _ := fetch(t, "GET", base+"/api/v1/account", ana, ""); code != 401 {
		t.Errorf("a disabled account's token: %d, want 401", code)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func jsonDecode(t *testing.T, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("%v: %.300s", err, body)
	}
}

// Issue 21 (low): serve --store exited when the database was down at
// start, so a rollout during a database outage crash-looped. It now
// listens, says it is starting, and becomes ready when the database does.
func TestServeStartsBeforeTheDatabaseAnswers(t *testing.T) {
	url := pgstoretest.Database(t)
	if code, _, errOut := run(t, "import", "--store", url); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	proxy, via := pgstoretest.NewProxy(t, url)
	proxy.Cut()
	s := serveForTest(t, "--log-level", "warn", "--store", via)
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body, _ := fetch(t, "GET", s.Base+"/readyz", "", "")
		if code == 503 && strings.Contains(body, "starting") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz with the database down at start: %d %q; want 503 starting", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // a retry or two
	if code, _, _ := fetch(t, "GET", s.Base+"/healthz", "", ""); code != 200 {
		t.Fatalf("/healthz while waiting for the database: %d; the process should live", code)
	}
	proxy.Restore(t)
	s.waitReady()
	if code, body, _ := fetch(t, "GET", s.Base+"/api/v1/cases/IL-0561", "", ""); code != 200 {
		t.Errorf("a read once the database came back: %d %.200s", code, body)
	}
}

// Issue 21, High 2: a draft save against a silent database hung for over
// three minutes. Through the server it now ends within seconds with a 503
// that says the database did not answer.
func TestADraftSaveAgainstASilentDatabaseEnds(t *testing.T) {
	url := pgstoretest.Database(t)
	if code, _, errOut := run(t, "import", "--store", url); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	ana := token(t, url, "ana", "", "submitter")
	proxy, via := pgstoretest.NewProxy(t, url)
	base := startServe(t, "--store", via)
	if code, _, _ := fetch(t, "GET", base+"/api/v1/account", ana, ""); code != 200 {
		t.Fatalf("account before the freeze: %d", code)
	}
	proxy.Freeze()
	defer proxy.Thaw()
	start := time.Now()
	code, body, hdr := fetch(t, "POST", base+"/api/v1/drafts", ana, draftJSONBody(strings.Replace(newCase, "id: IL-9700\n", "", 1), false))
	took := time.Since(start)
	t.Logf("the save against a silent database ended after %v", took.Round(time.Millisecond))
	if code != 503 || hdr.Get("Retry-After") == "" || !(strings.Contains(body, "did not answer") || strings.Contains(body, "does not answer")) {
		t.Errorf("a draft saved against a silent database: %d %s", code, body)
	}
	if took > 10*time.Second {
		t.Errorf("the save took %v; it should end within seconds", took)
	}
	// Reads go on meanwhile, from the replica's memory.
	if code, _, _ := fetch(t, "GET", base+"/api/v1/cases?q=database", "", ""); code != 200 {
		t.Errorf("a search while the database is silent: %d", code)
	}
}
