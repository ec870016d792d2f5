package kubegap

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// This file decides which workloads serve traffic. A workload serves
// traffic when a Service with a port that is not for metrics selects it,
// and something routes to that Service: an Ingress, a Gateway API
// HTTPRoute or GRPCRoute, an Istio VirtualService, the Service's own type
// (LoadBalancer or NodePort), or another workload naming the Service in
// its environment. A controller selected only by a metrics Service, or by
// a Service nothing calls, is not serving: one replica, Recreate or no
// readiness probe costs it no requests.

// isMetricsPortName reports whether a port name says the port is for
// metrics scrapes.
func isMetricsPortName(n string) bool {
	n = strings.ToLower(n)
	return n == "metrics" || strings.HasSuffix(n, "-metrics") || strings.HasPrefix(n, "metrics-") ||
		strings.Contains(n, "prometheus")
}

// linkServing marks each Service's metrics ports and what routes to it,
// then each workload's serving Services. Link calls it.
func (s *Snapshot) linkServing() {
	svcByKey := map[string]*Service{}
	for _, svc := range s.Services {
		svcByKey[svc.Ref.Namespace+"/"+svc.Ref.Name] = svc
		svc.metricsPorts = map[int]bool{}
		ann := svc.Annotations
		scrapePort := ann["prometheus.io/port"]
		svc.namedMetrics = map[int]bool{}
		for i, p := range svc.Service.Spec.Ports {
			if isMetricsPortName(p.Name) {
				svc.namedMetrics[i] = true
				svc.metricsPorts[i] = true
			}
			if ann["prometheus.io/scrape"] == "true" && scrapePort != "" && scrapePort == strconv.Itoa(int(p.Port)) {
				svc.metricsPorts[i] = true
			}
		}
		if ann["prometheus.io/scrape"] == "true" && scrapePort == "" && len(svc.Service.Spec.Ports) == 1 {
			svc.metricsPorts[0] = true
		}
		switch svc.Service.Spec.Type {
		case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
			svc.RoutedBy = "its type " + string(svc.Service.Spec.Type)
		}
	}
	// Ports a ServiceMonitor scrapes.
	for _, sm := range s.ServiceMonitors {
		sel := labelSelector(field(sm.U.Object, "spec", "selector"))
		if sel == nil {
			continue
		}
		nss := monitorNamespaces(sm)
		for _, svc := range s.Services {
			if !nss(svc.Ref.Namespace) || !sel.Matches(labels.Set(svc.Labels)) {
				continue
			}
			for _, ep := range list(field(sm.U.Object, "spec", "endpoints")) {
				name, target := str(field(ep, "port")), field(ep, "targetPort")
				for i, p := range svc.Service.Spec.Ports {
					if (name != "" && p.Name == name) || sameTarget(target, p.TargetPort) {
						svc.metricsPorts[i] = true
					}
				}
			}
		}
	}
	// What routes to each Service. Routes set explicitly (Ingress, Gateway
	// routes, VirtualServices) mark a Service as explicitly routed: a port
	// that is also scraped for metrics still serves what they send it.
	route := func(ns, name, by string) {
		if svc := svcByKey[ns+"/"+name]; svc != nil {
			svc.explicitRoute = true
			if svc.RoutedBy == "" {
				svc.RoutedBy = by
			}
		}
	}
	for _, in := range s.Ingresses {
		by := "Ingress " + in.Ref.Name
		ns := in.Ref.Namespace
		route(ns, str(field(in.U.Object, "spec", "defaultBackend", "service", "name")), by)
		route(ns, str(field(in.U.Object, "spec", "backend", "serviceName")), by)
		for _, r := range list(field(in.U.Object, "spec", "rules")) {
			for _, p := range list(field(r, "http", "paths")) {
				route(ns, str(field(p, "backend", "service", "name")), by)
				route(ns, str(field(p, "backend", "serviceName")), by)
			}
		}
	}
	for _, kind := range [][]*Object{s.HTTPRoutes, s.GRPCRoutes} {
		for _, hr := range kind {
			for _, rule := range list(field(hr.U.Object, "spec", "rules")) {
				for _, b := range list(field(rule, "backendRefs")) {
					if k := str(field(b, "kind")); k != "" && k != "Service" {
						continue
					}
					ns := str(field(b, "namespace"))
					if ns == "" {
						ns = hr.Ref.Namespace
					}
					route(ns, str(field(b, "name")), hr.Ref.Kind+" "+hr.Ref.Name)
				}
			}
		}
	}
	for _, vs := range s.VirtualServices {
		for _, rt := range httpRoutes(vs) {
			for _, h := range rt.hosts() {
				name, ns, _ := strings.Cut(hostKey(h, vs.Ref.Namespace), ".")
				route(ns, name, "VirtualService "+vs.Ref.Name)
			}
		}
	}
	// Other workloads naming a Service in their environment.
	byName := map[string][]*Service{}
	for _, svc := range s.Services {
		byName[svc.Ref.Name] = append(byName[svc.Ref.Name], svc)
	}
	for _, w := range s.Workloads {
		for _, c := range allContainers(w.Template.Spec) {
			for _, e := range s.environment(c, w.Ref.Namespace) {
				for _, ref := range envServiceRefs(e, w.Ref.Namespace, byName) {
					if ref.RoutedBy == "" && !selects(ref, w) {
						ref.RoutedBy = w.Ref.Kind + " " + w.Ref.Name + " (env " + e.Name + ")"
					}
				}
			}
			// Command-line flags name upstreams too
			// (--endpoint=dnssrv+_grpc._tcp.store.ns.svc:10901): only a
			// URL, host:port or dotted name counts, never a bare word.
			for _, arg := range append(append([]string(nil), c.Command...), c.Args...) {
				if _, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(arg, "-") {
					arg = v
				}
				arg = srvPrefix.ReplaceAllString(arg, "")
				for _, ref := range envServiceRefs(corev1.EnvVar{Value: arg}, w.Ref.Namespace, byName) {
					if ref.RoutedBy == "" && !selects(ref, w) {
						ref.RoutedBy = w.Ref.Kind + " " + w.Ref.Name + " (command line)"
					}
				}
			}
		}
	}
	// Ports a PodMonitor or the pods' prometheus.io annotations scrape.
	for _, w := range s.Workloads {
		names, nums := s.podMetricsPorts(w)
		if len(names)+len(nums) == 0 {
			continue
		}
		for _, svc := range w.Services {
			for i, p := range svc.Service.Spec.Ports {
				tp := p.TargetPort
				if tp.Type == intstr.Int && tp.IntVal == 0 {
					tp = intstr.FromInt32(p.Port)
				}
				if (tp.Type == intstr.String && names[tp.StrVal]) || (tp.Type == intstr.Int && nums[tp.IntVal]) {
					svc.metricsPorts[i] = true
				}
				for _, c := range w.Containers() {
					for _, cp := range c.Ports {
						scraped := names[cp.Name] || nums[cp.ContainerPort]
						targeted := (tp.Type == intstr.Int && tp.IntVal == cp.ContainerPort) || (tp.Type == intstr.String && tp.StrVal == cp.Name)
						if scraped && targeted {
							svc.metricsPorts[i] = true
						}
					}
				}
			}
		}
	}
	for _, w := range s.Workloads {
		for _, svc := range w.Services {
			if !svc.metricsOnly() && svc.RoutedBy != "" {
				w.servedBy = append(w.servedBy, svc)
			}
		}
	}
}

