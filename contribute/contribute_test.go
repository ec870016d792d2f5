package contribute

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/incidentlib/incidentlib"
)

// fakeWorkflow keeps drafts in memory; down makes every call fail as a
// store that does not answer.
type fakeWorkflow struct {
	accounts map[string]*incidentlib.Account // by token
	drafts   []*incidentlib.Draft
	down     bool
	// history holds the published versions of cases, oldest first.
	history map[string][]incidentlib.CaseVersion
}

var errDown = &incidentlib.Error{Code: incidentlib.EUNAVAILABLE, Message: "the library's database does not answer"}

func (f *fakeWorkflow) Authenticate(_ context.Context, tok string) (*incidentlib.Account, error) {
	if f.down {
		return nil, errDown
	}
	if a, ok := f.accounts[tok]; ok && !strings.HasPrefix(tok, "session-") {
		return a, nil
	}
	return nil, &incidentlib.Error{Code: incidentlib.EUNAUTHORIZED, Message: "the token is not valid"}
}

func (f *fakeWorkflow) CreateDraft(_ context.Context, a *incidentlib.Account, caseID string, private bool, content []byte) (*incidentlib.Draft, error) {
	if f.down {
		return nil, errDown
	}
	d := &incidentlib.Draft{ID: int64(len(f.drafts) + 1), CaseID: caseID, Private: private, Team: a.Team, Content: content, State: incidentlib.DraftOpen, Author: a.Name}
	f.drafts = append(f.drafts, d)
	return d, nil
}

func (f *fakeWorkflow) find(id int64) (*incidentlib.Draft, error) {
	if f.down {
		return nil, errDown
	}
	if id < 1 || int(id) > len(f.drafts) {
		return nil, &incidentlib.Error{Code: incidentlib.ENOTFOUND, Message: "no such draft"}
	}
	return f.drafts[id-1], nil
}

func (f *fakeWorkflow) UpdateDraft(_ context.Context, a *incidentlib.Account, id int64, content []byte) (*incidentlib.Draft, error) {
	d, err := f.find(id)
	if err == nil {
		d.Content = content
	}
	return d, err
}
func (f *fakeWorkflow) SubmitDraft(_ context.Context, a *incidentlib.Account, id int64) (*incidentlib.Draft, error) {
	d, err := f.find(id)
	if err == nil {
		d.State = incidentlib.DraftSubmitted
	}
	return d, err
}
func (f *fakeWorkflow) ReviewDraft(_ context.Context, a *incidentlib.Account, id int64, approve bool, note string) (*incidentlib.Draft, error) {
	return f.find(id)
}
func (f *fakeWorkflow) FindDraft(_ context.Context, a *incidentlib.Account, id int64) (*incidentlib.Draft, error) {
	return f.find(id)
}
func (f *fakeWorkflow) ListDrafts(context.Context, *incidentlib.Account, string, int) ([]*incidentlib.Draft, bool, error) {
	return f.drafts, false, nil
}
func (f *fakeWorkflow) CaseHistory(_ context.Context, _ *incidentlib.Account, id string) ([]incidentlib.CaseVersion, error) {
	if vs, ok := f.history[id]; ok {
		return vs, nil
	}
	return nil, &incidentlib.Error{Code: incidentlib.ENOTFOUND, Message: "no such case"}
}
func (f *fakeWorkflow) SessionAccount(_ context.Context, tok string) (*incidentlib.Account, error) {
	if f.down {
		return nil, errDown
	}
	if a, ok := f.accounts[tok]; ok && strings.HasPrefix(tok, "session-") {
		return a, nil
	}
	return nil, &incidentlib.Error{Code: incidentlib.EUNAUTHORIZED, Message: "the session has ended"}
}

func (f *fakeWorkflow) StartSession(ctx context.Context, tok string) (*incidentlib.Account, string, time.Time, error) {
	a, err := f.Authenticate(ctx, tok)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	f.accounts["session-"+a.Name] = a
	return a, "session-" + a.Name, time.Now().Add(time.Hour), nil
}
func (f *fakeWorkflow) EndSession(_ context.Context, tok string) error {
	delete(f.accounts, tok)
	return nil
}

// validate finds one problem: a root cause that is not a slug.
func validate(content []byte, id string) []incidentlib.Problem {
	for i, l := range strings.Split(string(content), "\n") {
		if strings.HasPrefix(l, "root_cause: bad") {
			return []incidentlib.Problem{{Line: i + 1, Message: `unknown root cause "bad"`}}
		}
	}
	return nil
}

func newTest() (*Handler, *fakeWorkflow) {
	wf := &fakeWorkflow{accounts: map[string]*incidentlib.Account{
		"tok-ana": {ID: 1, Name: "ana", Team: "payments", Role: incidentlib.RoleSubmitter},
	}}
	return New(Config{Workflow: wf, Validate: validate}), wf
}

