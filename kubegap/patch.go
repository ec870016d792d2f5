package kubegap

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// This file turns a finding's fix into a patch to the object found: the
// check's fixer changes a copy of the object the way the fix says, and the
// patch is the difference, a strategic-merge patch for the kinds
// Kubernetes defines (kubectl patch --type strategic) and a JSON merge
// patch for custom resources (kubectl patch --type merge). A check whose
// fix is a new object (a DestinationRule, a PodDisruptionBudget) or needs
// a value kubegap cannot know (the image version to pin) has no fixer;
// its findings carry the check's snippet only. TestPatchesFixFindings
// applies every fixture finding's patch and audits again.

// fixer changes u, a copy of the object of a finding of its check, so
// that the check no longer fires on it; it returns false when it cannot.
type fixer func(s *Snapshot, o *Object, u map[string]any) bool

// fixers holds the checks that can fix the object they flag.
var fixers = map[string]fixer{
	"KG001": fixDeepLiveness, "KG002": fixLivenessWindow, "KG005": fixRetryTimeout, "KG006": fixNonIdempotentRetry,
	"KG007": fixLinkerdRetries, "KG008": fixBlockingPDB, "KG009": fixReplicas, "KG010": fixSpread, "KG011": fixHPABounds,
	"KG012": fixMemory, "KG013": fixCPULimit, "KG014": fixRollout, "KG015": fixCacheRollout, "KG016": fixWebhookNamespaces,
	"KG018": fixDeprecatedLabels, "KG019": fixDrain, "KG021": fixReadiness, "KG022": fixPullPolicy, "KG023": fixProbeTimeout,
	"KG024": fixStartupProbe, "KG025": fixHPAReplicas, "KG026": fixCPURequest, "KG027": fixNoLiveness, "KG028": fixRecreate,
	"KG029": fixPullPolicy,
}

// PatchTypes name the patches: "strategic" for a strategic-merge patch,
// "merge" for a JSON merge patch (RFC 7386).
const (
	PatchStrategic = "strategic"
	PatchMerge     = "merge"
)

// typedFor returns an empty typed object of the kind, for strategic-merge
// patches; nil for kinds Kubernetes does not define.
func typedFor(o *Object) any {
	switch apiGroup(o.Ref.APIVersion) + "/" + o.Ref.Kind {
	case "apps/Deployment":
		return &appsv1.Deployment{}
	case "apps/StatefulSet":
		return &appsv1.StatefulSet{}
	case "apps/DaemonSet":
		return &appsv1.DaemonSet{}
	case "apps/ReplicaSet":
		return &appsv1.ReplicaSet{}
	case "batch/Job":
		return &batchv1.Job{}
	case "batch/CronJob":
		return &batchv1.CronJob{}
	case "/Pod":
		return &corev1.Pod{}
	case "/Service":
		return &corev1.Service{}
	case "policy/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	case "autoscaling/HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}
	case "admissionregistration.k8s.io/ValidatingWebhookConfiguration":
		return &admissionv1.ValidatingWebhookConfiguration{}
	case "admissionregistration.k8s.io/MutatingWebhookConfiguration":
		return &admissionv1.MutatingWebhookConfiguration{}
	}
	return nil
}

// makePatch returns the patch (YAML) and its type that turn the object
// into one the check no longer flags, or "" when the check has no fixer.
func makePatch(s *Snapshot, checkID string, o *Object) (patch, typ string) {
	// A patch is a convenience: an object the patch libraries choke on
	// gets the check's snippet instead, never a failed audit.
	defer func() {
		if recover() != nil {
			patch, typ = "", ""
		}
	}()
	fix := fixers[checkID]
	if fix == nil || o.U == nil {
		return "", ""
	}
	fixed := runtime.DeepCopyJSON(o.U.Object)
	if !fix(s, o, fixed) {
		return "", ""
	}
	orig, err := json.Marshal(o.U.Object)
	if err != nil {
		return "", ""
	}
	mod, err := json.Marshal(fixed)
	if err != nil {
		return "", ""
	}
	var p []byte
	typ = PatchMerge
	if t := typedFor(o); t != nil {
		typ = PatchStrategic
		p, err = strategicpatch.CreateTwoWayMergePatch(orig, mod, t)
	} else {
		p, err = jsonpatch.CreateMergePatch(orig, mod)
	}
	if err != nil || string(p) == "{}" {
		return "", ""
	}
	if typ == PatchStrategic {
		p = dropOrderDirectives(p)
	}
	y, err := jsonToYAML(p)
	if err != nil {
		return "", ""
	}
	return string(y), typ
}

