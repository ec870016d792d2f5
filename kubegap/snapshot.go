// Package kubegap audits Kubernetes objects for the gaps that public
// incidents show the cost of. Manifests and live clusters load into one
// Snapshot; the checks are pure functions over it, and every finding cites
// the library's cases tagged with the terms its check guards against.
package kubegap

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/incidentlib/incidentlib"
)

// Snapshot is the object graph the checks read: the objects of one
// manifest set or one cluster, typed where Kubernetes defines the kind, and
// the links between them. Fill it with Add, then call Link once.
type Snapshot struct {
	Workloads       []*Workload
	Services        []*Service
	PDBs            []*PDB
	HPAs            []*HPA
	Webhooks        []*Webhook
	NetworkPolicies []*NetworkPolicy
	ServiceAccounts []*Object
	Roles           []*Role // Roles and ClusterRoles
	Bindings        []*Binding
	// Mesh and routing objects, read as unstructured: Istio VirtualService
	// and DestinationRule, Linkerd ServiceProfile, Gateway API HTTPRoute.
	VirtualServices  []*Object
	DestinationRules []*Object
	ServiceProfiles  []*Object
	HTTPRoutes       []*Object
	// Routing, monitoring and storage objects, read as unstructured:
	// Ingress, Gateway API GRPCRoute, Prometheus operator ServiceMonitor
	// and PodMonitor, PersistentVolumeClaim.
	Ingresses       []*Object
	GRPCRoutes      []*Object
	ServiceMonitors []*Object
	PodMonitors     []*Object
	PVCs            []*Object
	// ConfigMaps holds each ConfigMap's string data by "namespace/name":
	// a workload that reads one into its environment names the Services
	// it calls there (SERVICE_ADDR=backend:8080).
	ConfigMaps map[string]map[string]string

	// Objects counts the objects read into the snapshot; Skipped counts,
	// by kind, the objects of kinds no check reads.
	Objects int
	Skipped map[string]int

	linked bool
}

// Object is any object of the snapshot with where it came from.
type Object struct {
	Ref         incidentlib.ObjectRef
	Labels      map[string]string
	Annotations map[string]string
	// U is the object as read. Checks of custom resources read it; for core
	// kinds the typed fields of the wrapping struct are the ones to use.
	U *unstructured.Unstructured
}

// Workload is anything that runs pods: Deployment, StatefulSet, DaemonSet,
// Job, CronJob, ReplicaSet, bare Pod, Argo Rollout.
type Workload struct {
	Object
	// Replicas is the desired replica count for kinds that have one
	// (Deployment, StatefulSet, ReplicaSet, Rollout; 1 for a bare Pod); nil
	// for DaemonSets, Jobs and CronJobs, and when HPA-managed manifests
	// leave it out (Kubernetes then starts one).
	Replicas *int32
	Selector *metav1.LabelSelector
	Template corev1.PodTemplateSpec

	// The typed object, for the kind that it is (one of them is set).
	Deployment  *appsv1.Deployment
	StatefulSet *appsv1.StatefulSet
	DaemonSet   *appsv1.DaemonSet
	ReplicaSet  *appsv1.ReplicaSet
	Job         *batchv1.Job
	CronJob     *batchv1.CronJob
	Pod         *corev1.Pod

	// Links, set by Link.
	Services []*Service // Services whose selector matches the pod labels
	PDBs     []*PDB     // PDBs whose selector matches the pod labels
	HPAs     []*HPA     // HPAs that target the workload
	servedBy []*Service // Services it serves traffic through (Serving)
	// Owned is true for a ReplicaSet or Pod owned by another workload of
	// the snapshot (a live cluster lists both); checks skip it so a gap is
	// reported once, on the owner.
	Owned bool
}

// Service is a core Service and the workloads it selects.
type Service struct {
	Object
	Service   *corev1.Service
	Workloads []*Workload // set by Link
	// RoutedBy says what sends traffic to the Service ("Ingress web",
	// "its type LoadBalancer", "Deployment shop (env API_URL)"), "" when
	// nothing in the snapshot does. Set by Link.
	RoutedBy      string
	metricsPorts  map[int]bool // indexes of ports scraped for metrics, or named for it
	namedMetrics  map[int]bool // indexes of ports named for metrics
	explicitRoute bool         // an Ingress, Gateway route or VirtualService sends to it
}

