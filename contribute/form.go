package contribute

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
)

// caseForm is a case file as the contributor form holds it: the case
// format's own shape (corpus.CaseFile), one field per key under the same
// names, so the form and the YAML view convert into each other without
// loss of meaning. Form fields are named by their path in the file:
// "title", "timeline.started", "sources.0.url". Severity is the one key
// the form has no field for: it is set by rule, never written by hand.
type caseForm corpus.CaseFile

type (
	timelineForm     = corpus.TimelineFile
	actionItemForm   = corpus.ActionItemFile
	quoteForm        = corpus.QuoteFile
	sourceForm       = corpus.SourceFile
	verificationForm = corpus.VerificationFile
)

// maxRows bounds the rows of one list the form reads (sources, action
// items, quotes, remediation steps).
const maxRows = 200

// rowMap says which row of the page each list item came from, since
// empty rows are dropped: rowMap["sources"][0] == 2 when the first source
// was typed in the page's third row.
type rowMap map[string][]int

// formFromValues reads the contributor form. Empty rows are left out; the
// rowMap gives the page's row of each item that is kept.
func formFromValues(v url.Values) (caseForm, rowMap) {
	get := func(k string) string { return prose(v.Get(k)) }
	f := caseForm{
		ID: get("id"), Title: get("title"), Company: get("company"),
		Timeline: timelineForm{Started: get("timeline.started"), Detected: get("timeline.detected"),
			Mitigated: get("timeline.mitigated"), Resolved: get("timeline.resolved"), Reported: get("timeline.reported")},
		Scope: get("scope"), UsersAffected: get("users_affected"), Region: get("region"),
		TimeToDetect: get("time_to_detect"), TimeToResolve: get("time_to_resolve"),
		Summary: get("summary"), Symptoms: get("symptoms"),
		SymptomTerms: slugs(v["symptom_terms"]), Trigger: get("trigger"), RootCause: get("root_cause"),
		Components: slugs(v["components"]), ContributingFactors: slugs(v["contributing_factors"]),
		KubegapChecks: slugs(strings.FieldsFunc(v.Get("kubegap_checks"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })),
		Detection:     get("detection"), Lessons: get("lessons"),
		Verification: verificationForm{Status: get("verification.status"), Against: get("verification.against"), Note: get("verification.note")},
	}
	rows := rowMap{}
	for _, i := range rowIndexes(v, "remediation") {
		if s := get("remediation." + strconv.Itoa(i)); s != "" {
			f.Remediation = append(f.Remediation, s)
			rows["remediation"] = append(rows["remediation"], i)
		}
	}
	for _, i := range rowIndexes(v, "action_items") {
		p := "action_items." + strconv.Itoa(i) + "."
		a := actionItemForm{Text: get(p + "text"), Estimate: get(p + "estimate")}
		if a != (actionItemForm{}) {
			f.ActionItems = append(f.ActionItems, a)
			rows["action_items"] = append(rows["action_items"], i)
		}
	}
	for _, i := range rowIndexes(v, "quoted") {
		p := "quoted." + strconv.Itoa(i) + "."
		q := quoteForm{Text: get(p + "text"), Kind: get(p + "kind"), Source: get(p + "source")}
		if q != (quoteForm{}) {
			f.Quoted = append(f.Quoted, q)
			rows["quoted"] = append(rows["quoted"], i)
		}
	}
	for _, i := range rowIndexes(v, "sources") {
		p := "sources." + strconv.Itoa(i) + "."
		s := sourceForm{URL: get(p + "url"), Type: get(p + "type"), Title: get(p + "title"), Retrieved: get(p + "retrieved"), ArchivedURL: get(p + "archived_url")}
		if s != (sourceForm{}) {
			f.Sources = append(f.Sources, s)
			rows["sources"] = append(rows["sources"], i)
		}
	}
	return f, rows
}

