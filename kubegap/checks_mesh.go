package kubegap

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Istio, Linkerd and Gateway API objects are read as unstructured maps;
// these helpers read them without trusting their shape.

func field(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func list(v any) []any { l, _ := v.([]any); return l }

func str(v any) string { s, _ := v.(string); return s }

func num(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	}
	return 0, false
}

// istioDuration reads "1.5s", "200ms", "1m".
func istioDuration(v any) (time.Duration, bool) {
	s := str(v)
	if s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}

// vsRoute is one http route of a VirtualService.
type vsRoute struct {
	vs    *Object
	index int
	route map[string]any
}

func (r vsRoute) name() string {
	if n := str(r.route["name"]); n != "" {
		return "route " + strconv.Quote(n)
	}
	return "http route " + strconv.Itoa(r.index+1)
}

// attempts returns the route's explicit retry attempts (0 when it sets
// none: Istio's own default is left alone, since nobody chose it).
func (r vsRoute) attempts() int {
	n, ok := num(field(r.route, "retries", "attempts"))
	if !ok || n < 0 {
		return 0
	}
	return int(n)
}

// hosts returns the destination hosts of the route.
func (r vsRoute) hosts() []string {
	var out []string
	for _, d := range list(r.route["route"]) {
		if h := str(field(d, "destination", "host")); h != "" {
			out = append(out, h)
		}
	}
	return out
}

func httpRoutes(vs *Object) []vsRoute {
	var out []vsRoute
	for i, r := range list(field(vs.U.Object, "spec", "http")) {
		if m, ok := r.(map[string]any); ok {
			out = append(out, vsRoute{vs: vs, index: i, route: m})
		}
	}
	return out
}

// gateways returns a VirtualService's gateways; none means the mesh.
func gateways(vs *Object) (mesh bool, named []string) {
	gws := list(field(vs.U.Object, "spec", "gateways"))
	if len(gws) == 0 {
		return true, nil
	}
	for _, g := range gws {
		if s := str(g); s == "mesh" {
			mesh = true
		} else if s != "" {
			named = append(named, s)
		}
	}
	return mesh, named
}

// hostKey reduces a host name to service and namespace ("reviews",
// "reviews.prod", "reviews.prod.svc.cluster.local" → reviews, prod), the
// namespace falling back to the object's.
func hostKey(host, ns string) string {
	parts := strings.Split(host, ".")
	if len(parts) >= 2 && parts[1] != "svc" {
		ns = parts[1]
	}
	return parts[0] + "." + ns
}

// brakedHosts returns the hosts (as hostKey) whose DestinationRules set
// outlier detection or connection-pool limits, at any level.
func brakedHosts(s *Snapshot) map[string]bool {
	out := map[string]bool{}
	for _, dr := range s.DestinationRules {
		policies := []any{field(dr.U.Object, "spec", "trafficPolicy")}
		for _, sub := range list(field(dr.U.Object, "spec", "subsets")) {
			policies = append(policies, field(sub, "trafficPolicy"))
		}
		for _, p := range policies {
			braked := field(p, "outlierDetection") != nil || field(p, "connectionPool") != nil
			for _, pp := range list(field(p, "portLevelSettings")) {
				braked = braked || field(pp, "outlierDetection") != nil || field(pp, "connectionPool") != nil
			}
			if braked {
				out[hostKey(str(field(dr.U.Object, "spec", "host")), dr.Ref.Namespace)] = true
			}
		}
	}
	return out
}

func checkRetriesWithoutBrake(s *Snapshot, r *reporter) {
	braked := brakedHosts(s)
	for _, vs := range s.VirtualServices {
		for _, rt := range httpRoutes(vs) {
			if rt.attempts() == 0 {
				continue
			}
			for _, h := range rt.hosts() {
				if !braked[hostKey(h, vs.Ref.Namespace)] {
					r.add(vs, "%s retries %d times to host %q, which has no DestinationRule with outlierDetection or connectionPool limits", rt.name(), rt.attempts(), h)
				}
			}
		}
	}
}

func checkStackedRetries(s *Snapshot, r *reporter) {
	// Mesh-side retries per host.
	type meshRetry struct {
		vs       *Object
		attempts int
	}
	mesh := map[string]meshRetry{}
	for _, vs := range s.VirtualServices {
		if isMesh, _ := gateways(vs); !isMesh {
			continue
		}
		most := 0
		for _, rt := range httpRoutes(vs) {
			most = max(most, rt.attempts())
		}
		if most == 0 {
			continue
		}
		for _, h := range list(field(vs.U.Object, "spec", "hosts")) {
			mesh[hostKey(str(h), vs.Ref.Namespace)] = meshRetry{vs, most}
		}
	}
	if len(mesh) == 0 {
		return
	}
	for _, vs := range s.VirtualServices {
		if _, named := gateways(vs); len(named) == 0 {
			continue
		}
		for _, rt := range httpRoutes(vs) {
			if rt.attempts() == 0 {
				continue
			}
			for _, h := range rt.hosts() {
				if m, ok := mesh[hostKey(h, vs.Ref.Namespace)]; ok && m.vs != vs {
					r.add(vs, "%s retries %d times at the gateway to host %q, and VirtualService %s retries it %d times again in the mesh: up to %d calls per request",
						rt.name(), rt.attempts(), h, m.vs.Ref.Name, m.attempts, (rt.attempts()+1)*(m.attempts+1))
				}
			}
		}
	}
	for _, hr := range s.HTTPRoutes {
		for i, rule := range list(field(hr.U.Object, "spec", "rules")) {
			n, ok := num(field(rule, "retry", "attempts"))
			if !ok || n <= 0 {
				continue
			}
			for _, b := range list(field(rule, "backendRefs")) {
				name := str(field(b, "name"))
				ns := str(field(b, "namespace"))
				if ns == "" {
					ns = hr.Ref.Namespace
				}
				if m, ok := mesh[name+"."+ns]; ok {
					r.add(hr, "rule %d retries %d times to Service %q, and VirtualService %s retries it %d times again in the mesh: up to %d calls per request",
						i+1, int(n), name, m.vs.Ref.Name, m.attempts, (int(n)+1)*(m.attempts+1))
				}
			}
		}
	}
}

