package contribute

import (
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/cases"
	"github.com/incidentlib/incidentlib/corpus"
)

// Every shipped case file goes into the form and back out as YAML that
// the validator reads as the same case, and the form read from that YAML
// is the form it came from.
func TestFormRoundTripsEveryShippedCase(t *testing.T) {
	v, ps := corpus.LoadShippedVocabulary()
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	names, err := fs.Glob(cases.FS, "*.yaml")
	if err != nil || len(names) < 100 {
		t.Fatalf("shipped cases: %d, %v", len(names), err)
	}
	now := time.Now()
	for _, name := range names {
		orig, _ := cases.FS.ReadFile(name)
		f, err := formFromYAML(orig)
		if err != nil {
			t.Errorf("%s: the form cannot hold it: %v", name, err)
			continue
		}
		out := f.yamlOf()
		f2, err := formFromYAML(out)
		if err != nil {
			t.Errorf("%s: the form's YAML does not read back: %v\n%s", name, err, out)
			continue
		}
		if d := cmp.Diff(f, f2); d != "" {
			t.Errorf("%s: form → YAML → form changed it (-before +after):\n%s", name, d)
		}
		want, ps1 := corpus.ParseCase(v, name, orig, now)
		got, ps2 := corpus.ParseCase(v, name, out, now)
		if len(ps1) != 0 || len(ps2) != 0 {
			t.Errorf("%s: problems before %v, after %v", name, ps1, ps2)
			continue
		}
		if d := cmp.Diff(trimCase(want), trimCase(got)); d != "" {
			t.Errorf("%s: the validator reads the form's YAML as another case (-file +form):\n%s", name, d)
		}
	}
}

// trimCase drops what YAML block styles add around prose (a final line
// break), which the form does not keep.
func trimCase(c *incidentlib.Case) *incidentlib.Case {
	cc := *c
	for _, p := range []*string{&cc.Title, &cc.Company, &cc.Scope, &cc.UsersAffected, &cc.Region, &cc.Summary, &cc.Symptoms,
		&cc.Trigger, &cc.Detection, &cc.Lessons, &cc.Verification.Against, &cc.Verification.Note} {
		*p = strings.TrimSpace(*p)
	}
	cc.Remediation = append([]string(nil), c.Remediation...)
	for i := range cc.Remediation {
		cc.Remediation[i] = strings.TrimSpace(cc.Remediation[i])
	}
	cc.ActionItems = append([]incidentlib.ActionItem(nil), c.ActionItems...)
	for i := range cc.ActionItems {
		cc.ActionItems[i].Text = strings.TrimSpace(cc.ActionItems[i].Text)
	}
	cc.Sources = append([]incidentlib.Source(nil), c.Sources...)
	for i := range cc.Sources {
		cc.Sources[i].Title = strings.TrimSpace(cc.Sources[i].Title)
	}
	return &cc
}

