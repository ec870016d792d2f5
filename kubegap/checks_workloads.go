package kubegap

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// replicated reports whether the workload is a kind whose replica count
// matters for availability (Deployment, StatefulSet, ReplicaSet, Rollout).
func (w *Workload) replicated() bool {
	return w.Deployment != nil || w.StatefulSet != nil || w.ReplicaSet != nil || w.Ref.Kind == "Rollout"
}

// minReplicas is the fewest replicas the workload runs: its HPA's
// minReplicas when one targets it, else spec.replicas (1 when unset, as
// Kubernetes defaults it).
func (w *Workload) minReplicas() int32 {
	if len(w.HPAs) > 0 {
		m := w.HPAs[0].MinReplicas
		for _, h := range w.HPAs[1:] {
			m = min(m, h.MinReplicas)
		}
		return m
	}
	if w.Replicas != nil {
		return *w.Replicas
	}
	return 1
}

func checkPDB(s *Snapshot, r *reporter) {
	checkMissingPDB(s, r)
	checkBlockingPDB(s, r)
}

func checkMissingPDB(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		if !w.replicated() || w.ReplicaSet != nil || !w.Serving() || w.minReplicas() < 2 || len(w.PDBs) > 0 {
			continue
		}
		r.add(&w.Object, "%d replicas behind Service %s and no PodDisruptionBudget selects its pods", w.minReplicas(), serviceNames(w))
	}
}

// scaledValue resolves an int-or-percent against a total, rounding up as
// the disruption controller does for minAvailable.
func scaledValue(v *intstr.IntOrString, total int, roundUp bool) (int, bool) {
	if v == nil {
		return 0, false
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, total, roundUp)
	return n, err == nil
}

func checkBlockingPDB(s *Snapshot, r *reporter) {
	for _, p := range s.PDBs {
		spec := p.PDB.Spec
		if spec.MaxUnavailable != nil {
			if n, ok := scaledValue(spec.MaxUnavailable, 100, false); ok && n == 0 {
				r.add(&p.Object, "maxUnavailable is %s: no pod it covers can ever be evicted, so node drains never finish", spec.MaxUnavailable.String())
			}
			continue
		}
		if spec.MinAvailable == nil {
			continue
		}
		if spec.MinAvailable.Type == intstr.String && strings.TrimSpace(spec.MinAvailable.StrVal) == "100%" {
			r.add(&p.Object, "minAvailable is 100%%: no pod it covers can ever be evicted, so node drains never finish")
			continue
		}
		for _, w := range p.Workloads {
			if !w.replicated() {
				continue
			}
			replicas := int(w.minReplicas())
			if n, ok := scaledValue(spec.MinAvailable, replicas, true); ok && n >= replicas {
				r.add(&p.Object, "minAvailable %s is not below the %d replicas of %s %s: no pod can be evicted, so node drains never finish",
					spec.MinAvailable.String(), replicas, w.Ref.Kind, w.Ref.Name)
			}
		}
	}
}

func checkSingleReplica(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		if !w.Serving() || !w.LongRunning() || w.DaemonSet != nil {
			continue
		}
		// A second replica is no fix for a datastore or a single writer on
		// a ReadWriteOnce volume: it needs replication, which kubegap
		// cannot prescribe.
		if ds := datastore(w); ds != "" {
			continue
		}
		if w.Deployment != nil && s.rwoVolume(w) != "" {
			continue
		}
		if w.Pod != nil {
			r.add(&w.Object, "a bare Pod behind Service %s: nothing restarts it elsewhere when its node goes", serviceNames(w))
			continue
		}
		if w.replicated() && w.minReplicas() < 2 {
			r.add(&w.Object, "runs %d replica behind Service %s", w.minReplicas(), serviceNames(w))
		}
	}
}

func spreads(spec corev1.PodSpec) bool {
	if len(spec.TopologySpreadConstraints) > 0 {
		return true
	}
	a := spec.Affinity
	return a != nil && a.PodAntiAffinity != nil &&
		(len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0)
}

