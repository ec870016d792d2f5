package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/dynamic"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/kubegap"
)

// fixtureFiles are the manifests both the fake cluster and the file audit
// read: two public example applications (with Istio routing) and extra.yaml
// for the kinds they lack.
var fixtureFiles = []string{
	"../testdata/realworld/bookinfo/bookinfo.yaml",
	"../testdata/realworld/bookinfo/destination-rule-all.yaml",
	"../testdata/realworld/bookinfo/virtual-service-all-v1.yaml",
	"../testdata/realworld/microservices-demo/kubernetes-manifests.yaml",
	"../testdata/realworld/microservices-demo/istio-manifests.yaml",
	"testdata/extra.yaml",
	"testdata/serving.yaml",
}

// readObjects decodes every document of the files, as a client would send
// them to a cluster.
func readObjects(t *testing.T, files []string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: %v", f, err)
			}
			if len(m) == 0 {
				continue
			}
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out
}

// served resources of the fake server: every kind of Kinds() at its first
// version, except those in absent (CRDs not installed).
func fakeResources(absent ...string) []*metav1.APIResourceList {
	skip := map[string]bool{}
	for _, a := range absent {
		skip[a] = true
	}
	byGV := map[string]*metav1.APIResourceList{}
	var order []string
	for _, k := range Kinds() {
		if skip[k.Group] {
			continue
		}
		gv := schema.GroupVersion{Group: k.Group, Version: k.Versions[0]}.String()
		l := byGV[gv]
		if l == nil {
			l = &metav1.APIResourceList{GroupVersion: gv}
			byGV[gv] = l
			order = append(order, gv)
		}
		l.APIResources = append(l.APIResources,
			metav1.APIResource{Name: k.Resource, Namespaced: k.Namespaced, Kind: k.Kind, Verbs: metav1.Verbs{"get", "list", "watch"}},
			// A subresource, which discovery lists and a scan must not.
			metav1.APIResource{Name: k.Resource + "/status", Namespaced: k.Namespaced, Kind: k.Kind, Verbs: metav1.Verbs{"get"}})
	}
	// A served kind kubegap does not read, which it must not list.
	byGV["v1"].APIResources = append(byGV["v1"].APIResources, metav1.APIResource{Name: "secrets", Namespaced: true, Kind: "Secret", Verbs: metav1.Verbs{"list"}})
	out := make([]*metav1.APIResourceList, 0, len(order))
	for _, gv := range order {
		out = append(out, byGV[gv])
	}
	return out
}

// fakeCluster holds objs as an API server would after applying them: in a
// namespace (ns when they name none) and at the version kubegap lists.
func fakeCluster(t *testing.T, ns string, objs []*unstructured.Unstructured, absent ...string) (*fakedynamic.FakeDynamicClient, *fakediscovery.FakeDiscovery) {
	t.Helper()
	listKinds := map[schema.GroupVersionResource]string{}
	version := map[string]string{} // group/Kind -> served version
	namespaced := map[string]bool{}
	for _, k := range Kinds() {
		listKinds[schema.GroupVersionResource{Group: k.Group, Version: k.Versions[0], Resource: k.Resource}] = k.Kind + "List"
		version[k.Group+"/"+k.Kind] = k.Versions[0]
		namespaced[k.Group+"/"+k.Kind] = k.Namespaced
	}
	var runtimeObjs []runtime.Object
	for _, o := range objs {
		o = o.DeepCopy()
		gk := o.GroupVersionKind().GroupKind()
		key := gk.Group + "/" + gk.Kind
		if v, ok := version[key]; ok {
			o.SetAPIVersion(schema.GroupVersion{Group: gk.Group, Version: v}.String())
		}
		if namespaced[key] && o.GetNamespace() == "" {
			o.SetNamespace(ns)
		}
		runtimeObjs = append(runtimeObjs, o)
	}
	dyn := fakedynamic.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, runtimeObjs...)
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	disc.Resources = fakeResources(absent...)
	return dyn, disc
}

