package kubegap

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var benchOut = flag.String("bench-manifests", "", "write the generated benchmark manifests (1,000 and 10,000 objects) to this directory and stop")

// genManifests writes n objects as one multi-document YAML stream: groups
// of a Deployment, its Service, PDB and HPA, across namespaces of 40
// objects, with a VirtualService and DestinationRule pair every tenth
// group, the shape of a real application tree.
func genManifests(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() >= 0 && i*4 < n; i++ {
		ns := fmt.Sprintf("team-%03d", i/10)
		name := fmt.Sprintf("svc-%05d", i)
		fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s, tier: web}}
    spec:
      containers:
      - name: app
        image: registry.example.com/%[1]s:1.%[3]d.0
        ports: [{containerPort: 8080}]
        resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 256Mi}}
        readinessProbe: {httpGet: {path: /readyz, port: 8080}}
        livenessProbe: {httpGet: {path: /livez, port: 8080}, failureThreshold: 6}
---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  selector: {app: %[1]s}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: %[1]s, namespace: %[2]s}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: %[1]s}}}
`, name, ns, 1+i%4)
		if i%10 == 0 {
			fmt.Fprintf(&b, `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  hosts: [%[1]s]
  http: [{route: [{destination: {host: %[1]s}}], timeout: 3s, retries: {attempts: 2, perTryTimeout: 1s, retryOn: connect-failure}}]
`, name, ns)
		} else {
			fmt.Fprintf(&b, `---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: %[1]s, namespace: %[2]s}
spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: %[1]s}, minReplicas: 2, maxReplicas: 10}
`, name, ns)
		}
	}
	return b.Bytes()
}

func TestWriteBenchManifests(t *testing.T) {
	if *benchOut == "" {
		t.Skip("set -bench-manifests DIR to write the generated manifests")
	}
	for _, n := range []int{1000, 10000} {
		path := filepath.Join(*benchOut, fmt.Sprintf("objects-%d.yaml", n))
		if err := os.WriteFile(path, genManifests(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGenManifestsCount(t *testing.T) {
	s := NewSnapshot()
	if p := Load("gen.yaml", bytes.NewReader(genManifests(1000)), s); len(p) > 0 {
		t.Fatalf("problems: %+v", p[0])
	}
	if s.Objects != 1000 {
		t.Fatalf("generated %d objects, want 1000", s.Objects)
	}
	rep := Audit(context.Background(), s, Policy{}, nil)
	if len(rep.Findings) == 0 {
		t.Fatal("the benchmark manifests must give the checks something to find")
	}
}

func benchmarkAudit(b *testing.B, n int) {
	data := genManifests(n)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewSnapshot()
		if p := Load("gen.yaml", bytes.NewReader(data), s); len(p) > 0 {
			b.Fatal(p[0].Message)
		}
		rep := Audit(context.Background(), s, Policy{}, nil)
		if rep.Objects != n {
			b.Fatalf("%d objects audited, want %d", rep.Objects, n)
		}
	}
}

// BenchmarkAudit1k and BenchmarkAudit10k load and audit 1,000 and 10,000
// objects from YAML text: parsing, typing, linking and every check.
func BenchmarkAudit1k(b *testing.B)  { benchmarkAudit(b, 1000) }
func BenchmarkAudit10k(b *testing.B) { benchmarkAudit(b, 10000) }