// metricsOnly reports whether every port of the Service is for metrics:
// named so (metrics, http-metrics, prometheus…), or scraped by a
// ServiceMonitor, a PodMonitor or prometheus.io annotations while no
// Ingress, Gateway route or VirtualService routes to the Service.
func (svc *Service) metricsOnly() bool {
	ports := svc.Service.Spec.Ports
	if len(ports) == 0 {
		return false
	}
	for i := range ports {
		if !svc.metricsPort(i) {
			return false
		}
	}
	return true
}

// metricsPort reports whether the Service's i-th port is for metrics.
func (svc *Service) metricsPort(i int) bool {
	return svc.namedMetrics[i] || (svc.metricsPorts[i] && !svc.explicitRoute)
}

func selects(svc *Service, w *Workload) bool {
	for _, x := range w.Services {
		if x == svc {
			return true
		}
	}
	return false
}

// srvPrefix is the resolver prefix of a DNS service-discovery flag value
// (dnssrv+_grpc._tcp.), which leaves the Service's own name behind it.
var srvPrefix = regexp.MustCompile(`^[a-z]+\+(_[a-z0-9-]+\.)*`)

// hostToken finds host names in an environment value: the host of a URL,
// a host:port, or a dotted service name.
var hostToken = regexp.MustCompile(`(?:^|[\s,;=@/"'])([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)(?::[0-9]+|/|$|[\s,;"'])`)

// hostEnvName says an environment variable holds a host by its name.
var hostEnvName = regexp.MustCompile(`(?i)(HOST|ADDR|ADDRESS|URL|URI|ENDPOINT|SERVER|SERVICE|UPSTREAM|BACKEND)S?$`)

// envServiceRefs returns the Services an environment variable names: in
// a URL (scheme://svc…), as host:port, as svc.namespace[.svc…], or, when
// the variable's name says it holds a host (…_HOST, …_ADDR, …_URL), as the
// bare value.
func envServiceRefs(e corev1.EnvVar, ns string, byName map[string][]*Service) []*Service {
	v := strings.ToLower(strings.TrimSpace(e.Value))
	if v == "" {
		return nil
	}
	var out []*Service
	add := func(name, namespace string) {
		for _, svc := range byName[name] {
			if svc.Ref.Namespace == namespace && !slices.Contains(out, svc) {
				out = append(out, svc)
			}
		}
	}
	if hostEnvName.MatchString(e.Name) && !strings.ContainsAny(v, " :/") {
		name, rest, _ := strings.Cut(v, ".")
		namespace := ns
		if n, _, _ := strings.Cut(rest, "."); n != "" && n != "svc" {
			namespace = n
		}
		add(name, namespace)
	}
	for _, m := range hostToken.FindAllStringSubmatchIndex(v, -1) {
		host := v[m[2]:m[3]]
		end := m[1]
		hasPort := end > m[3] && v[m[3]] == ':'
		afterScheme := m[2] >= 3 && v[m[2]-3:m[2]] == "://"
		name, rest, dotted := strings.Cut(host, ".")
		if !hasPort && !afterScheme && !dotted {
			continue // a bare word: could be anything
		}
		namespace := ns
		if dotted {
			n, _, _ := strings.Cut(rest, ".")
			if n != "svc" {
				namespace = n
			}
		}
		add(name, namespace)
	}
	return out
}