// PDB is a PodDisruptionBudget and the workloads it covers.
type PDB struct {
	Object
	PDB       *policyv1.PodDisruptionBudget
	Workloads []*Workload // set by Link
}

// HPA is a HorizontalPodAutoscaler (autoscaling/v1 or v2) in the terms the
// checks need.
type HPA struct {
	Object
	MinReplicas int32 // 1 when the object leaves it out, as Kubernetes does
	MaxReplicas int32
	TargetKind  string
	TargetName  string
	// CPUTarget is true when the HPA scales on CPU utilization, which
	// Kubernetes computes against the containers' CPU requests.
	CPUTarget bool
	Target    *Workload // set by Link
}

// Webhook is one webhook of a Validating or Mutating webhook configuration.
type Webhook struct {
	Object
	Name              string // the webhook's own name
	FailurePolicy     string // "Fail" or "Ignore"; "Fail" when left out
	NamespaceSelector *metav1.LabelSelector
	ObjectSelector    *metav1.LabelSelector
	Rules             []admissionv1.RuleWithOperations
	Service           *admissionv1.ServiceReference // the in-cluster Service that serves it, if any
}

// NetworkPolicy is a NetworkPolicy.
type NetworkPolicy struct {
	Object
	Policy *networkingv1.NetworkPolicy
}

// Role is a Role or ClusterRole.
type Role struct {
	Object
	Cluster bool
	Rules   []rbacv1.PolicyRule
}

// Binding is a RoleBinding or ClusterRoleBinding.
type Binding struct {
	Object
	Cluster  bool
	RoleRef  rbacv1.RoleRef
	Subjects []rbacv1.Subject
}

// NewSnapshot returns an empty snapshot.
func NewSnapshot() *Snapshot {
	return &Snapshot{Skipped: map[string]int{}}
}

// Add reads one object into the snapshot. Kinds no check reads are counted
// in Skipped. An object that cannot be read (a field of the wrong type, no
// name) returns an error naming what is wrong; the caller reports it as an
// InputProblem and goes on with the rest.
func (s *Snapshot) Add(obj *unstructured.Unstructured, ref incidentlib.ObjectRef) error {
	if obj == nil || obj.Object == nil {
		return fmt.Errorf("empty object")
	}
	if ref.Kind == "" {
		ref.Kind = obj.GetKind()
	}
	if ref.APIVersion == "" {
		ref.APIVersion = obj.GetAPIVersion()
	}
	if ref.Name == "" {
		ref.Name = stringField(obj.Object, "metadata", "name")
	}
	if ref.Namespace == "" {
		ref.Namespace = stringField(obj.Object, "metadata", "namespace")
	}
	if ref.Kind == "" {
		return fmt.Errorf("object has no kind")
	}
	if ref.APIVersion == "" {
		return fmt.Errorf("%s has no apiVersion", ref.Kind)
	}
	if ref.Name == "" && stringField(obj.Object, "metadata", "generateName") == "" {
		return fmt.Errorf("%s has no metadata.name", ref.Kind)
	}
	if ref.Name == "" {
		ref.Name = stringField(obj.Object, "metadata", "generateName")
	}
	if _, ok := obj.Object["metadata"].(map[string]any); !ok && obj.Object["metadata"] != nil {
		return fmt.Errorf("%s %s: metadata is not a mapping", ref.Kind, ref.Name)
	}
	o := Object{Ref: ref, U: obj, Labels: stringMap(obj.Object, "labels"), Annotations: stringMap(obj.Object, "annotations")}
	group := apiGroup(ref.APIVersion)
	if !s.knows(group, ref.Kind) {
		s.Skipped[ref.Kind]++
		return nil
	}
	if err := s.add(group, o); err != nil {
		return fmt.Errorf("%s %s: %s", ref.Kind, ref.Name, cleanConvertError(err))
	}
	s.Objects++
	return nil
}

