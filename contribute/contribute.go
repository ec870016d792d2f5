// Package contribute is the write path of a shared library over HTTP: the
// JSON endpoints that scripts use to write, submit and review drafts, the
// contributor pages that people use for the same (a form with one field
// per key of the case format, checked as it is typed, a YAML view, a
// preview, a side-by-side review), sign-in, and the router that shows a
// signed-in team its private cases. It depends only on the domain: the
// Workflow it is given checks roles and teams and keeps every version, and
// the Site it is given (web.Frame) draws its pages in the site's layout.
package contribute

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/httpx"
)

// Config configures the write path.
type Config struct {
	Workflow incidentlib.Workflow
	// Validate checks a case file as it will be published: given the ID
	// on its parsed document (a placeholder for a new case), as the
	// validator checks files. Problems are at the lines the author wrote.
	Validate func(content []byte, id string) []incidentlib.Problem
	Logger   *slog.Logger
	// RateLimit and RateBurst bound requests per account (0: no limit).
	RateLimit float64
	RateBurst int
	// SecureCookies marks the session cookie Secure (serve over HTTPS).
	SecureCookies bool
	// Vocabulary gives the form's pickers their terms and definitions.
	Vocabulary func() *incidentlib.Vocabulary
	// Parse reads a case file as it will be published (with the ID it
	// will have), for the preview: the case, or nil when the file is not
	// a case at all, and its problems.
	Parse func(content []byte, id string) (*incidentlib.Case, []incidentlib.Problem)
	// Site renders the pages in the site's layout and the preview with
	// the case page's template. Without it the pages have a plain layout
	// of their own and no preview.
	Site Site
}

// Limits on what one request may send.
const (
	maxBody        = 1 << 20 // a case file is at most 1 MiB
	sessionCookie  = "incidentlib_session"
	placeholderID  = "IL-0000"
	bearerPrefix   = "Bearer "
	retryAfterDown = "30"
)

// Handler serves the write path. Mount it on the paths Patterns lists.
type Handler struct {
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux
	limiter *httpx.RateLimiter
	cop     *http.CrossOriginProtection
	memo    authMemo
}

// Patterns are the URL patterns the handler answers; the server mounts
// each on its mux, beside the read-only protocols.
var Patterns = []string{
	"/api/v1/drafts", "/api/v1/drafts/", "/api/v1/account",
	"/api/v1/cases/{id}/history",
	"/account/", "/drafts", "/drafts/", "/cases/{id}/history",
}

// New returns the write path's handler.
func New(cfg Config) *Handler {
	h := &Handler{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), cop: http.NewCrossOriginProtection()}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if cfg.RateLimit > 0 {
		h.limiter = httpx.NewRateLimiter(cfg.RateLimit, cfg.RateBurst)
	}
	m := h.mux
	m.HandleFunc("GET /api/v1/account", h.api(h.apiAccount))
	m.HandleFunc("GET /api/v1/drafts", h.api(h.apiListDrafts))
	m.HandleFunc("POST /api/v1/drafts", h.api(h.apiCreateDraft))
	m.HandleFunc("GET /api/v1/drafts/{id}", h.api(h.apiGetDraft))
	m.HandleFunc("PUT /api/v1/drafts/{id}", h.api(h.apiUpdateDraft))
	m.HandleFunc("POST /api/v1/drafts/{id}/submit", h.api(h.apiSubmitDraft))
	m.HandleFunc("POST /api/v1/drafts/{id}/review", h.api(h.apiReviewDraft))
	m.HandleFunc("GET /api/v1/cases/{id}/history", h.api(h.apiHistory))
	h.routeWeb(m)
	m.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, &incidentlib.Error{Code: "method", Message: "this endpoint does not take " + r.Method})
	})
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "private, no-store")
	h.mux.ServeHTTP(w, r)
}

