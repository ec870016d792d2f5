package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/kubegap"
	"github.com/incidentlib/incidentlib/mcpserver"
)

// `kubegap mcp` serves kubegap's audits to AI agents over MCP on standard
// input and output: audit_manifests (files, directories or text),
// audit_cluster (the live cluster of the kubeconfig, read-only) and
// kubegap_checks. Findings come in the shapes of the library's own
// audit_kubernetes tool (package mcpserver), citing the library's cases.

// mcpConfig is everything `kubegap mcp` is told on its command line.
type mcpConfig struct {
	caseDirs     listFlag
	noBuiltin    bool
	baseURL      string
	maxCitations int
	configFile   string
	kubeconfig   string
}

// mcpInstructions tell a model what the server is for.
const mcpInstructions = `kubegap audits Kubernetes manifests and live clusters, read-only, for gaps that have caused public outages: liveness probes that restart pods when a dependency fails, retries without a brake, missing disruption budgets, single replicas, unsafe rollouts and more.

Call audit_manifests with the paths of manifest files or directories (or their text, e.g. the output of helm template), or audit_cluster for the cluster of the current kubeconfig context. Each finding names the object and field, the fix (with YAML) and the public incidents where the same gap caused an outage: cite them when you explain a finding. kubegap_checks lists the checks. Nothing is ever changed: manifests are only read, and the cluster is only listed.`

func (m *Main) runMCP(ctx context.Context, args []string) int {
	fs := newFlagSet("mcp", m)
	var cfg mcpConfig
	fs.Var(&cfg.caseDirs, "cases", "a directory of your own case files, cited beside the shipped ones (repeatable)")
	fs.BoolVar(&cfg.noBuiltin, "no-builtin", false, "cite only the cases from --cases, not the shipped ones")
	fs.StringVar(&cfg.baseURL, "base-url", "", "the library's site, to link cited cases and checks (e.g. http://127.0.0.1:8080 where incidentlib serve runs); empty gives each case's public source instead")
	fs.IntVar(&cfg.maxCitations, "max-citations", 5, "shipped cases cited per check, in the citation table's order, and a team's own (--cases) as many again (1-20)")
	fs.StringVar(&cfg.configFile, "config", "", "policy file applied to every audit: checks to run, severity overrides, suppressions")
	fs.StringVar(&cfg.kubeconfig, "kubeconfig", "", "kubeconfig file for audit_cluster (default $KUBECONFIG, then ~/.kube/config, then the pod's service account)")
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, "usage: kubegap mcp [flags]\n\nServes kubegap's audits over MCP on standard input and output, for AI agents:\n  claude mcp add kubegap -- kubegap mcp\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(m.Stderr, "kubegap mcp: unexpected argument %q: the server takes its input from the tool calls\n", fs.Arg(0))
		return exitUsage
	}
	if cfg.maxCitations < 1 || cfg.maxCitations > 20 {
		fmt.Fprintln(m.Stderr, "kubegap mcp: --max-citations must be between 1 and 20")
		return exitUsage
	}
	policy := kubegap.Policy{}
	if cfg.configFile != "" {
		f, err := os.Open(cfg.configFile)
		if err != nil {
			fmt.Fprintf(m.Stderr, "kubegap mcp: --config: %v\n", err)
			return exitUsage
		}
		policy, err = kubegap.ReadPolicy(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(m.Stderr, "kubegap mcp: %s: %v\n", cfg.configFile, err)
			return exitUsage
		}
	}
	// Citations come from the compiled-in table, as in kubegap audit: no
	// corpus is indexed at start, and only a team's own cases are loaded.
	var team []*incidentlib.Case
	if len(cfg.caseDirs) > 0 {
		var code int
		team, code = m.loadTeamCases("kubegap mcp", cfg.caseDirs)
		if code != exitOK {
			return code
		}
	}
	t := &mcpTools{m: m, policy: policy, baseURL: strings.TrimRight(cfg.baseURL, "/"), kubeconfig: cfg.kubeconfig,
		citer: kubegap.TableCiter(kubegap.TableOptions{BaseURL: cfg.baseURL, Max: cfg.maxCitations, NoBuiltin: cfg.noBuiltin, Team: team})}
	err := t.server().Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(m.Stdin), Writer: nopWriteCloser{m.Stdout}})
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(m.Stderr, "kubegap mcp: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// shippedVocabulary reads the compiled-in vocabulary once.
var shippedVocabulary = sync.OnceValues(func() (*incidentlib.Vocabulary, error) {
	v, problems := corpus.LoadShippedVocabulary()
	if len(problems) > 0 {
		return nil, fmt.Errorf("the shipped vocabulary: %v", problems)
	}
	return v, nil
})

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpTools holds what the tool handlers share.
type mcpTools struct {
	m          *Main
	citer      kubegap.Citer
	policy     kubegap.Policy
	baseURL    string
	kubeconfig string
}

// server builds the MCP server with its tools.
func (t *mcpTools) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "kubegap", Title: "kubegap", Version: version()}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Capabilities: &mcp.ServerCapabilities{},
	})
	f := false
	mcp.AddTool(s, &mcp.Tool{
		Name:  "audit_manifests",
		Title: "Audit Kubernetes manifests",
		Description: "Audits Kubernetes manifests on disk (files, or directories read recursively for *.yaml, *.yml and *.json; relative paths are from the directory kubegap mcp started in) or given as text (several documents, kind: List, the output of helm template or kustomize build; at most 1 MiB). " +
			"Give paths or manifests, not both. Each finding names the object, file and line, the fix with YAML, and the public incidents where the same gap caused an outage: cite them. The files are only read.",
		InputSchema: schema[manifestsInput](),
		Annotations: &mcp.ToolAnnotations{Title: "Audit Kubernetes manifests", ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &f, OpenWorldHint: &f},
	}, t.auditManifests)
	t.addClusterTool(s)
	mcp.AddTool(s, &mcp.Tool{
		Name:  "kubegap_checks",
		Title: "kubegap checks",
		Description: "Lists kubegap's checks (ID, title, severity, the rule, the vocabulary terms each guards against), or, given id, one check in full: why it matters, the fix with YAML, and the incidents it cites. " +
			"Use it to explain a finding.",
		InputSchema: schema[mcpserver.CheckInput](),
		Annotations: &mcp.ToolAnnotations{Title: "kubegap checks", ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &f, OpenWorldHint: &f},
	}, t.checks)
	return s
}

