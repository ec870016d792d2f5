package contribute

import (
	"bytes"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/incidentlib/incidentlib"
)

//go:embed templates/*.html
var templateFiles embed.FS

var pages = template.Must(template.ParseFS(templateFiles, "templates/*.html"))

// page is what every write-path page gets.
type page struct {
	Title   string
	Account *incidentlib.Account
	CSRF    string
	Error   string
	Lines   []problemLine
	Message string
	Draft   *incidentlib.Draft
	Drafts  []*incidentlib.Draft
	Content string
	CaseID  string
	Diff    []DiffLine
	// Versions of a case, newest first.
	Versions []versionJSON
	// MayReview is true when the account may approve or return the draft.
	MayReview bool
	// MayEdit is true when the account may change and submit the draft.
	MayEdit bool
	// NextPage is the page of older drafts, 0 when there is none.
	NextPage int
	// Notice tells the user something went well (a check found nothing).
	Notice string
	// Rows is Diff side by side, for review.
	Rows []DiffRow
	// Editor is the contributor form of a new draft or of a draft its
	// author may change.
	Editor *editorView
	// Preview is a draft's case page, rendered by the site.
	Preview template.HTML
	// template is the page's template.
	template string
}

func (h *Handler) routeWeb(m *http.ServeMux) {
	m.HandleFunc("GET /account/sign-in", h.showSignIn)
	m.HandleFunc("POST /account/sign-in", h.signIn)
	m.HandleFunc("POST /account/sign-out", h.web(h.signOut))
	m.HandleFunc("GET /drafts", h.web(h.showDrafts))
	m.HandleFunc("GET /drafts/new", h.web(h.showNewDraft))
	m.HandleFunc("POST /drafts", h.web(h.createDraft))
	m.HandleFunc("POST /drafts/validate", h.web(h.validateDraft))
	m.HandleFunc("GET "+formScriptURL, h.showFormScript)
	m.HandleFunc("GET /drafts/{id}", h.web(h.showDraft))
	m.HandleFunc("GET /drafts/{id}/preview", h.web(h.showPreview))
	m.HandleFunc("POST /drafts/{id}", h.web(h.updateDraft))
	m.HandleFunc("POST /drafts/{id}/submit", h.web(h.submitDraft))
	m.HandleFunc("POST /drafts/{id}/review", h.web(h.reviewDraft))
	m.HandleFunc("GET /cases/{id}/history", h.web(h.showHistory))
}

// webHandler is a page that needs a signed-in account; session is the
// session token, for the form token.
type webHandler func(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error

// web signs the request in, checks the form token of every POST and the
// account's rate, and renders errors as pages.
func (h *Handler) web(f webHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, session, err := h.authenticate(r)
		if incidentlib.ErrorCode(err) == incidentlib.EUNAVAILABLE {
			w.Header().Set("Retry-After", retryAfterDown)
			h.render(w, r, http.StatusServiceUnavailable, "error", page{Title: "Try again in a minute", Error: incidentlib.ErrorMessage(err)})
			return
		}
		if a == nil || err != nil {
			http.Redirect(w, r, "/account/sign-in?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxBody+64<<10)
			if err := r.ParseForm(); err != nil {
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					h.render(w, r, http.StatusRequestEntityTooLarge, "error", page{Title: "Too large", Account: a,
						Error: "What you sent is too large: a case file is at most 1 MiB. Go back and shorten it."})
					return
				}
				h.render(w, r, http.StatusBadRequest, "error", page{Title: "Bad request", Account: a, Error: "The form could not be read. Go back and send it again."})
				return
			}
			if !validCSRF(session, r.PostFormValue("csrf")) || h.cop.Check(r) != nil || !sameOrigin(r) {
				h.render(w, r, http.StatusForbidden, "error", page{Title: "Form expired", Account: a,
					Error: "This form is out of date or came from another site. Go back, reload the page and send it again."})
				return
			}
		}
		if !h.allow(w, a) {
			h.render(w, r, http.StatusTooManyRequests, "error", page{Title: "Too many requests", Account: a, Error: "Too many requests from your account; wait a moment and try again."})
			return
		}
		if err := f(w, r, a, session); err != nil {
			h.logInternal(r, err)
			p := page{Title: http.StatusText(status(err)), Account: a, CSRF: csrfToken(session), Error: incidentlib.ErrorMessage(err)}
			if status(err) == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", retryAfterDown)
			}
			h.render(w, r, status(err), "error", p)
		}
	}
}