// findingKeys names findings by check and object, leaving out what differs
// between a file and a cluster by nature: the file, the line, the API
// version the server converted to, and the namespace a file leaves to the
// client (read as ns).
// manifestOnly lists the checks that read manifests only: KG025, since a
// cluster returns spec.replicas whether or not anyone wrote it down. The
// comparisons of cluster and file findings leave them out.
var manifestOnly = map[string]bool{"KG025": true}

func findingKeys(rep *incidentlib.AuditReport, ns string) []string {
	var out []string
	for _, f := range rep.Findings {
		if manifestOnly[f.CheckID] {
			continue
		}
		n := f.Object.Namespace
		if n == "" && !clusterScoped[f.Object.Kind] {
			n = ns
		}
		out = append(out, fmt.Sprintf("%s %s %s/%s", f.CheckID, f.Object.Kind, n, f.Object.Name))
	}
	sort.Strings(out)
	return out
}

var clusterScoped = map[string]bool{
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true,
	"ClusterRole": true, "ClusterRoleBinding": true,
}

func fileAudit(t *testing.T, files []string) *incidentlib.AuditReport {
	t.Helper()
	snap := kubegap.NewSnapshot()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if p := kubegap.Load(f, bytes.NewReader(data), snap); len(p) > 0 {
			t.Fatalf("%s: %v", f, p)
		}
	}
	return kubegap.Audit(context.Background(), snap, kubegap.Policy{}, nil)
}

// TestLoadMatchesFiles lists a fake cluster holding the fixtures and
// checks that the audit finds what the audit of the same files finds, that
// only list requests were made, and only for the kinds kubegap reads.
func TestLoadMatchesFiles(t *testing.T) {
	objs := readObjects(t, fixtureFiles)
	dyn, disc := fakeCluster(t, "shop", objs, "argoproj.io", "linkerd.io", "policy.linkerd.io")
	snap := kubegap.NewSnapshot()
	var progress strings.Builder
	res, err := load(context.Background(), clients{dyn: dyn, disc: disc}, "", "fake, all namespaces", Options{}, snap, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) > 0 {
		t.Errorf("problems: %v", res.Problems)
	}
	got := findingKeys(kubegap.Audit(context.Background(), snap, kubegap.Policy{}, nil), "shop")
	want := findingKeys(fileAudit(t, fixtureFiles), "shop")
	if len(want) == 0 {
		t.Fatal("the fixtures have no findings; the comparison would prove nothing")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cluster findings differ from file findings (-files +cluster):\n%s", diff)
	}
	// The ReplicaSet and Pod of extra.yaml's Deployment are left out.
	if diff := cmp.Diff(map[string]int{"ReplicaSet": 1, "Pod": 1}, res.Owned); diff != "" {
		t.Errorf("owned (-want +got):\n%s", diff)
	}
	listed := map[string]bool{}
	for _, a := range dyn.Actions() {
		if a.GetVerb() != "list" {
			t.Errorf("request with verb %q on %s: kubegap only lists", a.GetVerb(), a.GetResource())
		}
		listed[a.GetResource().Resource] = true
	}
	for _, r := range []string{"secrets", "rollouts", "serviceprofiles"} {
		if listed[r] {
			t.Errorf("listed %s, which kubegap does not read or the server does not serve", r)
		}
	}
	for _, r := range []string{"deployments", "services", "virtualservices", "destinationrules", "mutatingwebhookconfigurations",
		"ingresses", "grpcroutes", "servicemonitors", "podmonitors", "persistentvolumeclaims"} {
		if !listed[r] {
			t.Errorf("did not list %s", r)
		}
	}
	if !strings.Contains(progress.String(), "deployments.apps") || !strings.Contains(progress.String(), "kubegap: read ") {
		t.Errorf("progress does not name the kinds and the total:\n%s", progress.String())
	}
}