func checkNoSpread(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		if !w.replicated() || w.ReplicaSet != nil || w.minReplicas() < 2 || spreads(w.Template.Spec) {
			continue
		}
		r.add(&w.Object, "%d replicas with no topologySpreadConstraints or pod anti-affinity: they may share one node or zone", w.minReplicas())
	}
}

func checkHPA(s *Snapshot, r *reporter) {
	for _, h := range s.HPAs {
		if h.MaxReplicas > 0 && h.MinReplicas >= h.MaxReplicas {
			r.add(&h.Object, "minReplicas (%d) is not below maxReplicas (%d): it can never add a pod", h.MinReplicas, h.MaxReplicas)
		}
		w := h.Target
		if w == nil {
			continue
		}
		if w.Replicas != nil && *w.Replicas > h.MaxReplicas && h.MaxReplicas > 0 {
			r.add(&h.Object, "maxReplicas (%d) is below the %d replicas %s %s declares: the autoscaler scales it down and never back up to it",
				h.MaxReplicas, *w.Replicas, w.Ref.Kind, w.Ref.Name)
		}
		if h.CPUTarget {
			for _, c := range w.Containers() {
				if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
					if _, lim := c.Resources.Limits[corev1.ResourceCPU]; lim {
						continue // the request defaults to the limit
					}
					r.add(&h.Object, "scales on CPU utilization, but container %q of %s %s has no CPU request to measure it against", c.Name, w.Ref.Kind, w.Ref.Name)
				}
			}
		}
	}
}

func allContainers(spec corev1.PodSpec) []corev1.Container {
	out := append([]corev1.Container{}, spec.InitContainers...)
	return append(out, spec.Containers...)
}

func checkMemory(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		for _, c := range w.Containers() {
			_, req := c.Resources.Requests[corev1.ResourceMemory]
			_, lim := c.Resources.Limits[corev1.ResourceMemory]
			switch {
			case !req && !lim:
				r.add(&w.Object, "container %q sets no memory request and no memory limit", c.Name)
			case !lim:
				r.add(&w.Object, "container %q sets no memory limit", c.Name)
				// A limit alone is fine: the request defaults to it.
			}
		}
	}
}

func checkCPUThrottle(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		if !w.Serving() || !w.LongRunning() {
			continue
		}
		for _, c := range servingContainers(w) {
			lim, hasLim := c.Resources.Limits[corev1.ResourceCPU]
			if !hasLim {
				continue
			}
			req, hasReq := c.Resources.Requests[corev1.ResourceCPU]
			if !hasReq || lim.Cmp(req) <= 0 {
				r.add(&w.Object, "container %q: CPU limit %s leaves no headroom above its request, so every burst is throttled", c.Name, lim.String())
			}
		}
	}
}

// replacesAll says how a workload's rollout takes every pod down at once,
// or "".
func replacesAll(w *Workload) string {
	replicas := int(w.minReplicas())
	allOf := func(v *intstr.IntOrString, what string) string {
		if v == nil {
			return ""
		}
		if n, ok := scaledValue(v, replicas, false); ok && n >= replicas && replicas > 0 {
			if v.Type == intstr.String {
				return fmt.Sprintf("%s is %s", what, v.StrVal)
			}
			return fmt.Sprintf("%s (%d) is not below its %d replicas", what, v.IntVal, replicas)
		}
		return ""
	}
	switch {
	case w.Deployment != nil:
		st := w.Deployment.Spec.Strategy
		if st.Type == appsv1.RecreateDeploymentStrategyType {
			return "strategy Recreate stops every pod before starting new ones"
		}
		if st.RollingUpdate != nil {
			return allOf(st.RollingUpdate.MaxUnavailable, "rollingUpdate.maxUnavailable")
		}
	case w.DaemonSet != nil:
		if ru := w.DaemonSet.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil && ru.MaxUnavailable.Type == intstr.String {
			if n, ok := scaledValue(ru.MaxUnavailable, 100, false); ok && n >= 100 {
				return "rollingUpdate.maxUnavailable is " + ru.MaxUnavailable.StrVal
			}
		}
	case w.StatefulSet != nil:
		if ru := w.StatefulSet.Spec.UpdateStrategy.RollingUpdate; ru != nil {
			return allOf(ru.MaxUnavailable, "rollingUpdate.maxUnavailable")
		}
	case w.Ref.Kind == "Rollout":
		if v := field(w.U.Object, "spec", "strategy", "canary", "maxUnavailable"); v != nil {
			var iv intstr.IntOrString
			switch x := v.(type) {
			case string:
				iv = intstr.FromString(x)
			case int64:
				iv = intstr.FromInt32(int32(x))
			default:
				return ""
			}
			return allOf(&iv, "canary.maxUnavailable")
		}
	}
	return ""
}