// dropOrderDirectives removes the $setElementOrder directives a two-way
// strategic patch carries: they only keep list order, which a person
// reading the patch need not see, and the patch applies the same without.
func dropOrderDirectives(p []byte) []byte {
	var v any
	if json.Unmarshal(p, &v) != nil {
		return p
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if strings.HasPrefix(k, "$setElementOrder/") {
					delete(x, k)
					continue
				}
				walk(val)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	out, err := json.Marshal(v)
	if err != nil {
		return p
	}
	return out
}

// ApplyPatch applies a finding's patch to an object (as JSON), as kubectl
// patch would.
func ApplyPatch(o *Object, patch, typ string) ([]byte, error) {
	orig, err := json.Marshal(o.U.Object)
	if err != nil {
		return nil, err
	}
	var v any
	if err := yaml.Unmarshal([]byte(patch), &v); err != nil {
		return nil, err
	}
	p, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	switch typ {
	case PatchStrategic:
		t := typedFor(o)
		if t == nil {
			return nil, fmt.Errorf("%s is not a kind strategic-merge patches apply to", o.Ref.Kind)
		}
		return strategicpatch.StrategicMergePatch(orig, p, t)
	case PatchMerge:
		return jsonpatch.MergePatch(orig, p)
	}
	return nil, fmt.Errorf("unknown patch type %q", typ)
}

// Helpers over unstructured objects.

func mapAt(u map[string]any, path ...string) map[string]any {
	cur := u
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	return cur
}

// podSpecOf returns the pod spec of a workload object (nil for others).
func podSpecOf(o *Object, u map[string]any) map[string]any {
	switch o.Ref.Kind {
	case "Pod":
		return mapAt(u, "spec")
	case "CronJob":
		return mapAt(u, "spec", "jobTemplate", "spec", "template", "spec")
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Rollout":
		return mapAt(u, "spec", "template", "spec")
	}
	return nil
}

// eachContainer calls f on every regular container of a workload object.
func eachContainer(o *Object, u map[string]any, f func(c map[string]any)) bool {
	ps := podSpecOf(o, u)
	if ps == nil {
		return false
	}
	cs := list(ps["containers"])
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok {
			f(m)
		}
	}
	return len(cs) > 0
}

// firstPort is a container's first port: its name when it has one, for a
// probe to use; nil when it has none.
func firstPort(c map[string]any) any {
	for _, p := range list(c["ports"]) {
		if n := str(field(p, "name")); n != "" && len(n) <= 15 {
			return n
		}
		if n, ok := field(p, "containerPort").(int64); ok {
			return n
		}
	}
	return nil
}

// probePort is the port a probe uses, or the container's first.
func probePort(c map[string]any, probe string) any {
	for _, h := range []string{"httpGet", "tcpSocket", "grpc"} {
		if p := field(c, probe, h, "port"); p != nil {
			return p
		}
	}
	return firstPort(c)
}

func int64At(m map[string]any, key string, def int64) int64 {
	switch v := m[key].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return def
}

func fixDeepLiveness(_ *Snapshot, o *Object, u map[string]any) bool {
	ok := false
	eachContainer(o, u, func(c map[string]any) {
		l, _ := c["livenessProbe"].(map[string]any)
		if l == nil {
			return
		}
		var p corev1.Probe
		if convert(l, &p) != nil {
			return
		}
		var readiness *corev1.Probe
		if rm, _ := c["readinessProbe"].(map[string]any); rm != nil {
			readiness = new(corev1.Probe)
			if convert(rm, readiness) != nil {
				readiness = nil
			}
		}
		if remoteProbe(&p, readiness) == "" {
			return
		}
		port := probePort(c, "livenessProbe")
		if port == nil {
			return
		}
		// A TCP check of the container's own port: the process is up and
		// accepting, and nothing beyond it is asked.
		for _, h := range []string{"httpGet", "tcpSocket", "exec", "grpc"} {
			delete(l, h)
		}
		l["tcpSocket"] = map[string]any{"port": port}
		ok = true
	})
	return ok
}