func do(h http.Handler, method, target string, form url.Values, cookie string, hdr map[string]string) *http.Response {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie})
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func bodyOf(r *http.Response) string { b, _ := io.ReadAll(r.Body); return string(b) }

func TestWebSignInAndForms(t *testing.T) {
	h, wf := newTest()
	if r := do(h, "GET", "/drafts", nil, "", nil); r.StatusCode != 303 || !strings.HasPrefix(r.Header.Get("Location"), "/account/sign-in?next=%2Fdrafts") {
		t.Fatalf("drafts signed out: %d %s, want a redirect to sign in", r.StatusCode, r.Header.Get("Location"))
	}
	r := do(h, "POST", "/account/sign-in", url.Values{"token": {"wrong"}}, "", nil)
	if r.StatusCode != 401 || !strings.Contains(bodyOf(r), "not valid") {
		t.Errorf("sign in with a wrong token: %d", r.StatusCode)
	}
	r = do(h, "POST", "/account/sign-in", url.Values{"token": {"tok-ana"}, "next": {"https://evil.example/"}}, "", nil)
	var session *http.Cookie
	for _, c := range r.Cookies() {
		if c.Name == sessionCookie {
			session = c
		}
	}
	if r.StatusCode != 303 || session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || r.Header.Get("Location") != "/drafts" {
		t.Fatalf("sign in: %d, cookie %+v, location %q; want a strict HttpOnly session and no redirect off the site", r.StatusCode, session, r.Header.Get("Location"))
	}
	csrf := csrfToken(session.Value)
	content := "title: t\nroot_cause: software-bug\n"
	if r := do(h, "POST", "/drafts", url.Values{"content": {content}}, session.Value, nil); r.StatusCode != 403 || len(wf.drafts) != 0 {
		t.Errorf("a form without its token: %d, %d drafts; want 403 and nothing written", r.StatusCode, len(wf.drafts))
	}
	if r := do(h, "POST", "/drafts", url.Values{"content": {content}, "csrf": {csrf}}, session.Value, map[string]string{"Origin": "https://evil.example"}); r.StatusCode != 403 {
		t.Errorf("a form from another site: %d, want 403", r.StatusCode)
	}
	r = do(h, "POST", "/drafts", url.Values{"content": {"title: t\nroot_cause: bad\n"}, "csrf": {csrf}}, session.Value, nil)
	if b := bodyOf(r); r.StatusCode != 400 || !strings.Contains(b, "line 2: unknown root cause") || !strings.Contains(b, "root_cause: bad") {
		t.Errorf("an invalid draft: %d, want 400 naming line 2 and keeping the text", r.StatusCode)
	}
	r = do(h, "POST", "/drafts", url.Values{"content": {content}, "csrf": {csrf}}, session.Value, nil)
	if r.StatusCode != 303 || r.Header.Get("Location") != "/drafts/1" || len(wf.drafts) != 1 {
		t.Fatalf("create: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	if r := do(h, "GET", "/drafts/1", nil, session.Value, nil); r.StatusCode != 200 || !strings.Contains(bodyOf(r), "Submit for review") {
		t.Errorf("draft page: %d", r.StatusCode)
	}
	if r := do(h, "POST", "/account/sign-out", url.Values{"csrf": {csrf}}, session.Value, nil); r.StatusCode != 303 {
		t.Errorf("sign out: %d", r.StatusCode)
	}
	if r := do(h, "GET", "/drafts", nil, session.Value, nil); r.StatusCode != 303 {
		t.Errorf("the session still works after sign-out: %d", r.StatusCode)
	}
}

func TestAPIErrors(t *testing.T) {
	h, wf := newTest()
	bearer := map[string]string{"Authorization": "Bearer tok-ana", "Content-Type": "application/json"}
	post := func(body string) *http.Response {
		r := httptest.NewRequest("POST", "/api/v1/drafts", strings.NewReader(body))
		for k, v := range bearer {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Result()
	}
	for _, tc := range []struct {
		body string
		code int
		want string
	}{
		{`{"content": "title: t\nroot_cause: bad\n"}`, 400, `"line":2`},
		{`{"content": ""}`, 400, "empty"},
		{`{"content": "x", "extra": 1}`, 400, "unknown field"},
		{`{"content": `, 400, "not complete JSON"},
		{`{"content": "` + strings.Repeat("a", maxBody+10) + `"}`, 413, "at most 1 MiB"},
		{`{"content": "` + strings.Repeat("a", 10<<20) + `"}`, 413, "too large"},
	} {
		r := post(tc.body)
		if b := bodyOf(r); r.StatusCode != tc.code || !strings.Contains(b, tc.want) || strings.Contains(b, "goroutine") {
			t.Errorf("POST %.40q: %d %s; want %d with %q", tc.body, r.StatusCode, b, tc.code, tc.want)
		}
	}
	wf.down = true
	r := post(`{"content": "title: t\n"}`)
	if r.StatusCode != 503 || r.Header.Get("Retry-After") == "" || !strings.Contains(bodyOf(r), "does not answer") {
		t.Errorf("a write with the store down: %d, Retry-After %q; want 503 with Retry-After", r.StatusCode, r.Header.Get("Retry-After"))
	}
	r = do(h, "DELETE", "/api/v1/drafts", nil, "", bearer)
	if r.StatusCode != 405 {
		t.Errorf("DELETE /api/v1/drafts: %d, want 405", r.StatusCode)
	}
}

func TestByTeam(t *testing.T) {
	h, _ := newTest()
	public := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		io.WriteString(w, "public")
	})
	router := h.ByTeam(public, func(team string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "public, max-age=300")
			io.WriteString(w, "team "+team)
		})
	})
	if r := do(router, "GET", "/search", nil, "", nil); bodyOf(r) != "public" {
		t.Error("an anonymous reader did not get the public library")
	}
	r := do(router, "GET", "/api/v1/cases", nil, "", map[string]string{"Authorization": "Bearer tok-ana"})
	if bodyOf(r) != "team payments" || r.Header.Get("Cache-Control") != "private, no-store" || !strings.Contains(r.Header.Get("Vary"), "Authorization") {
		t.Errorf("a team member: Cache-Control %q, Vary %q; want the team's library, private", r.Header.Get("Cache-Control"), r.Header.Get("Vary"))
	}
	if r := do(router, "GET", "/api/v1/cases", nil, "", map[string]string{"Authorization": "Bearer forged"}); r.StatusCode != 401 {
		t.Errorf("a forged bearer token: %d, want 401", r.StatusCode)
	}
	if r := do(router, "GET", "/search", nil, "stale-session", nil); bodyOf(r) != "public" {
		t.Error("a stale session cookie did not read as signed out")
	}
}

