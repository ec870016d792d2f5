package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/incidentlib/incidentlib"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// templates holds one parsed template set per page: the layout and the
// partials, cloned, plus the page's own file, so that every page can
// define "content" without clashing with the others.
type templates struct {
	pages map[string]*template.Template
	// cssURL is the stylesheet's URL with a content hash, so that it can be
	// cached for a year and still change the moment the file does.
	cssURL  string
	iconURL string
	jsURL   string
}

var funcs = template.FuncMap{
	"dash":    dash,
	"paras":   paragraphs,
	"add":     func(a, b int) int { return a + b },
	"plural":  plural,
	"join":    strings.Join,
	"lower":   strings.ToLower,
	"num":     func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"wrapurl": wrapURL,
}

// wrapURL prints a URL with a line-break opportunity after each slash, so
// that on a narrow screen it wraps between its parts rather than inside a
// word or off the edge.
func wrapURL(u string) template.HTML {
	origin, path := "", u
	if i := strings.Index(u, "://"); i >= 0 {
		origin, path = u[:i+3], u[i+3:]
	}
	parts := strings.Split(path, "/")
	for i, p := range parts {
		parts[i] = template.HTMLEscapeString(p)
	}
	return template.HTML(template.HTMLEscapeString(origin) + strings.Join(parts, "/<wbr>"))
}

func parseTemplates() (*templates, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	entries, err := fs.ReadDir(templateFS, "templates")
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	t := &templates{pages: map[string]*template.Template{}}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".html")
		if name == "layout" || name == "partials" {
			continue
		}
		clone, err := base.Clone()
		if err != nil {
			return nil, fmt.Errorf("web: templates: %w", err)
		}
		if _, err := clone.ParseFS(templateFS, "templates/"+e.Name()); err != nil {
			return nil, fmt.Errorf("web: templates: %w", err)
		}
		t.pages[name] = clone
	}
	t.cssURL = "/static/style.css?v=" + staticHash("style.css")
	t.iconURL = "/static/icon.svg?v=" + staticHash("icon.svg")
	t.jsURL = "/static/theme.js?v=" + staticHash("theme.js")
	return t, nil
}

func staticHash(name string) string {
	b, err := staticFS.ReadFile("static/" + name)
	if err != nil {
		return "0"
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

func (t *templates) execute(w io.Writer, page string, data *page) error {
	tp, ok := t.pages[page]
	if !ok {
		return fmt.Errorf("web: no template %q", page)
	}
	data.CSSURL, data.IconURL, data.ThemeJSURL = t.cssURL, t.iconURL, t.jsURL
	return tp.ExecuteTemplate(w, "layout.html", data)
}

// page is what the layout needs; Content is the page's own data.
type page struct {
	Title       string // in <title>, before " · Incident Library"
	Description string
	Canonical   string // absolute URL, or "" for none
	Nav         string // which top-level section is current
	Query       string // echoed in the header's search box
	OGType      string // OpenGraph type: "article" for a case, "website" otherwise
	NoIndex     bool   // ask robots not to index (search and error pages)
	Feed        string // the Atom feed's URL
	CSSURL      string
	IconURL     string
	ThemeJSURL  string
	// Scripts are further script files a page loads (a form's checks).
	Scripts []string
	// Contribute shows the links of the contributor pages.
	Contribute bool
	Content    any
}

func (s *server) newPage(r *http.Request, title string) *page {
	return &page{Title: title, Feed: s.baseURL(r) + "/feed.atom", Contribute: s.cfg.Contribute}
}

// render executes a page into a buffer first, so that a template failure
// becomes a clean error page rather than half a page.
func (s *server) render(w http.ResponseWriter, name string, p *page) error {
	return s.renderStatus(w, http.StatusOK, name, p)
}

// renderStatus renders a page with a status other than 200; such pages
// are not cached.
func (s *server) renderStatus(w http.ResponseWriter, status int, name string, p *page) error {
	var buf bytes.Buffer
	if err := s.tmpl.execute(&buf, name, p); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if status == http.StatusOK {
		w.Header().Set("Cache-Control", "public, max-age=300")
	} else {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
	}
	_, err := w.Write(buf.Bytes())
	if err != nil {
		s.log.Debug("write page", "err", err)
	}
	return nil
}

// showStatic serves the embedded stylesheet and icon. A request carrying
// the current content hash may be cached for good.
func (s *server) showStatic(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("file")
	b, err := staticFS.ReadFile("static/" + name)
	if err != nil || strings.HasPrefix(name, ".") {
		return incidentlib.Errorf(incidentlib.ENOTFOUND, "There is no file %s.", truncate(name, 60))
	}
	switch path.Ext(name) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".svg":
		w.Header().Set("Content-Type", "image/svg+xml")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	if v := r.URL.Query().Get("v"); v != "" && v == staticHash(name) {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "public, max-age=300")
	}
	w.Write(b)
	return nil
}

// dash prints "–" for an unknown value, as the case pages do.
func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "–"
	}
	return s
}

// paragraphs splits prose at blank lines and joins the lines within each
// paragraph, since case files wrap their prose.
func paragraphs(s string) []string {
	var out []string
	for _, p := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n") {
		p = strings.Join(strings.Fields(p), " ")
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// dateView is a timestamp as a page shows it, with the machine-readable
// form for <time datetime>.
type dateView struct {
	Text string
	ISO  string
	// Lead comes before the date: "made public " for a case whose sources
	// give no start, only when it was made public.
	Lead string
}

// formatTimestamp shows what the source gives, and no more:
// "24 Aug 2026 16:56 UTC", "24 Aug 2026", "Dec 2019", "2026".
func formatTimestamp(t incidentlib.Timestamp) dateView {
	if t.IsZero() {
		return dateView{Text: "–"}
	}
	u := t.Time.UTC()
	switch t.Precision {
	case incidentlib.PrecisionYear:
		return dateView{Text: u.Format("2006"), ISO: u.Format("2006")}
	case incidentlib.PrecisionMonth:
		return dateView{Text: u.Format("Jan 2006"), ISO: u.Format("2006-01")}
	case incidentlib.PrecisionDay:
		return dateView{Text: u.Format("2 Jan 2006"), ISO: u.Format(time.DateOnly)}
	}
	return dateView{Text: u.Format("2 Jan 2006 15:04 UTC"), ISO: u.Format(time.RFC3339)}
}

// formatDay is a timestamp cut to the day at most, for lists.
func formatDay(t incidentlib.Timestamp) dateView {
	if t.Precision == incidentlib.PrecisionTime && !t.IsZero() {
		t.Precision = incidentlib.PrecisionDay
	}
	return formatTimestamp(t)
}
