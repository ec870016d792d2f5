package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

// discoveryServer answers discovery as an API server does: /api, /apis and
// one resource list per group version, with the answers given; a path
// whose answer is an int is answered with that status and a Status body.
type discoveryServer struct {
	answers map[string]any
	mu      sync.Mutex
	paths   []string
	agents  map[string]bool
}

func (d *discoveryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.paths = append(d.paths, r.Method+" "+r.URL.Path)
	d.agents[r.UserAgent()] = true
	d.mu.Unlock()
	a, ok := d.answers[strings.TrimPrefix(r.URL.Path, "/prefix")]
	if !ok {
		a = http.StatusNotFound
	}
	w.Header().Set("Content-Type", "application/json")
	if code, isCode := a.(int); isCode {
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure",
			"message": "the server is currently unable to handle the request", "reason": "ServiceUnavailable", "code": code})
		return
	}
	json.NewEncoder(w).Encode(a)
}

func resourceList(gv string, names ...string) map[string]any {
	var rs []any
	for _, n := range names {
		rs = append(rs, map[string]any{"name": n, "namespaced": true, "kind": n, "verbs": []string{"list"}})
	}
	return map[string]any{"kind": "APIResourceList", "groupVersion": gv, "resources": rs}
}

func apiGroup(name string, versions ...string) map[string]any {
	var vs []any
	for _, v := range versions {
		vs = append(vs, map[string]any{"groupVersion": name + "/" + v, "version": v})
	}
	return map[string]any{"name": name, "versions": vs, "preferredVersion": vs[0]}
}

// TestAPIDiscovery: kubegap's own discovery reads /api and /apis, then
// the resource lists of only the group versions it reads that the server
// serves (behind the server URL's path prefix, with kubegap's user agent),
// reports a group version whose list fails by name and still returns the
// rest, and fails as a whole when /apis is refused.
func TestAPIDiscovery(t *testing.T) {
	ds := &discoveryServer{agents: map[string]bool{}, answers: map[string]any{
		"/api":                              map[string]any{"kind": "APIVersions", "versions": []string{"v1"}},
		"/apis":                             map[string]any{"kind": "APIGroupList", "groups": []any{apiGroup("apps", "v1"), apiGroup("networking.istio.io", "v1", "v1beta1"), apiGroup("metrics.k8s.io", "v1beta1"), apiGroup("policy", "v1")}},
		"/api/v1":                           resourceList("v1", "pods", "services", "secrets"),
		"/apis/apps/v1":                     resourceList("apps/v1", "deployments"),
		"/apis/networking.istio.io/v1":      http.StatusServiceUnavailable,
		"/apis/networking.istio.io/v1beta1": resourceList("networking.istio.io/v1beta1", "virtualservices"),
		"/apis/policy/v1":                   resourceList("policy/v1", "poddisruptionbudgets"),
		"/apis/metrics.k8s.io/v1beta1":      resourceList("metrics.k8s.io/v1beta1", "pods"),
	}}
	srv := httptest.NewServer(ds)
	defer srv.Close()
	d, err := newAPIDiscovery(&rest.Config{Host: srv.URL + "/prefix", UserAgent: "kubegap"})
	if err != nil {
		t.Fatal(err)
	}
	kinds, problems, err := discover(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range kinds {
		got = append(got, k.apiVersion()+" "+k.Resource)
	}
	want := []string{"apps/v1 deployments", "v1 pods", "v1 services", "policy/v1 poddisruptionbudgets", "networking.istio.io/v1beta1 virtualservices"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "API group networking.istio.io/v1 could not be discovered") ||
		!strings.Contains(problems[0].Message, "unable to handle the request") {
		t.Errorf("problems %v; want one naming networking.istio.io/v1 and the server's reason", problems)
	}
	sort.Strings(ds.paths)
	for _, p := range ds.paths {
		if !strings.HasPrefix(p, "GET /prefix/") {
			t.Errorf("request %s: discovery only reads, under the server's path", p)
		}
		if strings.Contains(p, "metrics.k8s.io") {
			t.Errorf("request %s: a group kubegap does not read", p)
		}
	}
	if !ds.agents["kubegap"] {
		t.Errorf("user agents %v; want kubegap", ds.agents)
	}

	ds.answers["/apis"] = http.StatusForbidden
	if _, _, err := discover(context.Background(), d); err == nil || !strings.Contains(err.Error(), "discovery") || !strings.Contains(err.Error(), "unable to handle") {
		t.Errorf("/apis refused: got %v, want a discovery error with the server's message", err)
	}
}
