package kubegap

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incidentlib/incidentlib"
)

func load(t testing.TB, name, text string) (*Snapshot, []incidentlib.InputProblem) {
	t.Helper()
	s := NewSnapshot()
	problems := Load(name, strings.NewReader(text), s)
	return s, problems
}

func TestLoadLinesAndLists(t *testing.T) {
	text := `# leading comment
apiVersion: v1
kind: Service
metadata: {name: a, namespace: ns}
spec: {selector: {app: a}}
---
---
# only a comment
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ServiceAccount
  metadata: {name: sa}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: d}
  spec:
    selector: {matchLabels: {app: a}}
    template:
      metadata: {labels: {app: a}}
      spec: {containers: [{name: c, image: x:1}]}
--- # trailing comment on the separator
{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
`
	s, problems := load(t, "m.yaml", text)
	if len(problems) > 0 {
		t.Fatalf("problems: %+v", problems)
	}
	var got []string
	for _, o := range []*Object{&s.Services[0].Object, s.ServiceAccounts[0], &s.Workloads[0].Object} {
		got = append(got, o.Ref.Kind+" "+o.Ref.Name+" "+o.Ref.File+":"+itoa(o.Ref.Line))
	}
	want := []string{"Service a m.yaml:2", "ServiceAccount sa m.yaml:13", "Deployment d m.yaml:16"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	// The ConfigMap is read too: a workload's environment may name the
	// Services it calls through one.
	if s.Objects != 4 || len(s.Skipped) != 0 || len(s.ConfigMaps) != 1 {
		t.Errorf("objects %d, skipped %v, ConfigMaps %d; want 4 read, none skipped, one ConfigMap", s.Objects, s.Skipped, len(s.ConfigMaps))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestLoadBadInput: each bad document is reported with file and line, and
// the good objects around it are still read.
func TestLoadBadInput(t *testing.T) {
	good := "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ok}\n"
	tests := []struct {
		name, text string
		want       []string // "line: message fragment"
		objects    int
		skipped    map[string]int
	}{
		{"malformed YAML", good + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: [unclosed\n", []string{"7: malformed YAML"}, 1, nil},
		{"a key twice, as when two files are joined without ---", good + "---\napiVersion: v1\nkind: Service\nmetadata: {name: a}\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n",
			[]string{`8: malformed YAML: mapping key "apiVersion" already defined at line 5`}, 1, nil},
		{"a key twice in a nested mapping", good + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  name: b\n",
			[]string{`9: malformed YAML: mapping key "name" already defined at line 8`}, 1, nil},
		{"a merge key may be overridden", good + "---\nbase: &b {kind: Service}\n<<: *b\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: m}\n", nil, 2, nil},
		{"bad indentation", good + "---\napiVersion: v1\nkind: Service\n metadata: x\n", []string{"7: malformed YAML"}, 1, nil},
		{"no name", good + "---\napiVersion: v1\nkind: Service\nmetadata: {}\n", []string{"5: Service has no metadata.name"}, 1, nil},
		{"no kind", good + "---\napiVersion: v1\nmetadata: {name: x}\n", []string{"5: object has no kind"}, 1, nil},
		{"not a mapping", good + "---\n- a\n- b\n", []string{"5: document is not a Kubernetes object"}, 1, nil},
		{"wrong field type", good + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: three}\n", []string{"5: Deployment d: field spec.replicas: a string where a number is expected"}, 1, nil},
		{"YAML 1.1 booleans, as Kubernetes reads them", good + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x:1, env: [{name: DEBUG, value: yes}]}]}\n",
			[]string{"5: Pod p: field spec.containers.env.value: true or false where a string is expected"}, 1, nil},
		{"quoted yes is a string", good + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x:1, env: [{name: DEBUG, value: \"yes\"}]}]}\n", nil, 2, nil},
		{"unknown kinds are counted, not fatal", good + "---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n", nil, 1,
			map[string]int{"Widget": 1, "Secret": 1}},
		{"helm leftovers", "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n", []string{"4: Helm template syntax"}, 0, nil},
		{"helm in a comment is fine", "# {{ not rendered }}\n" + good, nil, 1, nil},
		{"helm in a block", good + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: {{ .Values.replicas }}\n{{- if .Values.x }}\n", []string{"9: Helm template syntax"}, 1, nil},
		{"helm in a quoted name", good + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: \"{{ .Release.Name }}-web\"\n", []string{"8: Helm template syntax"}, 1, nil},
		{"template text in rendered values is fine", good + "---\napiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: {name: r}\nspec:\n  groups: [{name: g, rules: [{alert: Down, annotations: {summary: \"{{ $labels.instance }} is down\"}}]}]\n", nil, 1,
			map[string]int{"PrometheusRule": 1}},
		{"deep nesting", good + "---\n" + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n", []string{"5: "}, 1, nil},
		{"alias bomb", good + "---\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
			[]string{"5: "}, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, problems := load(t, "in.yaml", tc.text)
			var got []string
			for i, p := range problems {
				if p.Object.File != "in.yaml" {
					t.Errorf("problem %d names file %q", i, p.Object.File)
				}
				got = append(got, itoa(p.Object.Line)+": "+p.Message)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("problem %q, want it to start with %q", got[i], tc.want[i])
				}
			}
			if s.Objects != tc.objects {
				t.Errorf("%d objects read, want %d", s.Objects, tc.objects)
			}
			if tc.skipped != nil && !cmp.Equal(tc.skipped, s.Skipped) {
				t.Errorf("skipped %v, want %v", s.Skipped, tc.skipped)
			}
		})
	}
}

func TestLoadBounds(t *testing.T) {
	big := bytes.Repeat([]byte("#"), MaxInputBytes+1)
	s := NewSnapshot()
	problems := Load("big.yaml", bytes.NewReader(big), s)
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "larger than 64 MiB") {
		t.Fatalf("problems %+v, want one saying the input is too large", problems)
	}
}

// FuzzLoad feeds the loader arbitrary bytes: it must never panic, every
// problem must name the input, and a snapshot it filled must audit.
func FuzzLoad(f *testing.F) {
	seeds := []string{
		"apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {selector: {app: a}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec: {containers: [{name: c, image: 'x', livenessProbe: {httpGet: {path: /ready, port: 80}}}]}\n",
		"apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: []}}]\n",
		"apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: v}\nspec: {hosts: [a], http: [{route: [{destination: {host: a}}], retries: {attempts: 3, perTryTimeout: 2s}, timeout: 1s}]}\n",
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec: {minAvailable: 100%, selector: {matchLabels: {a: b}}}\n",
		"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec: {scaleTargetRef: {kind: Deployment, name: d}, maxReplicas: 1}\n",
		"a: &a [1]\nb: *a\n<<: {c: 1}\n",
		"---\n--- \n{{ x }}\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": 1}}",
		"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec: {replicas: 2, strategy: {canary: {maxUnavailable: 100%}}, template: {spec: {containers: [{name: c}]}}}\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewSnapshot()
		problems := Load("fuzz.yaml", bytes.NewReader(data), s)
		for _, p := range problems {
			if p.Object.File != "fuzz.yaml" || p.Message == "" {
				t.Fatalf("problem without file or message: %+v", p)
			}
		}
		Audit(t.Context(), s, Policy{}, nil)
	})
}

// TestLoadExplicitEmptyDocument reads a stream that writes an empty
// document explicitly ("---" then "...", YAML's document end marker), and
// one that ends each document with "...": both are valid YAML.
func TestLoadExplicitEmptyDocument(t *testing.T) {
	for name, text := range map[string]string{
		"empty document": "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n---\n...\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: b}\n",
		"end markers":    "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n...\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: b}\n... # end\n",
	} {
		s, problems := load(t, "m.yaml", text)
		if len(problems) > 0 || s.Objects != 2 {
			t.Errorf("%s: %d objects, problems %+v; want 2 objects and no problem", name, s.Objects, problems)
		}
		if len(s.ServiceAccounts) == 2 && s.ServiceAccounts[1].Ref.Line != 7 && name == "empty document" {
			t.Errorf("%s: second object at line %d, want 7", name, s.ServiceAccounts[1].Ref.Line)
		}
	}
}