func checkRolloutAtOnce(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		if !w.Serving() {
			continue
		}
		// Recreate is right for one pod that owns a ReadWriteOnce volume
		// (a surge pod could not attach it; KG028 flags the opposite) and
		// for a lone datastore, which must not run twice on one data set.
		if w.Deployment != nil && w.minReplicas() <= 1 && (s.rwoVolume(w) != "" || datastore(w) != "") {
			continue
		}
		if why := replacesAll(w); why != "" {
			r.add(&w.Object, "%s: each rollout takes Service %s fully down", why, serviceNames(w))
		}
	}
}

// cacheImages are image names of in-memory caches.
var cacheImages = []string{"memcached", "redis", "valkey", "keydb", "dragonfly"}

// isCache reports whether a container runs a cache server (not an exporter
// or a client beside one).
func isCache(c corev1.Container) bool {
	img := strings.ToLower(c.Image)
	if i := strings.LastIndex(img, "/"); i >= 0 {
		img = img[i+1:]
	}
	if i := strings.IndexAny(img, ":@"); i >= 0 {
		img = img[:i]
	}
	if strings.Contains(img, "exporter") || strings.Contains(img, "operator") || strings.Contains(img, "sentinel") {
		return false
	}
	for _, name := range cacheImages {
		if strings.Contains(img, name) {
			return true
		}
	}
	return false
}

func checkCacheRollout(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		if !w.replicated() || w.ReplicaSet != nil {
			continue
		}
		cache := ""
		for _, c := range w.Containers() {
			if isCache(c) {
				cache = c.Image
				break
			}
		}
		replicas := int(w.minReplicas())
		if cache == "" || replicas < 2 {
			continue
		}
		quarter := intstr.FromString("25%")
		var at *intstr.IntOrString
		switch {
		case w.Deployment != nil:
			st := w.Deployment.Spec.Strategy
			if st.Type == appsv1.RecreateDeploymentStrategyType {
				r.add(&w.Object, "cache %s rolls out with strategy Recreate: all %d replicas restart cold at once", cache, replicas)
				continue
			}
			at = &quarter // the default
			if st.RollingUpdate != nil && st.RollingUpdate.MaxUnavailable != nil {
				at = st.RollingUpdate.MaxUnavailable
			}
		case w.StatefulSet != nil:
			st := w.StatefulSet.Spec
			if st.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
				continue
			}
			if st.UpdateStrategy.RollingUpdate != nil && st.UpdateStrategy.RollingUpdate.MaxUnavailable != nil {
				at = st.UpdateStrategy.RollingUpdate.MaxUnavailable
			}
		}
		if at == nil {
			continue
		}
		n, ok := scaledValue(at, replicas, false)
		if ok && n > 1 && float64(n) > float64(replicas)/4 {
			r.add(&w.Object, "cache %s replaces %d of %d replicas at once (maxUnavailable %s): that share of the cache restarts cold", cache, n, replicas, at.String())
		}
	}
}

// deprecatedLabel reports whether a node label key is one Kubernetes has
// deprecated.
func deprecatedLabel(k string) bool {
	return strings.HasPrefix(k, "beta.kubernetes.io/") || strings.HasPrefix(k, "failure-domain.beta.kubernetes.io/")
}