// sameOrigin refuses a form posted from another site when the browser says
// where it came from (SameSite cookies already keep most out).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return o == "" // no Origin: an old browser or a non-browser client with the cookie
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// contentSecurityPolicy lets the pages load the site's stylesheet and
// scripts (the theme toggle, the form's checks) and nothing else.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// render draws the page's own template and puts it in the site's layout.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, code int, name string, p page) {
	var body bytes.Buffer
	err := pages.ExecuteTemplate(&body, name, p)
	var out bytes.Buffer
	if err == nil {
		var scripts []string
		if p.Editor != nil {
			scripts = append(scripts, formScriptURL)
		}
		if h.cfg.Site != nil {
			err = h.cfg.Site.Page(&out, r, p.Title, template.HTML(body.String()), scripts...)
		} else {
			err = pages.ExecuteTemplate(&out, "plain", plainPage{Title: p.Title, Body: template.HTML(body.String()), Scripts: scripts})
		}
	}
	if err != nil {
		h.log.Error("render", "page", name, "err", err)
		http.Error(w, "The page could not be shown; try again.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.WriteHeader(code)
	w.Write(out.Bytes())
}

// plainPage is a page in the plain layout (no site to draw it).
type plainPage struct {
	Title   string
	Body    template.HTML
	Scripts []string
}

func (h *Handler) showSignIn(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "signin", page{Title: "Sign in", Message: r.URL.Query().Get("next")})
}

// signIn trades an API token for a session cookie. The token is sent in a
// form post, never in a URL.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	next := safeNext(r.PostFormValue("next"))
	var err error
	if h.cop.Check(r) != nil || !sameOrigin(r) {
		err = &incidentlib.Error{Code: incidentlib.EFORBIDDEN, Message: "sign in from this site's own page"}
	}
	var session string
	var a *incidentlib.Account
	if err == nil {
		a, session, _, err = h.cfg.Workflow.StartSession(r.Context(), strings.TrimSpace(r.PostFormValue("token")))
		if err != nil {
			h.log.Warn("sign-in refused", "remote", r.RemoteAddr, "reason", incidentlib.ErrorCode(err))
		} else {
			h.log.Info("signed in", "account", a.Name)
		}
	}
	if err != nil {
		h.logInternal(r, err)
		h.render(w, r, status(err), "signin", page{Title: "Sign in", Error: incidentlib.ErrorMessage(err), Message: next})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: session, Path: "/", HttpOnly: true, Secure: h.cfg.SecureCookies,
		SameSite: http.SameSiteStrictMode, MaxAge: 12 * 3600})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext keeps a post-sign-in redirect on this site: a path of this
// site and nothing a browser could read as another host ("//host",
// "/\\host", or either with tabs or newlines in it, which browsers drop).
func safeNext(next string) string {
	const fallback = "/drafts"
	for _, c := range next {
		if c < 0x20 || c == 0x7f || c == '\\' || c == ' ' {
			return fallback
		}
	}
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return fallback
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return fallback
	}
	return next
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	if err := h.cfg.Workflow.EndSession(r.Context(), session); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: h.cfg.SecureCookies, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}

func (h *Handler) showDrafts(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	n, err := pageParam(r)
	if err != nil {
		return err
	}
	ds, more, err := h.cfg.Workflow.ListDrafts(r.Context(), a, "", n)
	if err != nil {
		return err
	}
	p := page{Title: "Drafts", Account: a, CSRF: csrfToken(session), Drafts: ds}
	if more {
		p.NextPage = n + 1
	}
	h.render(w, r, http.StatusOK, "drafts", p)
	return nil
}

// checkedOK is what a check that found no problem says; nothing is saved.
const checkedOK = "No problems found: the case file validates. Nothing was saved yet."

func (h *Handler) newDraftPage(a *incidentlib.Account, session, caseID string) page {
	return page{Title: "New draft", Account: a, CSRF: csrfToken(session), CaseID: caseID, template: "new",
		Editor: &editorView{Action: "/drafts", New: true, CaseID: caseID}}
}

func (h *Handler) showNewDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	caseID := strings.TrimSpace(r.URL.Query().Get("case"))
	if caseID != "" && !incidentlib.ValidCaseID(caseID) {
		return incidentlib.InvalidParam("case", "%q is not a case ID (IL-0561)", truncate(caseID, 40))
	}
	p := h.newDraftPage(a, session, caseID)
	content := h.latestContent(r.Context(), a, caseID)
	if caseID != "" {
		p.Title = "Propose an edit of " + caseID
		if content == "" {
			p.Notice = "Write the case as it should read; reviewers compare it with the published case."
			content = "id: " + caseID + "\n"
		}
	}
	if msg := h.editorFor(p.Editor, content); msg != "" {
		p.Notice = msg
	}
	h.render(w, r, http.StatusOK, "new", p)
	return nil
}

func (h *Handler) createDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	caseID := strings.TrimSpace(r.PostFormValue("case_id"))
	p := h.newDraftPage(a, session, caseID)
	p.Editor.Private = r.PostFormValue("private") == "on"
	return h.handleEditor(w, r, p, func(content []byte) error {
		d, err := h.cfg.Workflow.CreateDraft(r.Context(), a, caseID, p.Editor.Private, content)
		if err != nil {
			return err
		}
		http.Redirect(w, r, "/drafts/"+strconv.FormatInt(d.ID, 10), http.StatusSeeOther)
		return nil
	})
}

