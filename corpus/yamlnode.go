package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parseDocument reads exactly one YAML document. It returns the document's
// root node, or a problem list explaining why the data is not one document.
func parseDocument(data []byte) (*yaml.Node, []lineMessage) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, []lineMessage{{0, "the file is empty; expected a case (a mapping with id, title, …)"}}
		}
		if m, ok := explainSyntax(data, err); ok {
			return nil, []lineMessage{m}
		}
		return nil, yamlErrorMessages(err, "not valid YAML")
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, []lineMessage{{extra.Line, "the file holds more than one YAML document; expected one case per file"}}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlErrorMessages(err, "not valid YAML")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, []lineMessage{{1, "not a YAML document"}}
	}
	return doc.Content[0], nil
}

type lineMessage struct {
	line int
	msg  string
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlErrorMessages turns a yaml.v3 error into line-numbered messages.
func yamlErrorMessages(err error, prefix string) []lineMessage {
	var lines []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		lines = te.Errors
	} else {
		lines = []string{err.Error()}
	}
	var out []lineMessage
	for _, l := range lines {
		l = strings.TrimPrefix(l, "yaml: ")
		if m := yamlLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, lineMessage{n, prefix + ": " + rewordYAML(m[2])})
			continue
		}
		out = append(out, lineMessage{0, prefix + ": " + rewordYAML(l)})
	}
	return out
}

var (
	cannotUnmarshal = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `?(.*?)`?)? into (.*)$")
)

// rewordYAML makes yaml.v3's messages readable to a curator who does not
// know Go types.
func rewordYAML(s string) string {
	if m := cannotUnmarshal.FindStringSubmatch(s); m != nil {
		want := "a single value"
		switch {
		case strings.HasPrefix(m[3], "[]"):
			want = "a list"
		case strings.Contains(m[3], "struct") || strings.HasPrefix(m[3], "corpus."):
			want = "a mapping of keys"
		}
		got := map[string]string{"seq": "a list", "map": "a mapping", "str": "text", "int": "a number", "bool": "true/false", "float": "a number"}[m[1]]
		if got == "" {
			got = m[1]
		}
		if m[2] != "" && m[1] != "seq" && m[1] != "map" {
			got += " (" + m[2] + ")"
		}
		return fmt.Sprintf("expected %s, found %s", want, got)
	}
	return s
}

// yamlKeys returns the YAML keys a struct type accepts, in field order.
func yamlKeys(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = f.Type
	}
	return out
}

// checkKeys walks a node alongside the Go type it decodes into and reports
// every mapping key the type does not accept, with a did-you-mean.
func checkKeys(n *yaml.Node, t reflect.Type, path string, report func(line int, msg string)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		keys := yamlKeys(t)
		valid := make([]string, 0, len(keys))
		for k := range keys {
			valid = append(valid, k)
		}
		sort.Strings(valid)
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			where := k.Value
			if path != "" {
				where = path + "." + k.Value
			}
			if prev, dup := seen[k.Value]; dup {
				report(k.Line, fmt.Sprintf("key %q appears twice (first on line %d)", where, prev))
				continue
			}
			seen[k.Value] = k.Line
			ft, ok := keys[k.Value]
			if !ok {
				report(k.Line, fmt.Sprintf("unknown key %q%s", where, didYouMean(k.Value, valid)))
				continue
			}
			checkKeys(v, ft, where, report)
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			checkKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), report)
		}
	}
}

// lookup follows a path of mapping keys (string) and list indexes (int)
// from n and returns the node there, or nil.
func lookup(n *yaml.Node, path ...any) *yaml.Node {
	for _, step := range path {
		if n == nil {
			return nil
		}
		switch s := step.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return nil
			}
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == s {
					next = n.Content[i+1]
					break
				}
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode || s < 0 || s >= len(n.Content) {
				return nil
			}
			n = n.Content[s]
		}
	}
	return n
}

// lineOf returns the line of the node at path, or of the nearest ancestor
// that exists, so that a message about a missing key points at its parent.
func lineOf(root *yaml.Node, path ...any) int {
	for len(path) >= 0 {
		if n := lookup(root, path...); n != nil {
			return n.Line
		}
		if len(path) == 0 {
			return 1
		}
		path = path[:len(path)-1]
	}
	return 1
}

// explainSyntax finds the cause of the YAML syntax errors contributors
// make most, and says it in plain words at the line where the mistake is:
// the parser's own text names its internals ("found character that cannot
// start any token") and often points at a neighbouring line.
func explainSyntax(data []byte, err error) (lineMessage, bool) {
	msg := err.Error()
	lines := strings.Split(string(data), "\n")
	if strings.Contains(msg, "tab character") || strings.Contains(msg, "cannot start any token") {
		for i, l := range lines {
			indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
			if strings.Contains(indent, "\t") {
				return lineMessage{i + 1, "this line is indented with a tab; YAML indentation must be spaces"}, true
			}
		}
		if strings.Contains(msg, "cannot start any token") {
			if m := yamlLine.FindStringSubmatch(strings.TrimPrefix(msg, "yaml: ")); m != nil {
				n, _ := strconv.Atoi(m[1])
				return lineMessage{n, "a value starts with a character YAML reserves (such as @, ` or %); put the value in quotes"}, true
			}
		}
	}
	for _, br := range []struct{ open, close, what string }{{"[", "]", "list"}, {"{", "}", "mapping"}} {
		if !strings.Contains(msg, "expected ','") && !strings.Contains(msg, "did not find expected") {
			break
		}
		for i, l := range lines {
			if unclosed(l, br.open[0], br.close[0]) {
				return lineMessage{i + 1, fmt.Sprintf("a %s opened with %q on this line is never closed with %q", br.what, br.open, br.close)}, true
			}
		}
	}
	return lineMessage{}, false
}

// unclosed reports whether line opens more of open than it closes, outside
// quoted text and comments.
func unclosed(line string, open, close byte) bool {
	depth := 0
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' '):
			return depth > 0
		case c == open:
			depth++
		case c == close:
			depth--
		}
	}
	return depth > 0
}

// hasDuplicateKey reports whether any mapping in n repeats a key. Such a
// file cannot be decoded at all, so the only useful message is the
// duplicate itself (checkKeys reports it).
func hasDuplicateKey(n *yaml.Node) bool {
	if n == nil {
		return false
	}
	if n.Kind == yaml.MappingNode {
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if seen[n.Content[i].Value] {
				return true
			}
			seen[n.Content[i].Value] = true
		}
	}
	for _, c := range n.Content {
		if hasDuplicateKey(c) {
			return true
		}
	}
	return false
}