// authenticate finds the account of a request: an Authorization bearer
// token, else the session cookie. It returns nil and no error when the
// request carries neither. When the store does not answer (or not within
// authTimeout), a token or session the store accepted within the last
// authMemoFor is taken as it was, so signed-in readers keep their team's
// cases through a database outage (writes fail anyway).
func (h *Handler) authenticate(r *http.Request) (*incidentlib.Account, string, error) {
	ctx, cancel := context.WithTimeout(r.Context(), authTimeout)
	defer cancel()
	if auth := r.Header.Get("Authorization"); auth != "" {
		if !strings.HasPrefix(auth, bearerPrefix) {
			return nil, "", &incidentlib.Error{Code: incidentlib.EUNAUTHORIZED, Message: "the Authorization header must be \"Bearer <token>\""}
		}
		tok := strings.TrimSpace(auth[len(bearerPrefix):])
		a, err := h.memo.check(tok, false, func() (*incidentlib.Account, error) { return h.cfg.Workflow.Authenticate(ctx, tok) })
		return remembered(r, a, "", err)
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		a, err := h.memo.check(c.Value, true, func() (*incidentlib.Account, error) { return h.cfg.Workflow.SessionAccount(ctx, c.Value) })
		return remembered(r, a, c.Value, err)
	}
	return nil, "", nil
}

// remembered lets a read through on an account taken from memory, and
// ends a write at once: the store that did not answer the sign-in would
// not answer the write.
func remembered(r *http.Request, a *incidentlib.Account, session string, err error) (*incidentlib.Account, string, error) {
	if errors.Is(err, errRemembered) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return nil, "", errStale
		}
		return a, session, nil
	}
	if err != nil {
		return nil, "", err
	}
	return a, session, nil
}

// How long a sign-in check may take, and how long a token the store
// accepted is taken on trust while the store does not answer.
const (
	authTimeout = 2 * time.Second
	authMemoFor = 10 * time.Minute
	maxAuthMemo = 10000
)

// authMemo remembers the accounts of the tokens and sessions the store
// accepted last, by the tokens' hashes (never the tokens themselves).
type authMemo struct {
	mu sync.Mutex
	m  map[[32]byte]authEntry
}

type authEntry struct {
	a       *incidentlib.Account
	session bool
	at      time.Time
}

// errStale is what a write gets when its sign-in could only be taken from
// memory: the store did not answer, so the write would not either.
// errRemembered tells authenticate the account came from memory.
var errRemembered = errors.New("remembered")

var errStale = &incidentlib.Error{Code: incidentlib.EUNAVAILABLE, Message: "the library's database does not answer; reading works, writing does not: try again in a minute"}

func (m *authMemo) check(token string, session bool, ask func() (*incidentlib.Account, error)) (*incidentlib.Account, error) {
	key := sha256.Sum256([]byte(token))
	a, err := ask()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[[32]byte]authEntry{}
	}
	switch {
	case err == nil:
		if len(m.m) >= maxAuthMemo {
			m.m = map[[32]byte]authEntry{}
		}
		m.m[key] = authEntry{a: a, session: session, at: time.Now()}
		return a, nil
	case incidentlib.ErrorCode(err) == incidentlib.EUNAVAILABLE:
		if e, ok := m.m[key]; ok && e.session == session && time.Since(e.at) < authMemoFor {
			return e.a, errRemembered
		}
	default:
		delete(m.m, key) // revoked, expired, disabled: forgotten at once
	}
	return nil, err
}

// allow applies the per-account rate limit.
func (h *Handler) allow(w http.ResponseWriter, a *incidentlib.Account) bool {
	if h.limiter == nil {
		return true
	}
	ok, retry := h.limiter.Allow("account:" + a.Name)
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retry.Round(time.Second)/time.Second))))
	}
	return ok
}

// apiHandler is an endpoint that needs a signed-in account.
type apiHandler func(w http.ResponseWriter, r *http.Request, a *incidentlib.Account) error

func (h *Handler) api(f apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h.checkWrite(w, r, r.Header.Get("Authorization") == ""); err != nil {
			writeProblem(w, err)
			return
		}
		a, _, err := h.authenticate(r)
		if err == nil && a == nil {
			err = &incidentlib.Error{Code: incidentlib.EUNAUTHORIZED, Message: "this endpoint needs a token: send Authorization: Bearer <token> (incidentlib token create)"}
		}
		if err == nil && !h.allow(w, a) {
			err = &incidentlib.Error{Code: "rate_limited", Message: "too many requests from this account; wait and try again"}
		}
		if err == nil {
			err = f(w, r, a)
		}
		if err != nil {
			h.logInternal(r, err)
			writeProblem(w, err)
		}
	}
}

