// Package cluster reads a live Kubernetes cluster into a kubegap snapshot.
//
// It only lists: discovery finds which of the kinds kubegap reads the server
// offers, and each kind is listed page by page with the dynamic client. Every
// object goes through the same Snapshot.Add as a manifest file's objects, so
// files and clusters share every check. A kind the account may not list (403)
// or the server does not serve (404) is reported as an input problem naming
// the kind; the rest of the cluster is still audited.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/kubegap"
)

// Defaults for the bounds of one live scan.
const (
	DefaultMaxObjects = 50000
	DefaultTimeout    = 2 * time.Minute
	DefaultPageSize   = 500
)

// Options says which cluster to read and how much of it.
type Options struct {
	// Kubeconfig is an explicit kubeconfig file. Empty follows kubectl's
	// rules: $KUBECONFIG, then ~/.kube/config, then the in-cluster service
	// account when running inside a pod.
	Kubeconfig string
	// Context is the kubeconfig context to use; empty for the current one.
	Context string
	// Namespace limits the scan to one namespace; empty for the context's
	// namespace (or the pod's, in-cluster). Cluster-scoped kinds such as
	// webhook configurations are read either way.
	Namespace string
	// AllNamespaces reads every namespace; it wins over Namespace.
	AllNamespaces bool
	// MaxObjects caps how many objects are read; the scan fails past it
	// rather than audit part of the cluster silently. 0 means
	// DefaultMaxObjects.
	MaxObjects int
	// Timeout caps the whole scan, discovery included. 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// PageSize is the Limit of each list request. 0 means DefaultPageSize.
	PageSize int64
}

// Result is what a scan read, besides the objects it added to the snapshot.
type Result struct {
	// Target names the cluster and scope for people: server, context and
	// namespace.
	Target string
	// Objects counts the objects added to the snapshot.
	Objects int
	// Owned counts, by kind, the objects left out because a workload that
	// kubegap reads controls them (a Deployment's ReplicaSets and their
	// Pods, a CronJob's Jobs): their pod templates are audited once, on the
	// owner, as they are in the manifests.
	Owned map[string]int
	// Problems lists kinds that could not be listed and objects that could
	// not be added, each with the reason.
	Problems []incidentlib.InputProblem
}

// Load reads the cluster that opts names into snap, then links it. Progress
// lines go to progress (stderr in the command; io.Discard to silence).
// A kind that cannot be listed is a problem in the Result; an error is
// returned only when the cluster cannot be read at all (no configuration,
// unreachable, discovery failed, the bounds exceeded).
func Load(ctx context.Context, opts Options, snap *kubegap.Snapshot, progress io.Writer) (*Result, error) {
	cfg, ns, target, err := restConfig(opts)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster: %v", err)
	}
	disc, err := newAPIDiscovery(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster: %v", err)
	}
	return load(ctx, clients{dyn: dyn, disc: disc}, ns, target, opts, snap, progress)
}

// restConfig resolves opts to a client configuration and the namespace to
// read ("" for all), with kubectl's loading rules.
func restConfig(opts Options) (*rest.Config, string, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = opts.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: opts.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", "", errors.New("cluster: no cluster configured: pass --kubeconfig, set KUBECONFIG, or run inside a pod with a service account")
		}
		return nil, "", "", fmt.Errorf("cluster: kubeconfig: %v", err)
	}
	ns := ""
	if !opts.AllNamespaces {
		ns = opts.Namespace
		if ns == "" {
			ns, _, err = cc.Namespace()
			if err != nil {
				return nil, "", "", fmt.Errorf("cluster: kubeconfig namespace: %v", err)
			}
		}
	}
	// A scan is a few dozen list requests; client-go's default of 5 per
	// second would make it wait for nothing.
	cfg.QPS = 50
	cfg.Burst = 100
	cfg.UserAgent = "kubegap"
	// Deprecation warnings about old API versions are the cluster owner's
	// business, not part of the audit output.
	cfg.WarningHandler = rest.NoWarnings{}
	target := cfg.Host
	if opts.Context != "" {
		target += ", context " + opts.Context
	} else if raw, err := cc.RawConfig(); err == nil && raw.CurrentContext != "" {
		target += ", context " + raw.CurrentContext
	}
	if ns == "" {
		target += ", all namespaces"
	} else {
		target += ", namespace " + ns
	}
	return cfg, ns, target, nil
}

// discoverer is the part of the discovery client a scan uses.
type discoverer interface {
	ServerGroupsAndResourcesWithContext(ctx context.Context) ([]*metav1.APIGroup, []*metav1.APIResourceList, error)
}

// clients are the API clients a scan uses; tests pass fakes.
type clients struct {
	dyn  dynamic.Interface
	disc discoverer
}

