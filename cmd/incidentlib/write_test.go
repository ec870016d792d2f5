package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib/pgstore/pgstoretest"
)

// token makes an account and returns a token for it, through the commands
// an administrator runs.
func token(t *testing.T, url, name, team, role string) string {
	t.Helper()
	args := []string{"user", "add", name, "--role", role, "--store", url}
	if team != "" {
		args = append(args, "--team", team)
	}
	if code, _, errOut := run(t, args...); code != 0 {
		t.Fatalf("user add %s: %s", name, errOut)
	}
	code, out, errOut := run(t, "token", "create", name, "--ttl", "1d", "--store", url)
	if code != 0 {
		t.Fatalf("token create %s: %s", name, errOut)
	}
	return strings.TrimSpace(out)
}

func draftJSONBody(content string, private bool) string {
	b, _ := json.Marshal(map[string]any{"content": content, "private": private})
	return string(b)
}

// A team writes a private case through the API, a reviewer publishes it,
// and only that team finds it: not anonymous readers, not another team,
// in search, the case page, facets, similar cases or exports.
func TestWritePathEndToEnd(t *testing.T) {
	url := pgstoretest.Database(t)
	if code, _, errOut := run(t, "import", "--store", url); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	ana := token(t, url, "ana", "payments", "submitter")
	rui := token(t, url, "rui", "payments", "reviewer")
	oz := token(t, url, "oz", "search", "admin")
	rita := token(t, url, "rita", "payments", "reader")
	base := startServe(t, "--store", url, "--team-ids", "payments=9500-9599")

	privateCase := strings.Replace(strings.ReplaceAll(newCase, "quokka", "numbat"), "id: IL-9700\n", "", 1)

	// Who may write.
	if code, _, _ := fetch(t, "POST", base+"/api/v1/drafts", "", draftJSONBody(privateCase, true)); code != 401 {
		t.Errorf("anonymous draft: %d, want 401", code)
	}
	if code, _, _ := fetch(t, "POST", base+"/api/v1/drafts", rita, draftJSONBody(privateCase, true)); code != 403 {
		t.Errorf("a reader's draft: %d, want 403", code)
	}
	if code, _, _ := fetch(t, "POST", base+"/api/v1/drafts", "ilt_forged", draftJSONBody(privateCase, true)); code != 401 {
		t.Errorf("a forged token's draft: %d, want 401", code)
	}
	// The validator's problems come back per line.
	code, body, _ := fetch(t, "POST", base+"/api/v1/drafts", ana, draftJSONBody(strings.Replace(privateCase, "software-bug", "sofware-bug", 1), true))
	if code != 400 || !strings.Contains(body, `"line":6`) || !strings.Contains(body, "software-bug") {
		t.Errorf("an invalid draft: %d %s; want 400 naming line 6 and the right slug", code, body)
	}
	code, body, _ = fetch(t, "POST", base+"/api/v1/drafts", ana, draftJSONBody(privateCase, true))
	if code != 201 {
		t.Fatalf("create draft: %d %s", code, body)
	}
	var d struct {
		ID     int64  `json:"id"`
		CaseID string `json:"case_id"`
		State  string `json:"state"`
	}
	json.Unmarshal([]byte(body), &d)
	draft := base + "/api/v1/drafts/" + itoa(d.ID)
	if code, _, _ := fetch(t, "GET", draft, oz, ""); code != 404 {
		t.Errorf("another team reads the draft: %d, want 404", code)
	}
	if code, body, _ := fetch(t, "POST", draft+"/submit", ana, ""); code != 200 || !strings.Contains(body, `"submitted"`) {
		t.Fatalf("submit: %d %s", code, body)
	}
	// The contributor pages are in the site's layout, and a reviewer sees
	// the draft as its case page will be.
	if code, body, _ := fetch(t, "GET", base+"/drafts/"+itoa(d.ID)+"/preview", rui, ""); code != 200 ||
		!strings.Contains(body, `<article class="case">`) || !strings.Contains(body, "numbat") || !strings.Contains(body, `class="wrap site-nav"`) {
		t.Errorf("the reviewer's preview: %d\n%s", code, body)
	}
	if code, body, _ := fetch(t, "GET", base+"/drafts/new", ana, ""); code != 200 || !strings.Contains(body, `name="summary"`) ||
		!strings.Contains(body, `<a href="/drafts" aria-current="page">Contribute</a>`) || !strings.Contains(body, `value="config-change"`) {
		t.Errorf("the contributor form: %d\n%s", code, body)
	}
	if code, body, _ := fetch(t, "GET", base+"/cases/IL-0561", "", ""); code != 200 || !strings.Contains(body, `href="/drafts/new?case=IL-0561"`) {
		t.Errorf("a case page of a library that takes contributions offers no edit: %d", code)
	}
	if code, _, _ := fetch(t, "POST", draft+"/review", ana, `{"approve":true}`); code != 403 {
		t.Errorf("the author approves: %d, want 403", code)
	}
	if code, _, _ := fetch(t, "POST", draft+"/review", oz, `{"approve":true}`); code != 404 {
		t.Errorf("another team's admin approves: %d, want 404", code)
	}
	code, body, _ = fetch(t, "POST", draft+"/review", rui, `{"approve":true,"note":"ok"}`)
	if code != 200 || !strings.Contains(body, `"case_id":"IL-9500"`) {
		t.Fatalf("approve: %d %s; want the first number of the team's range", code, body)
	}

	// Searchable by the team within moments; nobody else ever sees it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body, _ := fetch(t, "GET", base+"/api/v1/cases?q=numbat", rita, "")
		if strings.Contains(body, "IL-9500") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the team never found its published case: %s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, who := range []struct{ name, token string }{{"anonymous", ""}, {"another team", oz}} {
		for _, path := range []string{"/api/v1/cases?q=numbat", "/api/v1/cases/IL-9500", "/search?q=numbat", "/cases/IL-9500",
			"/api/v1/cases?root_cause=software-bug&per_page=100", "/api/v1/export/cases.jsonl", "/api/v1/cases/IL-0561/similar?k=50", "/feed.atom", "/sitemap.xml"} {
			_, body, _ := fetch(t, "GET", base+path, who.token, "")
			// The title is in no request, so an echo of the query or the
			// ID in an error message does not count.
			if strings.Contains(body, "made-up test outage of the numbat") {
				t.Errorf("%s sees the private case at %s", who.name, path)
			}
		}
	}
	// And through MCP: the team's agent finds it, nobody else's does.
	mcpSearch := func(tok string) string {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_incidents","arguments":{"query":"numbat"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if body := mcpSearch(rita); !strings.Contains(body, "IL-9500") {
		t.Errorf("the team's MCP search does not find its case: %.300s", body)
	}
	for _, tok := range []string{"", oz} {
		if body := mcpSearch(tok); strings.Contains(body, "made-up test outage of the numbat") || strings.Contains(body, "IL-9500") {
			t.Errorf("an MCP search by someone else finds the private case: %.300s", body)
		}
	}
	code, body, hdr := fetch(t, "GET", base+"/api/v1/cases/IL-9500", rita, "")
	if code != 200 || !strings.Contains(body, "numbat") || !strings.Contains(hdr.Get("Cache-Control"), "private") {
		t.Errorf("the team reads its case: %d, Cache-Control %q; want 200, private", code, hdr.Get("Cache-Control"))
	}
	// The history shows each version, with the diff of the edit.
	edit := strings.Replace(privateCase, "for an hour", "for two hours", 1)
	b, _ := json.Marshal(map[string]any{"content": "id: IL-9500\n" + edit, "case_id": "IL-9500"})
	code, body, _ = fetch(t, "POST", base+"/api/v1/drafts", ana, string(b))
	if code != 201 {
		t.Fatalf("edit draft: %d %s", code, body)
	}
	json.Unmarshal([]byte(body), &d)
	fetch(t, "POST", base+"/api/v1/drafts/"+itoa(d.ID)+"/submit", ana, "")
	fetch(t, "POST", base+"/api/v1/drafts/"+itoa(d.ID)+"/review", rui, `{"approve":true}`)
	code, body, _ = fetch(t, "GET", base+"/api/v1/cases/IL-9500/history", rita, "")
	if code != 200 || !strings.Contains(body, `"version":2`) || !strings.Contains(body, `"op":"+","text":"summary: The numbat scheduler stopped placing jobs for two hours."`) {
		t.Errorf("history: %d %s", code, body)
	}
	if code, _, _ := fetch(t, "GET", base+"/api/v1/cases/IL-9500/history", oz, ""); code != 404 {
		t.Errorf("another team reads the history: %d, want 404", code)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// PostgreSQL stops under read load: reads keep answering from the
// replica's index, writes get 503 with Retry-After, /readyz says degraded
// and stays 200; when the database returns, writes work again and the
// replica catches up, with no restart.
func TestServeThroughAnOutage(t *testing.T) {
	url := pgstoretest.Database(t)
	if code, _, errOut := run(t, "import", "--store", url); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	ana := token(t, url, "ana", "", "submitter")
	proxy, via := pgstoretest.NewProxy(t, url)
	base := startServe(t, "--store", via)
	proxy.Cut()
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, body, _ := fetch(t, "GET", base+"/readyz", "", "")
		if strings.Contains(body, "degraded") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never said degraded: %q", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for range 20 {
		if code, body, _ := fetch(t, "GET", base+"/api/v1/cases?q=database", "", ""); code != 200 || !strings.Contains(body, "IL-") {
			t.Fatalf("a read during the outage: %d", code)
		}
	}
	if code, _, _ := fetch(t, "GET", base+"/readyz", "", ""); code != 200 {
		t.Errorf("/readyz during the outage: %d, want 200 (reads still work)", code)
	}
	start := time.Now()
	code, _, hdr := fetch(t, "POST", base+"/api/v1/drafts", ana, draftJSONBody(strings.Replace(newCase, "id: IL-9700\n", "", 1), false))
	if code != 503 || hdr.Get("Retry-After") == "" {
		t.Errorf("a write during the outage: %d, Retry-After %q; want 503 with Retry-After", code, hdr.Get("Retry-After"))
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("the refused write took %v; it should fail fast", d)
	}
	proxy.Restore(t)
	deadline = time.Now().Add(20 * time.Second)
	for {
		_, body, _ := fetch(t, "GET", base+"/readyz", "", "")
		if !strings.Contains(body, "degraded") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still degraded after the database came back: %q", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, body, _ := fetch(t, "POST", base+"/api/v1/drafts", ana, draftJSONBody(strings.Replace(newCase, "id: IL-9700\n", "", 1), false)); code != 201 {
		t.Errorf("a write after recovery: %d %s", code, body)
	}
}

func TestParseIDRanges(t *testing.T) {
	r, err := parseIDRanges("5000-8999", []string{"payments=9000-9099", "search=9100-9199"})
	if err != nil || r.public.From != 5000 || r.teams["search"].To != 9199 {
		t.Fatalf("parseIDRanges = %+v, %v", r, err)
	}
	for _, bad := range [][]string{{"5000-4000"}, {"0-10"}, {"5000-8999", "payments=8000-9100"}, {"5000-8999", "=9000-9100"}, {"x"}} {
		if _, err := parseIDRanges(bad[0], bad[1:]); err == nil {
			t.Errorf("parseIDRanges(%q) accepted", bad)
		}
	}
	if code, _, errOut := run(t, "serve", "--store", "postgres://x", "--team-ids", "payments=1-99999"); code != 2 || !strings.Contains(errOut, "--team-ids") {
		t.Errorf("serve with a bad range: exit %d, %s", code, errOut)
	}
}