// add dispatches on group and kind.
func (s *Snapshot) add(group string, o Object) error {
	u := o.U.Object
	switch group + "/" + o.Ref.Kind {
	case "apps/Deployment":
		var d appsv1.Deployment
		if err := convert(u, &d); err != nil {
			return err
		}
		s.Workloads = append(s.Workloads, &Workload{Object: o, Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: d.Spec.Template, Deployment: &d})
	case "apps/StatefulSet":
		var d appsv1.StatefulSet
		if err := convert(u, &d); err != nil {
			return err
		}
		s.Workloads = append(s.Workloads, &Workload{Object: o, Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: d.Spec.Template, StatefulSet: &d})
	case "apps/DaemonSet":
		var d appsv1.DaemonSet
		if err := convert(u, &d); err != nil {
			return err
		}
		s.Workloads = append(s.Workloads, &Workload{Object: o, Selector: d.Spec.Selector, Template: d.Spec.Template, DaemonSet: &d})
	case "apps/ReplicaSet":
		var d appsv1.ReplicaSet
		if err := convert(u, &d); err != nil {
			return err
		}
		s.Workloads = append(s.Workloads, &Workload{Object: o, Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: d.Spec.Template, ReplicaSet: &d})
	case "batch/Job":
		var d batchv1.Job
		if err := convert(u, &d); err != nil {
			return err
		}
		s.Workloads = append(s.Workloads, &Workload{Object: o, Selector: d.Spec.Selector, Template: d.Spec.Template, Job: &d})
	case "batch/CronJob":
		var d batchv1.CronJob
		if err := convert(u, &d); err != nil {
			return err
		}
		s.Workloads = append(s.Workloads, &Workload{Object: o, Template: d.Spec.JobTemplate.Spec.Template, CronJob: &d})
	case "/Pod":
		var d corev1.Pod
		if err := convert(u, &d); err != nil {
			return err
		}
		one := int32(1)
		s.Workloads = append(s.Workloads, &Workload{Object: o, Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: d.Labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: d.ObjectMeta, Spec: d.Spec}, Pod: &d})
	case "argoproj.io/Rollout":
		return s.addRollout(o)
	case "/Service":
		var d corev1.Service
		if err := convert(u, &d); err != nil {
			return err
		}
		s.Services = append(s.Services, &Service{Object: o, Service: &d})
	case "policy/PodDisruptionBudget":
		var d policyv1.PodDisruptionBudget
		if err := convert(u, &d); err != nil {
			return err
		}
		s.PDBs = append(s.PDBs, &PDB{Object: o, PDB: &d})
	case "autoscaling/HorizontalPodAutoscaler":
		return s.addHPA(o)
	case "admissionregistration.k8s.io/ValidatingWebhookConfiguration":
		var d admissionv1.ValidatingWebhookConfiguration
		if err := convert(u, &d); err != nil {
			return err
		}
		for _, w := range d.Webhooks {
			s.Webhooks = append(s.Webhooks, newWebhook(o, w.Name, w.FailurePolicy, w.NamespaceSelector, w.ObjectSelector, w.Rules, w.ClientConfig.Service))
		}
	case "admissionregistration.k8s.io/MutatingWebhookConfiguration":
		var d admissionv1.MutatingWebhookConfiguration
		if err := convert(u, &d); err != nil {
			return err
		}
		for _, w := range d.Webhooks {
			s.Webhooks = append(s.Webhooks, newWebhook(o, w.Name, w.FailurePolicy, w.NamespaceSelector, w.ObjectSelector, w.Rules, w.ClientConfig.Service))
		}
	case "networking.k8s.io/NetworkPolicy":
		var d networkingv1.NetworkPolicy
		if err := convert(u, &d); err != nil {
			return err
		}
		s.NetworkPolicies = append(s.NetworkPolicies, &NetworkPolicy{Object: o, Policy: &d})
	case "/ServiceAccount":
		s.ServiceAccounts = append(s.ServiceAccounts, &o)
	case "rbac.authorization.k8s.io/Role", "rbac.authorization.k8s.io/ClusterRole":
		var d rbacv1.ClusterRole // a Role has the same fields, less aggregation
		if err := convert(u, &d); err != nil {
			return err
		}
		s.Roles = append(s.Roles, &Role{Object: o, Cluster: o.Ref.Kind == "ClusterRole", Rules: d.Rules})
	case "rbac.authorization.k8s.io/RoleBinding", "rbac.authorization.k8s.io/ClusterRoleBinding":
		var d rbacv1.ClusterRoleBinding
		if err := convert(u, &d); err != nil {
			return err
		}
		s.Bindings = append(s.Bindings, &Binding{Object: o, Cluster: o.Ref.Kind == "ClusterRoleBinding", RoleRef: d.RoleRef, Subjects: d.Subjects})
	case "networking.istio.io/VirtualService":
		s.VirtualServices = append(s.VirtualServices, &o)
	case "networking.istio.io/DestinationRule":
		s.DestinationRules = append(s.DestinationRules, &o)
	case "linkerd.io/ServiceProfile":
		s.ServiceProfiles = append(s.ServiceProfiles, &o)
	case "gateway.networking.k8s.io/HTTPRoute", "policy.linkerd.io/HTTPRoute":
		s.HTTPRoutes = append(s.HTTPRoutes, &o)
	case "networking.k8s.io/Ingress", "extensions/Ingress":
		s.Ingresses = append(s.Ingresses, &o)
	case "gateway.networking.k8s.io/GRPCRoute":
		s.GRPCRoutes = append(s.GRPCRoutes, &o)
	case "monitoring.coreos.com/ServiceMonitor":
		s.ServiceMonitors = append(s.ServiceMonitors, &o)
	case "monitoring.coreos.com/PodMonitor":
		s.PodMonitors = append(s.PodMonitors, &o)
	case "/PersistentVolumeClaim":
		s.PVCs = append(s.PVCs, &o)
	case "/ConfigMap":
		if s.ConfigMaps == nil {
			s.ConfigMaps = map[string]map[string]string{}
		}
		data := map[string]string{}
		if m, ok := u["data"].(map[string]any); ok {
			for k, v := range m {
				if sv, ok := v.(string); ok {
					data[k] = sv
				}
			}
		}
		s.ConfigMaps[o.Ref.Namespace+"/"+o.Ref.Name] = data
	}
	return nil
}

