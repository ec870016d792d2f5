package kubegap

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The blind set (testdata/blind, see its README): five public applications
// judged by hand by reviewers who never read kubegap's code nor ran it.
// expected.yaml was written before any tool ran; judged-after.yaml judges
// the findings expected.yaml did not cover; citations-judged.yaml judges
// every (check, case) citation pair.

// blindApps are the applications of the blind set.
var blindApps = []string{"k8s-examples", "argo-workflows", "gatekeeper", "cloudnative-pg", "kube-thanos"}

// judgedFiles are the judgement files beside the manifests.
var judgedFiles = map[string]bool{"expected.yaml": true, "judged-after.yaml": true, "citations-judged.yaml": true}

type blindEntry struct {
	App       string `yaml:"app"`
	Kind      string `yaml:"kind"`
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
	Check     string `yaml:"check"`
	Severity  string `yaml:"severity"`
	Verdict   string `yaml:"verdict"`
}

// blindCheck maps the reviewer's names for the checks issue 19 added
// (written before they had IDs) to their IDs.
var blindCheck = map[string]string{
	"new:hpa-target-sets-replicas": "KG025", "new:no-cpu-request": "KG026", "new:no-liveness-probe": "KG027",
	"new:pull-always-statefulset": "KG029", "new:floating-tag": "KG030", "new:webhook-one-replica": "KG031",
}

func (e blindEntry) key() string {
	c := e.Check
	if id, ok := blindCheck[c]; ok {
		c = id
	}
	return e.Kind + "/" + e.Namespace + "/" + e.Name + "/" + c
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// blindFigures are what the blind set measures.
type blindFigures struct {
	raw                                 int // findings as printed
	refused                             int // files kubegap refused to read
	findings, right, wrong, unjudged    int // (object, check) pairs
	high, highRight                     int
	gaps, found                         int // judged gaps a check covers, and those found
	citations, direct, verifiedCitation int
	perApp                              []string
}

// blindSetApps lists a set's applications: its directories.
func blindSetApps(t *testing.T, set string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join("testdata", set))
	if err != nil {
		t.Fatal(err)
	}
	var apps []string
	for _, e := range ents {
		if e.IsDir() {
			apps = append(apps, e.Name())
		}
	}
	return apps
}