// served is one kind the server offers, at the version kubegap reads.
type served struct {
	Kind
	version    string
	namespaced bool
}

func (s served) gvr() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: s.Group, Version: s.version, Resource: s.Resource}
}

func (s served) apiVersion() string {
	return schema.GroupVersion{Group: s.Group, Version: s.version}.String()
}

// controllers are the kinds whose controlled children a scan leaves out.
var controllers = map[string]bool{
	"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true,
	"Job": true, "CronJob": true, "Rollout": true,
}

func load(ctx context.Context, c clients, ns, target string, opts Options, snap *kubegap.Snapshot, progress io.Writer) (*Result, error) {
	if progress == nil {
		progress = io.Discard
	}
	maxObjects := opts.MaxObjects
	if maxObjects <= 0 {
		maxObjects = DefaultMaxObjects
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	pageSize := opts.PageSize
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	res := &Result{Target: target, Owned: map[string]int{}}
	fmt.Fprintf(progress, "kubegap: reading %s\n", target)
	kinds, problems, err := discover(ctx, c.disc)
	if err != nil {
		return nil, bounded(ctx, timeout, err)
	}
	res.Problems = append(res.Problems, problems...)

	for _, k := range kinds {
		n, owned, failed, problems, err := listKind(ctx, c.dyn, k, ns, pageSize, maxObjects-res.Objects, snap)
		if err != nil {
			return nil, bounded(ctx, timeout, err)
		}
		res.Objects += n
		if owned > 0 {
			res.Owned[k.Kind.Kind] += owned
		}
		res.Problems = append(res.Problems, problems...)
		switch {
		case failed:
			fmt.Fprintf(progress, "kubegap: %s: %s\n", k.GroupResource(), problems[len(problems)-1].Message)
		case len(problems) > 0:
			fmt.Fprintf(progress, "kubegap: %d %s (%d could not be read, see the report)\n", n, k.GroupResource(), len(problems))
		case owned > 0:
			fmt.Fprintf(progress, "kubegap: %d %s (%d more left out: owned by a workload)\n", n, k.GroupResource(), owned)
		default:
			fmt.Fprintf(progress, "kubegap: %d %s\n", n, k.GroupResource())
		}
	}
	snap.Link()
	fmt.Fprintf(progress, "kubegap: read %d objects of %d kinds\n", res.Objects, len(kinds))
	return res, nil
}

// bounded turns the scan's own deadline into an error that says so.
func bounded(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("cluster: the scan took longer than %s; narrow it with --namespace", timeout)
	}
	return err
}

// discover returns the kinds of Kinds() the server offers, each at the
// first version kubegap understands that the server serves. A group whose
// discovery failed (an aggregated API that is down) is a problem, not a
// failure: the other groups are still read.
func discover(ctx context.Context, d discoverer) ([]served, []incidentlib.InputProblem, error) {
	_, lists, err := d.ServerGroupsAndResourcesWithContext(ctx)
	var problems []incidentlib.InputProblem
	if err != nil {
		var failed *groupDiscoveryFailed
		if !errors.As(err, &failed) {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, fmt.Errorf("cluster: discovery: %v", err)
		}
		wanted := map[string]bool{}
		for _, k := range Kinds() {
			wanted[k.Group] = true
		}
		var gvs []schema.GroupVersion
		for gv := range failed.Groups {
			gvs = append(gvs, gv)
		}
		sort.Slice(gvs, func(i, j int) bool { return gvs[i].String() < gvs[j].String() })
		for _, gv := range gvs {
			if wanted[gv.Group] {
				problems = append(problems, incidentlib.InputProblem{
					Object:  incidentlib.ObjectRef{APIVersion: gv.String()},
					Message: fmt.Sprintf("API group %s could not be discovered, its kinds were not audited: %v", gv, failed.Groups[gv]),
				})
			}
		}
	}
	// offered maps group/version/resource to whether it is namespaced.
	offered := map[string]bool{}
	for _, l := range lists {
		if l == nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") {
				continue // subresources, and resources that cannot be listed
			}
			offered[l.GroupVersion+"/"+r.Name] = r.Namespaced
		}
	}
	var out []served
	for _, k := range Kinds() {
		for _, v := range k.Versions {
			gv := schema.GroupVersion{Group: k.Group, Version: v}.String()
			if namespaced, ok := offered[gv+"/"+k.Resource]; ok {
				out = append(out, served{Kind: k, version: v, namespaced: namespaced})
				break
			}
		}
	}
	return out, problems, nil
}

func hasVerb(verbs metav1.Verbs, verb string) bool {
	for _, v := range verbs {
		if v == verb {
			return true
		}
	}
	return false
}