func checkDeprecatedLabels(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		spec := w.Template.Spec
		var found []string
		for k := range spec.NodeSelector {
			if deprecatedLabel(k) {
				found = append(found, "nodeSelector "+k)
			}
		}
		for _, t := range spec.TopologySpreadConstraints {
			if deprecatedLabel(t.TopologyKey) {
				found = append(found, "topologySpreadConstraints topologyKey "+t.TopologyKey)
			}
		}
		if a := spec.Affinity; a != nil {
			if na := a.NodeAffinity; na != nil {
				var terms []corev1.NodeSelectorTerm
				if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
					terms = append(terms, na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms...)
				}
				for _, p := range na.PreferredDuringSchedulingIgnoredDuringExecution {
					terms = append(terms, p.Preference)
				}
				for _, t := range terms {
					for _, e := range t.MatchExpressions {
						if deprecatedLabel(e.Key) {
							found = append(found, "nodeAffinity "+e.Key)
						}
					}
				}
			}
			for _, pa := range []*corev1.PodAntiAffinity{a.PodAntiAffinity} {
				if pa == nil {
					continue
				}
				for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
					if deprecatedLabel(t.TopologyKey) {
						found = append(found, "podAntiAffinity topologyKey "+t.TopologyKey)
					}
				}
				for _, t := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
					if deprecatedLabel(t.PodAffinityTerm.TopologyKey) {
						found = append(found, "podAntiAffinity topologyKey "+t.PodAffinityTerm.TopologyKey)
					}
				}
			}
			if pa := a.PodAffinity; pa != nil {
				for _, t := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
					if deprecatedLabel(t.TopologyKey) {
						found = append(found, "podAffinity topologyKey "+t.TopologyKey)
					}
				}
			}
		}
		if len(found) > 0 {
			sort.Strings(found)
			r.add(&w.Object, "uses deprecated node labels: %s", strings.Join(found, "; "))
		}
	}
}

// frontedServices maps "namespace/name" of each Service that an HTTPRoute
// or a gateway-bound VirtualService sends traffic to, to that route. It is
// built once per audit, so the drain check stays linear in the snapshot.
func frontedServices(s *Snapshot) map[string]string {
	out := map[string]string{}
	for _, svc := range s.Services {
		if strings.HasPrefix(svc.RoutedBy, "Ingress ") {
			out[svc.Ref.Namespace+"/"+svc.Ref.Name] = svc.RoutedBy
		}
	}
	for _, hr := range append(append([]*Object{}, s.HTTPRoutes...), s.GRPCRoutes...) {
		for _, rule := range list(field(hr.U.Object, "spec", "rules")) {
			for _, b := range list(field(rule, "backendRefs")) {
				if k := str(field(b, "kind")); k != "" && k != "Service" {
					continue
				}
				ns := str(field(b, "namespace"))
				if ns == "" {
					ns = hr.Ref.Namespace
				}
				key := ns + "/" + str(field(b, "name"))
				if _, ok := out[key]; !ok {
					out[key] = hr.Ref.Kind + " " + hr.Ref.Name
				}
			}
		}
	}
	for _, vs := range s.VirtualServices {
		if _, named := gateways(vs); len(named) == 0 {
			continue
		}
		for _, rt := range httpRoutes(vs) {
			for _, h := range rt.hosts() {
				name, ns, _ := strings.Cut(hostKey(h, vs.Ref.Namespace), ".")
				if _, ok := out[ns+"/"+name]; !ok {
					out[ns+"/"+name] = "gateway VirtualService " + vs.Ref.Name
				}
			}
		}
	}
	return out
}

// fronted says which load balancer sends traffic to the workload, or "".
func fronted(w *Workload, routes map[string]string) string {
	for _, svc := range w.servedBy {
		if svc.Service.Spec.Type == corev1.ServiceTypeLoadBalancer {
			return "LoadBalancer Service " + svc.Ref.Name
		}
	}
	for _, svc := range w.servedBy {
		if r, ok := routes[svc.Ref.Namespace+"/"+svc.Ref.Name]; ok {
			return r
		}
	}
	return ""
}