// knows reports whether the snapshot reads objects of this kind.
func (s *Snapshot) knows(group, kind string) bool { return knownKinds[group+"/"+kind] }

// addRollout reads an Argo Rollout: its pod template is a core pod
// template, the rest is read as unstructured.
func (s *Snapshot) addRollout(o Object) error {
	spec, _ := o.U.Object["spec"].(map[string]any)
	w := &Workload{Object: o}
	if spec == nil {
		return fmt.Errorf("spec is missing")
	}
	if t, ok := spec["template"].(map[string]any); ok {
		if err := convert(t, &w.Template); err != nil {
			return fmt.Errorf("spec.template: %w", err)
		}
	} else if _, ok := spec["workloadRef"]; !ok {
		return fmt.Errorf("spec.template is missing")
	}
	if sel, ok := spec["selector"].(map[string]any); ok {
		var ls metav1.LabelSelector
		if err := convert(sel, &ls); err != nil {
			return fmt.Errorf("spec.selector: %w", err)
		}
		w.Selector = &ls
	}
	if r, ok := spec["replicas"].(int64); ok {
		n := int32(r)
		w.Replicas = &n
	}
	s.Workloads = append(s.Workloads, w)
	return nil
}

// addHPA reads an autoscaling/v1 or v2 HorizontalPodAutoscaler.
func (s *Snapshot) addHPA(o Object) error {
	h := &HPA{Object: o, MinReplicas: 1}
	if strings.HasSuffix(o.Ref.APIVersion, "/v1") {
		var d autoscalingv1.HorizontalPodAutoscaler
		if err := convert(o.U.Object, &d); err != nil {
			return err
		}
		if d.Spec.MinReplicas != nil {
			h.MinReplicas = *d.Spec.MinReplicas
		}
		h.MaxReplicas = d.Spec.MaxReplicas
		h.TargetKind, h.TargetName = d.Spec.ScaleTargetRef.Kind, d.Spec.ScaleTargetRef.Name
		// v1 scales on CPU only, 80% when no target is given.
		h.CPUTarget = true
	} else {
		var d autoscalingv2.HorizontalPodAutoscaler
		if err := convert(o.U.Object, &d); err != nil {
			return err
		}
		if d.Spec.MinReplicas != nil {
			h.MinReplicas = *d.Spec.MinReplicas
		}
		h.MaxReplicas = d.Spec.MaxReplicas
		h.TargetKind, h.TargetName = d.Spec.ScaleTargetRef.Kind, d.Spec.ScaleTargetRef.Name
		for _, m := range d.Spec.Metrics {
			switch {
			case m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.Type == autoscalingv2.UtilizationMetricType:
				h.CPUTarget = true
			case m.ContainerResource != nil && m.ContainerResource.Name == corev1.ResourceCPU && m.ContainerResource.Target.Type == autoscalingv2.UtilizationMetricType:
				h.CPUTarget = true
			}
		}
		if len(d.Spec.Metrics) == 0 {
			h.CPUTarget = true // the default metric is 80% CPU utilization
		}
	}
	s.HPAs = append(s.HPAs, h)
	return nil
}