func fixLivenessWindow(_ *Snapshot, o *Object, u map[string]any) bool {
	ok := false
	eachContainer(o, u, func(c map[string]any) {
		l, _ := c["livenessProbe"].(map[string]any)
		r, _ := c["readinessProbe"].(map[string]any)
		if l == nil || r == nil {
			return
		}
		rw := int64At(r, "periodSeconds", 10) * int64At(r, "failureThreshold", 3)
		period := int64At(l, "periodSeconds", 10)
		// Liveness tolerates twice readiness's window, at least a minute.
		l["failureThreshold"] = max(2*rw, 60)/period + 1
		ok = true
	})
	return ok
}

func fixRetryTimeout(_ *Snapshot, o *Object, u map[string]any) bool {
	ok := false
	for _, r := range list(field(u, "spec", "http")) {
		rt, _ := r.(map[string]any)
		re, _ := rt["retries"].(map[string]any)
		if rt == nil || re == nil || rt["timeout"] == nil {
			continue
		}
		attempts := int64At(re, "attempts", 0)
		per, okPer := istioDuration(re["perTryTimeout"])
		if !okPer || attempts == 0 {
			continue
		}
		rt["timeout"] = (time.Duration(attempts) * per).String()
		ok = true
	}
	return ok
}

func fixNonIdempotentRetry(_ *Snapshot, o *Object, u map[string]any) bool {
	ok := false
	if o.Ref.Kind == "ServiceProfile" {
		for _, r := range list(field(u, "spec", "routes")) {
			if m, _ := r.(map[string]any); m != nil && m["isRetryable"] == true {
				m["isRetryable"] = false
				ok = true
			}
		}
		return ok
	}
	for _, r := range list(field(u, "spec", "http")) {
		re, _ := field(r, "retries").(map[string]any)
		if re == nil || !strings.Contains(str(re["retryOn"]), "5xx") {
			continue
		}
		// Retry only what fails before the request reaches the backend.
		re["retryOn"] = "connect-failure,refused-stream"
		ok = true
	}
	return ok
}

func fixLinkerdRetries(_ *Snapshot, o *Object, u map[string]any) bool {
	ok := false
	if ann, _ := field(u, "metadata", "annotations").(map[string]any); ann != nil {
		for k := range ann {
			if strings.HasPrefix(k, "retry.linkerd.io/") {
				delete(ann, k)
				ok = true
			}
		}
	}
	if rb, _ := field(u, "spec", "retryBudget").(map[string]any); rb != nil {
		rb["retryRatio"] = 0.2
		ok = true
	}
	return ok
}

func fixBlockingPDB(_ *Snapshot, o *Object, u map[string]any) bool {
	if o.Ref.Kind != "PodDisruptionBudget" {
		return false // a missing budget is a new object: see the snippet
	}
	spec := mapAt(u, "spec")
	delete(spec, "minAvailable")
	spec["maxUnavailable"] = int64(1)
	return true
}

func fixReplicas(_ *Snapshot, o *Object, u map[string]any) bool {
	switch o.Ref.Kind {
	case "Deployment", "StatefulSet", "ReplicaSet", "Rollout":
		mapAt(u, "spec")["replicas"] = int64(2)
		return true
	}
	return false
}

func fixSpread(_ *Snapshot, o *Object, u map[string]any) bool {
	ps := podSpecOf(o, u)
	labels, _ := field(u, "spec", "template", "metadata", "labels").(map[string]any)
	if ps == nil || len(labels) == 0 {
		return false
	}
	var tsc []any
	for _, key := range []string{"topology.kubernetes.io/zone", "kubernetes.io/hostname"} {
		tsc = append(tsc, map[string]any{"maxSkew": int64(1), "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway",
			"labelSelector": map[string]any{"matchLabels": runtime.DeepCopyJSONValue(labels)}})
	}
	ps["topologySpreadConstraints"] = tsc
	return true
}

func fixHPABounds(s *Snapshot, o *Object, u map[string]any) bool {
	if o.Ref.Kind != "HorizontalPodAutoscaler" {
		return false
	}
	var h *HPA
	for _, x := range s.HPAs {
		if &x.Object == o || x.Ref == o.Ref {
			h = x
		}
	}
	if h == nil {
		return false
	}
	top := int64(h.MaxReplicas)
	if int64(h.MinReplicas) >= top {
		top = int64(h.MinReplicas) * 2
	}
	if h.Target != nil && h.Target.Replicas != nil && int64(*h.Target.Replicas) > top {
		top = int64(*h.Target.Replicas) * 2
	}
	if top == int64(h.MaxReplicas) {
		return false // the CPU-request gap is on the workload: see KG026
	}
	mapAt(u, "spec")["maxReplicas"] = top
	return true
}

