package kubegap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib"
)

// IgnoreAnnotation is the one annotation that suppresses checks on an
// object. Its value lists check IDs, then a colon and the reason:
//
//	kubegap.incidentlib.dev/ignore: "KG010,KG011: batch tier, one replica by design"
const IgnoreAnnotation = "kubegap.incidentlib.dev/ignore"

// Policy says which checks run and how their findings are reported. The
// zero value runs every check at its own severity.
type Policy struct {
	// Enable, when not empty, runs only these checks; Disable skips these.
	Enable  []string
	Disable []string
	// Severity overrides a check's severity, by check ID.
	Severity map[string]incidentlib.CheckSeverity
	// MinSeverity drops findings below it ("" keeps all).
	MinSeverity incidentlib.CheckSeverity
	// Suppress drops matching findings.
	Suppress []Suppression
}

// Suppression drops the findings of one check (or "*", every check) on the
// objects it matches. Namespace, Kind and Name are globs ("" matches any).
type Suppression struct {
	Check     string `yaml:"check"`
	Namespace string `yaml:"namespace"`
	Kind      string `yaml:"kind"`
	Name      string `yaml:"name"`
	Reason    string `yaml:"reason"`
}

// configFile is the --config file's format.
type configFile struct {
	Enable      []string          `yaml:"enable"`
	Disable     []string          `yaml:"disable"`
	Severity    map[string]string `yaml:"severity"`
	MinSeverity string            `yaml:"minSeverity"`
	Suppress    []Suppression     `yaml:"suppress"`
}

// MaxConfigBytes bounds a --config file.
const MaxConfigBytes = 1 << 20

// ReadPolicy reads a policy file (YAML, unknown fields rejected), checking
// every check ID and severity it names.
func ReadPolicy(r io.Reader) (Policy, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxConfigBytes+1))
	if err != nil {
		return Policy{}, err
	}
	if len(data) > MaxConfigBytes {
		return Policy{}, fmt.Errorf("config file is larger than 1 MiB")
	}
	var cf configFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cf); err != nil && err != io.EOF {
		return Policy{}, fmt.Errorf("config: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	p := Policy{Enable: cf.Enable, Disable: cf.Disable, Suppress: cf.Suppress, Severity: map[string]incidentlib.CheckSeverity{}}
	known := map[string]bool{}
	for _, c := range Checks() {
		known[c.ID] = true
	}
	for _, id := range append(append([]string{}, cf.Enable...), cf.Disable...) {
		if !known[id] {
			return Policy{}, fmt.Errorf("config: unknown check %q", id)
		}
	}
	for id, sev := range cf.Severity {
		if !known[id] {
			return Policy{}, fmt.Errorf("config: severity: unknown check %q", id)
		}
		s := incidentlib.CheckSeverity(sev)
		if s.Rank() == 0 {
			return Policy{}, fmt.Errorf("config: severity of %s: %q is not one of low, medium, high, critical", id, sev)
		}
		p.Severity[id] = s
	}
	if cf.MinSeverity != "" {
		p.MinSeverity = incidentlib.CheckSeverity(cf.MinSeverity)
		if p.MinSeverity.Rank() == 0 {
			return Policy{}, fmt.Errorf("config: minSeverity %q is not one of low, medium, high, critical", cf.MinSeverity)
		}
	}
	for i, s := range cf.Suppress {
		if s.Check != "*" && !known[s.Check] {
			return Policy{}, fmt.Errorf("config: suppress entry %d: unknown check %q", i+1, s.Check)
		}
		if strings.TrimSpace(s.Reason) == "" {
			return Policy{}, fmt.Errorf("config: suppress entry %d (%s): give a reason", i+1, s.Check)
		}
		for _, g := range []string{s.Namespace, s.Kind, s.Name} {
			if _, err := path.Match(g, ""); err != nil {
				return Policy{}, fmt.Errorf("config: suppress entry %d: bad pattern %q", i+1, g)
			}
		}
	}
	return p, nil
}

func (s Suppression) matches(checkID string, ref incidentlib.ObjectRef) bool {
	glob := func(pattern, v string) bool {
		if pattern == "" {
			return true
		}
		ok, _ := path.Match(pattern, v)
		return ok
	}
	return (s.Check == "*" || s.Check == checkID) && glob(s.Namespace, ref.Namespace) && glob(s.Kind, ref.Kind) && glob(s.Name, ref.Name)
}

// parseIgnore reads the ignore annotation: the check IDs it names, and
// whether it gives a reason.
func parseIgnore(v string) (ids map[string]bool, reason string) {
	list, reason, _ := strings.Cut(v, ":")
	ids = map[string]bool{}
	for _, id := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		ids[strings.ToUpper(id)] = true
	}
	return ids, strings.TrimSpace(reason)
}