// The form has a field for every key of the case format, under the key's
// own name.
func TestFormCoversTheCaseFormat(t *testing.T) {
	doc, err := os.ReadFile("../docs/case-format.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := regexp.MustCompile("(?m)^\\| `([a-z_.]+)` \\|").FindAllStringSubmatch(string(doc), -1)
	if len(keys) < 20 {
		t.Fatalf("found %d keys in docs/case-format.md", len(keys))
	}
	page := editorPage(t, sampleForm())
	for _, k := range keys {
		key := k[1]
		if key == "id" {
			continue // given at publication; kept in a hidden field
		}
		if !strings.Contains(page, `name="`+key+`"`) && !strings.Contains(page, `name="`+key+`.0`) {
			t.Errorf("the form has no field for %s", key)
		}
	}
}

// sampleForm is a case with every field and two rows of every list.
func sampleForm() caseForm {
	return caseForm{
		Title: "Example Corp's API failed as a certificate expired", Company: "Example Corp",
		Timeline:      timelineForm{Started: "2026-03-01T10:00:00Z", Detected: "2026-03-01T10:05:00Z", Mitigated: "2026-03-01T11:00:00Z", Resolved: "2026-03-01T12:00:00Z"},
		Scope:         "The public API.",
		UsersAffected: "Every API client.", Region: "global", TimeToDetect: "5m", TimeToResolve: "2h",
		Summary: "The certificate expired.\n\nIt was renewed by hand.", Symptoms: "TLS errors.",
		SymptomTerms: []string{"full-outage", "high-error-rate"}, Trigger: "Expiry.", RootCause: "expired-credential",
		Components: []string{"load-balancer", "certificates-secrets"}, ContributingFactors: []string{"observability-gap"}, KubegapChecks: []string{"KG009", "KG014"},
		Detection: "Customers reported it.", Remediation: []string{"Renewed the certificate", "Restarted the proxies"},
		ActionItems: []actionItemForm{{Text: "Automate renewal", Estimate: "April 2026"}, {Text: "Alert before expiry"}},
		Lessons:     "Watch expiry dates.",
		Quoted:      []quoteForm{{Text: "x509: certificate has expired", Kind: "error", Source: "https://example.com/post"}, {Text: "503", Kind: "status", Source: "https://example.com/post"}},
		Sources: []sourceForm{{URL: "https://example.com/post", Type: "official-blog", Title: "What happened", Retrieved: "2026-03-05", ArchivedURL: "https://archive.example.org/post"},
			{URL: "https://news.example.net/a", Type: "news"}},
		Verification: verificationForm{Status: "checked", Against: "the official post", Note: "All facts checked."},
	}
}

func TestFormValuesRoundTrip(t *testing.T) {
	f := sampleForm()
	vals := formValues(t, editorPage(t, f))
	got, rows := formFromValues(vals)
	if d := cmp.Diff(f, got); d != "" {
		t.Errorf("the page's form posted back is another case (-shown +posted):\n%s", d)
	}
	if rows["sources"][1] != 1 {
		t.Errorf("rows: %v", rows)
	}
	// Empty rows are dropped, and the rows kept remember where they were.
	vals = url.Values{"sources.0.url": {""}, "sources.1.url": {"https://example.com/a"}, "sources.1.type": {"news"}}
	got, rows = formFromValues(vals)
	if len(got.Sources) != 1 || rows.pageRow("sources.0.url") != "sources.1.url" {
		t.Errorf("a form with an empty first source row: %+v %v", got.Sources, rows)
	}
}

// A line break in a value the form shows on one line would be lost in the
// browser: such a file stays in the YAML view, saying where.
func TestFormRefusesLineBreaksItWouldLose(t *testing.T) {
	_, err := formFromYAML([]byte("title: x\nremediation:\n  - |\n    first line\n    second line\n"))
	if err == nil || !strings.Contains(err.Error(), "remediation[0]") {
		t.Errorf("a remediation step of two lines: %v", err)
	}
	if _, err := formFromYAML([]byte("title: x\nsummary: |\n  one\n\n  two\n")); err != nil {
		t.Errorf("a summary of two paragraphs: %v", err)
	}
}

// What the form cannot hold stays in the YAML view with the reason: a key
// the case format does not have, and severity, which is set by rule (the
// form has no field for it, so switching would drop it).
func TestFormRefusesWhatItCannotHold(t *testing.T) {
	if _, err := formFromYAML([]byte("title: x\nowner: someone\n")); err == nil || !strings.Contains(err.Error(), "owner") {
		t.Errorf("an unknown key: %v", err)
	}
	if _, err := formFromYAML([]byte("title: x\ntimeline:\n  begun: 2026-01-01\n")); err == nil || !strings.Contains(err.Error(), "begun") || strings.Contains(err.Error(), "corpus.") {
		t.Errorf("an unknown key inside timeline: %v", err)
	}
	if _, err := formFromYAML([]byte("title: x\nseverity: major\n")); err == nil || !strings.Contains(err.Error(), "severity") {
		t.Errorf("a severity line: %v", err)
	}
}