// manifestsInput is the input of audit_manifests.
type manifestsInput struct {
	Paths       []string `json:"paths,omitempty" jsonschema:"manifest files or directories to audit (directories are read recursively for *.yaml, *.yml and *.json)"`
	Manifests   string   `json:"manifests,omitempty" jsonschema:"manifests as YAML or JSON text, instead of paths; at most 1 MiB"`
	MinSeverity string   `json:"min_severity,omitempty" jsonschema:"report only findings at or above this severity: low (default, everything), medium, high or critical"`
}

// severities is the enum of min_severity.
var severities = []any{"low", "medium", "high", "critical"}

// schema infers a tool's input schema, with the min_severity enum where the
// input has one. It panics on a type the inference rejects, which the tests
// catch.
func schema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	if p, ok := s.Properties["min_severity"]; ok {
		p.Enum = severities
	}
	return s
}

// inputError is bad input to a tool: the SDK returns it to the model as a
// tool result with isError, for the model to correct its call.
type inputError struct{ msg string }

func (e inputError) Error() string { return e.msg }

func (t *mcpTools) auditManifests(ctx context.Context, _ *mcp.CallToolRequest, in manifestsInput) (*mcp.CallToolResult, *mcpserver.AuditOutput, error) {
	min, err := mcpserver.ParseMinSeverity(in.MinSeverity)
	if err != nil {
		return nil, nil, inputError{incidentlib.ErrorMessage(err)}
	}
	text := strings.TrimSpace(in.Manifests) != ""
	switch {
	case len(in.Paths) > 0 && text:
		return nil, nil, inputError{"give paths or manifests, not both"}
	case len(in.Paths) == 0 && !text:
		return nil, nil, inputError{"give paths (manifest files or directories) or manifests (their text)"}
	case len(in.Manifests) > mcpserver.MaxManifestBytes:
		return nil, nil, inputError{fmt.Sprintf("manifests: %d bytes is over the limit of %d (1 MiB); write them to a file and pass its path", len(in.Manifests), mcpserver.MaxManifestBytes)}
	case len(in.Paths) > MaxFiles:
		return nil, nil, inputError{fmt.Sprintf("paths: %d paths; at most %d", len(in.Paths), MaxFiles)}
	}
	snap := kubegap.NewSnapshot()
	var problems []incidentlib.InputProblem
	if text {
		problems = kubegap.Load("manifests", strings.NewReader(in.Manifests), snap)
	} else {
		for _, p := range in.Paths {
			if strings.TrimSpace(p) == "-" || strings.TrimSpace(p) == "" {
				// Standard input is the protocol's channel here.
				return nil, nil, inputError{fmt.Sprintf("paths: %q is not a file or directory; pass text as manifests instead", p)}
			}
		}
		problems, err = t.m.loadPaths(in.Paths, snap)
		if err != nil {
			return nil, nil, inputError{"paths: " + err.Error()}
		}
	}
	return t.audit(ctx, snap, problems, min)
}

