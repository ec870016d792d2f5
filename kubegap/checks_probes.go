package kubegap

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// reporter collects one check's findings.
type reporter struct {
	found []rawFinding
}

type rawFinding struct {
	obj *Object
	msg string
}

func (r *reporter) add(o *Object, format string, args ...any) {
	r.found = append(r.found, rawFinding{obj: o, msg: fmt.Sprintf(format, args...)})
}

// audited returns the workloads a check looks at: everything but the
// ReplicaSets and Pods another workload of the snapshot owns.
func (s *Snapshot) audited() []*Workload {
	out := make([]*Workload, 0, len(s.Workloads))
	for _, w := range s.Workloads {
		if !w.Owned {
			out = append(out, w)
		}
	}
	return out
}

// deepPathWords are path segments that say a health endpoint checks more
// than the process: dependencies, a database, everything at once.
var deepPathWords = map[string]bool{
	"deep": true, "dependencies": true, "dependency": true, "deps": true, "downstream": true, "upstream": true,
	"db": true, "database": true, "full": true,
}

// readyPathWords name a readiness endpoint. A liveness probe on one
// restarts the pod whenever it is unready. When the readiness probe runs
// that same check, the gap is KG002's (it weighs the two windows), and
// the name alone says nothing reaches beyond the pod, so KG001 counts
// these words only when readiness runs another check, or none.
var readyPathWords = map[string]bool{"ready": true, "readiness": true, "readyz": true}

// networkClients are programs that, in an exec probe, talk to a server.
var networkClients = map[string]bool{
	"psql": true, "pg_isready": true, "mysql": true, "mysqladmin": true, "mariadb": true, "mariadb-admin": true,
	"redis-cli": true, "valkey-cli": true, "mongo": true, "mongosh": true, "cqlsh": true, "nodetool": true,
	"curl": true, "wget": true, "nc": true, "ncat": true, "netcat": true, "telnet": true, "grpc_health_probe": true,
	"grpcurl": true, "nslookup": true, "dig": true, "host": true, "kafka-broker-api-versions.sh": true,
	"rabbitmqctl": true, "etcdctl": true, "sqlcmd": true, "clickhouse-client": true,
}

var wordSplit = regexp.MustCompile(`[/?&=.\-_:,;]+`)

func localHost(h string) bool {
	h = strings.Trim(strings.ToLower(h), "[]")
	return h == "" || h == "localhost" || h == "127.0.0.1" || h == "::1" || h == "0.0.0.0" ||
		strings.HasPrefix(h, "$(") || strings.HasPrefix(h, "${") || strings.HasPrefix(h, "$")
}

// remoteProbe says why a liveness probe depends on something beyond the
// container, or "" when it does not; readiness is the same container's
// readiness probe (nil when it has none).
func remoteProbe(p, readiness *corev1.Probe) string {
	switch {
	case p.HTTPGet != nil:
		if !localHost(p.HTTPGet.Host) {
			return fmt.Sprintf("its HTTP check goes to another host (%s)", p.HTTPGet.Host)
		}
		path := strings.ToLower(p.HTTPGet.Path)
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		if strings.HasSuffix(strings.TrimRight(path, "/"), "/actuator/health") {
			return fmt.Sprintf("its path %q is Spring Boot's aggregate health, which includes the database and other indicators (use /actuator/health/liveness)", p.HTTPGet.Path)
		}
		// Only the path's own segments: a query string on a local path
		// (/healthz?full=true) asks the same process for more detail and
		// is not a dependency check by itself.
		words := wordSplit.Split(path, -1)
		for _, w := range words {
			if deepPathWords[w] {
				return fmt.Sprintf("its path %q looks like a dependency check", p.HTTPGet.Path)
			}
		}
		if readiness != nil && reflect.DeepEqual(normalHandler(p.ProbeHandler), normalHandler(readiness.ProbeHandler)) {
			return ""
		}
		for _, w := range words {
			if readyPathWords[w] {
				return fmt.Sprintf("its path %q is a readiness endpoint that the readiness probe does not use, so the pod restarts whenever it is unready", p.HTTPGet.Path)
			}
		}
	case p.TCPSocket != nil:
		if !localHost(p.TCPSocket.Host) {
			return fmt.Sprintf("its TCP check goes to another host (%s)", p.TCPSocket.Host)
		}
	case p.Exec != nil:
		if prog, host := execRemote(p.Exec.Command); prog != "" {
			return fmt.Sprintf("its command runs %s against %s", prog, host)
		}
	}
	return ""
}