func checkRetryTimeoutBudget(s *Snapshot, r *reporter) {
	for _, vs := range s.VirtualServices {
		for _, rt := range httpRoutes(vs) {
			a := rt.attempts()
			per, okPer := istioDuration(field(rt.route, "retries", "perTryTimeout"))
			total, okTotal := istioDuration(rt.route["timeout"])
			if a == 0 || !okPer || !okTotal {
				continue
			}
			if time.Duration(a)*per > total {
				r.add(vs, "%s: %d attempts × perTryTimeout %s = %s, beyond the route timeout of %s", rt.name(), a, per, time.Duration(a)*per, total)
			}
		}
	}
}

var idempotentMethods = map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true, "PUT": true, "DELETE": true, "TRACE": true}

// idempotentOnly reports whether every match of the route names an
// idempotent method exactly.
func idempotentOnly(route map[string]any) bool {
	matches := list(route["match"])
	if len(matches) == 0 {
		return false
	}
	for _, m := range matches {
		exact := strings.ToUpper(str(field(m, "method", "exact")))
		if !idempotentMethods[exact] {
			return false
		}
	}
	return true
}

func retriesOn5xx(retryOn string) bool {
	for _, p := range strings.Split(retryOn, ",") {
		if strings.TrimSpace(p) == "5xx" {
			return true
		}
	}
	return false
}

func checkNonIdempotentRetries(s *Snapshot, r *reporter) {
	for _, vs := range s.VirtualServices {
		for _, rt := range httpRoutes(vs) {
			if rt.attempts() == 0 || !retriesOn5xx(str(field(rt.route, "retries", "retryOn"))) || idempotentOnly(rt.route) {
				continue
			}
			r.add(vs, "%s retries on 5xx but does not match only idempotent methods, so POST and PATCH requests may be replayed", rt.name())
		}
	}
	for _, sp := range s.ServiceProfiles {
		// One finding per profile: a generated profile can list a route per
		// method, and a hundred findings for one setting help nobody.
		var names []string
		for _, route := range list(field(sp.U.Object, "spec", "routes")) {
			if b, _ := field(route, "isRetryable").(bool); !b {
				continue
			}
			method := strings.ToUpper(str(field(route, "condition", "method")))
			if method != "POST" && method != "PATCH" {
				continue
			}
			if grpcRead(str(field(route, "condition", "pathRegex"))) {
				continue
			}
			names = append(names, fmt.Sprintf("%q (%s)", str(field(route, "name")), method))
		}
		switch {
		case len(names) == 1:
			r.add(sp, "route %s is retryable but matches a method that is not idempotent", names[0])
		case len(names) > 1:
			shown := names
			if len(shown) > 3 {
				shown = shown[:3]
			}
			more := ""
			if len(names) > len(shown) {
				more = fmt.Sprintf(" and %d more", len(names)-len(shown))
			}
			r.add(sp, "%d retryable routes match methods that are not idempotent: %s%s", len(names), strings.Join(shown, ", "), more)
		}
	}
}

// grpcReadVerbs begin the names of gRPC methods that read: gRPC sends every
// call as a POST, so the method's name is the only sign of what it does.
var grpcReadVerbs = []string{"Get", "List", "Find", "Read", "Watch", "Search", "Describe", "Lookup", "Check"}

// grpcRead reports whether a route's path names one gRPC method
// (/package.Service/Method) whose name says it reads.
func grpcRead(pathRegex string) bool {
	p := strings.ReplaceAll(pathRegex, `\.`, ".")
	i := strings.LastIndex(p, "/")
	if !strings.HasPrefix(p, "/") || i <= 0 || !strings.Contains(p[:i], ".") {
		return false
	}
	m := p[i+1:]
	for _, v := range grpcReadVerbs {
		if strings.HasPrefix(m, v) && (len(m) == len(v) || m[len(v)] >= 'A' && m[len(v)] <= 'Z') {
			return true
		}
	}
	return false
}

func checkLinkerdRetries(s *Snapshot, r *reporter) {
	for _, sp := range s.ServiceProfiles {
		retryable := false
		for _, route := range list(field(sp.U.Object, "spec", "routes")) {
			if b, _ := field(route, "isRetryable").(bool); b {
				retryable = true
			}
		}
		if !retryable {
			continue
		}
		if ratio, ok := num(field(sp.U.Object, "spec", "retryBudget", "retryRatio")); ok && ratio > 0.2 {
			r.add(sp, "retryBudget.retryRatio is %g: retries may add %.0f%% to the load on a failing service", ratio, ratio*100)
		}
	}
	annotated := func(o *Object) string {
		for _, k := range []string{"retry.linkerd.io/http", "retry.linkerd.io/grpc"} {
			if v, ok := o.Annotations[k]; ok {
				return k + ": " + v
			}
		}
		return ""
	}
	for _, svc := range s.Services {
		if a := annotated(&svc.Object); a != "" {
			r.add(&svc.Object, "annotation %s turns on Linkerd retries, which have a per-request limit but no retry budget", a)
		}
	}
	for _, hr := range s.HTTPRoutes {
		if a := annotated(hr); a != "" {
			r.add(hr, "annotation %s turns on Linkerd retries, which have a per-request limit but no retry budget", a)
		}
	}
}
