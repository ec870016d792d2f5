package kubegap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/incidentlib/incidentlib"
)

// Bounds on one input, so that a huge or hostile manifest costs a known
// amount before any of it is read.
const (
	MaxInputBytes = 64 << 20 // bytes of one file or of standard input
	MaxDocuments  = 100_000  // YAML documents in one input
	MaxDepth      = 100      // nesting of mappings and sequences
	// maxNodes bounds the values one document expands to, aliases
	// included, so that "billion laughs" documents stop early.
	maxNodes = 1_000_000
)

// Load reads YAML or JSON manifests from r into s: several documents
// separated by "---", and "kind: List" objects whose items are read one by
// one. name labels the input in object references ("-" for standard
// input). Each object keeps the line its document or item starts on.
// Documents or objects that cannot be read are returned as problems, each
// naming the file and line; the rest are still added. Load never panics.
func Load(name string, r io.Reader, s *Snapshot) []incidentlib.InputProblem {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return []incidentlib.InputProblem{{Object: incidentlib.ObjectRef{File: name}, Message: "cannot read: " + err.Error()}}
	}
	if len(data) > MaxInputBytes {
		return []incidentlib.InputProblem{{Object: incidentlib.ObjectRef{File: name},
			Message: fmt.Sprintf("input is larger than %d MiB; split it into smaller files", MaxInputBytes>>20)}}
	}
	return loadBytes(name, data, s)
}

func loadBytes(name string, data []byte, s *Snapshot) []incidentlib.InputProblem {
	var problems []incidentlib.InputProblem
	problem := func(line int, format string, args ...any) {
		problems = append(problems, incidentlib.InputProblem{Object: incidentlib.ObjectRef{File: name, Line: line}, Message: fmt.Sprintf(format, args...)})
	}
	docs := splitDocuments(data)
	if len(docs) > MaxDocuments {
		problem(docs[MaxDocuments].line, "more than %d documents; read only the first %d", MaxDocuments, MaxDocuments)
		docs = docs[:MaxDocuments]
	}
	// Parse documents in parallel (parsing is most of the cost of an
	// audit), a chunk at a time so memory stays bounded, then add the
	// objects in input order.
	workers := max(1, min(runtime.GOMAXPROCS(0), 8))
	const chunk = 512
	parsed := make([]parsedDoc, min(chunk, len(docs)))
	for lo := 0; lo < len(docs); lo += chunk {
		part := docs[lo:min(lo+chunk, len(docs))]
		var wg sync.WaitGroup
		next := make(chan int, len(part))
		for i := range part {
			next <- i
		}
		close(next)
		for range workers {
			wg.Go(func() {
				for i := range next {
					parsed[i] = parseDocument(part[i])
				}
			})
		}
		wg.Wait()
		for i, doc := range part {
			if len(problems) > 1000 {
				problem(doc.line, "too many problems; stopped reading this input")
				return problems
			}
			pd := parsed[i]
			if pd.problem != "" {
				problem(pd.line, "%s", pd.problem)
				continue
			}
			for _, o := range pd.objects {
				addOne(s, name, o.line, o.obj, &problems)
			}
			parsed[i] = parsedDoc{}
		}
	}
	return problems
}

// parsedDoc is one document read into objects, or why it could not be.
type parsedDoc struct {
	objects []parsedObject
	problem string
	line    int // where the problem is
}

type parsedObject struct {
	obj  map[string]any
	line int
}

