package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/kubegap"
)

// listFlag is a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// auditConfig is everything `kubegap audit` is told on its command line.
type auditConfig struct {
	format       string
	configFile   string
	minSeverity  string
	caseDirs     listFlag
	noBuiltin    bool
	baseURL      string
	maxCitations int
	paths        []string
	// Live-cluster input (--cluster, --context, --namespace,
	// --all-namespaces) is added beside these: package kubegap/cluster
	// fills the same Snapshot through Snapshot.Add and Link.
}

// MaxFiles bounds how many files one audit reads from directories.
const MaxFiles = 100_000

func newFlagSet(name string, m *Main) *flag.FlagSet {
	fs := flag.NewFlagSet("kubegap "+name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	return fs
}

func (m *Main) runAudit(ctx context.Context, args []string) int {
	fs := newFlagSet("audit", m)
	var cfg auditConfig
	fs.StringVar(&cfg.format, "format", "text", "output format: text, json or sarif")
	fs.StringVar(&cfg.configFile, "config", "", "policy file: checks to run, severity overrides, suppressions (see docs/kubegap.md)")
	fs.StringVar(&cfg.minSeverity, "min-severity", "", "report only findings at or above: low, medium, high or critical")
	fs.Var(&cfg.caseDirs, "cases", "a directory of your own case files, cited beside the shipped ones (repeatable)")
	fs.BoolVar(&cfg.noBuiltin, "no-builtin", false, "cite only the cases from --cases, not the shipped ones")
	fs.StringVar(&cfg.baseURL, "base-url", "", "the library's site, to link cited cases and checks (e.g. https://incidents.example.org)")
	fs.IntVar(&cfg.maxCitations, "max-citations", 5, "shipped cases cited per check, in the citation table's order, and a team's own (--cases) as many again (1-20)")
	cl := addClusterFlags(fs) // --cluster and its flags: cluster.go
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, "usage: kubegap audit [flags] [PATH|-]...\n       kubegap audit --cluster [--kubeconfig F] [--context C] [-n NS | -A] [flags]\n\nAudits manifests: files, directories (read recursively: *.yaml, *.yml, *.json) and - for standard\ninput (helm template … | kubegap audit -). Flags may come before or after the paths.\nWith --cluster it audits a live cluster instead, read-only (it only lists), progress on standard error.\nExit 0 nothing at or above --min-severity, 1 findings, 2 usage or input error.\n\nflags:")
		fs.PrintDefaults()
	}
	// Let flags follow paths: kubegap audit k8s/ --format json.
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		cfg.paths = append(cfg.paths, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	switch cfg.format {
	case "text", "json", "sarif":
	default:
		fmt.Fprintf(m.Stderr, "kubegap audit: --format %q: use text, json or sarif\n", cfg.format)
		return exitUsage
	}
	if cfg.maxCitations < 1 || cfg.maxCitations > 20 {
		fmt.Fprintln(m.Stderr, "kubegap audit: --max-citations must be between 1 and 20")
		return exitUsage
	}
	if err := cl.check(len(cfg.paths)); err != nil {
		fmt.Fprintf(m.Stderr, "kubegap audit: %v\n", err)
		return exitUsage
	}
	if len(cfg.paths) == 0 && !cl.on {
		fmt.Fprintln(m.Stderr, "kubegap audit: name manifest files or directories, or - for standard input")
		fs.Usage()
		return exitUsage
	}
	policy := kubegap.Policy{}
	if cfg.configFile != "" {
		f, err := os.Open(cfg.configFile)
		if err != nil {
			fmt.Fprintf(m.Stderr, "kubegap audit: --config: %v\n", err)
			return exitUsage
		}
		policy, err = kubegap.ReadPolicy(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(m.Stderr, "kubegap audit: %s: %v\n", cfg.configFile, err)
			return exitUsage
		}
	}
	if cfg.minSeverity != "" {
		s := incidentlib.CheckSeverity(cfg.minSeverity)
		if s.Rank() == 0 {
			fmt.Fprintf(m.Stderr, "kubegap audit: --min-severity %q: use low, medium, high or critical\n", cfg.minSeverity)
			return exitUsage
		}
		policy.MinSeverity = s
	}

	// An audit is a short-lived burst of allocation (every manifest value
	// becomes a map entry): collect garbage less often, within a memory
	// ceiling, unless the user tuned the collector. It cuts a 10,000-object
	// audit's CPU time by about a fifth (docs/performance.md).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}

	// Citations come from the compiled-in table: no corpus is indexed.
	// Only a team's own cases (--cases) are loaded, to cite those that
	// name a check.
	var team []*incidentlib.Case
	if len(cfg.caseDirs) > 0 {
		var code int
		team, code = m.loadTeamCases("kubegap audit", cfg.caseDirs)
		if code != exitOK {
			return code
		}
	}
	citer := kubegap.TableCiter(kubegap.TableOptions{BaseURL: cfg.baseURL, Max: cfg.maxCitations, NoBuiltin: cfg.noBuiltin, Team: team})

	snap := kubegap.NewSnapshot()
	problems, err := m.loadPaths(cfg.paths, snap)
	if err != nil {
		fmt.Fprintf(m.Stderr, "kubegap audit: %v\n", err)
		return exitUsage
	}
	if cl.on {
		problems, err = m.loadCluster(ctx, cl, snap)
		if err != nil {
			fmt.Fprintf(m.Stderr, "kubegap audit: %v\n", err)
			return exitUsage
		}
	}

	rep := kubegap.Audit(ctx, snap, policy, citer)
	rep.Problems = append(problems, rep.Problems...)
	if ctx.Err() != nil {
		fmt.Fprintln(m.Stderr, "kubegap audit: interrupted")
		return exitUsage
	}

	switch cfg.format {
	case "json":
		err = kubegap.WriteJSON(m.Stdout, rep, version())
	case "sarif":
		err = kubegap.WriteSARIF(ctx, m.Stdout, rep, kubegap.SARIFOptions{Version: version(), BaseURL: cfg.baseURL, Citer: citer})
	default:
		err = kubegap.WriteText(m.Stdout, rep, kubegap.TextOptions{Color: m.Color})
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "kubegap audit: writing the report: %v\n", err)
		return exitUsage
	}
	switch {
	case len(rep.Problems) > 0:
		if cfg.format != "text" {
			fmt.Fprintf(m.Stderr, "kubegap audit: %d input problems (listed in the report)\n", len(rep.Problems))
		}
		return exitUsage
	case len(rep.Findings) > 0:
		return exitFindings
	}
	return exitOK
}

