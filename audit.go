package incidentlib

import "context"

// This file holds what the library knows of kubegap, the read-only
// Kubernetes auditor: its checks and its findings. The web pages, the JSON
// API and the MCP server present them; package kubegap implements them.

// CheckSeverity ranks a kubegap finding.
type CheckSeverity string

// The check severities, lowest first.
const (
	CheckLow      CheckSeverity = "low"
	CheckMedium   CheckSeverity = "medium"
	CheckHigh     CheckSeverity = "high"
	CheckCritical CheckSeverity = "critical"
)

// CheckSeverities lists the severities, lowest first.
var CheckSeverities = []CheckSeverity{CheckLow, CheckMedium, CheckHigh, CheckCritical}

// Rank orders severities: low 1 … critical 4, 0 for an unknown value.
func (s CheckSeverity) Rank() int {
	for i, v := range CheckSeverities {
		if v == s {
			return i + 1
		}
	}
	return 0
}

// TermRef names one vocabulary term.
type TermRef struct {
	Facet Facet
	Slug  string
}

// Check is one kubegap rule as readers and agents see it.
type Check struct {
	ID       string // stable, e.g. "KG001"
	Title    string
	Severity CheckSeverity
	Rule     string // the rule in one sentence
	Why      string // why it matters, in the incidents' terms
	Fix      string // how to fix it, in words
	FixYAML  string // a YAML snippet showing the fix
	// Guards lists the vocabulary terms the check guards against: they link
	// the check to topic pages. They do not pick its citations.
	Guards []TermRef
	// Cases are the cases that show the check's gap directly, chosen by
	// reading them, each with one line saying how (kubegap/citations.yaml).
	Cases []CheckCase
}

// CheckCase is one case a check cites, and how that outage shows the gap.
type CheckCase struct {
	ID  string
	Why string // one line, in the library's words
}

// FewCases is the number of directly relevant cases below which a check
// says that few public outages showing its gap are known yet.
const FewCases = 2

// FewCasesNote is what a check with fewer than FewCases cases says.
const FewCasesNote = "Fewer than two public outages that show this gap directly are known yet."

// Citation is a case that shows what a gap costs.
type Citation struct {
	CaseID string
	Title  string
	URL    string   // the library's page for the case, when a base URL is known
	Source string   // the case's first public source URL, if any
	Terms  []string // unused since citations are chosen by hand; kept for the JSON shape
	Reason string   // how the outage shows the gap, in one line
}

// ObjectRef names one Kubernetes object.
type ObjectRef struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	File       string // manifest file, "-" for standard input; "" for a live cluster
	Line       int    // 1-based line of the object's start in File; 0 when unknown
}

// Finding is one gap kubegap found on one object.
type Finding struct {
	CheckID  string
	Title    string
	Severity CheckSeverity
	Object   ObjectRef
	Message  string // what is wrong on this object, naming the field
	Fix      string
	FixYAML  string // the check's fix, as a YAML snippet
	// Patch, when set, is the fix as a patch to this object, in YAML: a
	// strategic-merge patch (PatchType "strategic") or a JSON patch
	// ("json"), which applies cleanly to the object as found.
	Patch     string
	PatchType string
	// Citations are the check's citations; every finding of one check
	// shares them, so reports print them once per check.
	Citations []Citation
}

// InputProblem is an object or document kubegap could not audit, and why.
type InputProblem struct {
	Object  ObjectRef // as much as is known
	Message string
}

// AuditReport is the outcome of one audit.
type AuditReport struct {
	Findings []Finding
	Objects  int            // objects audited
	Skipped  map[string]int // kinds not audited, with counts
	Problems []InputProblem // bad input, reported per object
}

// Auditor audits Kubernetes manifests. The MCP server and the web pages use
// it through this interface; package kubegap implements it.
type Auditor interface {
	// Checks returns every check, by ID.
	Checks() []Check
	// AuditManifests audits YAML or JSON manifests given as text (several
	// documents, List kinds). name labels the text in findings.
	AuditManifests(ctx context.Context, name string, manifests []byte) (*AuditReport, error)
}