// parseDocument reads one YAML document into the objects it holds (one,
// or the items of a List).
func parseDocument(doc document) parsedDoc {
	fail := func(line int, format string, args ...any) parsedDoc {
		return parsedDoc{problem: fmt.Sprintf(format, args...), line: line}
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(doc.text))
	err := decodeSafe(dec, &root)
	if errors.Is(err, io.EOF) {
		return parsedDoc{} // an empty document
	}
	if err != nil {
		if line := helmLeftover(doc.text); line > 0 {
			return fail(doc.line+line-1, "%s", helmMessage)
		}
		line, msg := yamlErrorLine(err)
		return fail(doc.line+line-1, "malformed YAML: %s", msg)
	}
	conv := converter{budget: maxNodes}
	v, err := conv.value(&root, 0)
	var dup *duplicateKeyError
	if errors.As(err, &dup) {
		return fail(doc.line+dup.line-1, "malformed YAML: mapping key %q already defined at line %d", dup.key, doc.line+dup.first-1)
	}
	if err != nil {
		if line := helmLeftover(doc.text); line > 0 {
			return fail(doc.line+line-1, "%s", helmMessage)
		}
		return fail(doc.line, "%v", err)
	}
	if v == nil {
		return parsedDoc{} // a document holding only comments
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fail(doc.line, "document is not a Kubernetes object (a mapping with apiVersion and kind)")
	}
	line := doc.line + nodeLine(&root) - 1
	if templated(obj) {
		return fail(doc.line+max(helmLeftover(doc.text), 1)-1, "%s", helmMessage)
	}
	k, _ := obj["kind"].(string)
	if !strings.HasSuffix(k, "List") || obj["items"] == nil {
		return parsedDoc{objects: []parsedObject{{obj, line}}}
	}
	items, ok := obj["items"].([]any)
	if !ok {
		return fail(line, "%s: items is not a list", k)
	}
	itemNodes := listItemNodes(&root)
	var out parsedDoc
	for i, it := range items {
		itemLine := line
		if i < len(itemNodes) {
			itemLine = doc.line + itemNodes[i].Line - 1
		}
		m, ok := it.(map[string]any)
		if !ok {
			return fail(itemLine, "%s item %d is not an object", k, i+1)
		}
		out.objects = append(out.objects, parsedObject{m, itemLine})
	}
	return out
}

func addOne(s *Snapshot, file string, line int, m map[string]any, problems *[]incidentlib.InputProblem) {
	u := &unstructured.Unstructured{Object: m}
	ref := incidentlib.ObjectRef{File: file, Line: line, APIVersion: stringField(m, "apiVersion"), Kind: stringField(m, "kind"),
		Namespace: stringField(m, "metadata", "namespace"), Name: stringField(m, "metadata", "name")}
	if err := s.Add(u, ref); err != nil {
		*problems = append(*problems, incidentlib.InputProblem{Object: ref, Message: err.Error()})
	}
}

// decodeSafe decodes one YAML document, turning a parser panic into an
// error.
func decodeSafe(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: line 1: the parser gave up: %v", r)
		}
	}()
	return dec.Decode(n)
}

// document is one YAML document of an input and the line it starts on.
type document struct {
	text []byte
	line int // 1-based line of the document's first line in the input
}

// splitDocuments cuts the input at "---" lines, so that a malformed
// document costs only itself and every line number is known.
func splitDocuments(data []byte) []document {
	var docs []document
	start, startLine, line := 0, 1, 1
	for i := 0; i <= len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		var text []byte
		next := len(data) + 1
		if end < 0 {
			text = data[i:]
		} else {
			text = data[i : i+end]
			next = i + end + 1
		}
		if isSeparator(text) {
			docs = append(docs, document{text: data[start:i], line: startLine})
			start, startLine = next, line+1
			if start > len(data) {
				start = len(data)
			}
		}
		i = next
		line++
	}
	if start < len(data) {
		docs = append(docs, document{text: data[start:], line: startLine})
	}
	return docs
}

// isSeparator reports whether a line starts a document ("---") or ends
// one ("...", YAML's document end marker, which a stream may use to write
// an explicit empty document: "---" then "..."). Either closes the
// document before it; what lies between an end marker and the next
// document is empty.
func isSeparator(line []byte) bool {
	line = bytes.TrimRight(line, " \t\r")
	if !bytes.HasPrefix(line, []byte("---")) && !bytes.HasPrefix(line, []byte("...")) {
		return false
	}
	rest := line[3:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '#'
}

// helmMessage says what to do about an unrendered template.
const helmMessage = "Helm template syntax ({{ … }}) found: render the chart first (helm template … | kubegap audit -)"

// templated reports whether an object that parsed still names itself
// with template syntax: a quoted "{{ .Release.Name }}" in its kind,
// apiVersion, name or namespace. "{{" elsewhere in values is left alone:
// rendered charts carry it legitimately, in alerting rules and config
// templates.
func templated(obj map[string]any) bool {
	for _, v := range []string{stringField(obj, "apiVersion"), stringField(obj, "kind"),
		stringField(obj, "metadata", "name"), stringField(obj, "metadata", "namespace")} {
		if strings.Contains(v, "{{") {
			return true
		}
	}
	return false
}

// helmLeftover returns the line (within data) of the first "{{" outside a
// comment, or 0.
func helmLeftover(data []byte) int {
	if !bytes.Contains(data, []byte("{{")) {
		return 0
	}
	for i, l := range bytes.Split(data, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if bytes.HasPrefix(t, []byte("#")) {
			continue
		}
		if bytes.Contains(t, []byte("{{")) && bytes.Contains(t, []byte("}}")) {
			return i + 1
		}
	}
	return 0
}

// yamlErrorLine pulls "line N" out of a YAML parser error.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	if strings.HasPrefix(msg, "line ") {
		rest := msg[len("line "):]
		if i := strings.Index(rest, ":"); i > 0 {
			if n, e := strconv.Atoi(rest[:i]); e == nil {
				return n, strings.TrimSpace(rest[i+1:])
			}
		}
	}
	return 1, msg
}

