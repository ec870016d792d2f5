package contribute

import (
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/incidentlib/incidentlib"
)

// Site renders the contributor pages in the site's layout, and a draft as
// its case page will look (web.Frame does both).
type Site interface {
	// Page writes body inside the site's layout, with title and the
	// script files the page loads.
	Page(w io.Writer, r *http.Request, title string, body template.HTML, scripts ...string) error
	// CaseHTML renders a case as the main part of its case page, naming
	// its terms from v.
	CaseHTML(v *incidentlib.Vocabulary, c *incidentlib.Case) (template.HTML, error)
}

// formScript checks the form as the contributor types (form.js); the
// form works without it.
//
//go:embed static/form.js
var formScript []byte

// formScriptURL is where the pages load it.
const formScriptURL = "/drafts/form.js"

// editorView is the contributor form: the case file as fields (View
// "form") or as YAML text (View "yaml"), with the validator's messages
// next to the fields they are about.
type editorView struct {
	Action  string // where the form posts: /drafts or /drafts/{id}
	New     bool   // a new draft: the case it edits and privacy are asked
	CaseID  string
	Private bool
	View    string
	Form    caseForm
	YAML    string
	// Msgs are the messages of each field, by its path; General those
	// about no one field (and every message in the YAML view).
	Msgs    map[string][]string
	General []fieldMessage
	// Extra are blank rows to add to a list ("add a source").
	Extra map[string]int
	// Status says what the last check found.
	Status string
	// focus is the field of a row just added, which takes the focus.
	focus string
	vocab *incidentlib.Vocabulary
}

// Views of the editor.
const (
	viewForm = "form"
	viewYAML = "yaml"
)

func (h *Handler) vocabulary() *incidentlib.Vocabulary {
	if h.cfg.Vocabulary == nil {
		return nil
	}
	return h.cfg.Vocabulary()
}

// editorFor shows content in the form when the form can hold it, and in
// the YAML view, saying why, when it cannot.
func (h *Handler) editorFor(e *editorView, content string) (notice string) {
	e.vocab = h.vocabulary()
	e.YAML = content
	f, err := formFromYAML([]byte(content))
	if err != nil {
		e.View = viewYAML
		return err.Error()
	}
	e.View, e.Form = viewForm, f
	return ""
}

// readEditor reads a posted editor: the case file it holds (the YAML
// view's text, or the form's fields written as YAML) and the rows of the
// page each list item came from.
func (h *Handler) readEditor(r *http.Request, e *editorView) (content []byte, rows rowMap) {
	e.vocab = h.vocabulary()
	if r.PostFormValue("view") == viewForm {
		e.View = viewForm
		e.Form, rows = formFromValues(r.PostForm)
		content = e.Form.yamlOf()
		e.YAML = string(content)
		return content, rows
	}
	// The YAML view, and clients that post the file alone.
	e.View = viewYAML
	e.YAML = r.PostFormValue("content")
	return []byte(e.YAML), nil
}