// listKind lists one kind page by page into snap. It returns how many
// objects it added, how many it left out as owned by a workload, whether
// the kind could not be listed (403, 404, a server error: the last problem
// says why), the problems of objects the snapshot refused, and an error
// only when the scan must stop (deadline, object cap).
func listKind(ctx context.Context, dyn dynamic.Interface, k served, ns string, pageSize int64, room int, snap *kubegap.Snapshot) (added, owned int, failed bool, problems []incidentlib.InputProblem, err error) {
	var ri dynamic.ResourceInterface = dyn.Resource(k.gvr())
	if k.namespaced && ns != "" {
		ri = dyn.Resource(k.gvr()).Namespace(ns)
	}
	cont := ""
	seen := map[string]bool{}
	for {
		list, err := ri.List(ctx, metav1.ListOptions{Limit: pageSize, Continue: cont})
		if err != nil {
			if ctx.Err() != nil {
				return added, owned, false, problems, ctx.Err()
			}
			return added, owned, true, append(problems, listProblem(k, ns, err)), nil
		}
		for i := range list.Items {
			obj := &list.Items[i]
			if controlledByWorkload(obj) {
				owned++
				continue
			}
			if added+len(problems) >= room {
				return added, owned, false, problems, fmt.Errorf("cluster: more objects than the cap of the scan (reached while listing %s); narrow it with --namespace", k.GroupResource())
			}
			if p := addObject(snap, obj, k); p != nil {
				problems = append(problems, *p)
				continue
			}
			added++
		}
		cont = list.GetContinue()
		if cont == "" {
			return added, owned, false, problems, nil
		}
		// A server that hands back a token it gave before would keep the
		// scan going round; stop the kind instead.
		if seen[cont] {
			return added, owned, true, append(problems, listProblem(k, ns, errors.New("the server repeated a continue token"))), nil
		}
		seen[cont] = true
		if ctx.Err() != nil {
			return added, owned, false, problems, ctx.Err()
		}
	}
}

// addObject hands one listed object to the snapshot, trimmed of what no
// check reads and what would only cost memory.
func addObject(snap *kubegap.Snapshot, obj *unstructured.Unstructured, k served) *incidentlib.InputProblem {
	// Items of a list may come without apiVersion and kind; the list's
	// request says what they are.
	if obj.GetAPIVersion() == "" {
		obj.SetAPIVersion(k.apiVersion())
	}
	if obj.GetKind() == "" {
		obj.SetKind(k.Kind.Kind)
	}
	obj.SetManagedFields(nil)
	if a := obj.GetAnnotations(); a != nil {
		if _, ok := a["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			delete(a, "kubectl.kubernetes.io/last-applied-configuration")
			obj.SetAnnotations(a)
		}
	}
	ref := incidentlib.ObjectRef{
		APIVersion: obj.GetAPIVersion(),
		Kind:       obj.GetKind(),
		Namespace:  obj.GetNamespace(),
		Name:       obj.GetName(),
	}
	if err := snap.Add(obj, ref); err != nil {
		return &incidentlib.InputProblem{Object: ref, Message: err.Error()}
	}
	return nil
}

// controlledByWorkload reports whether a workload kind kubegap reads
// controls obj, so its pod template is audited on the owner instead.
func controlledByWorkload(obj *unstructured.Unstructured) bool {
	for _, o := range obj.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller && controllers[o.Kind] {
			return true
		}
	}
	return false
}

// listProblem describes why a kind could not be listed, naming the kind and
// the scope, in words a cluster operator acts on.
func listProblem(k served, ns string, err error) incidentlib.InputProblem {
	scope := "cluster-wide"
	if k.namespaced {
		scope = "in all namespaces"
		if ns != "" {
			scope = "in namespace " + ns
		}
	}
	var msg string
	switch {
	case apierrors.IsForbidden(err):
		msg = fmt.Sprintf("forbidden: the account may not list %s %s, so they were not audited (deploy/kubegap-rbac.yaml grants it)", k.GroupResource(), scope)
	case apierrors.IsUnauthorized(err):
		msg = fmt.Sprintf("unauthorized: the server did not accept the credentials when listing %s", k.GroupResource())
	case apierrors.IsNotFound(err):
		msg = fmt.Sprintf("not found: the server does not serve %s at %s, so they were not audited", k.GroupResource(), k.apiVersion())
	default:
		code := ""
		var status apierrors.APIStatus
		if errors.As(err, &status) && status.Status().Code != 0 {
			code = fmt.Sprintf(" (HTTP %d %s)", status.Status().Code, http.StatusText(int(status.Status().Code)))
		}
		msg = fmt.Sprintf("listing %s %s failed%s, so they were not audited: %v", k.GroupResource(), scope, code, err)
	}
	return incidentlib.InputProblem{
		Object:  incidentlib.ObjectRef{APIVersion: k.apiVersion(), Kind: k.Kind.Kind, Namespace: ns},
		Message: msg,
	}
}