func nodeLine(n *yaml.Node) int {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return n.Content[0].Line
	}
	if n.Line > 0 {
		return n.Line
	}
	return 1
}

// listItemNodes returns the nodes of a List's items, for their lines.
func listItemNodes(root *yaml.Node) []*yaml.Node {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "items" && n.Content[i+1].Kind == yaml.SequenceNode {
			return n.Content[i+1].Content
		}
	}
	return nil
}

// converter turns a YAML node tree into the JSON-like values unstructured
// objects hold (map[string]any, []any, string, int64, float64, bool, nil),
// within a budget of values so that aliases cannot blow it up.
type converter struct{ budget int }

func (c *converter) value(n *yaml.Node, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("line %d: nested more than %d levels deep", n.Line, MaxDepth)
	}
	c.budget--
	if c.budget < 0 {
		return nil, fmt.Errorf("line %d: document expands to more than %d values (aliases?)", n.Line, maxNodes)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: unknown alias", n.Line)
		}
		return c.value(n.Alias, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		var first map[string]int // line of each key set explicitly
		if len(n.Content) > 2 {
			first = make(map[string]int, len(n.Content)/2)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				if err := c.merge(m, v, depth); err != nil {
					return nil, err
				}
				continue
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping key must be a plain value", k.Line)
			}
			if first != nil {
				if line, twice := first[k.Value]; twice {
					return nil, &duplicateKeyError{key: k.Value, line: k.Line, first: line}
				}
				first[k.Value] = k.Line
			}
			val, err := c.value(v, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, it := range n.Content {
			v, err := c.value(it, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// duplicateKeyError is a mapping that sets one key twice, which YAML
// forbids and kubectl rejects. Read leniently, the later value would win
// silently: two files joined without a --- line would become one object
// made of both.
type duplicateKeyError struct {
	key         string
	line, first int // lines in the document
}

func (e *duplicateKeyError) Error() string {
	return fmt.Sprintf("line %d: mapping key %q already defined at line %d", e.line, e.key, e.first)
}

// merge applies a "<<" merge key: keys already set win.
func (c *converter) merge(m map[string]any, v *yaml.Node, depth int) error {
	val, err := c.value(v, depth+1)
	if err != nil {
		return err
	}
	maps := []any{val}
	if l, ok := val.([]any); ok {
		maps = l
	}
	for _, x := range maps {
		mm, ok := x.(map[string]any)
		if !ok {
			return fmt.Errorf("line %d: a merge key must name a mapping", v.Line)
		}
		for k, vv := range mm {
			if _, set := m[k]; !set {
				m[k] = vv
			}
		}
	}
	return nil
}

// scalar types one scalar the way Kubernetes reads YAML (YAML 1.1-ish
// booleans are not supported by the API server's parser either).
func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		switch n.Value {
		case "true", "True", "TRUE":
			return true, nil
		case "false", "False", "FALSE":
			return false, nil
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %q is not a boolean", n.Line, n.Value)
		}
		return b, nil
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return i, nil
		}
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %q is not a number", n.Line, n.Value)
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %q is not a number", n.Line, n.Value)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("line %d: %q is not a finite number", n.Line, n.Value)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), nil
		}
		return f, nil
	}
	if n.Style == 0 && n.ShortTag() == "!!str" {
		// Kubernetes reads YAML as YAML 1.1, where plain yes, no, on and
		// off are booleans; so does kubegap, or a value kubectl rejects
		// (an env value of yes) would pass here.
		switch n.Value {
		case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
			return true, nil
		case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
			return false, nil
		}
	}
	return n.Value, nil
}