func newWebhook(o Object, name string, fp *admissionv1.FailurePolicyType, ns, obj *metav1.LabelSelector, rules []admissionv1.RuleWithOperations, svc *admissionv1.ServiceReference) *Webhook {
	w := &Webhook{Object: o, Name: name, FailurePolicy: string(admissionv1.Fail), NamespaceSelector: ns, ObjectSelector: obj, Rules: rules, Service: svc}
	if fp != nil {
		w.FailurePolicy = string(*fp)
	}
	return w
}

// Link computes the links between objects: which Services and PDBs select
// which workloads' pods, which workload each HPA targets, and which
// ReplicaSets and Pods another workload owns. Call it once, after the last
// Add; later calls do nothing.
func (s *Snapshot) Link() {
	if s.linked {
		return
	}
	s.linked = true
	sort.SliceStable(s.Workloads, func(i, j int) bool { return refLess(s.Workloads[i].Ref, s.Workloads[j].Ref) })
	// Index workloads by namespace so a Service only looks at its own.
	byNS := map[string][]*Workload{}
	byName := map[string]*Workload{}
	uids := map[string]bool{}
	for _, w := range s.Workloads {
		byNS[w.Ref.Namespace] = append(byNS[w.Ref.Namespace], w)
		byName[w.Ref.Namespace+"/"+w.Ref.Kind+"/"+w.Ref.Name] = w
		if uid := w.U.GetUID(); uid != "" {
			uids[string(uid)] = true
		}
	}
	for _, w := range s.Workloads {
		for _, or := range w.U.GetOwnerReferences() {
			if uids[string(or.UID)] || byName[w.Ref.Namespace+"/"+or.Kind+"/"+or.Name] != nil {
				w.Owned = true
			}
		}
	}
	// Selectors are matched through an index of the workloads' pod labels,
	// so linking costs about the number of matches rather than Services ×
	// workloads: a 1 MiB manifest of a few thousand objects links in
	// milliseconds.
	idx := newLabelIndex(s.Workloads)
	for _, svc := range s.Services {
		sel := svc.Service.Spec.Selector
		if len(sel) == 0 || svc.Service.Spec.Type == corev1.ServiceTypeExternalName {
			continue // no selector: endpoints are managed by hand
		}
		for _, w := range idx.matching(svc.Ref.Namespace, sel) {
			svc.Workloads = append(svc.Workloads, w)
			w.Services = append(w.Services, svc)
		}
	}
	for _, p := range s.PDBs {
		if p.PDB.Spec.Selector == nil {
			continue
		}
		var matches []*Workload
		if sel := p.PDB.Spec.Selector; len(sel.MatchExpressions) == 0 {
			if len(sel.MatchLabels) == 0 {
				continue // an empty selector matches nothing here
			}
			matches = idx.matching(p.Ref.Namespace, sel.MatchLabels)
		} else {
			ls, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil || ls.Empty() {
				continue
			}
			for _, w := range byNS[p.Ref.Namespace] {
				if !w.Owned && ls.Matches(labels.Set(w.Template.Labels)) {
					matches = append(matches, w)
				}
			}
		}
		for _, w := range matches {
			p.Workloads = append(p.Workloads, w)
			w.PDBs = append(w.PDBs, p)
		}
	}
	for _, h := range s.HPAs {
		if w := byName[h.Ref.Namespace+"/"+h.TargetKind+"/"+h.TargetName]; w != nil {
			h.Target = w
			w.HPAs = append(w.HPAs, h)
		}
	}
	s.linkServing()
}

// ServiceBacked reports whether any Service selects the workload's pods.
// Whether it serves traffic is Serving.
func (w *Workload) ServiceBacked() bool { return len(w.Services) > 0 }

// LongRunning reports whether the workload's pods are meant to keep
// running (not a Job or CronJob).
func (w *Workload) LongRunning() bool { return w.Job == nil && w.CronJob == nil }

// Containers returns the workload's regular containers.
func (w *Workload) Containers() []corev1.Container { return w.Template.Spec.Containers }

func refLess(a, b incidentlib.ObjectRef) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.Name < b.Name
}