// preStopSleep returns the seconds a preStop hook sleeps, when it is a
// sleep action or an exec of sleep; -1 when it does something else.
func preStopSleep(h *corev1.LifecycleHandler) int64 {
	if h.Sleep != nil {
		return h.Sleep.Seconds
	}
	if h.Exec != nil {
		words := strings.Fields(strings.Join(h.Exec.Command, " "))
		for i, w := range words {
			if strings.HasSuffix(strings.Trim(w, `'"`), "sleep") && i+1 < len(words) {
				var n int64
				if _, err := fmt.Sscanf(strings.Trim(words[i+1], `'";`), "%d", &n); err == nil {
					return n
				}
			}
		}
	}
	return -1
}

func checkGracefulDrain(s *Snapshot, r *reporter) {
	routes := frontedServices(s)
	for _, w := range s.audited() {
		if !w.Serving() || !w.LongRunning() {
			continue
		}
		lb := fronted(w, routes)
		if lb == "" {
			continue
		}
		grace := int64(30)
		if g := w.Template.Spec.TerminationGracePeriodSeconds; g != nil {
			grace = *g
		}
		for _, c := range servingContainers(w) {
			if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
				r.add(&w.Object, "container %q behind %s has no preStop hook: it stops while the load balancer still sends it requests", c.Name, lb)
				continue
			}
			if sleep := preStopSleep(c.Lifecycle.PreStop); sleep >= grace {
				r.add(&w.Object, "container %q: its preStop sleeps %ds but terminationGracePeriodSeconds is %d, so it is killed before it can drain", c.Name, sleep, grace)
			}
		}
	}
}

// imageTag returns an image's tag ("" when it has none) and whether it is
// pinned by digest.
func imageTag(image string) (tag string, digest bool) {
	if i := strings.Index(image, "@"); i >= 0 {
		return "", true
	}
	last := image[strings.LastIndex(image, "/")+1:]
	if i := strings.LastIndex(last, ":"); i >= 0 {
		return last[i+1:], false
	}
	return "", false
}

func checkLatestImage(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		for _, c := range allContainers(w.Template.Spec) {
			if c.Image == "" {
				continue
			}
			tag, digest := imageTag(c.Image)
			switch {
			case digest:
			case tag == "":
				r.add(&w.Object, "container %q: image %s has no tag, so it means latest", c.Name, c.Image)
			case tag == "latest":
				r.add(&w.Object, "container %q: image %s uses the latest tag", c.Name, c.Image)
			}
		}
	}
}

// defaultsToPullAlways reports whether the API server would set
// imagePullPolicy to Always for a container that leaves it out: it does for
// the latest tag and for untagged images, not for digests. A cluster
// returns the defaulted value, so files must read the gap the same way.
func defaultsToPullAlways(image string) bool {
	tag, digest := imageTag(image)
	return !digest && (tag == "" || tag == "latest")
}

func checkPullAlways(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		scales := ""
		switch {
		case w.DaemonSet != nil:
			scales = "a DaemonSet, which starts a pod on every new node"
		case len(w.HPAs) > 0:
			scales = "scaled by HPA " + w.HPAs[0].Ref.Name
		}
		if scales == "" {
			continue
		}
		for _, c := range allContainers(w.Template.Spec) {
			switch {
			case c.ImagePullPolicy == corev1.PullAlways:
				r.add(&w.Object, "container %q sets imagePullPolicy: Always and the workload is %s: every new pod needs the registry to start", c.Name, scales)
			case c.ImagePullPolicy == "" && defaultsToPullAlways(c.Image):
				r.add(&w.Object, "container %q leaves imagePullPolicy out, which Kubernetes sets to Always for image %s (latest or untagged), and the workload is %s: every new pod needs the registry to start", c.Name, c.Image, scales)
			}
		}
	}
}