// maxConfigMapEnv bounds what one container's environment takes from the
// ConfigMaps it reads, and maxEnvValue one value: a ConfigMap of files (a
// whole configuration, thousands of keys) read into many workloads must
// not multiply into millions of values to scan. Addresses are short and
// few.
const (
	maxConfigMapEnv = 256
	maxEnvValue     = 2048
)

// environment is a container's environment as far as the snapshot shows
// it: its env values, the keys of the ConfigMaps it reads whole (envFrom,
// with their prefix; the first maxConfigMapEnv in key order, values of at
// most maxEnvValue bytes) and the ConfigMap keys its env takes values
// from. A ConfigMap not in the snapshot adds nothing.
func (s *Snapshot) environment(c corev1.Container, ns string) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(c.Env))
	taken := 0
	for _, src := range c.EnvFrom {
		if src.ConfigMapRef == nil {
			continue
		}
		data := s.ConfigMaps[ns+"/"+src.ConfigMapRef.Name]
		keys := make([]string, 0, len(data))
		for k, v := range data {
			if len(v) <= maxEnvValue {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys) // the first workload found names the route: keep it stable
		for _, k := range keys {
			if taken == maxConfigMapEnv {
				break
			}
			out = append(out, corev1.EnvVar{Name: src.Prefix + k, Value: data[k]})
			taken++
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
			ref := e.ValueFrom.ConfigMapKeyRef
			if v, ok := s.ConfigMaps[ns+"/"+ref.Name][ref.Key]; ok && len(v) <= maxEnvValue {
				e = corev1.EnvVar{Name: e.Name, Value: v}
			}
		}
		out = append(out, e)
	}
	return out
}

// labelSelector reads an unstructured label selector; nil when absent or
// unreadable.
func labelSelector(v any) labels.Selector {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var ls metav1.LabelSelector
	if err := convert(m, &ls); err != nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return nil
	}
	return sel
}

// monitorNamespaces returns which namespaces a ServiceMonitor or PodMonitor
// looks in: its own unless namespaceSelector says any or names others.
func monitorNamespaces(o *Object) func(string) bool {
	if b, _ := field(o.U.Object, "spec", "namespaceSelector", "any").(bool); b {
		return func(string) bool { return true }
	}
	names := map[string]bool{}
	for _, n := range list(field(o.U.Object, "spec", "namespaceSelector", "matchNames")) {
		names[str(n)] = true
	}
	if len(names) == 0 {
		names[o.Ref.Namespace] = true
	}
	return func(ns string) bool { return names[ns] }
}

func sameTarget(v any, tp intstr.IntOrString) bool {
	switch x := v.(type) {
	case string:
		return x != "" && tp.Type == intstr.String && tp.StrVal == x
	case int64:
		return tp.Type == intstr.Int && int64(tp.IntVal) == x
	}
	return false
}

// Serving reports whether the workload serves traffic: a Service with a
// non-metrics port selects it and something routes to that Service.
func (w *Workload) Serving() bool { return len(w.servedBy) > 0 }

// servingNames names the Services through which the workload serves.
func servingNames(w *Workload) string {
	names := make([]string, len(w.servedBy))
	for i, s := range w.servedBy {
		names[i] = s.Ref.Name
	}
	return strings.Join(names, ", ")
}

// podMonitorPorts returns the container port names and numbers a
// PodMonitor scrapes on the workload's pods, or pod annotations declare.
func (s *Snapshot) podMetricsPorts(w *Workload) (names map[string]bool, numbers map[int32]bool) {
	names, numbers = map[string]bool{}, map[int32]bool{}
	if p := w.Template.Annotations["prometheus.io/port"]; p != "" && w.Template.Annotations["prometheus.io/scrape"] == "true" {
		if n, err := strconv.Atoi(p); err == nil {
			numbers[int32(n)] = true
		}
	}
	for _, pm := range s.PodMonitors {
		sel := labelSelector(field(pm.U.Object, "spec", "selector"))
		if sel == nil || !monitorNamespaces(pm)(w.Ref.Namespace) || !sel.Matches(labels.Set(w.Template.Labels)) {
			continue
		}
		for _, ep := range list(field(pm.U.Object, "spec", "podMetricsEndpoints")) {
			if n := str(field(ep, "port")); n != "" {
				names[n] = true
			}
		}
	}
	return names, numbers
}