// audit runs the checks over a loaded snapshot and answers in the shape of
// the library's audit_kubernetes.
func (t *mcpTools) audit(ctx context.Context, snap *kubegap.Snapshot, problems []incidentlib.InputProblem, min incidentlib.CheckSeverity) (*mcp.CallToolResult, *mcpserver.AuditOutput, error) {
	rep := kubegap.Audit(ctx, snap, t.policy, t.citer)
	if err := ctx.Err(); err != nil {
		return nil, nil, inputError{"the audit was cancelled"}
	}
	rep.Problems = append(problems, rep.Problems...)
	return mcpserver.AuditResult(rep, min, t.baseURL)
}

func (t *mcpTools) checks(ctx context.Context, _ *mcp.CallToolRequest, in mcpserver.CheckInput) (*mcp.CallToolResult, *mcpserver.ChecksOutput, error) {
	// The vocabulary names each check's topic terms; it is read on the
	// first call, not at start.
	v, err := shippedVocabulary()
	if err != nil {
		return nil, nil, err
	}
	all := kubegap.Checks()
	out := &mcpserver.ChecksOutput{Checks: []mcpserver.CheckInfo{}}
	if strings.TrimSpace(in.ID) == "" {
		for _, c := range all {
			out.Checks = append(out.Checks, mcpserver.NewCheckInfo(c, v, t.baseURL))
		}
		return textResult(mcpserver.RenderChecksMarkdown(out)), out, nil
	}
	c, err := incidentlib.FindCheck(all, strings.TrimSpace(in.ID))
	if err != nil {
		return nil, nil, inputError{incidentlib.ErrorMessage(err)}
	}
	ci := mcpserver.NewCheckInfo(c, v, t.baseURL)
	ci.Why, ci.Fix, ci.FixYAML = c.Why, c.Fix, c.FixYAML
	ci.Citations = []mcpserver.AuditCitation{}
	for _, cit := range t.citer.Cite(ctx, c) {
		ci.Citations = append(ci.Citations, mcpserver.AuditCitation{CaseID: cit.CaseID, Title: cit.Title, URL: cit.URL, Reason: cit.Reason, Source: cit.Source})
	}
	out.Checks = append(out.Checks, ci)
	return textResult(mcpserver.RenderChecksMarkdown(out)), out, nil
}

func textResult(md string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: md}}}
}