// coversKubeSystem reports whether a namespace selector matches the
// kube-system namespace (by its automatic name label).
func coversKubeSystem(sel *metav1.LabelSelector) bool {
	if sel == nil {
		return true
	}
	ls, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return ls.Matches(labels.Set{"kubernetes.io/metadata.name": "kube-system"})
}

// optIn reports whether an object selector sends the webhook only objects
// that carry a label it asks for (it does not match an object with no
// labels): the cluster's own components, which carry none, never reach it.
func optIn(sel *metav1.LabelSelector) bool {
	if sel == nil {
		return false
	}
	ls, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return !ls.Matches(labels.Set{})
}

// coreResources are resources whose creation a cluster needs to heal.
var coreResources = map[string]bool{"*": true, "*/*": true, "pods": true, "pods/*": true, "deployments": true, "replicasets": true,
	"daemonsets": true, "statefulsets": true, "configmaps": true, "secrets": true, "services": true, "endpoints": true,
	"endpointslices": true, "leases": true, "nodes": true, "serviceaccounts": true}

func checkFailClosedWebhook(s *Snapshot, r *reporter) {
	for _, wh := range s.Webhooks {
		if wh.FailurePolicy != "Fail" || !coversKubeSystem(wh.NamespaceSelector) || optIn(wh.ObjectSelector) {
			continue
		}
		var hit []string
		for _, rule := range wh.Rules {
			for _, res := range rule.Resources {
				if coreResources[res] {
					hit = append(hit, res)
				}
			}
		}
		if len(hit) == 0 {
			continue
		}
		where := "every namespace, kube-system included (no namespaceSelector)"
		if wh.NamespaceSelector != nil {
			where = "kube-system (its namespaceSelector does not exclude it)"
		}
		r.add(&wh.Object, "webhook %q fails closed on %s for %s: when it is down, those objects cannot be created there", wh.Name, strings.Join(dedupe(hit), ", "), where)
	}
}

// fanOutResources are resources whose cluster-wide list is expensive and
// that node agents commonly watch.
var fanOutResources = map[string]bool{"*": true, "pods": true, "nodes": true, "endpoints": true, "endpointslices": true,
	"services": true, "secrets": true, "configmaps": true, "events": true}

func checkDaemonSetFanOut(s *Snapshot, r *reporter) {
	roles := map[string]*Role{}
	for _, ro := range s.Roles {
		if ro.Cluster {
			roles[ro.Ref.Name] = ro
		}
	}
	for _, w := range s.audited() {
		if w.DaemonSet == nil {
			continue
		}
		sa := w.Template.Spec.ServiceAccountName
		if sa == "" {
			sa = w.Template.Spec.DeprecatedServiceAccount
		}
		if sa == "" {
			sa = "default"
		}
		var found []string
		for _, b := range s.Bindings {
			if !b.Cluster || b.RoleRef.Kind != "ClusterRole" {
				continue
			}
			bound := false
			for _, sub := range b.Subjects {
				if sub.Kind == "ServiceAccount" && sub.Name == sa && (sub.Namespace == w.Ref.Namespace || w.Ref.Namespace == "" || sub.Namespace == "") {
					bound = true
				}
			}
			role := roles[b.RoleRef.Name]
			if !bound || role == nil {
				continue
			}
			for _, rule := range role.Rules {
				if !hasVerb(rule.Verbs, "list") && !hasVerb(rule.Verbs, "watch") {
					continue
				}
				for _, res := range rule.Resources {
					if fanOutResources[res] && len(rule.ResourceNames) == 0 {
						found = append(found, res)
					}
				}
			}
			if len(found) > 0 {
				r.add(&w.Object, "service account %q may list/watch %s cluster-wide (ClusterRoleBinding %s to ClusterRole %s): every node's copy lists the whole cluster when it restarts",
					sa, strings.Join(dedupe(found), ", "), b.Ref.Name, role.Ref.Name)
				found = nil
			}
		}
	}
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v || x == "*" {
			return true
		}
	}
	return false
}

func dedupe(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
