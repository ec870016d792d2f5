package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/engine/enginetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// shippedLibrary is the shipped corpus, indexed once for the whole test
// binary.
func shippedLibrary(t testing.TB) *engine.Engine { return enginetest.Shipped(t) }

type testAPI struct {
	t testing.TB
	h http.Handler
	a *api
}

func newAPI(t testing.TB, cfg Config) *testAPI {
	t.Helper()
	l := shippedLibrary(t)
	if cfg.Checks == nil {
		cfg.Checks = testChecks()
	}
	return &testAPI{t: t, h: New(l, cfg), a: &api{lib: l, checks: cfg.Checks, links: links{base: strings.TrimRight(cfg.BaseURL, "/")}}}
}

// testChecks is a small kubegap catalogue over the shipped vocabulary.
// The API knows checks only through the domain; cmd/ wires the real one.
// KG001 is the example the OpenAPI document gives.
func testChecks() []incidentlib.Check {
	return []incidentlib.Check{
		{
			ID: "KG001", Title: "Retries without a brake", Severity: incidentlib.CheckHigh,
			Rule: "A route that retries has a brake.", Why: "Retries multiply load.", Fix: "Add outlier detection.",
			FixYAML: "outlierDetection:\n  consecutive5xxErrors: 5\n",
			Guards: []incidentlib.TermRef{
				{Facet: incidentlib.FacetContributingFactor, Slug: "retry-amplification"},
				{Facet: incidentlib.FacetComponent, Slug: "cache"}, // a group
			},
			Cases: []incidentlib.CheckCase{{ID: "IL-0943", Why: "retries overwhelmed the authorising service"}, {ID: "IL-0790", Why: "retried failures piled up"}},
		},
		{
			ID: "KG002", Title: "Deep liveness probe", Severity: incidentlib.CheckMedium,
			Rule: "Liveness checks only the process.", Why: "Restart loops.", Fix: "Probe locally.",
			Guards: []incidentlib.TermRef{{Facet: incidentlib.FacetContributingFactor, Slug: "health-check-dependency"}},
		},
	}
}

// openapiBytes fetches the served document.
func (ta *testAPI) openapiBytes() []byte {
	w := ta.do("GET", "/api/v1/openapi.json")
	if w.Code != 200 {
		ta.t.Fatalf("openapi.json: %d", w.Code)
	}
	return w.Body.Bytes()
}

func (ta *testAPI) do(method, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	ta.h.ServeHTTP(w, r)
	return w
}

// TestOpenAPIGolden pins the contract: a change to any response type or
// route shows up as a diff of testdata/openapi.golden.json, refreshed with
// go test ./httpapi -update.
func TestOpenAPIGolden(t *testing.T) {
	got := newAPI(t, Config{}).openapiBytes()
	golden := filepath.Join("testdata", "openapi.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./httpapi -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("OpenAPI document changed (-golden +served); if intended, rerun with -update:\n%s", diff)
	}
}

