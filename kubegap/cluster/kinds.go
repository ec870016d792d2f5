package cluster

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is one kind of object kubegap reads from a cluster: the API group,
// the versions it understands (preferred first, so that an older server or
// an older CRD release is still read), and the resource name that list
// requests and RBAC rules use.
type Kind struct {
	Group    string
	Versions []string
	Resource string
	Kind     string
	// Namespaced is what kubegap expects; discovery has the last word.
	Namespaced bool
}

// GroupResource names the kind as RBAC and error messages do:
// "deployments.apps", "pods".
func (k Kind) GroupResource() string {
	return schema.GroupResource{Group: k.Group, Resource: k.Resource}.String()
}

// String is the kind as a person reads it: "Deployment (apps)".
func (k Kind) String() string {
	if k.Group == "" {
		return k.Kind
	}
	return fmt.Sprintf("%s (%s)", k.Kind, k.Group)
}

// Kinds lists every kind kubegap reads, in the order they are listed.
// Core kinds come first; the custom resources of Istio, Linkerd, Gateway
// API, the Prometheus operator and Argo Rollouts are listed only when the
// server offers them.
//
// deploy/kubegap-rbac.yaml grants list on exactly these resources; a test
// keeps the two in step. Secrets and ConfigMaps are deliberately absent: no
// check needs them, so kubegap never asks for them.
func Kinds() []Kind {
	return []Kind{
		// Workloads and their pod templates.
		{Group: "apps", Versions: []string{"v1"}, Resource: "deployments", Kind: "Deployment", Namespaced: true},
		{Group: "apps", Versions: []string{"v1"}, Resource: "statefulsets", Kind: "StatefulSet", Namespaced: true},
		{Group: "apps", Versions: []string{"v1"}, Resource: "daemonsets", Kind: "DaemonSet", Namespaced: true},
		{Group: "apps", Versions: []string{"v1"}, Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true},
		{Group: "batch", Versions: []string{"v1"}, Resource: "jobs", Kind: "Job", Namespaced: true},
		{Group: "batch", Versions: []string{"v1"}, Resource: "cronjobs", Kind: "CronJob", Namespaced: true},
		{Group: "", Versions: []string{"v1"}, Resource: "pods", Kind: "Pod", Namespaced: true},
		{Group: "argoproj.io", Versions: []string{"v1alpha1"}, Resource: "rollouts", Kind: "Rollout", Namespaced: true},
		// What fronts, protects and scales them.
		{Group: "", Versions: []string{"v1"}, Resource: "services", Kind: "Service", Namespaced: true},
		{Group: "", Versions: []string{"v1"}, Resource: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true},
		{Group: "policy", Versions: []string{"v1"}, Resource: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Namespaced: true},
		{Group: "autoscaling", Versions: []string{"v2"}, Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler", Namespaced: true},
		{Group: "networking.k8s.io", Versions: []string{"v1"}, Resource: "networkpolicies", Kind: "NetworkPolicy", Namespaced: true},
		// What routes traffic to a Service, and the claims pods mount: the
		// serving rule and the ReadWriteOnce rules read them.
		{Group: "networking.k8s.io", Versions: []string{"v1"}, Resource: "ingresses", Kind: "Ingress", Namespaced: true},
		{Group: "", Versions: []string{"v1"}, Resource: "persistentvolumeclaims", Kind: "PersistentVolumeClaim", Namespaced: true},
		// Admission webhooks (cluster-wide).
		{Group: "admissionregistration.k8s.io", Versions: []string{"v1"}, Resource: "mutatingwebhookconfigurations", Kind: "MutatingWebhookConfiguration"},
		{Group: "admissionregistration.k8s.io", Versions: []string{"v1"}, Resource: "validatingwebhookconfigurations", Kind: "ValidatingWebhookConfiguration"},
		// Who may list what: for service accounts that fan out on the API server.
		{Group: "rbac.authorization.k8s.io", Versions: []string{"v1"}, Resource: "clusterroles", Kind: "ClusterRole"},
		{Group: "rbac.authorization.k8s.io", Versions: []string{"v1"}, Resource: "clusterrolebindings", Kind: "ClusterRoleBinding"},
		{Group: "rbac.authorization.k8s.io", Versions: []string{"v1"}, Resource: "roles", Kind: "Role", Namespaced: true},
		{Group: "rbac.authorization.k8s.io", Versions: []string{"v1"}, Resource: "rolebindings", Kind: "RoleBinding", Namespaced: true},
		// Service meshes and gateways.
		{Group: "networking.istio.io", Versions: []string{"v1", "v1beta1", "v1alpha3"}, Resource: "virtualservices", Kind: "VirtualService", Namespaced: true},
		{Group: "networking.istio.io", Versions: []string{"v1", "v1beta1", "v1alpha3"}, Resource: "destinationrules", Kind: "DestinationRule", Namespaced: true},
		{Group: "linkerd.io", Versions: []string{"v1alpha2"}, Resource: "serviceprofiles", Kind: "ServiceProfile", Namespaced: true},
		{Group: "policy.linkerd.io", Versions: []string{"v1beta3", "v1beta2", "v1beta1"}, Resource: "httproutes", Kind: "HTTPRoute", Namespaced: true},
		{Group: "gateway.networking.k8s.io", Versions: []string{"v1", "v1beta1"}, Resource: "httproutes", Kind: "HTTPRoute", Namespaced: true},
		{Group: "gateway.networking.k8s.io", Versions: []string{"v1", "v1alpha2"}, Resource: "grpcroutes", Kind: "GRPCRoute", Namespaced: true},
		// What Prometheus scrapes: a Service or pod port scraped and not
		// routed to is for metrics, so it does not make a workload serve.
		{Group: "monitoring.coreos.com", Versions: []string{"v1"}, Resource: "servicemonitors", Kind: "ServiceMonitor", Namespaced: true},
		{Group: "monitoring.coreos.com", Versions: []string{"v1"}, Resource: "podmonitors", Kind: "PodMonitor", Namespaced: true},
	}
}
