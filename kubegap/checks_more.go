package kubegap

import (
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// datastoreImages are image names of servers that keep state of their own:
// more replicas of them need replication set up, not a replica count.
var datastoreImages = []string{"mongo", "mysql", "postgres", "postgis", "timescaledb", "mariadb", "percona", "redis",
	"valkey", "keydb", "elasticsearch", "opensearch", "cassandra", "scylla", "etcd", "zookeeper", "clickhouse",
	"influxdb", "couchdb", "neo4j", "rabbitmq", "minio", "cockroach", "mssql", "oracle", "arangodb", "dgraph", "solr",
	"documentdb", "ferretdb"}

// dbName matches an image or container named as a database of its own
// ("ledger-db", "accounts_db"): an application's database built on a
// server image under its own name.
var dbName = regexp.MustCompile(`[-_]db$`)

// imageName is an image's last path segment without tag or digest.
func imageName(image string) string {
	img := strings.ToLower(image)
	if i := strings.LastIndex(img, "/"); i >= 0 {
		img = img[i+1:]
	}
	if i := strings.IndexAny(img, ":@"); i >= 0 {
		img = img[:i]
	}
	return img
}

// datastore returns the image of the workload's datastore server, or "".
// The image's name says so, or, for an image built for the application
// (registry.example.com/bank/ledger-db), the container's name (postgres)
// or a name ending in -db.
func datastore(w *Workload) string {
	helper := func(n string) bool {
		return strings.Contains(n, "exporter") || strings.Contains(n, "operator") || strings.Contains(n, "sentinel") ||
			strings.Contains(n, "proxy") || strings.Contains(n, "backup") || strings.Contains(n, "client")
	}
	for _, c := range w.Containers() {
		img, name := imageName(c.Image), strings.ToLower(c.Name)
		if helper(img) || helper(name) {
			continue
		}
		if dbName.MatchString(img) || dbName.MatchString(name) {
			return c.Image
		}
		for _, d := range datastoreImages {
			if strings.Contains(img, d) || name == d {
				return c.Image
			}
		}
	}
	return ""
}

// loadGenerator reports whether every container of the workload is a
// synthetic load generator (loadgenerator, load-gen, locust, k6): a hang
// stops only the test traffic.
func loadGenerator(w *Workload) bool {
	cs := w.Containers()
	for _, c := range cs {
		img := imageName(c.Image)
		n := strings.ReplaceAll(img+" "+strings.ToLower(c.Name), "-", "")
		if !strings.Contains(n, "loadgen") && !strings.Contains(n, "locust") && img != "k6" {
			return false
		}
	}
	return len(cs) > 0
}

// rwoVolume returns the name of a ReadWriteOnce claim the workload's pods
// mount, or "". A claim not in the snapshot is taken as ReadWriteOnce, the
// mode most storage classes give.
func (s *Snapshot) rwoVolume(w *Workload) string {
	rwo := func(modes []any) bool {
		if len(modes) == 0 {
			return true
		}
		for _, m := range modes {
			if v := str(m); v == string(corev1.ReadWriteOnce) || v == string(corev1.ReadWriteOncePod) {
				return true
			}
		}
		return false
	}
	for _, v := range w.Template.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		name := v.PersistentVolumeClaim.ClaimName
		found := false
		for _, pvc := range s.PVCs {
			if pvc.Ref.Namespace == w.Ref.Namespace && pvc.Ref.Name == name {
				found = true
				if rwo(list(field(pvc.U.Object, "spec", "accessModes"))) {
					return name
				}
			}
		}
		if !found {
			return name
		}
	}
	if w.StatefulSet != nil {
		for _, t := range w.StatefulSet.Spec.VolumeClaimTemplates {
			modes := make([]any, len(t.Spec.AccessModes))
			for i, m := range t.Spec.AccessModes {
				modes[i] = string(m)
			}
			if rwo(modes) {
				return t.Name
			}
		}
	}
	return ""
}

// KG025
func checkHPAWithReplicas(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		// A live cluster always returns spec.replicas; only a manifest
		// that writes it down resets the autoscaler on every apply.
		if len(w.HPAs) == 0 || w.Ref.File == "" || field(w.U.Object, "spec", "replicas") == nil {
			continue
		}
		r.add(&w.Object, "spec.replicas is %d and HPA %s scales it: every apply of this manifest sets the replica count back to %d, whatever the load",
			*w.Replicas, w.HPAs[0].Ref.Name, *w.Replicas)
	}
}

// KG026
func checkNoCPURequest(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		if !w.LongRunning() {
			continue
		}
		for _, c := range w.Containers() {
			_, req := c.Resources.Requests[corev1.ResourceCPU]
			_, lim := c.Resources.Limits[corev1.ResourceCPU] // the request defaults to the limit
			if !req && !lim {
				r.add(&w.Object, "container %q sets no CPU request: the scheduler counts it as needing no CPU and may pack it beside other busy pods", c.Name)
			}
		}
	}
}