// Issue 21: the JSON write API took the session cookie with no Origin
// check and any Content-Type, so another site's page could publish as a
// signed-in reviewer.
func TestCookieWritesRefuseOtherSites(t *testing.T) {
	h, wf := newTest()
	r := do(h, "POST", "/account/sign-in", url.Values{"token": {"tok-ana"}}, "", nil)
	var session string
	for _, c := range r.Cookies() {
		if c.Name == sessionCookie {
			session = c.Value
		}
	}
	if session == "" {
		t.Fatal("no session")
	}
	body := `{"content": "title: t\n"}`
	send := func(hdr map[string]string, body string) *http.Response {
		req := httptest.NewRequest("POST", "http://lib.example/api/v1/drafts", strings.NewReader(body))
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: session})
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Result()
	}
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		code int
	}{
		{"a cross-site fetch", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403},
		{"a same-site page on another port", map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403},
		{"an old browser from another origin", map[string]string{"Content-Type": "application/json", "Origin": "http://lib.example:8081"}, 403},
		{"a form post (text/plain)", map[string]string{"Content-Type": "text/plain"}, 415},
		{"a form post (urlencoded)", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
	} {
		if r := send(tc.hdr, body); r.StatusCode != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.name, r.StatusCode, bodyOf(r), tc.code)
		}
	}
	if len(wf.drafts) != 0 {
		t.Fatalf("%d drafts written from other sites", len(wf.drafts))
	}
	if r := send(map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-origin"}, body); r.StatusCode != 201 {
		t.Errorf("the site's own page: %d %s, want 201", r.StatusCode, bodyOf(r))
	}
	// A body-less write by cookie must still say JSON (a form can send none).
	if r := send(map[string]string{"Content-Type": "text/plain"}, ""); r.StatusCode != 415 {
		t.Errorf("a body-less cookie write as text/plain: %d, want 415", r.StatusCode)
	}
	// Scripts with a token need no Origin, but a body is JSON.
	req := httptest.NewRequest("POST", "/api/v1/drafts", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok-ana")
	req.Header.Set("Content-Type", "text/plain")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 415 {
		t.Errorf("a token's write as text/plain: %d, want 415", w.Code)
	}
	// A session is not a Bearer token.
	req = httptest.NewRequest("GET", "/api/v1/account", nil)
	req.Header.Set("Authorization", "Bearer "+session)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 401 {
		t.Errorf("a session as a Bearer token: %d, want 401", w.Code)
	}
}

