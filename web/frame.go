package web

import (
	"bytes"
	"errors"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/incidentlib/incidentlib"
)

// Frame renders the pages of other packages (the write path's forms) in
// the site's layout, and renders a case that is not in the library (a
// draft) with the case page's own template, so that a preview shows the
// page as it will be published.
type Frame struct {
	s *server
}

// NewFrame returns a frame. It fails only when the embedded templates do
// not parse, which a test catches.
func NewFrame(cfg Config) (*Frame, error) {
	t, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Frame{s: &server{cfg: cfg, log: log, tmpl: t}}, nil
}

// framePage is the data of frame.html: HTML made by the caller.
type framePage struct {
	Body template.HTML
}

// Page writes body inside the site's layout: the header, navigation and
// footer every page has, with title in <title>. scripts are the URLs of
// script files the page loads (deferred); robots are asked not to index
// it. The caller sets the status and headers.
func (f *Frame) Page(w io.Writer, r *http.Request, title string, body template.HTML, scripts ...string) error {
	p := f.s.newPage(r, title)
	p.NoIndex = true
	p.Nav = "contribute"
	p.Scripts = scripts
	p.Content = framePage{Body: body}
	var buf bytes.Buffer
	if err := f.s.tmpl.execute(&buf, "frame", p); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// CaseHTML renders c as the main part of its case page, naming its terms
// from v (without the related cases, which a case not yet in the library
// has none of, and without the links for scripts, which do not serve it
// yet).
func (f *Frame) CaseHTML(v *incidentlib.Vocabulary, c *incidentlib.Case) (template.HTML, error) {
	if c == nil || v == nil {
		return "", errors.New("web: a preview needs a case and a vocabulary")
	}
	s := *f.s
	s.vocab = v
	cv := s.caseView(c)
	cp := casePage{
		Case:    cv,
		Kubegap: s.kubegap("This case involves", cv.Components, incidentlib.ChecksForCase(s.cfg.Checks, v, c)),
		Preview: true,
	}
	var buf bytes.Buffer
	if err := s.tmpl.pages["case"].ExecuteTemplate(&buf, "content", cp); err != nil {
		return "", err
	}
	return template.HTML(buf.String()), nil
}