// Audit runs the checks the policy enables over the snapshot (linking it
// first if needed) and returns the findings, sorted by file, line, object
// and check, each with its citations.
func Audit(ctx context.Context, s *Snapshot, p Policy, cite Citer) *incidentlib.AuditReport {
	s.Link()
	rep := &incidentlib.AuditReport{Objects: s.Objects, Skipped: map[string]int{}}
	for k, n := range s.Skipped {
		rep.Skipped[k] = n
	}
	enabled := map[string]bool{}
	for _, id := range p.Enable {
		enabled[id] = true
	}
	disabled := map[string]bool{}
	for _, id := range p.Disable {
		disabled[id] = true
	}
	// Check the ignore annotations once per object.
	type ignore struct{ ids map[string]bool }
	ignores := map[*Object]ignore{}
	lookupIgnore := func(o *Object) ignore {
		if ig, ok := ignores[o]; ok {
			return ig
		}
		v, ok := o.Annotations[IgnoreAnnotation]
		if !ok {
			ignores[o] = ignore{}
			return ignore{}
		}
		ids, reason := parseIgnore(v)
		if reason == "" {
			rep.Problems = append(rep.Problems, incidentlib.InputProblem{Object: o.Ref,
				Message: fmt.Sprintf("annotation %s gives no reason (write \"KG010: why\"); its checks are still suppressed", IgnoreAnnotation)})
		}
		ig := ignore{ids: ids}
		ignores[o] = ig
		return ig
	}
	for _, c := range catalogue() {
		if ctx.Err() != nil {
			break
		}
		if (len(enabled) > 0 && !enabled[c.ID]) || disabled[c.ID] {
			continue
		}
		sev := c.Severity
		if o, ok := p.Severity[c.ID]; ok {
			sev = o
		}
		if p.MinSeverity != "" && sev.Rank() < p.MinSeverity.Rank() {
			continue
		}
		var r reporter
		c.run(s, &r)
		if len(r.found) == 0 {
			continue
		}
		var cites []incidentlib.Citation
		if cite != nil {
			cites = cite.Cite(ctx, c.Check)
		}
		// One patch per object a check flags, made once.
		type patchOf struct{ patch, typ string }
		patches := map[*Object]patchOf{}
	findings:
		for _, f := range r.found {
			if lookupIgnore(f.obj).ids[c.ID] {
				continue
			}
			for _, sup := range p.Suppress {
				if sup.matches(c.ID, f.obj.Ref) {
					continue findings
				}
			}
			pt, ok := patches[f.obj]
			if !ok {
				pt.patch, pt.typ = makePatch(s, c.ID, f.obj)
				patches[f.obj] = pt
			}
			rep.Findings = append(rep.Findings, incidentlib.Finding{CheckID: c.ID, Title: c.Title, Severity: sev, Object: f.obj.Ref,
				Message: f.msg, Fix: c.Fix, FixYAML: c.FixYAML, Patch: pt.patch, PatchType: pt.typ, Citations: cites})
		}
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.Object != b.Object {
			return refLess(a.Object, b.Object)
		}
		if a.CheckID != b.CheckID {
			return a.CheckID < b.CheckID
		}
		return a.Message < b.Message
	})
	sortProblems(rep.Problems)
	return rep
}

func sortProblems(p []incidentlib.InputProblem) {
	sort.SliceStable(p, func(i, j int) bool { return refLess(p[i].Object, p[j].Object) })
}

// Auditor audits manifests given as text, for the MCP server and the web
// pages. It implements incidentlib.Auditor.
type Auditor struct {
	Citer  Citer  // nil: findings carry no citations
	Policy Policy // the zero value runs every check
}

// NewAuditor returns an Auditor citing through cite.
func NewAuditor(cite Citer, p Policy) *Auditor { return &Auditor{Citer: cite, Policy: p} }

var _ incidentlib.Auditor = (*Auditor)(nil)

// Checks returns the catalogue.
func (*Auditor) Checks() []incidentlib.Check { return Checks() }

// AuditManifests loads the manifests and audits them. Bad documents are in
// the report's Problems; the error is only for a cancelled context.
func (sv *Auditor) AuditManifests(ctx context.Context, name string, manifests []byte) (*incidentlib.AuditReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(manifests) > MaxInputBytes {
		return nil, incidentlib.Errorf(incidentlib.EINVALID, "manifests are larger than %d MiB", MaxInputBytes>>20)
	}
	s := NewSnapshot()
	problems := Load(name, bytes.NewReader(manifests), s)
	rep := Audit(ctx, s, sv.Policy, sv.Citer)
	rep.Problems = append(problems, rep.Problems...)
	sortProblems(rep.Problems)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rep, nil
}