func TestWebFormTooLargeAndRedirects(t *testing.T) {
	h, _ := newTest()
	r := do(h, "POST", "/account/sign-in", url.Values{"token": {"tok-ana"}}, "", nil)
	session := r.Cookies()[0].Value
	r = do(h, "POST", "/drafts", url.Values{"content": {strings.Repeat("a", 10<<20)}, "csrf": {csrfToken(session)}}, session, nil)
	if b := bodyOf(r); r.StatusCode != 413 || !strings.Contains(b, "too large") {
		t.Errorf("a 10 MB form: %d, want 413 saying it is too large", r.StatusCode)
	}
	for next, want := range map[string]string{
		"/drafts/3":             "/drafts/3",
		"/%09/evil.example":     "/drafts",
		"/\t/evil.example":      "/drafts",
		"/\n/evil.example":      "/drafts",
		"//evil.example":        "/drafts",
		"/\\evil.example":       "/drafts",
		"https://evil.example/": "/drafts",
		"/search?q=db&page=2":   "/search?q=db&page=2",
	} {
		next, _ = url.PathUnescape(strings.ReplaceAll(strings.ReplaceAll(next, "\\t", "%09"), "\\n", "%0A"))
		if got := safeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
	// A session does not sign in again for a fresh one.
	r = do(h, "POST", "/account/sign-in", url.Values{"token": {session}}, "", nil)
	if r.StatusCode != 401 {
		t.Errorf("signing in with a session: %d, want 401", r.StatusCode)
	}
}

// Issue 21 (low): during a database outage signed-in readers lost their
// team's private cases (cookie users silently). A token or session the
// store accepted shortly before is taken on trust while it does not
// answer; one it refused is not.
func TestSignedInReadsOutliveAnOutage(t *testing.T) {
	h, wf := newTest()
	router := h.ByTeam(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "public") }),
		func(team string) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "team "+team) })
		})
	r := do(h, "POST", "/account/sign-in", url.Values{"token": {"tok-ana"}}, "", nil)
	session := r.Cookies()[0].Value
	bearer := map[string]string{"Authorization": "Bearer tok-ana"}
	if b := bodyOf(do(router, "GET", "/search", nil, session, nil)); b != "team payments" {
		t.Fatalf("signed in: %q", b)
	}
	do(router, "GET", "/api/v1/cases", nil, "", bearer)
	wf.down = true
	if b := bodyOf(do(router, "GET", "/search", nil, session, nil)); b != "team payments" {
		t.Errorf("a session during an outage reads %q, want its team's library", b)
	}
	if r := do(router, "GET", "/api/v1/cases", nil, "", bearer); bodyOf(r) != "team payments" {
		t.Errorf("a token during an outage: %d", r.StatusCode)
	}
	if r := do(router, "GET", "/api/v1/cases", nil, "", map[string]string{"Authorization": "Bearer tok-never-seen"}); r.StatusCode != 503 {
		t.Errorf("a token never seen, during an outage: %d, want 503", r.StatusCode)
	}
	wf.down = false
	delete(wf.accounts, "tok-ana") // revoked
	if r := do(router, "GET", "/api/v1/cases", nil, "", bearer); r.StatusCode != 401 {
		t.Errorf("a revoked token: %d, want 401", r.StatusCode)
	}
	wf.down = true
	if r := do(router, "GET", "/api/v1/cases", nil, "", bearer); r.StatusCode == 200 {
		t.Error("a token refused before the outage is trusted during it")
	}
}

// A form can be checked without saving (no script needed): problems come
// back at their lines, a clean file says so, and nothing is written.
func TestCheckWithoutSaving(t *testing.T) {
	h, wf := newTest()
	r := do(h, "POST", "/account/sign-in", url.Values{"token": {"tok-ana"}}, "", nil)
	session := r.Cookies()[0].Value
	csrf := csrfToken(session)
	r = do(h, "POST", "/drafts", url.Values{"content": {"title: t\nroot_cause: bad\n"}, "csrf": {csrf}, "action": {"check"}}, session, nil)
	if b := bodyOf(r); r.StatusCode != 400 || !strings.Contains(b, "line 2: unknown root cause") {
		t.Errorf("checking a bad file: %d", r.StatusCode)
	}
	r = do(h, "POST", "/drafts", url.Values{"content": {"title: t\n"}, "csrf": {csrf}, "action": {"check"}}, session, nil)
	if b := bodyOf(r); r.StatusCode != 200 || !strings.Contains(b, "No problems found") || !strings.Contains(b, "title: t") {
		t.Errorf("checking a good file: %d", r.StatusCode)
	}
	if len(wf.drafts) != 0 {
		t.Errorf("a check saved %d drafts", len(wf.drafts))
	}
}

func TestSideBySide(t *testing.T) {
	lines, _ := Diff("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n")
	rows := SideBySide(lines)
	want := []DiffRow{
		{" ", "a", " ", "a", 0},
		{"-", "b", "+", "B", 0},
		{" ", "c", " ", "c", 0},
		{" ", "d", " ", "d", 0},
		{"", "", "+", "e", 0},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows = %+v", rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
}