// loadPaths reads every named file, directory and "-" into the snapshot.
// Problems with one object or document are returned to report; an error
// (a path that does not exist) stops the audit.
func (m *Main) loadPaths(paths []string, snap *kubegap.Snapshot) ([]incidentlib.InputProblem, error) {
	var problems []incidentlib.InputProblem
	stdinRead := false
	files := 0
	for _, p := range paths {
		if p == "-" {
			if stdinRead {
				return nil, fmt.Errorf("- (standard input) is named twice")
			}
			stdinRead = true
			problems = append(problems, kubegap.Load("-", m.Stdin, snap)...)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, unwrapPathError(err))
		}
		var names []string
		if st.IsDir() {
			err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() {
					if path != p && strings.HasPrefix(d.Name(), ".") {
						return filepath.SkipDir // .git and the like
					}
					return nil
				}
				switch strings.ToLower(filepath.Ext(path)) {
				case ".yaml", ".yml", ".json":
					names = append(names, path)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			sort.Strings(names)
		} else {
			names = []string{p}
		}
		for _, name := range names {
			files++
			if files > MaxFiles {
				return nil, fmt.Errorf("more than %d files; audit a smaller tree", MaxFiles)
			}
			f, err := os.Open(name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, unwrapPathError(err))
			}
			problems = append(problems, kubegap.Load(displayPath(name), f, snap)...)
			f.Close()
		}
	}
	return problems, nil
}