// TestOpenAPIWalk calls every path the document names, with the example
// values it gives, by GET and by HEAD, and checks each response against the
// document: status, media type, headers and body schema.
func TestOpenAPIWalk(t *testing.T) {
	ta := newAPI(t, Config{BaseURL: "http://api.test"})
	doc := decode(t, ta.openapiBytes()).(map[string]any)
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi = %v", doc["openapi"])
	}
	paths := doc["paths"].(map[string]any)
	if len(paths) != len(ta.a.routeTableForTest()) {
		t.Errorf("document has %d paths, route table %d", len(paths), len(ta.a.routeTableForTest()))
	}
	nCases := len(mustCases(t))
	for path, item := range paths {
		get := item.(map[string]any)["get"].(map[string]any)
		if _, ok := item.(map[string]any)["head"]; !ok {
			t.Errorf("%s: no head operation", path)
		}
		target := path
		for _, p := range asList(get["parameters"]) {
			p := p.(map[string]any)
			if p["in"] == "path" {
				ex, _ := p["example"].(string)
				if ex == "" {
					t.Fatalf("%s: path parameter %s has no example", path, p["name"])
				}
				target = strings.ReplaceAll(target, "{"+p["name"].(string)+"}", ex)
			}
		}
		t.Run(get["operationId"].(string), func(t *testing.T) {
			w := ta.do("GET", target)
			if w.Code != 200 {
				t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
			}
			ok := get["responses"].(map[string]any)["200"].(map[string]any)
			var media string
			var schema map[string]any
			for m, c := range ok["content"].(map[string]any) {
				media, schema = m, c.(map[string]any)["schema"].(map[string]any)
			}
			if ct, _, _ := strings.Cut(w.Header().Get("Content-Type"), ";"); ct != media {
				t.Errorf("Content-Type %q, document says %q", w.Header().Get("Content-Type"), media)
			}
			for name := range ok["headers"].(map[string]any) {
				if w.Header().Get(name) == "" {
					t.Errorf("header %s documented but absent", name)
				}
			}
			body := w.Body.Bytes()
			switch media {
			case "application/json":
				if errs := validate(doc, schema, decode(t, body), "$"); len(errs) > 0 {
					t.Errorf("body does not match the document:\n%s", strings.Join(errs[:min(len(errs), 20)], "\n"))
				}
			case mediaJSONL:
				lines := bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n"))
				if len(lines) != nCases {
					t.Errorf("%d lines for %d cases", len(lines), nCases)
				}
				for i, l := range lines {
					if errs := validate(doc, schema, decode(t, l), "line"); len(errs) > 0 {
						t.Fatalf("line %d: %s", i+1, strings.Join(errs, "\n"))
					}
				}
			case "text/csv":
				rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(csvColumns, rows[0]); diff != "" {
					t.Errorf("header row (-want +got):\n%s", diff)
				}
				if len(rows)-1 != nCases {
					t.Errorf("%d rows for %d cases", len(rows)-1, nCases)
				}
			default:
				t.Errorf("no check for media type %s", media)
			}
			head := ta.do("HEAD", target)
			if head.Code != 200 || head.Body.Len() != 0 {
				t.Errorf("HEAD: %d with %d body bytes", head.Code, head.Body.Len())
			}
			for _, h := range []string{"Content-Type", "Content-Length", "ETag", "Cache-Control"} {
				if head.Header().Get(h) != w.Header().Get(h) {
					t.Errorf("HEAD %s = %q, GET %q", h, head.Header().Get(h), w.Header().Get(h))
				}
			}
			if re := ta.do("GET", target, "If-None-Match", w.Header().Get("ETag")); re.Code != 304 || re.Body.Len() != 0 {
				t.Errorf("revalidation: %d with %d bytes", re.Code, re.Body.Len())
			}
		})
	}
}

func (a *api) routeTableForTest() []*route { return a.routeTable() }