func fixMemory(_ *Snapshot, o *Object, u map[string]any) bool {
	return eachContainer(o, u, func(c map[string]any) {
		res := mapAt(c, "resources")
		req, lim := mapAt(res, "requests"), mapAt(res, "limits")
		if _, ok := lim["memory"]; ok {
			return
		}
		if r, ok := req["memory"]; ok {
			if q, err := resource.ParseQuantity(fmt.Sprint(r)); err == nil {
				q.Add(q) // twice the request: room for peaks
				lim["memory"] = q.String()
				return
			}
		}
		req["memory"] = "256Mi"
		lim["memory"] = "512Mi"
	})
}

func fixCPULimit(_ *Snapshot, o *Object, u map[string]any) bool {
	return eachContainer(o, u, func(c map[string]any) {
		res := mapAt(c, "resources")
		lim := mapAt(res, "limits")
		cpu, ok := lim["cpu"]
		if !ok {
			return
		}
		req := mapAt(res, "requests")
		if _, has := req["cpu"]; !has {
			req["cpu"] = cpu // what the limit gave it, kept as the request
		}
		delete(lim, "cpu")
	})
}

func fixRollout(_ *Snapshot, o *Object, u map[string]any) bool {
	switch o.Ref.Kind {
	case "Deployment":
		mapAt(u, "spec")["strategy"] = map[string]any{"type": "RollingUpdate",
			"rollingUpdate": map[string]any{"maxUnavailable": int64(0), "maxSurge": "25%"}}
	case "StatefulSet":
		mapAt(u, "spec", "updateStrategy", "rollingUpdate")["maxUnavailable"] = int64(1)
	case "DaemonSet":
		mapAt(u, "spec", "updateStrategy", "rollingUpdate")["maxUnavailable"] = int64(1)
	case "Rollout":
		mapAt(u, "spec", "strategy", "canary")["maxUnavailable"] = "25%"
	default:
		return false
	}
	return true
}

func fixCacheRollout(_ *Snapshot, o *Object, u map[string]any) bool {
	switch o.Ref.Kind {
	case "Deployment":
		mapAt(u, "spec")["strategy"] = map[string]any{"type": "RollingUpdate",
			"rollingUpdate": map[string]any{"maxUnavailable": int64(1), "maxSurge": int64(0)}}
	case "StatefulSet":
		mapAt(u, "spec", "updateStrategy", "rollingUpdate")["maxUnavailable"] = int64(1)
	default:
		return false
	}
	return true
}

