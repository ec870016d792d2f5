package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzQueryString sends arbitrary query strings to the search and topic
// endpoints: whatever arrives, the answer is 200 or a problem naming a
// client error, never a 500.
func FuzzQueryString(f *testing.F) {
	for _, s := range []string{"", "q=retry", "page=0", "per_page=-1", "q=%zz", "root_cause=,,,", "year_from=99999999999999999999",
		"sort=&sort=", "company=" + strings.Repeat("a", 500), `q="unbalanced`, "component=database&component=dns", "q=%00"} {
		f.Add(s)
	}
	ta := newAPI(f, Config{})
	f.Fuzz(func(t *testing.T, raw string) {
		for _, path := range []string{"/api/v1/cases", "/api/v1/topics/component/dns"} {
			r := httptest.NewRequest("GET", "/", nil)
			r.URL.Path, r.URL.RawQuery, r.RequestURI = path, raw, path+"?"+raw
			w := httptest.NewRecorder()
			ta.h.ServeHTTP(w, r)
			if w.Code >= 500 || (w.Code != 200 && w.Header().Get("Content-Type") != "application/problem+json") {
				t.Fatalf("%s?%s: %d %s", path, raw, w.Code, w.Body)
			}
		}
	})
}

// TestOverTCP runs the handler in a real server, as incidentlib serve
// does, and checks what only a real connection shows: HEAD framing,
// transparent gzip and keep-alive after errors.
func TestOverTCP(t *testing.T) {
	ta := newAPI(t, Config{})
	srv := httptest.NewServer(ta.h)
	defer srv.Close()
	get := func(method, path string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := get("GET", "/api/v1/cases/IL-0561/similar")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Uncompressed || !strings.Contains(string(body), `"reasons"`) {
		t.Errorf("similar: %d, uncompressed %v, %.100s", resp.StatusCode, resp.Uncompressed, body)
	}
	head := get("HEAD", "/api/v1/cases/IL-0561")
	n, _ := io.Copy(io.Discard, head.Body)
	head.Body.Close()
	if head.StatusCode != 200 || n != 0 || head.Header.Get("ETag") == "" {
		t.Errorf("HEAD: %d, %d bytes, ETag %q", head.StatusCode, n, head.Header.Get("ETag"))
	}
	for range 3 {
		bad := get("PUT", "/api/v1/cases/IL-0561")
		io.Copy(io.Discard, bad.Body)
		bad.Body.Close()
		if bad.StatusCode != 405 {
			t.Errorf("PUT: %d", bad.StatusCode)
		}
	}
}

// TestHeadOfErrors checks that HEAD of an error has the headers of GET.
func TestHeadOfErrors(t *testing.T) {
	ta := newAPI(t, Config{})
	srv := httptest.NewServer(ta.h)
	defer srv.Close()
	for _, path := range []string{"/api/v1/cases/IL-9999", "/api/v1/cases?page=x", "/api/v1/nowhere"} {
		var got [2]http.Header
		var codes [2]int
		for i, m := range []string{"GET", "HEAD"} {
			req, _ := http.NewRequest(m, srv.URL+path, nil)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			got[i], codes[i] = resp.Header, resp.StatusCode
		}
		for _, h := range []string{"Content-Type", "Content-Length", "Cache-Control"} {
			if got[0].Get(h) != got[1].Get(h) || codes[0] != codes[1] {
				t.Errorf("%s: GET %d %s=%q, HEAD %d %q", path, codes[0], h, got[0].Get(h), codes[1], got[1].Get(h))
			}
		}
	}
}