// TestLoadForbiddenKind: a kind the account may not list is reported by
// name and the rest of the cluster is still audited.
func TestLoadForbiddenKind(t *testing.T) {
	objs := readObjects(t, fixtureFiles)
	dyn, disc := fakeCluster(t, "shop", objs, "argoproj.io", "linkerd.io", "policy.linkerd.io")
	dyn.PrependReactor("list", "poddisruptionbudgets", func(a clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "",
			errors.New(`User "kubegap" cannot list resource "poddisruptionbudgets" in API group "policy" in the namespace "shop"`))
	})
	dyn.PrependReactor("list", "destinationrules", func(a clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("the istio API is down")
	})
	snap := kubegap.NewSnapshot()
	var progress strings.Builder
	res, err := load(context.Background(), clients{dyn: dyn, disc: disc}, "shop", "fake, namespace shop", Options{}, snap, &progress)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range res.Problems {
		msgs = append(msgs, p.Object.Kind+": "+p.Message)
	}
	want := []string{
		"PodDisruptionBudget: forbidden: the account may not list poddisruptionbudgets.policy in namespace shop, so they were not audited (deploy/kubegap-rbac.yaml grants it)",
		"DestinationRule: listing destinationrules.networking.istio.io in namespace shop failed (HTTP 503 Service Unavailable), so they were not audited: the istio API is down",
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if !strings.Contains(progress.String(), "poddisruptionbudgets.policy: forbidden") {
		t.Errorf("progress does not report the forbidden kind:\n%s", progress.String())
	}
	if len(snap.PDBs) != 0 || len(snap.DestinationRules) != 0 {
		t.Errorf("read %d PDBs and %d DestinationRules from kinds that failed", len(snap.PDBs), len(snap.DestinationRules))
	}
	rep := kubegap.Audit(context.Background(), snap, kubegap.Policy{}, nil)
	if len(snap.Workloads) == 0 || len(snap.Services) == 0 || len(rep.Findings) == 0 {
		t.Errorf("the rest was not audited: %d workloads, %d services, %d findings", len(snap.Workloads), len(snap.Services), len(rep.Findings))
	}
}

// pagedDynamic serves one resource page by page, as an API server does
// with Limit and Continue (the fake client ignores both), and records the
// continue tokens it was sent.
type pagedDynamic struct {
	dynamic.Interface
	gvr       schema.GroupVersionResource
	items     []unstructured.Unstructured
	continues *[]string
}

func (p pagedDynamic) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	if gvr != p.gvr {
		return p.Interface.Resource(gvr)
	}
	return pagedResource{NamespaceableResourceInterface: p.Interface.Resource(gvr), p: p}
}

type pagedResource struct {
	dynamic.NamespaceableResourceInterface
	p pagedDynamic
}

func (r pagedResource) List(_ context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	*r.p.continues = append(*r.p.continues, opts.Continue)
	start := 0
	if opts.Continue != "" {
		fmt.Sscanf(opts.Continue, "page-%d", &start)
	}
	end := min(start+int(opts.Limit), len(r.p.items))
	l := &unstructured.UnstructuredList{Items: r.p.items[start:end]}
	l.SetAPIVersion("apps/v1")
	l.SetKind("DeploymentList")
	if end < len(r.p.items) {
		l.SetContinue(fmt.Sprintf("page-%d", end))
	}
	return l, nil
}

// TestLoadPages follows continue tokens until the last page, and stops at
// the cap on objects.
func TestLoadPages(t *testing.T) {
	var items []unstructured.Unstructured
	for i := range 5 {
		u := unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetNamespace("shop")
		u.SetName(fmt.Sprintf("d%d", i))
		unstructured.SetNestedField(u.Object, map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x"}}}, "spec", "template")
		items = append(items, u)
	}
	fake, disc := fakeCluster(t, "shop", nil)
	var continues []string
	dyn := pagedDynamic{Interface: fake, gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, items: items, continues: &continues}
	snap := kubegap.NewSnapshot()
	res, err := load(context.Background(), clients{dyn: dyn, disc: disc}, "", "fake", Options{PageSize: 2}, snap, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"", "page-2", "page-4"}, continues); diff != "" {
		t.Errorf("continue tokens (-want +got):\n%s", diff)
	}
	if res.Objects != 5 || len(snap.Workloads) != 5 {
		t.Errorf("read %d objects, %d workloads; want 5", res.Objects, len(snap.Workloads))
	}

	_, err = load(context.Background(), clients{dyn: dyn, disc: disc}, "", "fake", Options{PageSize: 2, MaxObjects: 3}, kubegap.NewSnapshot(), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cap") {
		t.Errorf("MaxObjects 3 with 5 objects: got %v, want an error naming the cap", err)
	}
}