// place puts the validator's problems next to the fields they are about.
func (e *editorView) place(content []byte, ps []incidentlib.Problem) {
	e.Msgs = map[string][]string{}
	e.General = nil
	for _, m := range placeProblems(content, ps, nil) {
		if e.View == viewForm && m.Field != "" && e.hasSlot(m.Field) {
			e.Msgs[m.Field] = append(e.Msgs[m.Field], m.Message)
			continue
		}
		e.General = append(e.General, m)
	}
	switch n := len(ps); {
	case n == 0:
		e.Status = ""
	case e.View == viewForm:
		e.Status = fmt.Sprintf("%s found; each is shown next to its field.", plural(n, "problem", "problems"))
	default:
		e.Status = fmt.Sprintf("%s found; each is listed with its line.", plural(n, "problem", "problems"))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// hasSlot reports whether the form shows messages for path.
func (e *editorView) hasSlot(path string) bool {
	switch path {
	case "title", "company", "timeline", "timeline.started", "timeline.detected", "timeline.mitigated", "timeline.resolved", "timeline.reported",
		"scope", "users_affected", "region", "time_to_detect", "time_to_resolve", "summary", "symptoms", "symptom_terms",
		"trigger", "root_cause", "components", "contributing_factors", "kubegap_checks", "detection", "remediation",
		"action_items", "lessons", "quoted", "sources", "verification", "verification.status", "verification.against",
		"verification.note":
		return true
	}
	parts := strings.Split(path, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	i, err := strconv.Atoi(parts[1])
	if err != nil || i < 0 {
		return false
	}
	n := map[string]int{"remediation": len(e.Form.Remediation), "action_items": len(e.Form.ActionItems),
		"quoted": len(e.Form.Quoted), "sources": len(e.Form.Sources)}
	count, ok := n[parts[0]]
	if !ok || i >= count {
		return false
	}
	if len(parts) == 2 {
		return true
	}
	return slices.Contains(map[string][]string{
		"action_items": {"text", "estimate"},
		"quoted":       {"text", "kind", "source"},
		"sources":      {"url", "type", "title", "retrieved", "archived_url"},
	}[parts[0]], parts[2])
}

// fieldView is one field of the form, as the templates draw it.
type fieldView struct {
	Path, ID, Label, Hint, Value string
	Required                     bool
	// Autofocus puts the cursor in the field when the page opens: the
	// first field of a row just added.
	Autofocus bool
	Msgs      []string
	Options   []optionView
}

type optionView struct {
	Value, Label string
	Selected     bool
}

// Field is the field at path, labelled; "*" ending the label marks it
// required.
func (e *editorView) Field(path, label, hint, value string) fieldView {
	req := strings.HasSuffix(label, "*")
	return fieldView{Path: path, ID: "f-" + path, Label: strings.TrimSuffix(label, "*"), Hint: hint, Value: value, Required: req,
		Msgs: e.Msgs[path], Autofocus: path != "" && path == e.focus}
}

// Slot is the message slot of a group of fields (a row, a list).
func (e *editorView) Slot(path string) fieldView { return fieldView{Path: path, Msgs: e.Msgs[path]} }

// Select is a field with a fixed set of values; a value the set does not
// have is kept as one more option, so that nothing typed in the YAML view
// is lost in the form.
func (e *editorView) Select(path, label, value string, choices ...string) fieldView {
	f := e.Field(path, label, "", value)
	f.Options = append(f.Options, optionView{Value: "", Label: "— choose —", Selected: value == ""})
	found := value == ""
	for i := 0; i+1 < len(choices); i += 2 {
		f.Options = append(f.Options, optionView{Value: choices[i], Label: choices[i+1], Selected: choices[i] == value})
		found = found || choices[i] == value
	}
	if !found {
		f.Options = append(f.Options, optionView{Value: value, Label: value + " (not a valid choice)", Selected: true})
	}
	return f
}

// SourceType is the source-type picker of one source.
func (e *editorView) SourceType(path, value string) fieldView {
	var choices []string
	if e.vocab != nil {
		for _, t := range e.vocab.SourceTypes() {
			choices = append(choices, t.Slug, t.Name)
		}
	}
	return e.Select(path, "Type*", value, choices...)
}

// SourceTypes are the source types with their definitions.
func (e *editorView) SourceTypes() []incidentlib.Term {
	if e.vocab == nil {
		return nil
	}
	return e.vocab.SourceTypes()
}

// pickerView is a list of vocabulary terms to choose from, each with its
// definition.
type pickerView struct {
	fieldView
	Type    string // checkbox or radio
	Terms   []termChoice
	Chosen  []string
	Open    bool
	Summary string
}

type termChoice struct {
	ID, Slug, Name, Definition string
	Checked                    bool
}

// Picker is the picker of the facet whose slugs go in path.
func (e *editorView) Picker(path, label, hint string) pickerView {
	facet := map[string]incidentlib.Facet{"symptom_terms": incidentlib.FacetSymptom, "root_cause": incidentlib.FacetRootCause,
		"components": incidentlib.FacetComponent, "contributing_factors": incidentlib.FacetContributingFactor}[path]
	var chosen []string
	p := pickerView{fieldView: e.Field(path, label, hint, ""), Type: "checkbox"}
	switch path {
	case "symptom_terms":
		chosen = e.Form.SymptomTerms
	case "components":
		chosen = e.Form.Components
	case "contributing_factors":
		chosen = e.Form.ContributingFactors
	case "root_cause":
		p.Type = "radio"
		if e.Form.RootCause != "" {
			chosen = []string{e.Form.RootCause}
		}
		p.Terms = append(p.Terms, termChoice{ID: "f-root_cause-none", Name: "Not disclosed", Definition: "The sources do not say what caused it.", Checked: len(chosen) == 0})
	}
	var terms []incidentlib.Term
	if e.vocab != nil {
		terms = e.vocab.Terms(facet)
	}
	known := map[string]bool{}
	for _, t := range terms {
		known[t.Slug] = true
		c := termChoice{ID: "f-" + path + "-" + t.Slug, Slug: t.Slug, Name: t.Name, Definition: t.Definition, Checked: slices.Contains(chosen, t.Slug)}
		if c.Checked {
			p.Chosen = append(p.Chosen, t.Name)
		}
		p.Terms = append(p.Terms, c)
	}
	for i, s := range chosen {
		if !known[s] {
			p.Terms = append(p.Terms, termChoice{ID: "f-" + path + "-unknown-" + strconv.Itoa(i), Slug: s, Name: s,
				Definition: "Not in the vocabulary: pick a term above and clear this one.", Checked: true})
			p.Chosen = append(p.Chosen, s)
		}
	}
	p.Open = len(p.Msgs) > 0
	switch {
	case len(p.Chosen) == 0 && p.Type == "radio":
		p.Summary = "Not disclosed — change"
	case len(p.Chosen) == 0:
		p.Summary = "None chosen — choose"
	default:
		p.Summary = strings.Join(p.Chosen, ", ") + " — change"
	}
	return p
}

// listRow is one row of a list the form edits (a remediation step, an
// action item, a quote, a source): its number on the page, the path its
// fields are named by, and the item (its zero value in a blank row).
type listRow[T any] struct {
	N    int
	Path string
	Item T
}

// listRows lays out the rows of one list: its items, then the blank rows
// asked for (rowCount).
func listRows[T any](e *editorView, list string, items []T) []listRow[T] {
	out := make([]listRow[T], e.rowCount(list, len(items)))
	for i := range out {
		out[i] = listRow[T]{N: i + 1, Path: list + "." + strconv.Itoa(i)}
		if i < len(items) {
			out[i].Item = items[i]
		}
	}
	return out
}

// rowCount is how many rows a list shows: its items and the blank rows
// asked for, and one blank row where it has none.
func (e *editorView) rowCount(list string, items int) int {
	n := items + e.Extra[list]
	if n == 0 {
		n = 1
	}
	return min(n, maxRows)
}

func (e *editorView) RemediationRows() []listRow[string] {
	return listRows(e, "remediation", e.Form.Remediation)
}

func (e *editorView) ActionRows() []listRow[actionItemForm] {
	return listRows(e, "action_items", e.Form.ActionItems)
}

func (e *editorView) QuoteRows() []listRow[quoteForm] { return listRows(e, "quoted", e.Form.Quoted) }

func (e *editorView) SourceRows() []listRow[sourceForm] {
	return listRows(e, "sources", e.Form.Sources)
}

// Kubegap is the kubegap checks as the form's text field writes them.
func (e *editorView) Kubegap() string { return strings.Join(e.Form.KubegapChecks, ", ") }

// handleEditor does what a posted editor asks: switch views, add a row,
// check, preview, or save: a case file that validates goes to save, which
// answers the request; one that does not is drawn again with its
// messages next to their fields.
func (h *Handler) handleEditor(w http.ResponseWriter, r *http.Request, p page, save func(content []byte) error) error {
	e := p.Editor
	content, _ := h.readEditor(r, e)
	action := r.PostFormValue("action")
	switch {
	case action == "view-yaml":
		e.View = viewYAML
		h.render(w, r, http.StatusOK, p.template, p)
		return nil
	case action == "view-form":
		if msg := h.editorFor(e, string(content)); msg != "" {
			p.Error = msg
			h.render(w, r, http.StatusBadRequest, p.template, p)
			return nil
		}
		h.render(w, r, http.StatusOK, p.template, p)
		return nil
	case strings.HasPrefix(action, "add-"):
		list := strings.TrimPrefix(action, "add-")
		if !slices.Contains(listKeys, list) || e.View != viewForm {
			return incidentlib.InvalidParam("action", "unknown action %q", truncate(action, 40))
		}
		e.Extra = map[string]int{list: 1}
		n := map[string]int{"remediation": len(e.Form.Remediation), "action_items": len(e.Form.ActionItems),
			"quoted": len(e.Form.Quoted), "sources": len(e.Form.Sources)}[list]
		e.focus = list + "." + strconv.Itoa(n) + map[string]string{"remediation": "", "action_items": ".text", "quoted": ".text", "sources": ".url"}[list]
		h.render(w, r, http.StatusOK, p.template, p)
		return nil
	case action == "preview":
		return h.preview(w, r, p, content)
	}
	if err := h.checkContent(content, e.CaseID); err != nil {
		if ic, ok := err.(*invalidCase); ok {
			e.place(content, ic.problems)
			p.Error = "The case has problems; fix them and send it again. Nothing was saved."
			h.render(w, r, http.StatusBadRequest, p.template, p)
			return nil
		}
		return h.formError(w, r, err, p.template, p)
	}
	if action == "check" {
		e.place(content, nil)
		p.Notice = checkedOK
		h.render(w, r, http.StatusOK, p.template, p)
		return nil
	}
	if err := save(content); err != nil {
		return h.formError(w, r, err, p.template, p)
	}
	return nil
}

// validateAnswer is what the form's check as you type gets.
type validateAnswer struct {
	OK       bool           `json:"ok"`
	Problems []fieldMessage `json:"problems"`
}

// validateDraft checks the posted editor and answers with each problem
// and the field it is about, as the page numbers its rows; nothing is
// saved.
func (h *Handler) validateDraft(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	e := &editorView{}
	content, rows := h.readEditor(r, e)
	caseID := strings.TrimSpace(r.PostFormValue("case_id"))
	if caseID != "" && !incidentlib.ValidCaseID(caseID) {
		caseID = ""
	}
	ans := validateAnswer{OK: true, Problems: []fieldMessage{}}
	if err := h.checkContent(content, caseID); err != nil {
		ans.OK = false
		if ic, ok := err.(*invalidCase); ok {
			ans.Problems = placeProblems(content, ic.problems, rows)
		} else if status(err) < 500 {
			ans.Problems = []fieldMessage{{Message: incidentlib.ErrorMessage(err)}}
		} else {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, ans)
}

// preview renders the case page the draft will have, from content.
func (h *Handler) preview(w http.ResponseWriter, r *http.Request, p page, content []byte) error {
	if h.cfg.Site == nil || h.cfg.Parse == nil {
		return &incidentlib.Error{Code: incidentlib.ENOTFOUND, Message: "previews are not available on this server"}
	}
	id := p.Editor.CaseID
	if id == "" {
		id = placeholderID
	}
	if len(content) > maxBody {
		return &incidentlib.Error{Code: incidentlib.ETOOLARGE, Param: "content", Message: "a case file is at most 1 MiB"}
	}
	c, ps := h.cfg.Parse(content, id)
	if c == nil {
		p.Editor.place(content, ps)
		p.Error = "The case cannot be shown yet: fix these problems first."
		h.render(w, r, http.StatusBadRequest, p.template, p)
		return nil
	}
	body, err := h.cfg.Site.CaseHTML(h.vocabulary(), c)
	if err != nil {
		return fmt.Errorf("preview: %w", err)
	}
	pv := page{Title: "Preview: " + c.Title, Account: p.Account, CSRF: p.CSRF, Draft: p.Draft, Preview: body, CaseID: p.Editor.CaseID}
	if pv.Title == "Preview: " {
		pv.Title = "Preview of a case without a title"
	}
	for _, q := range ps {
		pv.Lines = append(pv.Lines, problemLine{Line: q.Line, Message: q.Message})
	}
	h.render(w, r, http.StatusOK, "preview", pv)
	return nil
}

// showPreview renders a saved draft's case page (for its reviewers).
func (h *Handler) showPreview(w http.ResponseWriter, r *http.Request, a *incidentlib.Account, session string) error {
	p, err := h.draftPage(r, a, session)
	if err != nil {
		return err
	}
	p.Editor = &editorView{CaseID: p.Draft.CaseID}
	return h.preview(w, r, p, p.Draft.Content)
}

func (h *Handler) showFormScript(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(formScript)
}

// latestContent is the newest version of a case the account may read the
// history of, to start an edit from; "" when there is none.
func (h *Handler) latestContent(ctx context.Context, a *incidentlib.Account, caseID string) string {
	if !incidentlib.ValidCaseID(caseID) {
		return ""
	}
	vs, err := h.cfg.Workflow.CaseHistory(ctx, a, caseID)
	if err != nil || len(vs) == 0 {
		return ""
	}
	return string(vs[len(vs)-1].Content)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