// formError shows a form again with what was wrong, keeping what the user
// typed; errors that are not the user's go to the error page.
func (h *Handler) formError(w http.ResponseWriter, r *http.Request, err error, form string, p page) error {
	var ic *invalidCase
	switch {
	case errors.As(err, &ic):
		p.Error = "The case file has problems; fix them and send it again."
		for _, q := range ic.problems {
			p.Lines = append(p.Lines, problemLine{Line: q.Line, Message: q.Message})
		}
	case status(err) < 500 && status(err) != http.StatusUnauthorized:
		p.Error = incidentlib.ErrorMessage(err)
	default:
		return err
	}
	code := http.StatusBadRequest
	if ic == nil {
		code = status(err)
	}
	h.render(w, r, code, form, p)
	return nil
}

func (h *Handler) draftPage(r *http.Request, a *incidentlib.Account, session string) (page, error) {
	id, err := draftID(r)
	if err != nil {
		return page{}, err
	}
	d, err := h.cfg.Workflow.FindDraft(r.Context(), a, id)
	if err != nil {
		return page{}, err
	}
	p := page{Title: "Draft " + strconv.FormatInt(d.ID, 10), Account: a, CSRF: csrfToken(session), Draft: d, Content: string(d.Content), template: "draft",
		MayEdit:   d.Author == a.Name && (d.State == incidentlib.DraftOpen || d.State == incidentlib.DraftReturned),
		MayReview: d.State == incidentlib.DraftSubmitted && a.Role.Allows(incidentlib.RoleReviewer) && (d.Author != a.Name || a.Role.Allows(incidentlib.RoleAdmin))}
	if p.MayEdit {
		p.Editor = &editorView{Action: "/drafts/" + strconv.FormatInt(d.ID, 10), CaseID: d.CaseID}
	}
	if d.CaseID != "" && d.State != incidentlib.DraftPublished {
		if vs, err := h.cfg.Workflow.CaseHistory(r.Context(), a, d.CaseID); err == nil && len(vs) > 0 {
			p.Diff, _ = Diff(string(vs[len(vs)-1].Content), string(d.Content))
			p.Rows = FoldUnchanged(SideBySide(p.Diff), 3)
		}
	}
	return p, nil
}

func (h *Handler) showDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	p, err := h.draftPage(r, a, session)
	if err != nil {
		return err
	}
	if p.Editor != nil {
		if msg := h.editorFor(p.Editor, p.Content); msg != "" {
			p.Notice = msg
		}
	}
	h.render(w, r, http.StatusOK, "draft", p)
	return nil
}

func (h *Handler) updateDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	p, err := h.draftPage(r, a, session)
	if err != nil {
		return err
	}
	if p.Editor == nil {
		// Not the author's to change now: the workflow says why.
		p.Editor = &editorView{Action: r.URL.Path, CaseID: p.Draft.CaseID}
	}
	return h.handleEditor(w, r, p, func(content []byte) error {
		if _, err := h.cfg.Workflow.UpdateDraft(r.Context(), a, p.Draft.ID, content); err != nil {
			return err
		}
		http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
		return nil
	})
}

func (h *Handler) submitDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	id, err := draftID(r)
	if err != nil {
		return err
	}
	if _, err := h.cfg.Workflow.SubmitDraft(r.Context(), a, id); err != nil {
		return err
	}
	http.Redirect(w, r, "/drafts/"+strconv.FormatInt(id, 10), http.StatusSeeOther)
	return nil
}

func (h *Handler) reviewDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	p, err := h.draftPage(r, a, session)
	if err != nil {
		return err
	}
	note := r.PostFormValue("note")
	if len(note) > 4000 {
		return incidentlib.InvalidParam("note", "a review note is at most 4,000 bytes")
	}
	d, err := h.review(r.Context(), a, p.Draft.ID, r.PostFormValue("verdict") == "approve", note)
	if err != nil {
		return h.formError(w, r, err, "draft", p)
	}
	if d.State == incidentlib.DraftPublished {
		http.Redirect(w, r, "/cases/"+d.CaseID+"/history", http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, "/drafts/"+strconv.FormatInt(d.ID, 10), http.StatusSeeOther)
	return nil
}

func (h *Handler) showHistory(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	vs, err := h.history(r.Context(), a, r.PathValue("id"))
	if err != nil {
		return err
	}
	for i, j := 0, len(vs)-1; i < j; i, j = i+1, j-1 {
		vs[i], vs[j] = vs[j], vs[i]
	}
	h.render(w, r, http.StatusOK, "history", page{Title: "History of " + r.PathValue("id"), Account: a, CSRF: csrfToken(session), CaseID: r.PathValue("id"), Versions: vs})
	return nil
}