// groupFailed is a discovery answer where one API group could not be
// discovered (an aggregated API that is down).
type groupFailed struct{ lists []*metav1.APIResourceList }

func (g groupFailed) ServerGroupsAndResourcesWithContext(context.Context) ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	return nil, g.lists, &groupDiscoveryFailed{Groups: map[schema.GroupVersion]error{
		{Group: "networking.istio.io", Version: "v1"}: errors.New("the server is currently unable to handle the request"),
		{Group: "metrics.k8s.io", Version: "v1beta1"}: errors.New("the server is currently unable to handle the request"),
	}}
}

// TestLoadDiscoveryPartial: a group that discovery could not reach is a
// problem for the groups kubegap reads and silence for the others.
func TestLoadDiscoveryPartial(t *testing.T) {
	dyn, _ := fakeCluster(t, "shop", readObjects(t, fixtureFiles))
	res, err := load(context.Background(), clients{dyn: dyn, disc: groupFailed{fakeResources("networking.istio.io", "argoproj.io", "linkerd.io", "policy.linkerd.io")}}, "", "fake", Options{}, kubegap.NewSnapshot(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Message, "API group networking.istio.io/v1 could not be discovered") {
		t.Errorf("problems: %v; want one naming networking.istio.io/v1", res.Problems)
	}
	if res.Objects == 0 {
		t.Error("nothing was read")
	}
}

// TestRestConfig resolves kubeconfig files, contexts and namespaces as
// kubectl does.
func TestRestConfig(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://127.0.0.1:6443"}
- name: b
  cluster: {server: "https://127.0.0.2:6443"}
users:
- name: u
  user: {token: secret-token}
contexts:
- name: ctx-a
  context: {cluster: a, user: u, namespace: team-a}
- name: ctx-b
  context: {cluster: b, user: u}
current-context: ctx-a
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name             string
		opts             Options
		host, ns, target string
	}{
		{"current context and its namespace", Options{Kubeconfig: kc}, "https://127.0.0.1:6443", "team-a", "https://127.0.0.1:6443, context ctx-a, namespace team-a"},
		{"other context, default namespace", Options{Kubeconfig: kc, Context: "ctx-b"}, "https://127.0.0.2:6443", "default", "https://127.0.0.2:6443, context ctx-b, namespace default"},
		{"namespace flag", Options{Kubeconfig: kc, Namespace: "web"}, "https://127.0.0.1:6443", "web", "https://127.0.0.1:6443, context ctx-a, namespace web"},
		{"all namespaces wins", Options{Kubeconfig: kc, Namespace: "web", AllNamespaces: true}, "https://127.0.0.1:6443", "", "https://127.0.0.1:6443, context ctx-a, all namespaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ns, target, err := restConfig(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.host || ns != tt.ns || target != tt.target {
				t.Errorf("got %s %q %q, want %s %q %q", cfg.Host, ns, target, tt.host, tt.ns, tt.target)
			}
		})
	}
	for _, bad := range []Options{
		{Kubeconfig: kc, Context: "nope"},
		{Kubeconfig: filepath.Join(dir, "missing")},
	} {
		if _, _, _, err := restConfig(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		} else if strings.Contains(err.Error(), "secret-token") {
			t.Errorf("error shows the token: %v", err)
		}
	}
	// No kubeconfig anywhere and not in a pod.
	t.Setenv("KUBECONFIG", filepath.Join(dir, "none"))
	t.Setenv("HOME", dir)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, _, _, err := restConfig(Options{}); err == nil || !strings.Contains(err.Error(), "no cluster configured") {
		t.Errorf("no configuration: got %v", err)
	}
}