func mustCases(t *testing.T) []*incidentlib.Case {
	cs, err := shippedLibrary(t).Cases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestErrors checks the problem responses: status, stable code, the
// parameter named, and headers.
func TestErrors(t *testing.T) {
	ta := newAPI(t, Config{})
	long := strings.Repeat("x", incidentlib.MaxQueryLength+1)
	tests := []struct {
		name, method, target string
		header               []string
		status               int
		code, param          string
		detail               string // a fragment the message must hold
	}{
		{"unknown case", "GET", "/api/v1/cases/IL-9999", nil, 404, "not_found", "id", "IL-9999"},
		{"malformed case ID", "GET", "/api/v1/cases/foo", nil, 404, "not_found", "id", "IL-0561"},
		{"similar of unknown case", "GET", "/api/v1/cases/IL-9999/similar", nil, 404, "not_found", "id", "IL-9999"},
		{"unknown topic term", "GET", "/api/v1/topics/root_cause/no-such-term", nil, 404, "not_found", "slug", "config-change"},
		{"unknown facet", "GET", "/api/v1/topics/colour/red", nil, 404, "not_found", "facet", "root_cause"},
		{"unknown endpoint", "GET", "/api/v1/nothing", nil, 404, "not_found", "", "openapi.json"},
		{"unknown check", "GET", "/api/v1/checks/KG999", nil, 404, "not_found", "id", "KG001 to KG002"},
		{"check with a parameter", "GET", "/api/v1/checks/KG001?limit=3", nil, 400, "invalid", "limit", "takes none"},
		{"unknown parameter", "GET", "/api/v1/cases?rootcause=x", nil, 400, "invalid", "rootcause", "root_cause"},
		{"parameter on parameterless endpoint", "GET", "/api/v1/stats?x=1", nil, 400, "invalid", "x", "takes none"},
		{"repeated single parameter", "GET", "/api/v1/cases?page=1&page=2", nil, 400, "invalid", "page", "2 times"},
		{"page not a number", "GET", "/api/v1/cases?page=two", nil, 400, "invalid", "page", "two"},
		{"page zero", "GET", "/api/v1/cases?page=-1", nil, 400, "invalid", "page", ""},
		{"per_page too big", "GET", "/api/v1/cases?per_page=1000", nil, 400, "invalid", "per_page", "100"},
		{"bad sort", "GET", "/api/v1/cases?sort=best", nil, 400, "invalid", "sort", "relevance"},
		{"unknown filter term", "GET", "/api/v1/cases?root_cause=gremlins", nil, 400, "invalid", "root_cause", "gremlins"},
		{"unknown severity", "GET", "/api/v1/cases?severity=sev1", nil, 400, "invalid", "severity", ""},
		{"year not a number", "GET", "/api/v1/cases?year_from=last", nil, 400, "invalid", "year_from", "last"},
		{"years reversed", "GET", "/api/v1/cases?year_from=2025&year_to=2020", nil, 400, "invalid", "year_from", ""},
		{"similar limit", "GET", "/api/v1/cases/IL-0561/similar?limit=0x", nil, 400, "invalid", "limit", ""},
		{"malformed escape", "GET", "/api/v1/cases?q=%zz", nil, 400, "invalid", "query", ""},
		{"q too long", "GET", "/api/v1/cases?q=" + long, nil, 414, "too_large", "q", "1000"},
		{"URL too long", "GET", "/api/v1/cases?q=" + strings.Repeat("x", maxURLBytes), nil, 414, "uri_too_long", "", ""},
		{"POST", "POST", "/api/v1/cases", nil, 405, "method_not_allowed", "", "GET"},
		{"DELETE a case", "DELETE", "/api/v1/cases/IL-0561", nil, 405, "method_not_allowed", "", "GET"},
		{"not acceptable", "GET", "/api/v1/cases", []string{"Accept", "text/html"}, 406, "not_acceptable", "", "application/json"},
		{"csv refused", "GET", "/api/v1/export/cases.csv", []string{"Accept", "application/json"}, 406, "not_acceptable", "", "text/csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := ta.do(tt.method, tt.target, tt.header...)
			checkProblem(t, w, tt.status, tt.code, tt.param, tt.detail)
			if tt.status == 405 && w.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
				t.Errorf("Allow = %q", w.Header().Get("Allow"))
			}
		})
	}
}

func checkProblem(t *testing.T, w *httptest.ResponseRecorder, status int, code, param, detail string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q", ct)
	}
	if w.Header().Get("ETag") != "" || w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("error is cacheable: ETag %q, Cache-Control %q", w.Header().Get("ETag"), w.Header().Get("Cache-Control"))
	}
	if w.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Error("error lacks CORS header, so browser scripts cannot read it")
	}
	doc := decode(t, newAPI(t, Config{}).openapiBytes()).(map[string]any)
	v := decode(t, w.Body.Bytes())
	if errs := validate(doc, map[string]any{"$ref": "#/components/schemas/Problem"}, v, "$"); len(errs) > 0 {
		t.Errorf("problem does not match the schema: %v", errs)
	}
	p := v.(map[string]any)
	gotParam, _ := p["param"].(string)
	if p["code"] != code || gotParam != param || p["status"].(interface{ String() string }).String() != itoa(status) {
		t.Errorf("code %v param %v status %v, want %s %q %d", p["code"], p["param"], p["status"], code, param, status)
	}
	if d, _ := p["detail"].(string); !strings.Contains(d, detail) || d == "" {
		t.Errorf("detail %q does not mention %q", d, detail)
	}
}