// maxJSONBody bounds a JSON request: a case file of maxBody, escaped.
const maxJSONBody = 2*maxBody + 16<<10

// checkWrite guards a write of the JSON API. Every write with a body must
// say Content-Type: application/json (a cross-site form cannot, without a
// preflight the API never grants), and a body over the limit gets 413
// before it is read. A write that may be signed in by the session cookie
// (no Authorization header) must also pass the cross-origin check of
// Fetch metadata and Origin, and say application/json even without a
// body: the browser sends the cookie along with any site's request.
func (h *Handler) checkWrite(w http.ResponseWriter, r *http.Request, byCookie bool) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		return nil
	}
	if r.ContentLength > maxJSONBody {
		return &incidentlib.Error{Code: incidentlib.ETOOLARGE, Param: "body", Message: "the request body is too large: a case file is at most 1 MiB"}
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxJSONBody)
	hasBody := r.ContentLength > 0 || (r.ContentLength < 0 && r.Body != http.NoBody)
	if byCookie {
		if err := h.cop.Check(r); err != nil {
			return &incidentlib.Error{Code: incidentlib.EFORBIDDEN, Message: "a write signed in by the session cookie must come from this site's own pages"}
		}
	}
	if hasBody || byCookie {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt != "application/json" {
			return &incidentlib.Error{Code: "media_type", Param: "Content-Type", Message: "send the body as JSON, with Content-Type: application/json"}
		}
	}
	return nil
}

func (h *Handler) logInternal(r *http.Request, err error) {
	if incidentlib.ErrorCode(err) == incidentlib.EINTERNAL {
		h.log.Error("write path", "method", r.Method, "path", r.URL.Path, "err", err)
	}
}

// status maps the domain's error codes to HTTP statuses, in one place.
func status(err error) int {
	switch incidentlib.ErrorCode(err) {
	case incidentlib.EINVALID:
		return http.StatusBadRequest
	case incidentlib.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case incidentlib.ENOTFOUND:
		return http.StatusNotFound
	case incidentlib.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case incidentlib.EFORBIDDEN:
		return http.StatusForbidden
	case incidentlib.ECONFLICT:
		return http.StatusConflict
	case incidentlib.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case "rate_limited":
		return http.StatusTooManyRequests
	case "method":
		return http.StatusMethodNotAllowed
	case "media_type":
		return http.StatusUnsupportedMediaType
	}
	return http.StatusInternalServerError
}

// problemJSON is an RFC 9457 problem, with the case file's problems when a
// draft does not validate.
type problemJSON struct {
	Type     string        `json:"type"`
	Title    string        `json:"title"`
	Status   int           `json:"status"`
	Detail   string        `json:"detail"`
	Param    string        `json:"param,omitempty"`
	Problems []problemLine `json:"problems,omitempty"`
}

type problemLine struct {
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// invalidCase carries a case file's problems to the client.
type invalidCase struct{ problems []incidentlib.Problem }

func (e *invalidCase) Error() string { return "the case file has problems" }

func writeProblem(w http.ResponseWriter, err error) {
	p := problemJSON{Type: "about:blank", Detail: incidentlib.ErrorMessage(err)}
	var ic *invalidCase
	if errors.As(err, &ic) {
		p.Status, p.Param = http.StatusBadRequest, "content"
		p.Detail = fmt.Sprintf("the case file has %d problems; fix them and send it again", len(ic.problems))
		for _, q := range ic.problems {
			p.Problems = append(p.Problems, problemLine{Line: q.Line, Message: q.Message})
		}
	} else {
		p.Status = status(err)
		var e *incidentlib.Error
		if errors.As(err, &e) {
			p.Param = e.Param
		}
	}
	p.Title = http.StatusText(p.Status)
	if p.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfterDown)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(p)
}