// measureBlind audits each application of a blind set (testdata/<set>)
// and scores the findings against its judgements; judged-after.yaml, when
// the set has one, judges the findings expected.yaml did not cover.
func measureBlind(t *testing.T, set string, apps []string) blindFigures {
	t.Helper()
	var fig blindFigures
	var after []blindEntry
	if _, err := os.Stat(filepath.Join("testdata", set, "judged-after.yaml")); err == nil {
		readYAML(t, filepath.Join("testdata", set, "judged-after.yaml"), &after)
	}
	for _, app := range apps {
		dir := filepath.Join("testdata", set, app)
		var exp struct {
			Gaps    []blindEntry `yaml:"gaps"`
			NotAGap []blindEntry `yaml:"not_a_gap"`
		}
		readYAML(t, filepath.Join(dir, "expected.yaml"), &exp)
		right, wrong := map[string]bool{}, map[string]bool{}
		covered := map[string]bool{}
		for _, g := range exp.Gaps {
			right[g.key()] = true
			if strings.HasPrefix(g.Check, "KG") || blindCheck[g.Check] != "" {
				covered[g.key()] = true
			}
		}
		for _, g := range exp.NotAGap {
			wrong[g.key()] = true
		}
		for _, a := range after {
			if a.App != app {
				continue
			}
			if a.Verdict == "right" {
				right[a.key()] = true
			} else {
				wrong[a.key()] = true
			}
		}
		s := NewSnapshot()
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || judgedFiles[d.Name()] || !(strings.HasSuffix(d.Name(), ".yaml") || strings.HasSuffix(d.Name(), ".yml")) {
				return err
			}
			fh, err := os.Open(path)
			if err != nil {
				return err
			}
			defer fh.Close()
			if problems := Load(filepath.ToSlash(path), fh, s); len(problems) > 0 {
				// A file kubegap refuses (petclinic's duplicate keys, which
				// the API server refuses too) is reported, not audited: its
				// judged gaps count as missed.
				t.Logf("refused: %s: %s", path, problems[0].Message)
				fig.refused++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		rep := Audit(context.Background(), s, Policy{}, nil)
		found := map[string]bool{}
		var appRight, appWrong, appUnjudged int
		for _, f := range rep.Findings {
			k := blindEntry{Kind: f.Object.Kind, Namespace: f.Object.Namespace, Name: f.Object.Name, Check: f.CheckID}.key()
			fig.raw++
			if found[k] {
				// One object's gap found by one check counts once: a
				// check that reports it per route or per container is
				// judged once, as the reviewers judged it.
				continue
			}
			found[k] = true
			fig.findings++
			high := f.Severity == "high" || f.Severity == "critical"
			if high {
				fig.high++
			}
			switch {
			case right[k]:
				fig.right++
				appRight++
				if high {
					fig.highRight++
				}
			case wrong[k]:
				fig.wrong++
				appWrong++
				t.Logf("false: %s %s %s: %s", app, f.CheckID, objectName(f.Object), f.Message)
			default:
				fig.unjudged++
				appUnjudged++
				t.Logf("unjudged: %s %s %s: %s", app, f.CheckID, objectName(f.Object), f.Message)
			}
		}
		var appGaps, appFound int
		for k := range covered {
			appGaps++
			if found[k] {
				appFound++
			} else {
				t.Logf("missed: %s %s", app, k)
			}
		}
		fig.gaps += appGaps
		fig.found += appFound
		fig.perApp = append(fig.perApp, fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d of %d |", app, rep.Objects, len(rep.Findings), appRight, appWrong, appUnjudged, appGaps-appFound, appGaps))
	}
	return fig
}

// measureCitations counts the citations kubegap prints and how the blind
// reviewers judged them.
func measureCitations(t *testing.T, fig *blindFigures) {
	t.Helper()
	var pairs []struct {
		Check, Case, Verdict string
		Verified             bool
	}
	readYAML(t, filepath.Join("testdata", "blind", "citations-judged.yaml"), &pairs)
	judged := map[string]string{}
	verified := map[string]bool{}
	for _, p := range pairs {
		judged[p.Check+"/"+p.Case] = p.Verdict
		verified[p.Check+"/"+p.Case] = p.Verified
	}
	table, err := citationTable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Checks() {
		for _, cc := range table[c.ID] {
			k := c.ID + "/" + cc.ID
			fig.citations++
			if judged[k] == "direct" {
				fig.direct++
			} else if judged[k] == "" {
				t.Logf("citation not judged yet: %s", k)
			}
			if verified[k] {
				fig.verifiedCitation++
			}
		}
	}
}

func logBlind(t *testing.T, fig blindFigures) {
	t.Helper()
	t.Logf("%d files refused; %d findings printed; (object, check) pairs %d: right %d, false %d, unjudged %d; high %d (right %d); judged gaps with a check %d, found %d; citations %d, direct %d, verified %d",
		fig.refused, fig.raw, fig.findings, fig.right, fig.wrong, fig.unjudged, fig.high, fig.highRight, fig.gaps, fig.found, fig.citations, fig.direct, fig.verifiedCitation)
	t.Log("| app | objects | findings | right | false | not judged | judged gaps missed |")
	for _, l := range fig.perApp {
		t.Log(l)
	}
}

// TestBlindSet measures kubegap against the blind set and fails if a
// change makes it worse than the figures recorded in docs/kubegap.md.
// Run with -v to print the table.
func TestBlindSet(t *testing.T) {
	fig := measureBlind(t, "blind", blindApps)
	measureCitations(t, &fig)
	logBlind(t, fig)
	if fig.findings == 0 {
		t.Fatal("no findings on the blind set: the manifests did not load")
	}
	// Floors: the figures recorded in docs/kubegap.md (tuning figures, since
	// the rules were changed on seeing these files' results), so that a
	// change that adds false findings, a false HIGH, or loses judged gaps
	// is seen. Issue 19's targets: at most 2% false, HIGH right 90% or more.
	checkBlindFloors(t, fig, 0.02, 0.70, "0% (0 of 52), the target at most 2%", "74% (49 of 66)")
}

// TestBlindSet2 measures kubegap against the second blind set
// (testdata/blind2, judged while the first set's results were being
// tuned on). Run with -v to print the table.
func TestBlindSet2(t *testing.T) {
	fig := measureBlind(t, "blind2", blindSetApps(t, "blind2"))
	logBlind(t, fig)
	if fig.findings == 0 {
		t.Fatal("no findings on the second blind set: the manifests did not load")
	}
	// Floors: the figures recorded in docs/kubegap.md after the two rule
	// changes made on seeing this set's first results (tuning figures from
	// then on).
	checkBlindFloors(t, fig, 0.08, 0.75, "7.7% (4 of 52)", "76% (47 of 62)")
}

// TestBlindSet3 measures kubegap against the third blind set
// (testdata/blind3, judged before any tool ran on it). Run with -v to
// print the table.
func TestBlindSet3(t *testing.T) {
	fig := measureBlind(t, "blind3", blindSetApps(t, "blind3"))
	logBlind(t, fig)
	if fig.findings == 0 {
		t.Fatal("no findings on the third blind set: the manifests did not load")
	}
	// Floors: before any change made on seeing this set, 4 of 52 pairs
	// were false (7.7%) and 47 of 59 judged gaps were found; after the
	// changes made on seeing it (tuning figures from then on), 0 of 55
	// and 54 of 59 (docs/kubegap.md).
	checkBlindFloors(t, fig, 0.02, 0.9, "0% (0 of 55)", "92% (54 of 59)")
}

// checkBlindFloors fails when a set's figures fall below those recorded in
// docs/kubegap.md: more false (object, check) pairs than maxFalse, a HIGH
// finding right less than 90% of the time (issue 19's target), or fewer
// judged gaps found than minFound. recorded names the figures for the
// message.
func checkBlindFloors(t *testing.T, fig blindFigures, maxFalse, minFound float64, recordedFalse, recordedFound string) {
	t.Helper()
	if share := float64(fig.wrong) / float64(fig.findings); share > maxFalse {
		t.Errorf("%.1f%% of (object, check) pairs found are judged false; the recorded figure is %s", 100*share, recordedFalse)
	}
	if fig.high > 0 && float64(fig.highRight)/float64(fig.high) < 0.9 {
		t.Errorf("%d of %d HIGH findings are right; the target is 90%%", fig.highRight, fig.high)
	}
	if share := float64(fig.found) / float64(fig.gaps); share < minFound {
		t.Errorf("%d of %d judged gaps found (%.0f%%); the recorded figure is %s", fig.found, fig.gaps, 100*share, recordedFound)
	}
}