// displayPath names a file in findings: relative to the working directory
// when it lies under it, so SARIF locations resolve against the checkout
// as code-scanning services expect.
func displayPath(name string) string {
	if !filepath.IsAbs(name) {
		return filepath.Clean(name)
	}
	wd, err := os.Getwd()
	if err != nil {
		return name
	}
	rel, err := filepath.Rel(wd, name)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return name
	}
	return rel
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// loadTeamCases reads a team's case directories (--cases) only, checking
// them as incidentlib validate does and checking that every check they
// name in kubegap_checks exists. cmd names the command in messages.
func (m *Main) loadTeamCases(cmd string, dirs []string) ([]*incidentlib.Case, int) {
	c, problems, err := corpus.Load(corpus.Options{CaseDirs: dirs, NoBuiltin: true, Now: m.Now()})
	if err != nil {
		fmt.Fprintf(m.Stderr, "%s: --cases: %v\n", cmd, err)
		return nil, exitUsage
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(m.Stderr, p)
		}
		fmt.Fprintf(m.Stderr, "%s: the cases have %d problems (incidentlib validate lists them)\n", cmd, len(problems))
		return nil, exitUsage
	}
	if bad := kubegap.UnknownChecks(c.Cases); len(bad) > 0 {
		for _, b := range bad {
			fmt.Fprintf(m.Stderr, "%s: --cases: %s\n", cmd, b)
		}
		return nil, exitUsage
	}
	return c.Cases, exitOK
}

func (m *Main) runChecks(args []string) int {
	fs := newFlagSet("checks", m)
	format := fs.String("format", "text", "text or json")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	checks := kubegap.Checks()
	switch *format {
	case "json":
		type guard struct {
			Facet string `json:"facet"`
			Slug  string `json:"slug"`
		}
		type cited struct {
			Case string `json:"case"`
			Why  string `json:"why"`
		}
		type check struct {
			ID       string  `json:"id"`
			Title    string  `json:"title"`
			Severity string  `json:"severity"`
			Rule     string  `json:"rule"`
			Why      string  `json:"why"`
			Fix      string  `json:"fix"`
			FixYAML  string  `json:"fixYAML"`
			Guards   []guard `json:"guards"`
			Cases    []cited `json:"cases"` // chosen: each shows the gap directly
			Note     string  `json:"note,omitempty"`
		}
		out := make([]check, 0, len(checks))
		for _, c := range checks {
			jc := check{ID: c.ID, Title: c.Title, Severity: string(c.Severity), Rule: c.Rule, Why: c.Why, Fix: c.Fix, FixYAML: c.FixYAML, Guards: []guard{}, Cases: []cited{}}
			for _, g := range c.Guards {
				jc.Guards = append(jc.Guards, guard{string(g.Facet), g.Slug})
			}
			for _, cc := range c.Cases {
				jc.Cases = append(jc.Cases, cited{cc.ID, cc.Why})
			}
			if len(c.Cases) < incidentlib.FewCases {
				jc.Note = incidentlib.FewCasesNote
			}
			out = append(out, jc)
		}
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return exitUsage
		}
	case "text":
		for _, c := range checks {
			ids := make([]string, len(c.Cases))
			for i, cc := range c.Cases {
				ids[i] = cc.ID
			}
			cites := strings.Join(ids, ", ")
			if len(c.Cases) < incidentlib.FewCases {
				cites = strings.TrimPrefix(cites+"; fewer than two public outages known yet", "; ")
			}
			fmt.Fprintf(m.Stdout, "%s\t%-8s\t%s\t(%s)\n", c.ID, c.Severity, c.Title, cites)
		}
	default:
		fmt.Fprintf(m.Stderr, "kubegap checks: --format %q: use text or json\n", *format)
		return exitUsage
	}
	return exitOK
}
