package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib/mcpserver"
)

// fakeAPIServer answers the discovery and list requests of a scan from the
// objects of one manifest file, as a Kubernetes API server with the core,
// apps and policy groups would, and records every request's method. It is enough
// to drive audit_cluster through the real loader and client-go; the
// loader's own tests run against a real kube-apiserver.
type fakeAPIServer struct {
	mu      sync.Mutex
	methods map[string]int
	objects map[string][]map[string]any // by list path
}

func newFakeAPIServer(t *testing.T, manifest string) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeAPIServer{methods: map[string]int{}, objects: map[string][]map[string]any{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if obj == nil {
			continue
		}
		ns := obj["metadata"].(map[string]any)["namespace"].(string)
		var path string
		switch obj["kind"] {
		case "Deployment":
			path = "/apis/apps/v1/namespaces/" + ns + "/deployments"
		case "Service":
			path = "/api/v1/namespaces/" + ns + "/services"
		case "PodDisruptionBudget":
			path = "/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets"
		default:
			continue // a kind this server does not offer
		}
		f.objects[path] = append(f.objects[path], obj)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for m := range f.methods {
			if m != http.MethodGet {
				t.Errorf("audit_cluster sent a %s request; it may only read", m)
			}
		}
		if f.methods[http.MethodGet] == 0 {
			t.Error("audit_cluster sent no request")
		}
	})
	return srv
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.methods[r.Method]++
	f.mu.Unlock()
	resource := func(name, kind string) map[string]any {
		return map[string]any{"name": name, "singularName": "", "namespaced": true, "kind": kind, "verbs": []string{"get", "list", "watch"}}
	}
	var body any
	switch p := r.URL.Path; p {
	case "/api":
		body = map[string]any{"kind": "APIVersions", "versions": []string{"v1"}, "serverAddressByClientCIDRs": []any{}}
	case "/apis":
		var groups []any
		for _, g := range []string{"apps", "policy"} {
			gv := map[string]any{"groupVersion": g + "/v1", "version": "v1"}
			groups = append(groups, map[string]any{"name": g, "versions": []any{gv}, "preferredVersion": gv})
		}
		body = map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
	case "/api/v1":
		body = map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{resource("services", "Service")}}
	case "/apis/apps/v1":
		body = map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "apps/v1", "resources": []any{resource("deployments", "Deployment")}}
	case "/apis/policy/v1":
		body = map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "policy/v1", "resources": []any{resource("poddisruptionbudgets", "PodDisruptionBudget")}}
	default:
		objs, ok := f.objects[p]
		if !ok && !strings.Contains(p, "/namespaces/") {
			http.NotFound(w, r)
			return
		}
		items := []any{}
		for _, o := range objs {
			items = append(items, o)
		}
		body = map[string]any{"kind": "List", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": "1"}, "items": items}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// TestMCPAuditCluster runs audit_cluster against a fake API server: the
// findings are those of the same manifest as a file, the answer names the
// cluster, and every request was a read.
func TestMCPAuditCluster(t *testing.T) {
	const fixture = "../../kubegap/testdata/checks/KG001/fail-deep-path.yaml"
	srv := newFakeAPIServer(t, fixture)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: %q}
contexts:
- name: test
  context: {cluster: fake, user: reader, namespace: shop}
current-context: test
users:
- name: reader
  user: {token: not-a-secret}
`, srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := startMCP(t, "--kubeconfig", kubeconfig)

	var live mcpserver.AuditOutput
	res, md := callTool(t, cs, "audit_cluster", map[string]any{}, &live)
	if res.IsError {
		t.Fatalf("audit_cluster: %s", md)
	}
	if !strings.HasPrefix(md, "Cluster: "+srv.URL+", context test, namespace shop\n") {
		t.Errorf("the answer does not name the cluster:\n%s", truncateForTest(md))
	}
	var files mcpserver.AuditOutput
	if res, md := callTool(t, cs, "audit_manifests", map[string]any{"paths": []string{fixture}}, &files); res.IsError {
		t.Fatalf("audit_manifests: %s", md)
	}
	key := func(o mcpserver.AuditOutput) []string {
		var out []string
		for _, f := range o.Findings {
			out = append(out, f.CheckID+" "+f.Object.Kind+" "+f.Object.Namespace+"/"+f.Object.Name)
		}
		return out
	}
	want, got := key(files), key(live)
	if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cluster findings %q, file findings %q", got, want)
	}
	found := false
	for _, c := range live.Checks {
		found = found || (c.CheckID == "KG001" && len(c.Citations) > 0)
	}
	if !found {
		t.Errorf("no KG001 finding with citations on the live Deployment:\n%s", truncateForTest(md))
	}
}