func fixWebhookNamespaces(_ *Snapshot, o *Object, u map[string]any) bool {
	ok := false
	for _, w := range list(u["webhooks"]) {
		m, _ := w.(map[string]any)
		if m == nil {
			continue
		}
		sel := mapAt(m, "namespaceSelector")
		sel["matchExpressions"] = append(list(sel["matchExpressions"]), map[string]any{
			"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{"kube-system"}})
		ok = true
	}
	return ok
}

// stableLabels maps deprecated node labels to their stable names.
var stableLabels = map[string]string{
	"beta.kubernetes.io/os": "kubernetes.io/os", "beta.kubernetes.io/arch": "kubernetes.io/arch",
	"beta.kubernetes.io/instance-type":         "node.kubernetes.io/instance-type",
	"failure-domain.beta.kubernetes.io/zone":   "topology.kubernetes.io/zone",
	"failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}

func fixDeprecatedLabels(_ *Snapshot, o *Object, u map[string]any) bool {
	ps := podSpecOf(o, u)
	if ps == nil {
		return false
	}
	ok := true
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if deprecatedLabel(k) {
					if to, known := stableLabels[k]; known {
						delete(x, k)
						x[to] = walk(val)
						continue
					}
					ok = false
				}
				x[k] = walk(val)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case string:
			if deprecatedLabel(x) {
				if to, known := stableLabels[x]; known {
					return to
				}
				ok = false
			}
		}
		return v
	}
	for _, k := range []string{"nodeSelector", "affinity", "topologySpreadConstraints"} {
		if v, has := ps[k]; has {
			ps[k] = walk(v)
		}
	}
	return ok
}

func fixDrain(_ *Snapshot, o *Object, u map[string]any) bool {
	ps := podSpecOf(o, u)
	if ps == nil {
		return false
	}
	sleep := int64(10)
	eachContainer(o, u, func(c map[string]any) {
		lc := mapAt(c, "lifecycle")
		if ps, ok := lc["preStop"].(map[string]any); ok {
			if sec := int64At(mapAt(ps, "sleep"), "seconds", 0); sec > sleep {
				sleep = sec
			}
			if _, isSleep := ps["sleep"]; isSleep || ps["exec"] != nil {
				return
			}
		}
		lc["preStop"] = map[string]any{"sleep": map[string]any{"seconds": sleep}}
	})
	if g := int64At(ps, "terminationGracePeriodSeconds", 30); g <= sleep {
		ps["terminationGracePeriodSeconds"] = sleep + 30
	}
	return true
}

func fixReadiness(_ *Snapshot, o *Object, u map[string]any) bool {
	ok := false
	eachContainer(o, u, func(c map[string]any) {
		if c["readinessProbe"] != nil {
			return
		}
		if port := firstPort(c); port != nil {
			c["readinessProbe"] = map[string]any{"tcpSocket": map[string]any{"port": port}, "periodSeconds": int64(5)}
			ok = true
		}
	})
	return ok
}

func fixPullPolicy(_ *Snapshot, o *Object, u map[string]any) bool {
	ps := podSpecOf(o, u)
	if ps == nil {
		return false
	}
	for _, key := range []string{"initContainers", "containers"} {
		for _, c := range list(ps[key]) {
			if m, _ := c.(map[string]any); m != nil {
				m["imagePullPolicy"] = "IfNotPresent"
			}
		}
	}
	return true
}

func fixProbeTimeout(_ *Snapshot, o *Object, u map[string]any) bool {
	return eachContainer(o, u, func(c map[string]any) {
		for _, k := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
			p, _ := c[k].(map[string]any)
			if p == nil {
				continue
			}
			period := int64At(p, "periodSeconds", 10)
			if int64At(p, "timeoutSeconds", 1) >= period {
				p["timeoutSeconds"] = max(period/2, 1)
				if period <= 1 {
					p["periodSeconds"] = int64(2)
				}
			}
		}
	})
}

func fixStartupProbe(_ *Snapshot, o *Object, u map[string]any) bool {
	ok := false
	eachContainer(o, u, func(c map[string]any) {
		l, _ := c["livenessProbe"].(map[string]any)
		if l == nil || c["startupProbe"] != nil {
			return
		}
		sp := map[string]any{"periodSeconds": int64(10), "failureThreshold": int64(30)}
		for _, h := range []string{"httpGet", "tcpSocket", "exec", "grpc"} {
			if v, has := l[h]; has {
				sp[h] = runtime.DeepCopyJSONValue(v)
			}
		}
		c["startupProbe"] = sp
		ok = true
	})
	return ok
}

func fixHPAReplicas(_ *Snapshot, _ *Object, u map[string]any) bool {
	delete(mapAt(u, "spec"), "replicas")
	return true
}

func fixCPURequest(_ *Snapshot, o *Object, u map[string]any) bool {
	return eachContainer(o, u, func(c map[string]any) {
		res := mapAt(c, "resources")
		if _, lim := mapAt(res, "limits")["cpu"]; lim {
			return
		}
		req := mapAt(res, "requests")
		if _, has := req["cpu"]; !has {
			req["cpu"] = "100m"
		}
	})
}

func fixNoLiveness(_ *Snapshot, o *Object, u map[string]any) bool {
	ok := true
	eachContainer(o, u, func(c map[string]any) {
		if c["livenessProbe"] != nil {
			return
		}
		port := firstPort(c)
		if port == nil {
			ok = false // a worker with no port needs a heartbeat of its own: see the snippet
			return
		}
		c["livenessProbe"] = map[string]any{"tcpSocket": map[string]any{"port": port}, "periodSeconds": int64(10), "failureThreshold": int64(6)}
	})
	return ok
}

func fixRecreate(_ *Snapshot, o *Object, u map[string]any) bool {
	if o.Ref.Kind != "Deployment" {
		return false
	}
	mapAt(u, "spec")["strategy"] = map[string]any{"type": "Recreate"}
	return true
}