// rowIndexes are the row numbers of a list present in the form, in order.
func rowIndexes(v url.Values, list string) []int {
	var out []int
	for k := range v {
		rest, ok := strings.CutPrefix(k, list+".")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, ".")
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < maxRows && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// prose normalises what a text field sends: the line ends browsers send
// (CRLF), and white space around it.
func prose(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func slugs(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// formFromYAML reads a case file into the form. A file the form cannot
// hold (not YAML, not a mapping, a key the case format does not have) is
// an error that says why; the YAML view keeps it as it is.
func formFromYAML(content []byte) (caseForm, error) {
	var f caseForm
	if len(bytes.TrimSpace(content)) == 0 {
		return f, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(content))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
		msg = strings.ReplaceAll(msg, "in type contribute.caseForm", "in the case format")
		msg = strings.ReplaceAll(msg, "in type corpus.CaseFile", "in the case format")
		msg = regexp.MustCompile(`in type (contribute|corpus)\.\w+`).ReplaceAllString(msg, "here")
		return caseForm{}, fmt.Errorf("the form cannot show this file until it is fixed here: %s", msg)
	}
	if f.Severity != "" {
		return caseForm{}, errors.New("the form cannot show this file: severity is not written by hand (it follows from the symptom terms); remove its line here")
	}
	f.normalise()
	if where := f.brokenLine(); where != "" {
		return caseForm{}, fmt.Errorf("the form cannot show this file: %s holds a line break, and its field in the form is one line; edit it here, or write it on one line", where)
	}
	return f, nil
}

// brokenLine names the first value with a line break that the form shows
// in a one-line field (which would lose it), or "".
func (f *caseForm) brokenLine() string {
	one := []struct{ path, v string }{{"title", f.Title}, {"company", f.Company}, {"users_affected", f.UsersAffected},
		{"region", f.Region}, {"timeline.started", f.Timeline.Started}, {"timeline.detected", f.Timeline.Detected},
		{"timeline.mitigated", f.Timeline.Mitigated}, {"timeline.resolved", f.Timeline.Resolved}, {"timeline.reported", f.Timeline.Reported},
		{"time_to_detect", f.TimeToDetect}, {"time_to_resolve", f.TimeToResolve}, {"root_cause", f.RootCause},
		{"verification.status", f.Verification.Status}, {"verification.against", f.Verification.Against}}
	for i, r := range f.Remediation {
		one = append(one, struct{ path, v string }{fmt.Sprintf("remediation[%d]", i), r})
	}
	for i, a := range f.ActionItems {
		one = append(one, struct{ path, v string }{fmt.Sprintf("action_items[%d]", i), a.Text + a.Estimate})
	}
	for i, q := range f.Quoted {
		one = append(one, struct{ path, v string }{fmt.Sprintf("quoted[%d]", i), q.Text + q.Kind + q.Source})
	}
	for i, s := range f.Sources {
		one = append(one, struct{ path, v string }{fmt.Sprintf("sources[%d]", i), s.URL + s.Type + s.Title + s.Retrieved + s.ArchivedURL})
	}
	for _, list := range [][]string{f.SymptomTerms, f.Components, f.ContributingFactors, f.KubegapChecks} {
		for _, s := range list {
			one = append(one, struct{ path, v string }{"a list of terms", s})
		}
	}
	for _, o := range one {
		if strings.ContainsAny(o.v, "\n\r") {
			return o.path
		}
	}
	return ""
}

// normalise trims the white space the YAML block styles add, as the form
// does to what it is sent, so that form → YAML → form is the identity.
func (f *caseForm) normalise() {
	for _, p := range []*string{&f.ID, &f.Title, &f.Company, &f.Timeline.Started, &f.Timeline.Detected, &f.Timeline.Mitigated,
		&f.Timeline.Resolved, &f.Timeline.Reported, &f.Scope, &f.UsersAffected, &f.Region, &f.TimeToDetect, &f.TimeToResolve, &f.Summary,
		&f.Symptoms, &f.Trigger, &f.RootCause, &f.Detection, &f.Lessons, &f.Verification.Status, &f.Verification.Against,
		&f.Verification.Note} {
		*p = prose(*p)
	}
	for i := range f.Remediation {
		f.Remediation[i] = prose(f.Remediation[i])
	}
	for i := range f.ActionItems {
		f.ActionItems[i].Text, f.ActionItems[i].Estimate = prose(f.ActionItems[i].Text), prose(f.ActionItems[i].Estimate)
	}
	for i := range f.Quoted {
		q := &f.Quoted[i]
		q.Text, q.Kind, q.Source = prose(q.Text), prose(q.Kind), prose(q.Source)
	}
	for i := range f.Sources {
		s := &f.Sources[i]
		s.URL, s.Type, s.Title, s.Retrieved, s.ArchivedURL = prose(s.URL), prose(s.Type), prose(s.Title), prose(s.Retrieved), prose(s.ArchivedURL)
	}
	f.SymptomTerms, f.Components, f.ContributingFactors, f.KubegapChecks = slugs(f.SymptomTerms), slugs(f.Components), slugs(f.ContributingFactors), slugs(f.KubegapChecks)
}

// yamlOf writes the form as a case file, keys in the order of the case
// format. Optional fields left empty are left out (unknown is explicit);
// required ones are written even when empty, so that the validator's
// message about each lands on its own line, next to its field.
func (f caseForm) yamlOf() []byte {
	root := &yaml.Node{Kind: yaml.MappingNode}
	put := func(m *yaml.Node, key string, v *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	}
	str := func(m *yaml.Node, key, val string, required bool) {
		if val != "" || required {
			put(m, key, text(val))
		}
	}
	list := func(m *yaml.Node, key string, vals []string) {
		if len(vals) == 0 {
			return
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range vals {
			seq.Content = append(seq.Content, text(s))
		}
		put(m, key, seq)
	}
	str(root, "id", f.ID, false)
	str(root, "title", f.Title, true)
	str(root, "company", f.Company, true)
	tl := &yaml.Node{Kind: yaml.MappingNode}
	// started is written even when empty (the validator then asks for it),
	// unless the case gives when it was made public instead.
	str(tl, "started", f.Timeline.Started, f.Timeline.Reported == "")
	str(tl, "detected", f.Timeline.Detected, false)
	str(tl, "mitigated", f.Timeline.Mitigated, false)
	str(tl, "resolved", f.Timeline.Resolved, false)
	str(tl, "reported", f.Timeline.Reported, false)
	put(root, "timeline", tl)
	str(root, "scope", f.Scope, false)
	str(root, "users_affected", f.UsersAffected, false)
	str(root, "region", f.Region, false)
	str(root, "time_to_detect", f.TimeToDetect, false)
	str(root, "time_to_resolve", f.TimeToResolve, false)
	str(root, "summary", f.Summary, true)
	str(root, "symptoms", f.Symptoms, false)
	list(root, "symptom_terms", f.SymptomTerms)
	str(root, "trigger", f.Trigger, false)
	str(root, "root_cause", f.RootCause, false)
	list(root, "components", f.Components)
	list(root, "contributing_factors", f.ContributingFactors)
	list(root, "kubegap_checks", f.KubegapChecks)
	str(root, "detection", f.Detection, false)
	if len(f.Remediation) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, s := range f.Remediation {
			seq.Content = append(seq.Content, text(s))
		}
		put(root, "remediation", seq)
	}
	if len(f.ActionItems) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, a := range f.ActionItems {
			m := &yaml.Node{Kind: yaml.MappingNode}
			str(m, "text", a.Text, true)
			str(m, "estimate", a.Estimate, false)
			seq.Content = append(seq.Content, m)
		}
		put(root, "action_items", seq)
	}
	str(root, "lessons", f.Lessons, false)
	if len(f.Quoted) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, q := range f.Quoted {
			m := &yaml.Node{Kind: yaml.MappingNode}
			str(m, "text", q.Text, true)
			str(m, "kind", q.Kind, true)
			str(m, "source", q.Source, true)
			seq.Content = append(seq.Content, m)
		}
		put(root, "quoted", seq)
	}
	srcs := &yaml.Node{Kind: yaml.SequenceNode}
	if len(f.Sources) == 0 {
		srcs.Style = yaml.FlowStyle
	}
	for _, s := range f.Sources {
		m := &yaml.Node{Kind: yaml.MappingNode}
		str(m, "url", s.URL, s.Type != "seed-listing")
		str(m, "type", s.Type, true)
		str(m, "title", s.Title, false)
		str(m, "retrieved", s.Retrieved, false)
		str(m, "archived_url", s.ArchivedURL, false)
		srcs.Content = append(srcs.Content, m)
	}
	put(root, "sources", srcs)
	ver := &yaml.Node{Kind: yaml.MappingNode}
	str(ver, "status", f.Verification.Status, true)
	str(ver, "against", f.Verification.Against, false)
	str(ver, "note", f.Verification.Note, false)
	put(root, "verification", ver)

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		// Only nodes built above are encoded; they always encode.
		panic("contribute: encoding a case form: " + err.Error())
	}
	enc.Close()
	return buf.Bytes()
}

