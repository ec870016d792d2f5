package overlap

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFind(t *testing.T) {
	const source = `At 14:02 UTC, service monitors detected a high error rate on creating
check suites for workflow runs. We rolled back the change at 14:40.
The organisation's catalogue was not affected; "Email Obfuscation" stayed on.`
	tests := []struct {
		name string
		text string
		want []Run
	}{
		{"own words", "Alerts on check-suite creation errors fired at 14:02; the change was reverted by 14:40.", nil},
		{"copied sentence", "Then service monitors detected a high error rate on creating check suites.",
			[]Run{{Field: "f", Source: "s", Words: 11, Text: "service monitors detected a high error rate on creating check suites"}}},
		{"case and punctuation folded", "SERVICE monitors -- detected, a high error RATE!",
			[]Run{{Field: "f", Source: "s", Words: 7, Text: "SERVICE monitors -- detected, a high error RATE"}}},
		{"British and US spelling folded", "the organization's catalog was not affected",
			[]Run{{Field: "f", Source: "s", Words: 6, Text: "the organization's catalog was not affected"}}},
		{"five words is not a run", "we rolled back the change quickly", nil},
		{"numbers do not count", "at 14:02 UTC, service monitors detected", nil},
		{"quoted labels do not count", `not affected; "Email Obfuscation" stayed on`, nil},
		{"the quote does not hide the rest", `The organisation's catalogue was not affected; "Email Obfuscation" stayed on`,
			[]Run{{Field: "f", Source: "s", Words: 8, Text: `The organisation's catalogue was not affected; "Email Obfuscation" stayed on`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Find([]Field{{Name: "f", Text: tt.text}}, []Source{{Name: "s", Text: source}}, 0)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Find(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestFindReportsEachStretchOnce(t *testing.T) {
	src := "one two three four five six seven. one two three four five six seven eight."
	got := Find([]Field{{Name: "f", Text: "one two three four five six seven eight nine"}}, []Source{{Name: "s", Text: src}}, 6)
	want := []Run{{Field: "f", Source: "s", Words: 8, Text: "one two three four five six seven eight"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTextFromHTML(t *testing.T) {
	page := `<!doctype html><html><head><title>x</title><style>p{}</style></head><body>
<p>First&nbsp;paragraph ends</p><p>second &amp; starts</p><script>var a = "first paragraph";</script></body></html>`
	got := TextFromHTML(page)
	// Entities are decoded, scripts and styles dropped, and the text of
	// two paragraphs does not run together into one word.
	want := []Run{{Field: "f", Source: "s", Words: 5, Text: "first paragraph ends second starts"}}
	fields := []Field{{Name: "f", Text: "first paragraph ends second starts"}}
	if diff := cmp.Diff(want, Find(fields, []Source{{Name: "s", Text: got}}, 2)); diff != "" {
		t.Errorf("runs over %q (-want +got):\n%s", got, diff)
	}
	if runs := Find([]Field{{Name: "f", Text: "var a first"}}, []Source{{Name: "s", Text: got}}, 2); len(runs) != 0 {
		t.Errorf("script text was kept: %v", runs)
	}
	if !LooksLikeHTML(page) || LooksLikeHTML("plain words") {
		t.Error("LooksLikeHTML misjudges a page or plain text")
	}
}

func FuzzFind(f *testing.F) {
	f.Add("a b c d e f g", "x a b c d e f g y")
	f.Add(`"quoted words here" and more`, "’ ' “ ” ` é")
	f.Fuzz(func(t *testing.T, text, source string) {
		for _, r := range Find([]Field{{Name: "f", Text: text}}, []Source{{Name: "s", Text: source}}, 2) {
			if r.Words < 2 || len(r.Text) > len(text) {
				t.Fatalf("bad run %+v", r)
			}
		}
	})
}
