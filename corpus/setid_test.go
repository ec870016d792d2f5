package corpus

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// rootID parses a case file and returns the value of its own top-level id.
func rootID(t *testing.T, content []byte) string {
	t.Helper()
	root, errs := parseDocument(content)
	if len(errs) > 0 {
		t.Fatalf("the file with its ID does not parse: %v\n%s", errs, content)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "id" {
			return root.Content[i+1].Value
		}
	}
	return ""
}

func TestSetCaseIDReadsTheDocumentNotItsLines(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"replaces the id", "id: IL-0000\ntitle: x\n", "id: IL-5001\ntitle: x\n"},
		{"adds one before the first key", "title: x\n", "id: IL-5001\ntitle: x\n"},
		{"adds one after a leading comment", "# note\ntitle: x\n", "# note\nid: IL-5001\ntitle: x\n"},
		{"keeps a later id's place", "title: x\nid: old\n", "title: x\nid: IL-5001\n"},
		{"keeps a comment on the id line", "id: IL-0000 # placeholder\ntitle: x\n", "id: IL-5001 # placeholder\ntitle: x\n"},
		{"replaces a quoted id", "id: \"IL-0000\"\ntitle: x\n", "id: IL-5001\ntitle: x\n"},
		// The finding of issue 21: an "id:" line inside a multi-line
		// quoted title is part of the title, not the case's ID.
		{"leaves an id line inside a quoted title alone",
			"title: \"Outage\nid: x\n continued\"\ncompany: c\nid: IL-0000\n",
			"title: \"Outage\nid: x\n continued\"\ncompany: c\nid: IL-5001\n"},
		{"leaves an id line inside a block scalar alone",
			"summary: |\n  first\nid: IL-0000\n",
			"summary: |\n  first\nid: IL-5001\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := SetCaseID([]byte(tc.in), "IL-5001")
			if err != nil || string(got) != tc.want {
				t.Fatalf("SetCaseID(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			if id := rootID(t, got); id != "IL-5001" {
				t.Errorf("the file's id is %q, want IL-5001", id)
			}
		})
	}
}

func TestSetCaseIDWritesTheDocumentWhenItCannotSplice(t *testing.T) {
	for _, in := range []string{
		"{title: x, id: IL-0000}\n",
		"id: \"IL-\n  0000\"\ntitle: x\n",
		"---\ntitle: \"a\nid: b\"\n",
	} {
		got, _, err := SetCaseID([]byte(in), "IL-5001")
		if err != nil {
			t.Fatalf("SetCaseID(%q): %v", in, err)
		}
		if id := rootID(t, got); id != "IL-5001" {
			t.Errorf("SetCaseID(%q) = %q: id %q, want IL-5001", in, got, id)
		}
		var before, after map[string]any
		yaml.Unmarshal([]byte(in), &before)
		yaml.Unmarshal(got, &after)
		delete(before, "id")
		delete(after, "id")
		if len(before) != len(after) || before["title"] != after["title"] {
			t.Errorf("SetCaseID(%q) changed more than the id: %q", in, got)
		}
	}
}

func TestSetCaseIDRefusesWhatIsNotOneCase(t *testing.T) {
	for in, want := range map[string]string{
		"- a\n- b\n":                "not a case",
		"id: a\nid: b\n":            "id keys",
		"title: [\n":                "line",
		"title: a\n---\ntitle: b\n": "more than one",
	} {
		_, _, err := SetCaseID([]byte(in), "IL-5001")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SetCaseID(%q) = %v, want an error saying %q", in, err, want)
		}
	}
}