// text is a string as the case files write it: prose of several lines as
// a literal block, anything else as a plain or quoted scalar.
func text(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
		n.Value = s + "\n"
	}
	return n
}

// fieldMessage is a validator's problem placed next to the form field it
// is about; Field is "" for a problem of the file as a whole.
type fieldMessage struct {
	Field   string `json:"field,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// listKeys are the lists the form shows as rows, one row per item.
var listKeys = []string{"remediation", "action_items", "quoted", "sources"}

// pickerKeys are the lists the form shows as one picker or one text field.
var pickerKeys = []string{"symptom_terms", "components", "contributing_factors", "kubegap_checks"}

// placeProblems names the form field of each problem the validator found
// in content, by the line it gives and the field its message names, and
// puts it at the page's row (rows).
func placeProblems(content []byte, ps []incidentlib.Problem, rows rowMap) []fieldMessage {
	var root *yaml.Node
	var doc yaml.Node
	if yaml.Unmarshal(content, &doc) == nil && len(doc.Content) > 0 && doc.Content[0].Kind == yaml.MappingNode {
		root = doc.Content[0]
	}
	out := make([]fieldMessage, 0, len(ps))
	for _, p := range ps {
		field := ""
		if root != nil {
			field = fieldFor(root, p)
		}
		out = append(out, fieldMessage{Field: rows.pageRow(field), Line: p.Line, Message: p.Message})
	}
	return out
}

// pageRow turns the path of an item ("sources.0.url") into the path of
// the page's row it was typed in ("sources.2.url").
func (rows rowMap) pageRow(path string) string {
	parts := strings.SplitN(path, ".", 3)
	if len(parts) < 2 {
		return path
	}
	i, err := strconv.Atoi(parts[1])
	if err != nil || i < 0 || i >= len(rows[parts[0]]) {
		return path
	}
	parts[1] = strconv.Itoa(rows[parts[0]][i])
	return strings.Join(parts, ".")
}

var (
	requiredField = regexp.MustCompile(`^missing required field "([a-z_.]+)"`)
	leadingPath   = regexp.MustCompile(`^([a-z_]+)(?:\[(\d+)\])?(?:\.([a-z_]+))?`)
)

// fieldFor is the form field a problem is about: the field at its line,
// made more or less precise by the field its message names where the two
// agree ("sources[0]: missing type" is reported at the first line of the
// source, which is its url's).
func fieldFor(root *yaml.Node, p incidentlib.Problem) string {
	atLine := ""
	if p.Line > 0 {
		atLine = pathAtLine(root, p.Line, "")
	}
	named := ""
	if m := requiredField.FindStringSubmatch(p.Message); m != nil {
		named = m[1]
	} else if m := leadingPath.FindStringSubmatch(p.Message); m != nil && isCaseKey(m[1]) {
		named = m[1]
		if m[2] != "" {
			named += "." + m[2]
		}
		if m[3] != "" {
			named += "." + m[3]
		}
	}
	field := atLine
	if named != "" && (atLine == "" || requiredField.MatchString(p.Message) || within(atLine, named) || within(named, atLine)) {
		field = named
	}
	// A picker is one field, whichever of its terms is wrong.
	for _, k := range pickerKeys {
		if within(field, k) {
			return k
		}
	}
	if field == "id" || field == "severity" {
		return ""
	}
	return field
}

// within reports whether path is prefix or lies under it.
func within(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+".")
}

func isCaseKey(k string) bool {
	_, ok := caseKeys[k]
	return ok
}

var caseKeys = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, k := range []string{"id", "title", "company", "timeline", "scope", "users_affected", "region", "time_to_detect",
		"time_to_resolve", "summary", "symptoms", "symptom_terms", "trigger", "root_cause", "components",
		"contributing_factors", "kubegap_checks", "detection", "remediation", "action_items", "lessons", "quoted",
		"sources", "verification", "severity"} {
		m[k] = struct{}{}
	}
	return m
}()

// pathAtLine is the path of the deepest key or item of n whose text
// covers line: "timeline.started", "sources.1.url"; on the line of a key
// whose value starts below it, the key's own path.
func pathAtLine(n *yaml.Node, line int, prefix string) string {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch n.Kind {
	case yaml.MappingNode:
		best := -1
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Line <= line {
				best = i
			}
		}
		if best < 0 {
			return prefix
		}
		k, v := n.Content[best], n.Content[best+1]
		if k.Line == line && v.Line > line {
			return join(k.Value)
		}
		return pathAtLine(v, line, join(k.Value))
	case yaml.SequenceNode:
		best := -1
		for i, it := range n.Content {
			if it.Line <= line {
				best = i
			}
		}
		if best < 0 {
			return prefix
		}
		return pathAtLine(n.Content[best], line, join(strconv.Itoa(best)))
	}
	return prefix
}