// execRemote finds a network or database client in an exec probe's
// command that is pointed at a host other than the container itself. A
// client with no host argument talks to localhost and is fine.
func execRemote(cmd []string) (prog, host string) {
	var words []string
	for _, c := range cmd {
		words = append(words, strings.Fields(c)...) // "sh -c 'psql -h db …'" splits too
	}
	client := ""
	for i, w := range words {
		w = strings.Trim(w, `'";()`)
		base := w[strings.LastIndex(w, "/")+1:]
		if networkClients[base] {
			client = base
			continue
		}
		if client == "" {
			continue
		}
		switch {
		case w == "-h" || w == "--host" || w == "-H" || w == "--hostname" || w == "-host" || w == "-addr" || w == "--addr" || w == "-server":
			if i+1 < len(words) {
				if h := hostOf(strings.Trim(words[i+1], `'"`)); !localHost(h) {
					return client, h
				}
			}
		case strings.HasPrefix(w, "--host=") || strings.HasPrefix(w, "-addr=") || strings.HasPrefix(w, "--addr=") || strings.HasPrefix(w, "-h="):
			if h := hostOf(w[strings.Index(w, "=")+1:]); !localHost(h) {
				return client, h
			}
		case strings.Contains(w, "://"):
			if h := hostOf(w); !localHost(h) {
				return client, h
			}
		case (client == "nc" || client == "ncat" || client == "netcat" || client == "telnet") && !strings.HasPrefix(w, "-"):
			if !localHost(w) && !isNumber(w) {
				return client, w
			}
		}
	}
	return "", ""
}

// hostOf takes the host out of "scheme://host:port/path", "host:port" or
// "host".
func hostOf(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	if strings.HasPrefix(s, "[") {
		if i := strings.Index(s, "]"); i >= 0 {
			return s[:i+1]
		}
	}
	if i := strings.LastIndex(s, ":"); i >= 0 {
		s = s[:i]
	}
	return s
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func checkDeepLiveness(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		for _, c := range w.Containers() {
			if c.LivenessProbe == nil {
				continue
			}
			if why := remoteProbe(c.LivenessProbe, c.ReadinessProbe); why != "" {
				r.add(&w.Object, "container %q: the liveness probe depends on more than the container: %s", c.Name, why)
			}
		}
	}
}

// probeWindow is how long a probe tolerates failure, in seconds.
func probeWindow(p *corev1.Probe) int32 {
	period, failures := p.PeriodSeconds, p.FailureThreshold
	if period <= 0 {
		period = 10
	}
	if failures <= 0 {
		failures = 3
	}
	return period * failures
}

func checkLivenessEqualsReadiness(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		for _, c := range w.Containers() {
			l, rd := c.LivenessProbe, c.ReadinessProbe
			if l == nil || rd == nil || !reflect.DeepEqual(normalHandler(l.ProbeHandler), normalHandler(rd.ProbeHandler)) {
				continue
			}
			if probeWindow(l) <= probeWindow(rd) {
				r.add(&w.Object, "container %q: the liveness probe runs the same check as the readiness probe and tolerates failure no longer (%ds against %ds), so whatever makes the pod unready also restarts it",
					c.Name, probeWindow(l), probeWindow(rd))
			}
		}
	}
}

// normalHandler drops what does not change which check runs (HTTP scheme
// and path defaults, header values such as a cookie naming the prober)
// before two probes are compared.
func normalHandler(h corev1.ProbeHandler) corev1.ProbeHandler {
	if h.HTTPGet != nil {
		g := *h.HTTPGet
		if g.Scheme == "" {
			g.Scheme = corev1.URISchemeHTTP
		}
		if g.Path == "" {
			g.Path = "/"
		}
		headers := make([]corev1.HTTPHeader, len(g.HTTPHeaders))
		for i, hd := range g.HTTPHeaders {
			headers[i] = corev1.HTTPHeader{Name: strings.ToLower(hd.Name)}
		}
		g.HTTPHeaders = headers
		h.HTTPGet = &g
	}
	return h
}