// convert reads an unstructured map into a typed object, through JSON
// with Kubernetes' own decoder (case-sensitive field names, as the API
// server reads them). The unstructured converter does the same job but
// builds its reflection cache field by field on first use, which costs a
// short audit more than the whole decode (several times the time of this
// path in a fresh process). A panic on malformed input is turned into an
// error so that one bad object never stops an audit.
func convert(u map[string]any, into any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot read the object: %v", r)
		}
	}()
	data, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("cannot read the object: %v", err)
	}
	if err := utiljson.Unmarshal(data, into); err != nil {
		return explainConvert(data, into, err)
	}
	return nil
}

// explainConvert names the field a failed conversion tripped on, in
// encoding/json's terms (Kubernetes' decoder reports the same error in a
// type of its own). Only failures pay for it.
func explainConvert(data []byte, into any, err error) error {
	var ute *json.UnmarshalTypeError
	if jerr := json.Unmarshal(data, into); errors.As(jerr, &ute) && ute.Field != "" {
		found := map[string]string{"object": "a mapping", "array": "a list", "string": "a string", "number": "a number", "bool": "true or false"}[ute.Value]
		if found == "" {
			found = ute.Value
		}
		return fmt.Errorf("field %s: %s where %s is expected", ute.Field, found, jsonKind(ute.Type.Kind()))
	}
	return err
}

func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return "another type"
}

// cleanConvertError shortens the converter's messages to what a person
// needs: which field had the wrong type.
func cleanConvertError(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "json: cannot unmarshal"); i >= 0 {
		msg = msg[i+len("json: "):]
	}
	msg = strings.ReplaceAll(msg, "Go struct field ", "field ")
	msg = strings.ReplaceAll(msg, " of type ", " of Go type ")
	return msg
}

func apiGroup(apiVersion string) string {
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

func stringField(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}

// stringMap reads metadata.labels or metadata.annotations, keeping only
// string values (the converter reports the rest).
func stringMap(m map[string]any, field string) map[string]string {
	md, _ := m["metadata"].(map[string]any)
	raw, _ := md[field].(map[string]any)
	if len(raw) == 0 {
		return nil
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// knownKinds lists, by "group/Kind", the kinds the snapshot reads. It is
// read only.
var knownKinds = map[string]bool{
	"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true, "apps/ReplicaSet": true,
	"batch/Job": true, "batch/CronJob": true, "/Pod": true, "argoproj.io/Rollout": true,
	"/Service": true, "policy/PodDisruptionBudget": true, "autoscaling/HorizontalPodAutoscaler": true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration": true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":   true,
	"networking.k8s.io/NetworkPolicy":                             true, "/ServiceAccount": true,
	"rbac.authorization.k8s.io/Role": true, "rbac.authorization.k8s.io/ClusterRole": true,
	"rbac.authorization.k8s.io/RoleBinding": true, "rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"networking.istio.io/VirtualService": true, "networking.istio.io/DestinationRule": true,
	"linkerd.io/ServiceProfile": true, "gateway.networking.k8s.io/HTTPRoute": true, "policy.linkerd.io/HTTPRoute": true,
	"networking.k8s.io/Ingress": true, "extensions/Ingress": true, "gateway.networking.k8s.io/GRPCRoute": true,
	"monitoring.coreos.com/ServiceMonitor": true, "monitoring.coreos.com/PodMonitor": true, "/PersistentVolumeClaim": true,
	"/ConfigMap": true,
}

// labelIndex finds the workloads (not owned by another) of a namespace
// whose pod labels hold every pair of an equality selector.
type labelIndex map[string][]*Workload // "namespace\x00key=value" → workloads, in snapshot order

func newLabelIndex(ws []*Workload) labelIndex {
	idx := labelIndex{}
	for _, w := range ws {
		if w.Owned {
			continue
		}
		for k, v := range w.Template.Labels {
			key := w.Ref.Namespace + "\x00" + k + "=" + v
			idx[key] = append(idx[key], w)
		}
	}
	return idx
}

func (idx labelIndex) matching(ns string, sel map[string]string) []*Workload {
	var shortest []*Workload
	first := true
	for k, v := range sel {
		c := idx[ns+"\x00"+k+"="+v]
		if len(c) == 0 {
			return nil
		}
		if first || len(c) < len(shortest) {
			shortest, first = c, false
		}
	}
	var out []*Workload
	for _, w := range shortest {
		ok := true
		for k, v := range sel {
			if got, has := w.Template.Labels[k]; !has || got != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, w)
		}
	}
	return out
}