func TestInternalErrorHidden(t *testing.T) {
	var logged bytes.Buffer
	a := &api{log: newTextLogger(&logged)}
	w := httptest.NewRecorder()
	a.writeError(w, httptest.NewRequest("GET", "/api/v1/cases", nil), io.ErrUnexpectedEOF)
	if w.Code != 500 || strings.Contains(w.Body.String(), "unexpected EOF") || !strings.Contains(w.Body.String(), `"code":"internal"`) {
		t.Errorf("got %d %s", w.Code, w.Body)
	}
	if !strings.Contains(logged.String(), "unexpected EOF") {
		t.Error("internal cause not logged")
	}
}

func TestRequestLimits(t *testing.T) {
	ta := newAPI(t, Config{RateLimit: 1, RateBurst: 2})
	r := httptest.NewRequest("GET", "/api/v1/stats", strings.NewReader(strings.Repeat("x", maxBodyBytes+1)))
	w := httptest.NewRecorder()
	ta.h.ServeHTTP(w, r)
	checkProblem(t, w, 413, "too_large", "", "body")

	// The 413 above used one token of the burst of 2.
	if w := ta.do("GET", "/api/v1/stats"); w.Code != 200 {
		t.Fatalf("second request: %d", w.Code)
	}
	w = ta.do("GET", "/api/v1/stats")
	checkProblem(t, w, 429, "rate_limited", "", "Retry-After")
	if w.Header().Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
}

func TestHTTP(t *testing.T) {
	ta := newAPI(t, Config{})
	// gzip on request, with a distinct ETag per representation.
	plain := ta.do("GET", "/api/v1/cases")
	gz := ta.do("GET", "/api/v1/cases", "Accept-Encoding", "gzip")
	if gz.Header().Get("Content-Encoding") != "gzip" || !strings.Contains(gz.Header().Get("Vary"), "Accept-Encoding") {
		t.Fatalf("no gzip: %v", gz.Header())
	}
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if !bytes.Equal(unzipped, plain.Body.Bytes()) {
		t.Error("gzip body differs from identity body")
	}
	if gz.Header().Get("ETag") == plain.Header().Get("ETag") {
		t.Error("gzip and identity share an ETag")
	}
	// CORS preflight and simple request.
	pre := ta.do("OPTIONS", "/api/v1/cases", "Origin", "https://dash.example", "Access-Control-Request-Method", "GET")
	if pre.Code != 204 || pre.Header().Get("Access-Control-Allow-Origin") != "*" || pre.Header().Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight: %d %v", pre.Code, pre.Header())
	}
	if opt := ta.do("OPTIONS", "/api/v1/cases"); opt.Code != 204 || opt.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("OPTIONS: %d Allow %q", opt.Code, opt.Header().Get("Allow"))
	}
	if !strings.Contains(plain.Header().Get("Access-Control-Expose-Headers"), "Link") {
		t.Error("Link not exposed to scripts")
	}
	if cc := plain.Header().Get("Cache-Control"); cc != "public, max-age=300" {
		t.Errorf("Cache-Control %q", cc)
	}
	if w := ta.do("GET", "/api/v1/cases", "Accept", "text/html;q=0.9, application/*;q=0.5"); w.Code != 200 {
		t.Errorf("Accept application/*: %d", w.Code)
	}
}