func checkProbeTimeout(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		for _, c := range w.Containers() {
			for _, p := range []struct {
				name  string
				probe *corev1.Probe
			}{{"liveness", c.LivenessProbe}, {"readiness", c.ReadinessProbe}, {"startup", c.StartupProbe}} {
				if p.probe == nil {
					continue
				}
				timeout, period := p.probe.TimeoutSeconds, p.probe.PeriodSeconds
				if timeout <= 0 {
					timeout = 1
				}
				if period <= 0 {
					period = 10
				}
				if timeout >= period {
					r.add(&w.Object, "container %q: the %s probe's timeoutSeconds (%d) is not shorter than its periodSeconds (%d)", c.Name, p.name, timeout, period)
				}
			}
		}
	}
}

// slowStarterImages are image name parts of programs known to take long
// to start: JVMs and the servers built on them.
var slowStarterImages = []string{"java", "jdk", "jre", "temurin", "corretto", "tomcat", "jboss", "wildfly", "spring",
	"elasticsearch", "opensearch", "logstash", "kafka", "zookeeper", "cassandra", "solr", "keycloak", "jenkins",
	"sonarqube", "nexus", "liberty", "websphere", "payara", "glassfish", "jetty"}

// jvmEnv reports whether an environment variable configures a JVM:
// JAVA_OPTS, JAVA_OPTIONS, JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, _JAVA_OPTIONS,
// JVM_OPTS and the application-prefixed forms (ES_JAVA_OPTS, …).
func jvmEnv(name string) bool {
	n := strings.ToUpper(name)
	for _, suffix := range []string{"JAVA_OPTS", "JAVA_OPTIONS", "JAVA_TOOL_OPTIONS", "JVM_OPTS", "JVM_OPTIONS"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}

// slowStarter says why a container looks slow to start, or "".
func slowStarter(c corev1.Container) string {
	img := strings.ToLower(c.Image)
	if i := strings.LastIndex(img, "/"); i >= 0 {
		img = img[i+1:]
	}
	for _, s := range slowStarterImages {
		if strings.Contains(img, s) {
			return "its image (" + c.Image + ") is a JVM-based server"
		}
	}
	for _, e := range c.Env {
		if jvmEnv(e.Name) {
			return "it sets " + e.Name
		}
	}
	if len(c.Command) > 0 && (c.Command[0] == "java" || strings.HasSuffix(c.Command[0], "/java")) {
		return "it runs java"
	}
	return ""
}

func checkStartupProbe(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		for _, c := range w.Containers() {
			l := c.LivenessProbe
			if l == nil || c.StartupProbe != nil {
				continue
			}
			why := slowStarter(c)
			if why == "" {
				continue
			}
			window := l.InitialDelaySeconds + probeWindow(l)
			if window < 60 {
				r.add(&w.Object, "container %q is slow to start (%s) but has no startupProbe, and its liveness probe restarts it after %ds", c.Name, why, window)
			}
		}
	}
}

// servingContainers returns the containers that serve the target ports
// of the Services selecting the workload; when no port can be matched,
// the first container, which is what most Services reach.
func servingContainers(w *Workload) []corev1.Container {
	cs := w.Containers()
	if len(cs) == 0 {
		return nil
	}
	var out []corev1.Container
	seen := map[string]bool{}
	for _, svc := range w.servedBy {
		for i, sp := range svc.Service.Spec.Ports {
			if svc.metricsPort(i) {
				continue
			}
			tp := sp.TargetPort
			if tp.Type == intstr.Int && tp.IntVal == 0 {
				tp = intstr.FromInt32(sp.Port)
			}
			for _, c := range cs {
				if seen[c.Name] {
					continue
				}
				for _, cp := range c.Ports {
					if (tp.Type == intstr.Int && cp.ContainerPort == tp.IntVal) || (tp.Type == intstr.String && cp.Name == tp.StrVal) {
						out = append(out, c)
						seen[c.Name] = true
						break
					}
				}
			}
		}
	}
	if len(out) == 0 {
		out = cs[:1]
	}
	return out
}

func checkMissingReadiness(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		if !w.Serving() || !w.LongRunning() {
			continue
		}
		for _, c := range servingContainers(w) {
			if c.ReadinessProbe == nil {
				r.add(&w.Object, "container %q serves Service %s but has no readiness probe", c.Name, serviceNames(w))
			}
		}
	}
}

func serviceNames(w *Workload) string { return servingNames(w) }