// TestRBACMatchesKinds keeps deploy/kubegap-rbac.yaml in step with Kinds:
// list on exactly the resources kubegap reads, no other verb, and a binding
// to the shipped service account.
func TestRBACMatchesKinds(t *testing.T) {
	data, err := os.ReadFile("../../deploy/kubegap-rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	var kinds []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var o struct {
			Kind  string `json:"kind"`
			Rules []struct {
				APIGroups     []string `json:"apiGroups"`
				Resources     []string `json:"resources"`
				Verbs         []string `json:"verbs"`
				ResourceNames []string `json:"resourceNames"`
			} `json:"rules"`
			RoleRef  struct{ Kind, Name string } `json:"roleRef"`
			Subjects []struct{ Kind, Name, Namespace string }
		}
		if err := k8syaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, o.Kind)
		for _, r := range o.Rules {
			if diff := cmp.Diff([]string{"list"}, r.Verbs); diff != "" {
				t.Errorf("rule %v grants verbs %v; kubegap only lists", r.Resources, r.Verbs)
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					granted[schema.GroupResource{Group: g, Resource: res}.String()] = true
				}
			}
		}
		if o.Kind == "ClusterRoleBinding" {
			if o.RoleRef.Name != "kubegap-read" || len(o.Subjects) != 1 || o.Subjects[0].Kind != "ServiceAccount" || o.Subjects[0].Name != "kubegap" || o.Subjects[0].Namespace != "kubegap" {
				t.Errorf("binding: %+v %+v", o.RoleRef, o.Subjects)
			}
		}
	}
	if diff := cmp.Diff([]string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"}, kinds); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	want := map[string]bool{}
	for _, k := range Kinds() {
		want[k.GroupResource()] = true
	}
	if diff := cmp.Diff(want, granted); diff != "" {
		t.Errorf("ClusterRole resources differ from Kinds() (-Kinds +RBAC):\n%s", diff)
	}
}

// TestKindsAreRead: every kind a scan lists is one the snapshot reads
// (none is listed only to be skipped).
func TestKindsAreRead(t *testing.T) {
	for _, k := range Kinds() {
		snap := kubegap.NewSnapshot()
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": schema.GroupVersion{Group: k.Group, Version: k.Versions[0]}.String(),
			"kind":       k.Kind,
			"metadata":   map[string]any{"name": "x", "namespace": "n"},
			"spec":       map[string]any{"template": map[string]any{}},
		}}
		if err := snap.Add(u, incidentlib.ObjectRef{}); err != nil {
			t.Errorf("%s: %v", k, err)
		}
		if len(snap.Skipped) > 0 {
			t.Errorf("%s: the snapshot skips it, so listing it is wasted access", k)
		}
	}
}

// TestServingKindsMatter: testdata/serving.yaml proves something about the
// scan only if each kind it adds for the serving and volume rules changes
// the audit when left out; TestLoadMatchesFiles then requires the cluster
// scan to find what the files give, so it must list them.
func TestServingKindsMatter(t *testing.T) {
	objs := readObjects(t, []string{"testdata/serving.yaml"})
	audit := func(drop string) []string {
		snap := kubegap.NewSnapshot()
		for _, o := range objs {
			if o.GetKind() == drop {
				continue
			}
			if err := snap.Add(o.DeepCopy(), incidentlib.ObjectRef{}); err != nil {
				t.Fatal(err)
			}
		}
		snap.Link()
		return findingKeys(kubegap.Audit(context.Background(), snap, kubegap.Policy{}, nil), "shop")
	}
	all := audit("")
	for _, kind := range []string{"Ingress", "GRPCRoute", "ServiceMonitor", "PodMonitor", "PersistentVolumeClaim"} {
		found := false
		for _, o := range objs {
			found = found || o.GetKind() == kind
		}
		if !found {
			t.Errorf("serving.yaml has no %s", kind)
			continue
		}
		if cmp.Equal(all, audit(kind)) {
			t.Errorf("leaving out the %s changes nothing: the fixture does not show that a scan needs it", kind)
		}
	}
}