func writeJSON(w http.ResponseWriter, code int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	return json.NewEncoder(w).Encode(v)
}

// draftJSON is a draft in the API.
type draftJSON struct {
	ID         int64     `json:"id"`
	CaseID     string    `json:"case_id,omitempty"`
	Private    bool      `json:"private"`
	Team       string    `json:"team,omitempty"`
	State      string    `json:"state"`
	Author     string    `json:"author"`
	Reviewer   string    `json:"reviewer,omitempty"`
	ReviewNote string    `json:"review_note,omitempty"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	Content    string    `json:"content"`
}

func toJSON(d *incidentlib.Draft) draftJSON {
	return draftJSON{ID: d.ID, CaseID: d.CaseID, Private: d.Private, Team: d.Team, State: d.State, Author: d.Author,
		Reviewer: d.Reviewer, ReviewNote: d.ReviewNote, Created: d.Created, Updated: d.Updated, Content: string(d.Content)}
}

// draftInput is what a client sends to create or change a draft.
type draftInput struct {
	CaseID  string `json:"case_id"`
	Private bool   `json:"private"`
	Content string `json:"content"`
}

func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &incidentlib.Error{Code: incidentlib.ETOOLARGE, Param: "body", Message: "the request body is too large: a case file is at most 1 MiB"}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return incidentlib.InvalidParam("body", "the body is not complete JSON")
		}
		var tooLong *json.SyntaxError
		if errors.As(err, &tooLong) {
			return incidentlib.InvalidParam("body", "the body is not JSON: %s", tooLong.Error())
		}
		return incidentlib.InvalidParam("body", "%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// checkContent validates a case file the way the validator does, with the
// ID it has or will get.
func (h *Handler) checkContent(content []byte, caseID string) error {
	if len(content) == 0 {
		return incidentlib.InvalidParam("content", "the case file is empty")
	}
	if len(content) > maxBody {
		return &incidentlib.Error{Code: incidentlib.ETOOLARGE, Param: "content", Message: "a case file is at most 1 MiB"}
	}
	id := caseID
	if id == "" {
		id = placeholderID
	}
	if ps := h.cfg.Validate(content, id); len(ps) > 0 {
		return &invalidCase{problems: ps}
	}
	return nil
}

func draftID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, incidentlib.InvalidParam("id", "%q is not a draft number", r.PathValue("id"))
	}
	return id, nil
}

func (h *Handler) apiAccount(w http.ResponseWriter, r *http.Request, a *incidentlib.Account) error {
	return writeJSON(w, http.StatusOK, map[string]string{"name": a.Name, "team": a.Team, "role": string(a.Role)})
}

func (h *Handler) apiListDrafts(w http.ResponseWriter, r *http.Request, a *incidentlib.Account) error {
	state := r.URL.Query().Get("state")
	switch state {
	case "", incidentlib.DraftOpen, incidentlib.DraftSubmitted, incidentlib.DraftPublished, incidentlib.DraftReturned:
	default:
		return incidentlib.InvalidParam("state", "unknown state %q: want draft, submitted, returned or published", state)
	}
	page, err := pageParam(r)
	if err != nil {
		return err
	}
	ds, more, err := h.cfg.Workflow.ListDrafts(r.Context(), a, state, page)
	if err != nil {
		return err
	}
	out := make([]draftJSON, len(ds))
	for i, d := range ds {
		out[i] = toJSON(d)
	}
	body := map[string]any{"drafts": out}
	if more {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(page+1))
		body["next"] = "/api/v1/drafts?" + q.Encode()
	}
	return writeJSON(w, http.StatusOK, body)
}

// pageParam reads ?page=N (from 1).
func pageParam(r *http.Request) (int, error) {
	p := r.URL.Query().Get("page")
	if p == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 100000 {
		return 0, incidentlib.InvalidParam("page", "%q is not a page number (1, 2, …)", p)
	}
	return n, nil
}

func (h *Handler) apiCreateDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account) error {
	var in draftInput
	if err := readJSON(r, &in); err != nil {
		return err
	}
	if err := h.checkContent([]byte(in.Content), in.CaseID); err != nil {
		return err
	}
	d, err := h.cfg.Workflow.CreateDraft(r.Context(), a, in.CaseID, in.Private, []byte(in.Content))
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/drafts/"+strconv.FormatInt(d.ID, 10))
	return writeJSON(w, http.StatusCreated, toJSON(d))
}

func (h *Handler) apiGetDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account) error {
	id, err := draftID(r)
	if err != nil {
		return err
	}
	d, err := h.cfg.Workflow.FindDraft(r.Context(), a, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toJSON(d))
}

func (h *Handler) apiUpdateDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account) error {
	id, err := draftID(r)
	if err != nil {
		return err
	}
	var in draftInput
	if err := readJSON(r, &in); err != nil {
		return err
	}
	d, err := h.cfg.Workflow.FindDraft(r.Context(), a, id)
	if err != nil {
		return err
	}
	if err := h.checkContent([]byte(in.Content), d.CaseID); err != nil {
		return err
	}
	d, err = h.cfg.Workflow.UpdateDraft(r.Context(), a, id, []byte(in.Content))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toJSON(d))
}

func (h *Handler) apiSubmitDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account) error {
	id, err := draftID(r)
	if err != nil {
		return err
	}
	d, err := h.cfg.Workflow.SubmitDraft(r.Context(), a, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toJSON(d))
}

// reviewInput is a reviewer's verdict.
type reviewInput struct {
	Approve bool   `json:"approve"`
	Note    string `json:"note"`
}

func (h *Handler) apiReviewDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account) error {
	id, err := draftID(r)
	if err != nil {
		return err
	}
	var in reviewInput
	if err := readJSON(r, &in); err != nil {
		return err
	}
	if len(in.Note) > 4000 {
		return incidentlib.InvalidParam("note", "a review note is at most 4,000 bytes")
	}
	d, err := h.review(r.Context(), a, id, in.Approve, in.Note)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toJSON(d))
}

// review checks a draft once more before it is published: the file it will
// be, with its final ID, must validate.
func (h *Handler) review(ctx context.Context, a *incidentlib.Account, id int64, approve bool, note string) (*incidentlib.Draft, error) {
	if approve {
		d, err := h.cfg.Workflow.FindDraft(ctx, a, id)
		if err != nil {
			return nil, err
		}
		if err := h.checkContent(d.Content, d.CaseID); err != nil {
			return nil, err
		}
	}
	return h.cfg.Workflow.ReviewDraft(ctx, a, id, approve, note)
}

// versionJSON is one version of a case, with what changed from the one
// before.
type versionJSON struct {
	Version int        `json:"version"`
	By      string     `json:"by"`
	At      time.Time  `json:"at"`
	Diff    []DiffLine `json:"diff,omitempty"`
	Content string     `json:"content"`
}

func (h *Handler) history(ctx context.Context, a *incidentlib.Account, id string) ([]versionJSON, error) {
	vs, err := h.cfg.Workflow.CaseHistory(ctx, a, id)
	if err != nil {
		return nil, err
	}
	out := make([]versionJSON, len(vs))
	prev := ""
	for i, v := range vs {
		out[i] = versionJSON{Version: v.Version, By: v.By, At: v.At, Content: string(v.Content)}
		if i > 0 {
			out[i].Diff, _ = Diff(prev, string(v.Content))
		}
		prev = string(v.Content)
	}
	return out, nil
}

func (h *Handler) apiHistory(w http.ResponseWriter, r *http.Request, a *incidentlib.Account) error {
	out, err := h.history(r.Context(), a, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"case_id": r.PathValue("id"), "versions": out})
}

// csrfToken is the form token of a session: derived from the session
// token, so it needs no storage, and useless without the cookie.
func csrfToken(session string) string {
	sum := sha256.Sum256([]byte("csrf\x00" + session))
	return hex.EncodeToString(sum[:16])
}

func validCSRF(session, got string) bool {
	return session != "" && subtle.ConstantTimeCompare([]byte(csrfToken(session)), []byte(got)) == 1
}
