package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
)

// IDError is why a case file cannot be given an ID, at a line of it.
type IDError struct {
	Line    int
	Message string
}

func (e *IDError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

// SetCaseID gives a case file its ID: the value of the document's own
// top-level id key, found by parsing the file, never by looking for a line
// that starts with "id:" (such a line can sit inside a multi-line title).
// The file's other bytes are kept as the author wrote them where that can
// be done and proved: the ID's value is replaced where the parse says it
// is (or an id line added before the first key), and the result is parsed
// again and must be the same document with only the ID changed. When that
// proof fails (an unusual layout: a flow mapping, a value over several
// lines), the parsed document itself is written out with its new ID.
//
// It returns the new file and the line its id key is on, or an error
// naming what is wrong when the file is not one YAML mapping.
func SetCaseID(content []byte, id string) ([]byte, int, error) {
	root, errs := parseDocument(content)
	if len(errs) > 0 {
		return nil, 0, &IDError{errs[0].line, errs[0].msg}
	}
	if root.Kind != yaml.MappingNode {
		return nil, 0, &IDError{root.Line, "not a case: expected a mapping with id, title, company, …"}
	}
	ids := 0
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "id" {
			ids++
		}
	}
	if ids > 1 {
		return nil, 0, &IDError{root.Line, fmt.Sprintf("the file has %d id keys; a case has one", ids)}
	}
	want := setRootID(cloneNode(root), id)
	if out, line, ok := spliceID(content, root, id); ok {
		if got, errs := parseDocument(out); len(errs) == 0 && sameNode(got, want) {
			return out, line, nil
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(want); err != nil {
		return nil, 0, &IDError{root.Line, "the case file could not be written with its ID: " + err.Error()}
	}
	enc.Close()
	got, errs := parseDocument(buf.Bytes())
	if len(errs) > 0 || !sameNode(got, want) {
		return nil, 0, &IDError{root.Line, "the case file could not be given the ID " + id + " without changing the rest of it"}
	}
	return buf.Bytes(), lookupKeyLine(got, "id"), nil
}

// setRootID sets (or adds, first) the root mapping's id and returns root.
func setRootID(root *yaml.Node, id string) *yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "id" {
			root.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: id}
			return root
		}
	}
	root.Content = append([]*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "id"},
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: id},
	}, root.Content...)
	return root
}

// spliceID writes the ID into the file's bytes at the place the parse
// gives: the id value's own span on its line, or a new line before the
// first key. The caller proves the result by parsing it.
func spliceID(content []byte, root *yaml.Node, id string) ([]byte, int, bool) {
	lines := bytes.SplitAfter(content, []byte("\n"))
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "id" {
			continue
		}
		if v.Kind != yaml.ScalarNode || v.Line != k.Line || v.Line < 1 || v.Line > len(lines) {
			return nil, 0, false
		}
		line := lines[v.Line-1]
		start := byteColumn(line, v.Column)
		if start < 0 {
			return nil, 0, false
		}
		end := len(bytes.TrimRight(line, "\r\n"))
		tail := ""
		if v.LineComment != "" {
			tail = " " + v.LineComment
		}
		var out bytes.Buffer
		for _, l := range lines[:v.Line-1] {
			out.Write(l)
		}
		out.Write(line[:start])
		out.WriteString(id + tail)
		out.Write(line[end:])
		for _, l := range lines[v.Line:] {
			out.Write(l)
		}
		return out.Bytes(), v.Line, true
	}
	if len(root.Content) == 0 {
		return nil, 0, false
	}
	first := root.Content[0]
	if first.Column != 1 || first.Line < 1 || first.Line > len(lines) {
		return nil, 0, false
	}
	var out bytes.Buffer
	for _, l := range lines[:first.Line-1] {
		out.Write(l)
	}
	out.WriteString("id: " + id + "\n")
	for _, l := range lines[first.Line-1:] {
		out.Write(l)
	}
	return out.Bytes(), first.Line, true
}

// byteColumn turns the parser's 1-based column (in characters) into a
// byte offset in line, or -1.
func byteColumn(line []byte, col int) int {
	off := 0
	for n := 1; n < col; n++ {
		if off >= len(line) {
			return -1
		}
		_, size := utf8.DecodeRune(line[off:])
		off += size
	}
	return off
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = cloneNode(k)
	}
	c.Alias = cloneNode(n.Alias)
	return &c
}

// sameNode reports whether two documents hold the same data: kinds, tags,
// values and order, whatever their layout, quoting or comments.
func sameNode(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode && a.Value != b.Value {
		return false
	}
	if a.Kind == yaml.AliasNode {
		return sameNode(a.Alias, b.Alias)
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

func lookupKeyLine(root *yaml.Node, key string) int {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i].Line
		}
	}
	return 0
}

// ParseDraft parses a draft's case file as it will be published: with id
// given on its parsed document (SetCaseID), checked as ParseCase checks a
// file. Problems are reported at the lines the author wrote, even where
// giving the ID added a line.
func ParseDraft(v *incidentlib.Vocabulary, content []byte, id string, now time.Time) (*incidentlib.Case, []incidentlib.Problem) {
	withID, idLine, err := SetCaseID(content, id)
	if err != nil {
		var e *IDError
		if errors.As(err, &e) {
			return nil, []incidentlib.Problem{{Line: e.Line, Message: e.Message}}
		}
		return nil, []incidentlib.Problem{{Message: err.Error()}}
	}
	// An id line the check had to add moves the lines after it down by one.
	shift := bytes.Count(withID, []byte("\n")) - bytes.Count(content, []byte("\n"))
	c, ps := ParseCase(v, id+".yaml", withID, now)
	out := make([]incidentlib.Problem, len(ps))
	for i, p := range ps {
		line := p.Line
		if shift == 1 && line > idLine {
			line--
		}
		out[i] = incidentlib.Problem{Line: line, Message: p.Message}
	}
	return c, out
}