// KG027
func checkNoLiveness(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		// A datastore is left out: a probe that restarts a database during
		// crash recovery or a long compaction does more harm than a rare
		// hang, so leaving liveness out there is a defensible choice.
		// So is a synthetic load generator: its hang costs no user
		// anything.
		if !w.LongRunning() || datastore(w) != "" || loadGenerator(w) {
			continue
		}
		for _, c := range w.Containers() {
			if c.LivenessProbe == nil {
				r.add(&w.Object, "container %q has no liveness probe: if it hangs without exiting, nothing restarts it", c.Name)
			}
		}
	}
}

// KG028
func checkRollingRWO(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		if w.Deployment == nil || w.minReplicas() > 1 || len(w.HPAs) > 0 {
			continue
		}
		claim := s.rwoVolume(w)
		if claim == "" {
			continue
		}
		st := w.Deployment.Spec.Strategy
		if st.Type == appsv1.RecreateDeploymentStrategyType {
			continue
		}
		if st.RollingUpdate != nil && st.RollingUpdate.MaxSurge != nil {
			if n, ok := scaledValue(st.RollingUpdate.MaxSurge, 1, true); ok && n == 0 {
				continue // no surge pod: the old pod goes first, as with Recreate
			}
		}
		r.add(&w.Object, "one replica mounts ReadWriteOnce claim %q and rolls out with RollingUpdate: the new pod starts before the old one stops, and cannot attach the volume on another node (or shares it with the old writer on the same one)", claim)
	}
}

// KG029
func checkStatefulSetPullAlways(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		if w.StatefulSet == nil {
			continue
		}
		for _, c := range allContainers(w.Template.Spec) {
			switch {
			case c.ImagePullPolicy == corev1.PullAlways:
				r.add(&w.Object, "container %q sets imagePullPolicy: Always: each of its pods needs the registry to restart, one at a time, in order", c.Name)
			case c.ImagePullPolicy == "" && defaultsToPullAlways(c.Image):
				r.add(&w.Object, "container %q leaves imagePullPolicy out, which Kubernetes sets to Always for image %s (latest or untagged): each of its pods needs the registry to restart", c.Name, c.Image)
			}
		}
	}
}

// pinnedTag matches tags that name one build: a patch-level version
// (1.4.2, v2.3.1-alpine), a commit hash, a long build number or a dated
// release (RELEASE.2023-05-27T05-56-19Z, 2024.06.01, 20240601).
var pinnedTag = regexp.MustCompile(`[0-9]+\.[0-9]+\.[0-9]+|(^|[^0-9a-f])[0-9a-f]{7,40}($|[^0-9a-f])|[0-9]{6,}|(19|20)[0-9]{2}[-.][01][0-9][-.][0-3][0-9]`)

// buildCounterTag matches a tag that is a v and one number (v5, v14): the
// form projects give successive builds of their own images, where each
// new build takes the next number and no tag is re-pointed.
var buildCounterTag = regexp.MustCompile(`^v[0-9]+$`)

// officialImage reports whether an image is a Docker Official Image (no
// registry and no organisation, or docker.io/library/…): those publish
// moving alias tags by policy (node:20, traefik:v3), so there a v and one
// number is a major line, not a build.
func officialImage(image string) bool {
	name := image
	if i := strings.IndexAny(name, "@"); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name = name[:i]
	}
	for _, p := range []string{"docker.io/library/", "index.docker.io/library/", "library/", "docker.io/", "index.docker.io/"} {
		if strings.HasPrefix(name, p) {
			name = strings.TrimPrefix(name, p)
			break
		}
	}
	return !strings.Contains(name, "/")
}

// KG030
func checkFloatingTag(s *Snapshot, r *reporter) {
	for _, w := range s.audited() {
		for _, c := range allContainers(w.Template.Spec) {
			if c.Image == "" {
				continue
			}
			tag, digest := imageTag(c.Image)
			lower := strings.ToLower(tag)
			if digest || tag == "" || tag == "latest" || pinnedTag.MatchString(lower) ||
				(buildCounterTag.MatchString(lower) && !officialImage(c.Image)) {
				continue
			}
			r.add(&w.Object, "container %q: image %s uses tag %q, which names no patch-level version, so it moves when the publisher pushes a new build", c.Name, c.Image, tag)
		}
	}
}

// KG031
func checkWebhookSingleReplica(s *Snapshot, r *reporter) {
	svcs := map[string]*Service{}
	for _, svc := range s.Services {
		svcs[svc.Ref.Namespace+"/"+svc.Ref.Name] = svc
	}
	for _, wh := range s.Webhooks {
		if wh.FailurePolicy != "Fail" || wh.Service == nil || len(wh.Rules) == 0 {
			continue
		}
		svc := svcs[wh.Service.Namespace+"/"+wh.Service.Name]
		if svc == nil {
			continue
		}
		for _, w := range svc.Workloads {
			if w.Owned || !w.replicated() || w.minReplicas() >= 2 {
				continue
			}
			var kinds []string
			for _, rule := range wh.Rules {
				kinds = append(kinds, rule.Resources...)
			}
			r.add(&wh.Object, "webhook %q fails closed on %s and is served by %s %s with %d replica: while that pod restarts or moves, those requests are refused",
				wh.Name, strings.Join(dedupe(kinds), ", "), w.Ref.Kind, w.Ref.Name, w.minReplicas())
		}
	}
}
