package kubegap

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// noPatch lists the fixture findings whose fix is not a change to the
// object found, so they carry the check's snippet only: a missing
// PodDisruptionBudget is a new object, and an HPA's missing CPU request is
// on its workload (KG026 patches that).
var noPatch = map[string]bool{
	"KG008/fail-missing.yaml":        true,
	"KG011/fail-no-cpu-request.yaml": true,
	"KG009/fail-bare-pod.yaml":       true, // a bare Pod has no replicas: make it a Deployment
}

// TestPatchesFixFindings applies every fixture finding's patch to its
// object, as kubectl patch would, audits the fixture again, and requires
// the finding gone; every finding of a check that has a fixer carries a
// patch, but for the few listed in noPatch.
func TestPatchesFixFindings(t *testing.T) {
	patched := 0
	for _, tc := range checkFixtures {
		path := filepath.Join("testdata", "checks", tc.file)
		rep := auditFile(t, path, Policy{})
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if f.Patch == "" {
				if fixers[f.CheckID] != nil && !noPatch[tc.file] {
					t.Errorf("%s: %s on %s has no patch", tc.file, f.CheckID, f.Object.Name)
				}
				continue
			}
			// Find the object and apply the patch.
			s := NewSnapshot()
			Load(path, strings.NewReader(string(data)), s)
			o := findObject(s, f.Object.Kind, f.Object.Namespace, f.Object.Name)
			if o == nil {
				t.Fatalf("%s: object %s not found", tc.file, f.Object.Name)
			}
			out, err := ApplyPatch(o, f.Patch, f.PatchType)
			if err != nil {
				t.Errorf("%s: %s patch does not apply: %v\n%s", tc.file, f.CheckID, err, f.Patch)
				continue
			}
			y, err := yaml.JSONToYAML(out)
			if err != nil {
				t.Fatal(err)
			}
			// Replace the object's document and audit again.
			var docs []string
			for _, d := range splitDocuments(data) {
				if d.line == f.Object.Line {
					docs = append(docs, string(y))
				} else {
					docs = append(docs, string(d.text))
				}
			}
			s2 := NewSnapshot()
			if problems := Load(path, strings.NewReader(strings.Join(docs, "\n---\n")), s2); len(problems) > 0 {
				t.Fatalf("%s: patched fixture: %+v", tc.file, problems)
			}
			rep2 := Audit(context.Background(), s2, Policy{}, nil)
			for _, g := range rep2.Findings {
				if g.CheckID == f.CheckID && g.Object.Kind == f.Object.Kind && g.Object.Name == f.Object.Name && g.Object.Namespace == f.Object.Namespace {
					t.Errorf("%s: after its patch, %s still fires on %s: %s\npatch (%s):\n%s", tc.file, f.CheckID, f.Object.Name, g.Message, f.PatchType, f.Patch)
				}
			}
			patched++
		}
	}
	if patched < 30 {
		t.Errorf("only %d fixture findings were patched and re-audited", patched)
	}
	t.Logf("%d fixture findings patched and re-audited", patched)
}

func findObject(s *Snapshot, kind, ns, name string) *Object {
	var all []*Object
	for _, w := range s.Workloads {
		all = append(all, &w.Object)
	}
	for _, x := range s.Services {
		all = append(all, &x.Object)
	}
	for _, x := range s.PDBs {
		all = append(all, &x.Object)
	}
	for _, x := range s.HPAs {
		all = append(all, &x.Object)
	}
	for _, x := range s.Webhooks {
		all = append(all, &x.Object)
	}
	all = append(all, s.VirtualServices...)
	all = append(all, s.ServiceProfiles...)
	all = append(all, s.HTTPRoutes...)
	all = append(all, s.DestinationRules...)
	for _, o := range all {
		if o.Ref.Kind == kind && o.Ref.Namespace == ns && o.Ref.Name == name {
			return o
		}
	}
	return nil
}