func TestAcceptable(t *testing.T) {
	tests := []struct {
		header, media string
		want          bool
	}{
		{"", "application/json", true},
		{"*/*", "application/json", true},
		{"application/json", "application/json", true},
		{"application/*", "application/json", true},
		{"text/html", "application/json", false},
		{"application/json;q=0", "application/json", false},
		{"application/json;q=0, */*", "application/json", false},
		{"text/csv", mediaCSV, true},
		{"text/html, */*;q=0.1", mediaCSV, true},
	}
	for _, tt := range tests {
		if got := acceptable(tt.header, tt.media); got != tt.want {
			t.Errorf("acceptable(%q, %q) = %v, want %v", tt.header, tt.media, got, tt.want)
		}
	}
}

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// Parameters given with an empty or out-of-range value are refused with
// the parameter named, never replaced by the default.
func TestStrictParameters(t *testing.T) {
	ta := newAPI(t, Config{})
	for _, tt := range []struct{ target, param string }{
		{"/api/v1/cases?per_page=0", "per_page"},
		{"/api/v1/cases?page=0", "page"},
		{"/api/v1/cases?page=", "page"},
		{"/api/v1/cases?root_cause=", "root_cause"},
		{"/api/v1/cases?sort=", "sort"},
		{"/api/v1/cases?component=,", "component"},
		{"/api/v1/cases/IL-0561/similar?limit=0", "limit"},
		{"/api/v1/cases/IL-0561/similar?limit=", "limit"},
		{"/api/v1/cases?q=" + strings.Repeat("a", 1001), "q"},
	} {
		t.Run(tt.target[:min(len(tt.target), 60)], func(t *testing.T) {
			w := ta.do("GET", tt.target)
			status := 400
			code := "invalid"
			if tt.param == "q" {
				status, code = 414, "too_large"
			}
			checkProblem(t, w, status, code, tt.param, "")
		})
	}
}

// The queries that cost seconds or a 500 before the cost model are a
// clear 400 or an ordinary answer, never a 500.
func TestHostileQueriesAreNot500(t *testing.T) {
	ta := newAPI(t, Config{})
	letters := strings.Repeat("b c d f g h j k l m n p q r s t v w x y z ", 21)
	for _, q := range []string{`"` + letters + `"`, strings.Repeat("abcdefghijklmnopqrstuvwxyz", 30), `"b c d f g h j k"`} {
		w := ta.do("GET", "/api/v1/cases?q="+url.QueryEscape(q))
		if w.Code != 200 && w.Code != 400 {
			t.Errorf("q=%.40s…: status %d: %s", q, w.Code, w.Body)
		}
	}
}

// A client that hung up is not an internal error: nothing is logged as
// one and the status is not 500.
func TestClientHangUpIsNotAnError(t *testing.T) {
	var logged bytes.Buffer
	ta := newAPI(t, Config{Logger: newTextLogger(&logged)})
	r := httptest.NewRequest("GET", "/api/v1/cases?q=database", nil)
	ctx, cancel := context.WithCancel(r.Context())
	cancel()
	w := httptest.NewRecorder()
	ta.h.ServeHTTP(w, r.WithContext(ctx))
	if w.Code == 500 || strings.Contains(logged.String(), "ERROR") {
		t.Errorf("status %d, log %q", w.Code, logged.String())
	}
}

// A case whose sources give no start answers started null and reported
// with when it was made public, in the JSON and in the CSV export's last
// two columns.
func TestCaseWithoutAStart(t *testing.T) {
	ta := newAPI(t, Config{})
	all, err := shippedLibrary(t).Cases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := *all[0]
	c.Timeline = incidentlib.Timeline{Reported: incidentlib.Timestamp{Time: time.Date(2018, 6, 1, 0, 0, 0, 0, time.UTC), Precision: incidentlib.PrecisionMonth}}
	b, err := json.Marshal(ta.a.caseSummary(&c))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"started":null`, `"started_precision":null`, `"reported":"2018-06"`, `"reported_precision":"month"`, `"year":2018`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("case JSON lacks %s:\n%s", want, b)
		}
	}
	row := ta.a.csvRow(&c)
	if got := row[len(row)-2:]; got[0] != "2018-06" || got[1] != "month" || row[4] != "" {
		t.Errorf("CSV: started %q, reported columns %q", row[4], got)
	}
}
