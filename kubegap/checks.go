package kubegap

import (
	"sort"

	"github.com/incidentlib/incidentlib"
)

// check is one rule: what readers see, and the function that finds it.
type check struct {
	incidentlib.Check
	run func(s *Snapshot, r *reporter)
}

// Term constructors keep the catalogue short.
func rc(slug string) incidentlib.TermRef {
	return incidentlib.TermRef{Facet: incidentlib.FacetRootCause, Slug: slug}
}
func comp(slug string) incidentlib.TermRef {
	return incidentlib.TermRef{Facet: incidentlib.FacetComponent, Slug: slug}
}
func cf(slug string) incidentlib.TermRef {
	return incidentlib.TermRef{Facet: incidentlib.FacetContributingFactor, Slug: slug}
}

// Checks returns the catalogue, sorted by ID.
func Checks() []incidentlib.Check {
	cs := catalogue()
	out := make([]incidentlib.Check, len(cs))
	for i, c := range cs {
		out[i] = c.Check
	}
	return out
}

// catalogue builds the checks afresh on every call, so no caller can
// change another's. A case is cited when it carries any of a check's
// guarded terms (incidentlib.CitingCases), so each guard is chosen to be
// enough on its own: every case tagged with it shows the cost of the gap.
func catalogue() []check {
	cs := []check{
		{Check: incidentlib.Check{
			ID: "KG001", Title: "Liveness probe depends on something remote or deep", Severity: incidentlib.CheckHigh,
			Rule:    "A liveness probe must test only the container itself: not another host, not a dependency-checking path such as /health/deep, not a readiness endpoint (/ready) that the readiness probe does not use, not a database or network client pointed elsewhere.",
			Why:     "When the dependency fails, every replica fails its liveness probe at once and Kubernetes restarts them all, so a dependency outage becomes a restart loop that outlives it. chatgpt.com's web pods (IL-0601) crash-looped on a health check tied to Cosmos DB for hours after the database had recovered; Railway's replicas (IL-0821) all dropped out together when their health check could not get a database connection.",
			Fix:     "Point the liveness probe at a local endpoint that answers while the process can serve at all; check dependencies in the readiness probe, which takes a pod out of the Service without restarting it.",
			FixYAML: "livenessProbe:\n  httpGet:\n    path: /livez        # process-only: no database, no downstream calls\n    port: 8080\nreadinessProbe:\n  httpGet:\n    path: /readyz       # may check dependencies\n    port: 8080\n",
			Guards:  []incidentlib.TermRef{cf("health-check-dependency")},
		}, run: checkDeepLiveness},
		{Check: incidentlib.Check{
			ID: "KG002", Title: "Liveness probe identical to readiness probe", Severity: incidentlib.CheckMedium,
			Rule:    "A liveness probe must not run the same check as the readiness probe with no more tolerance (failureThreshold × periodSeconds).",
			Why:     "Whatever makes a pod unready then also restarts it, at the same moment: a slow dependency or an overload that should only shed traffic restarts every replica instead, as OpenAI's web pods (IL-0601) and Honeycomb's ingest hosts (IL-0106) show.",
			Fix:     "Give liveness its own cheap, local check, or at least a much longer failure window than readiness, so a pod is taken out of rotation long before it is killed.",
			FixYAML: "readinessProbe:\n  httpGet: {path: /readyz, port: 8080}\n  periodSeconds: 5\n  failureThreshold: 3\nlivenessProbe:\n  httpGet: {path: /livez, port: 8080}\n  periodSeconds: 10\n  failureThreshold: 6   # a minute of failures before a restart\n",
			Guards:  []incidentlib.TermRef{cf("health-check-dependency")},
		}, run: checkLivenessEqualsReadiness},
		{Check: incidentlib.Check{
			ID: "KG003", Title: "Istio retries without outlier detection or connection-pool limits", Severity: incidentlib.CheckHigh,
			Rule:    "A VirtualService route that sets retries must send to a host whose DestinationRule sets outlier detection or connection-pool limits.",
			Why:     "Retries without a brake multiply the load on a service exactly when it is slowest: retried failures buried Mailgun's authentication service (IL-0790) and the service that authorises Cloudflare's API requests (IL-0943).",
			Fix:     "Add a DestinationRule for the host with outlierDetection (eject failing endpoints) and connectionPool limits (cap pending and in-flight requests), so retries stop piling onto a struggling backend.",
			FixYAML: "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: payments\nspec:\n  host: payments\n  trafficPolicy:\n    connectionPool:\n      http:\n        http1MaxPendingRequests: 100\n        http2MaxRequests: 1000\n    outlierDetection:\n      consecutive5xxErrors: 5\n      interval: 10s\n      baseEjectionTime: 30s\n",
			Guards:  []incidentlib.TermRef{cf("retry-amplification")},
		}, run: checkRetriesWithoutBrake},
		{Check: incidentlib.Check{
			ID: "KG004", Title: "Retries stacked on gateway and mesh routes", Severity: incidentlib.CheckMedium,
			Rule:    "A host must not be retried both on the route that enters the mesh (a gateway VirtualService or an HTTPRoute) and on the mesh route to the same host.",
			Why:     "Stacked retries multiply: three attempts at the gateway times three in the mesh is nine calls per request to a failing service. No public outage in the library yet shows stacked retries alone; the retry outages KG003 cites show what multiplied retries cost.",
			Fix:     "Retry at one layer only, normally the one closest to the failing service, and set the other route's retries to zero attempts.",
			FixYAML: "http:\n- route:\n  - destination: {host: payments}\n  retries:\n    attempts: 0   # the mesh route to payments already retries\n",
			Guards:  []incidentlib.TermRef{cf("retry-amplification")},
		}, run: checkStackedRetries},
		{Check: incidentlib.Check{
			ID: "KG005", Title: "Retry attempts × per-try timeout exceed the route timeout", Severity: incidentlib.CheckMedium,
			Rule:    "On a VirtualService route, retries.attempts × retries.perTryTimeout must not exceed the route's timeout.",
			Why:     "The caller gives up while retries are still being sent, so the backend does work nobody waits for and the retry policy written down is not the one that runs: slow-failing requests kept Fluid Attacks' servers busy while repeats kept arriving (IL-0954).",
			Fix:     "Make the attempts fit in the route timeout, or raise the timeout deliberately; shorter per-try timeouts with fewer attempts shed load sooner.",
			FixYAML: "timeout: 6s\nretries:\n  attempts: 2\n  perTryTimeout: 2s   # 2 × 2s fits in 6s\n",
			Guards:  []incidentlib.TermRef{cf("retry-amplification")},
		}, run: checkRetryTimeoutBudget},
		{Check: incidentlib.Check{
			ID: "KG006", Title: "Retry on 5xx for routes that carry non-idempotent requests", Severity: incidentlib.CheckMedium,
			Rule:    "A route that retries on 5xx must match only idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE); a route with no method match, or one matching POST or PATCH, carries requests that must not be replayed.",
			Why:     "A 5xx often comes after the backend did the work: retrying a POST repeats a charge, an order or a write, and adds load to the failing service. No public outage in the library yet shows a replayed write from a mesh retry.",
			Fix:     "Split the route: retry on 5xx only on a route matching idempotent methods; on the rest retry only on connect-failure and refused-stream, which fail before the request reaches the backend.",
			FixYAML: "http:\n- match:\n  - method: {exact: GET}\n  route: [{destination: {host: orders}}]\n  retries: {attempts: 2, retryOn: \"5xx,connect-failure\"}\n- route: [{destination: {host: orders}}]\n  retries: {attempts: 1, retryOn: \"connect-failure,refused-stream\"}\n",
			Guards:  []incidentlib.TermRef{cf("retry-amplification")},
		}, run: checkNonIdempotentRetries},
		{Check: incidentlib.Check{
			ID: "KG007", Title: "Linkerd retries without a retry budget", Severity: incidentlib.CheckHigh,
			Rule:    "Linkerd retries must be bounded by a retry budget: no retry.linkerd.io/http or retry.linkerd.io/grpc annotations (which have no budget), and no ServiceProfile retryRatio above 0.2.",
			Why:     "A per-request retry limit does not stop the total: when every request fails, every request is retried, and the failing service takes several times its normal load, as when a client retried Keygen's API faster and faster (IL-0972).",
			Fix:     "Use a ServiceProfile for retried routes, whose retryBudget caps retries as a share of requests, and keep the ratio at 0.2 or less.",
			FixYAML: "apiVersion: linkerd.io/v1alpha2\nkind: ServiceProfile\nmetadata:\n  name: books.default.svc.cluster.local\nspec:\n  retryBudget:\n    retryRatio: 0.2\n    minRetriesPerSecond: 10\n    ttl: 10s\n  routes:\n  - name: GET /books\n    condition: {method: GET, pathRegex: /books}\n    isRetryable: true\n",
			Guards:  []incidentlib.TermRef{cf("retry-amplification")},
		}, run: checkLinkerdRetries},
		{Check: incidentlib.Check{
			ID: "KG008", Title: "PodDisruptionBudget missing or blocking every eviction", Severity: incidentlib.CheckMedium,
			Rule:    "A Deployment, StatefulSet or Rollout with two or more replicas that serves traffic must be covered by a PodDisruptionBudget, and every PodDisruptionBudget must allow at least one eviction (not maxUnavailable 0, not minAvailable equal to the replicas or 100%).",
			Why:     "Without a budget, node drains, upgrades and maintenance automation may evict every replica at once; Google's maintenance automation descheduled independent clusters together (IL-0091). A budget that allows no eviction stalls every drain, and the usual way out under time pressure is to delete it or force the drain, which removes the guard when it is needed.",
			Fix:     "Add a PodDisruptionBudget that lets one pod go at a time.",
			FixYAML: "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  maxUnavailable: 1\n  selector:\n    matchLabels: {app: web}\n",
			Guards:  []incidentlib.TermRef{rc("automation-error")},
		}, run: checkPDB},
		{Check: incidentlib.Check{
			ID: "KG009", Title: "Single replica behind a Service", Severity: incidentlib.CheckMedium,
			Rule:    "A long-running workload that serves traffic (a non-metrics Service selects it and something routes to that Service) must run at least two replicas (its replicas, or its HPA's minReplicas); datastores and single writers on a ReadWriteOnce volume excepted.",
			Why:     "One pod is a single point of failure: every restart, eviction, node loss or rollout is an outage of the Service, as one reboot of Aubart & Associates' only server (IL-0958) and the freeze of Dead Man's Snitch's last collector (IL-0608) show.",
			Fix:     "Run two or more replicas and spread them (see KG010), or put the workload under an HPA with minReplicas of at least 2.",
			FixYAML: "spec:\n  replicas: 2\n",
			Guards:  []incidentlib.TermRef{cf("single-point-of-failure")},
		}, run: checkSingleReplica},
		{Check: incidentlib.Check{
			ID: "KG010", Title: "Replicas not spread across zones or nodes", Severity: incidentlib.CheckLow,
			Rule:    "A workload with two or more replicas must declare topologySpreadConstraints or pod anti-affinity, so its replicas do not share one node or zone.",
			Why:     "The scheduler's default spreading is only a preference: replicas can land on one node or in one zone and go down with it. GKE packed Moonlight's busy pods onto the same nodes until they panicked (IL-0147); a cooling failure took down servers in one Tokyo zone (IL-0022).",
			Fix:     "Spread replicas over zones and nodes with topologySpreadConstraints.",
			FixYAML: "topologySpreadConstraints:\n- maxSkew: 1\n  topologyKey: topology.kubernetes.io/zone\n  whenUnsatisfiable: ScheduleAnyway\n  labelSelector:\n    matchLabels: {app: web}\n- maxSkew: 1\n  topologyKey: kubernetes.io/hostname\n  whenUnsatisfiable: ScheduleAnyway\n  labelSelector:\n    matchLabels: {app: web}\n",
			Guards:  []incidentlib.TermRef{rc("power-cooling-failure")},
		}, run: checkNoSpread},
		{Check: incidentlib.Check{
			ID: "KG011", Title: "HorizontalPodAutoscaler that cannot scale", Severity: incidentlib.CheckMedium,
			Rule:    "An HPA must be able to add pods: minReplicas below maxReplicas, maxReplicas at least the workload's replicas, and CPU requests on every container when it scales on CPU utilization.",
			Why:     "An autoscaler that cannot scale looks like a capacity plan and is none: when traffic rises, capacity stays flat or shrinks, as at Bitbucket Cloud (IL-0670) and Docker Hub (IL-0651).",
			Fix:     "Set maxReplicas above minReplicas and above today's replicas, and give every container a CPU request when the HPA scales on CPU utilization (utilization is measured against the request).",
			FixYAML: "spec:\n  minReplicas: 3\n  maxReplicas: 20\n  metrics:\n  - type: Resource\n    resource:\n      name: cpu\n      target: {type: Utilization, averageUtilization: 70}\n",
			Guards:  []incidentlib.TermRef{rc("traffic-surge")},
		}, run: checkHPA},
		{Check: incidentlib.Check{
			ID: "KG012", Title: "No memory request or limit", Severity: incidentlib.CheckMedium,
			Rule:    "Every container must set a memory request and a memory limit.",
			Why:     "Without a request the scheduler packs pods blind; without a limit one leaking or backlogged container takes the node's memory from its neighbours instead of being restarted alone. Unbounded growth took down Elastic Cloud's proxies (IL-0066) and Skyliner's deployment service (IL-0227).",
			Fix:     "Set memory requests to what the container uses under normal load and limits to what it may use at peak.",
			FixYAML: "resources:\n  requests:\n    memory: 256Mi\n  limits:\n    memory: 512Mi\n",
			Guards:  []incidentlib.TermRef{cf("unbounded-growth")},
		}, run: checkMemory},
		{Check: incidentlib.Check{
			ID: "KG013", Title: "CPU limit that throttles a latency-critical container", Severity: incidentlib.CheckLow,
			Rule:    "A container that serves traffic must not set a CPU limit equal to its CPU request (the request defaults to the limit when left out), which leaves no headroom for bursts.",
			Why:     "Every burst above the limit is throttled for the rest of the scheduling period, which shows up as latency spikes and then timeouts and retries. CPU throttling trapped the Kafka consumers that dispatch GitHub's background jobs in a rebalancing loop (IL-1116).",
			Fix:     "Set the CPU limit well above the request (or leave CPU unlimited and rely on requests for fair sharing).",
			FixYAML: "resources:\n  requests:\n    cpu: 500m\n  limits:\n    cpu: \"2\"    # headroom for bursts\n",
			Guards:  []incidentlib.TermRef{cf("hidden-limit")},
		}, run: checkCPUThrottle},
		{Check: incidentlib.Check{
			ID: "KG014", Title: "Rollout replaces every pod at once", Severity: incidentlib.CheckHigh,
			Rule:    "A workload that serves traffic must not roll out with strategy Recreate or with maxUnavailable of 100% (or at least its replica count); Recreate is right for one pod on a ReadWriteOnce volume or a lone datastore.",
			Why:     "A bad release then reaches every pod before anyone can stop it, and the Service has no old pods to fall back on. Railway recreated every instance of a new proxy at once (IL-0839) and quay.io restarted every pod together (IL-0832).",
			Fix:     "Use a rolling update that keeps most pods serving, with a readiness probe so that a broken release stops rolling.",
			FixYAML: "strategy:\n  type: RollingUpdate\n  rollingUpdate:\n    maxUnavailable: 0\n    maxSurge: 25%\n",
			Guards:  []incidentlib.TermRef{cf("global-rollout")},
		}, run: checkRolloutAtOnce},
		{Check: incidentlib.Check{
			ID: "KG015", Title: "Cache rolled out with high unavailability", Severity: incidentlib.CheckMedium,
			Rule:    "A cache (memcached, Redis, Valkey, KeyDB, Dragonfly) with two or more replicas must not replace more than a quarter of them at once.",
			Why:     "Every replaced cache pod starts cold, and the load its hits absorbed falls on the database behind it: related outages show what cold caches cost (Slack's memcached nodes swapped for empty spares, IL-0207; Intercom's entries all missing at once, IL-1192), though neither replaced more than a quarter of a fleet in one rollout.",
			Fix:     "Roll caches one pod at a time, outside peak hours, and let each warm before the next goes.",
			FixYAML: "strategy:\n  type: RollingUpdate\n  rollingUpdate:\n    maxUnavailable: 1\n    maxSurge: 0\nminReadySeconds: 120   # time to warm before the next pod goes\n",
			Guards:  []incidentlib.TermRef{cf("cold-cache")},
		}, run: checkCacheRollout},
		{Check: incidentlib.Check{
			ID: "KG016", Title: "Fail-closed admission webhook over kube-system or every namespace", Severity: incidentlib.CheckHigh,
			Rule:    "An admission webhook with failurePolicy Fail that intercepts pods or other core objects must have a namespaceSelector that excludes kube-system, or an objectSelector that only matches objects carrying a label the webhook asks for.",
			Why:     "When the webhook's own pods are down, the API server rejects the very objects needed to bring them, and the cluster's system components, back: the cluster cannot heal itself, as Jetstack's GKE cluster could not during an upgrade (IL-0719).",
			Fix:     "Exclude kube-system (and the webhook's own namespace) with a namespaceSelector, or use failurePolicy Ignore where the policy allows it.",
			FixYAML: "webhooks:\n- name: policy.example.com\n  failurePolicy: Fail\n  namespaceSelector:\n    matchExpressions:\n    - key: kubernetes.io/metadata.name\n      operator: NotIn\n      values: [kube-system, policy-system]\n",
			Guards:  []incidentlib.TermRef{cf("circular-dependency")},
		}, run: checkFailClosedWebhook},
		{Check: incidentlib.Check{
			ID: "KG017", Title: "DaemonSet whose service account lists or watches cluster-wide", Severity: incidentlib.CheckLow,
			Rule:    "A DaemonSet's service account should not be bound by a ClusterRoleBinding to list or watch pods, nodes, endpoints, services, secrets, configmaps or every resource.",
			Why:     "Every node runs a copy, and on a restart every copy lists the whole cluster at once: the API server takes one full list per node, a thundering herd. A new agent on every node of OpenAI's clusters took their control planes down (IL-0802).",
			Fix:     "Give the DaemonSet only what each node needs (watch its own node's pods with a field selector, through a central controller if it needs more), and bind narrower roles per namespace.",
			FixYAML: "kind: Role          # namespaced instead of ClusterRole\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  resourceNames: [agent-config]\n  verbs: [get, watch]\n",
			Guards:  []incidentlib.TermRef{cf("thundering-herd")},
		}, run: checkDaemonSetFanOut},
		{Check: incidentlib.Check{
			ID: "KG018", Title: "Deprecated node labels in selectors or affinities", Severity: incidentlib.CheckLow,
			Rule:    "Node selectors, affinities and topology keys must not use beta.kubernetes.io/* or failure-domain.beta.kubernetes.io/* labels.",
			Why:     "Kubernetes removes deprecated labels in upgrades, and pods that select on them stop scheduling: Reddit's Pi Day outage (IL-0122) began when an upgrade removed a node label its route reflectors were selected by. Kubelets still set beta.kubernetes.io/os and /arch today, hence the low severity.",
			Fix:     "Use the stable labels: kubernetes.io/arch, kubernetes.io/os, topology.kubernetes.io/zone, topology.kubernetes.io/region, node.kubernetes.io/instance-type.",
			FixYAML: "nodeSelector:\n  kubernetes.io/os: linux\ntopologySpreadConstraints:\n- topologyKey: topology.kubernetes.io/zone\n  maxSkew: 1\n  whenUnsatisfiable: ScheduleAnyway\n",
			Guards:  []incidentlib.TermRef{rc("upstream-change")},
		}, run: checkDeprecatedLabels},
		{Check: incidentlib.Check{
			ID: "KG019", Title: "No graceful drain behind a load balancer", Severity: incidentlib.CheckMedium,
			Rule:    "A workload behind a load balancer (a LoadBalancer Service, an HTTPRoute or a gateway VirtualService) needs a preStop hook, and its terminationGracePeriodSeconds must be longer than that hook's sleep.",
			Why:     "Load balancers learn of a terminating pod late; without a pause before shutdown they keep sending it requests that fail, on every rollout and scale-down. Heroku's routers sent traffic to stopped dynos (IL-0105).",
			Fix:     "Sleep in preStop for longer than the load balancer takes to deregister, and give the pod a grace period longer than the sleep plus the app's own drain.",
			FixYAML: "terminationGracePeriodSeconds: 45\ncontainers:\n- name: web\n  lifecycle:\n    preStop:\n      sleep: {seconds: 15}\n",
			Guards:  []incidentlib.TermRef{comp("load-balancer")},
		}, run: checkGracefulDrain},
		{Check: incidentlib.Check{
			ID: "KG020", Title: "Image tag latest or no tag", Severity: incidentlib.CheckMedium,
			Rule:    "Every container image must name a version: a tag other than latest, or a digest.",
			Why:     "With latest, pods started at different times run different code, a rollback cannot name what to go back to, and a restart can ship an untested release. Knight Capital (IL-0123) lost $460 million when servers ran different code after a deployment.",
			Fix:     "Pin each image to a version tag or, better, a digest, and change it through your deployment pipeline.",
			FixYAML: "image: registry.example.com/web:1.14.2@sha256:4f8e…\n",
			Guards:  []incidentlib.TermRef{rc("deployment-error")},
		}, run: checkLatestImage},
		{Check: incidentlib.Check{
			ID: "KG021", Title: "No readiness probe on a serving workload", Severity: incidentlib.CheckMedium,
			Rule:    "A container serving the target port of a Service that something routes to must have a readiness probe.",
			Why:     "Without one, a pod receives traffic as soon as its process starts and keeps receiving it while it cannot answer, and a broken rollout keeps rolling: parts of Zendesk's infrastructure took traffic while unready (IL-0868).",
			Fix:     "Add a readiness probe that answers only when the container can serve requests.",
			FixYAML: "readinessProbe:\n  httpGet: {path: /readyz, port: 8080}\n  periodSeconds: 5\n",
			Guards:  []incidentlib.TermRef{comp("load-balancer")},
		}, run: checkMissingReadiness},
		{Check: incidentlib.Check{
			ID: "KG022", Title: "imagePullPolicy Always on a workload that scales out", Severity: incidentlib.CheckMedium,
			Rule:    "A workload that scales out (an HPA target or a DaemonSet) should not set imagePullPolicy: Always.",
			Why:     "Every new pod must then reach the registry before it starts, so the registry becomes a single point of failure exactly when capacity is needed. GitHub's pods could not restart while the registry was unreachable (IL-1100), and Travis CI's new instances never entered service (IL-1122).",
			Fix:     "Pin images by tag or digest and use imagePullPolicy: IfNotPresent.",
			FixYAML: "image: registry.example.com/web:1.14.2\nimagePullPolicy: IfNotPresent\n",
			Guards:  []incidentlib.TermRef{comp("deploy-pipeline")},
		}, run: checkPullAlways},
		{Check: incidentlib.Check{
			ID: "KG023", Title: "Probe timeout not shorter than its period", Severity: incidentlib.CheckLow,
			Rule:    "A probe's timeoutSeconds must be shorter than its periodSeconds (defaults 1 and 10).",
			Why:     "Probes then overlap when the container is slow, so a loaded pod fails several checks at once and is restarted or pulled from the Service just when it is busiest, as at Bitbucket Cloud (IL-0670) and Fly.io (IL-0652).",
			Fix:     "Keep timeoutSeconds well under periodSeconds, and tolerate slow answers with failureThreshold instead.",
			FixYAML: "livenessProbe:\n  timeoutSeconds: 2\n  periodSeconds: 10\n  failureThreshold: 3\n",
			Guards:  []incidentlib.TermRef{cf("health-check-dependency"), cf("tight-timeouts")},
		}, run: checkProbeTimeout},
		{Check: incidentlib.Check{
			ID: "KG024", Title: "Slow-starting container with no startupProbe and a short liveness window", Severity: incidentlib.CheckMedium,
			Rule:    "A slow-starting container (a JVM, or one that warms a cache) with a liveness probe must have a startupProbe, or a liveness window (initialDelaySeconds + periodSeconds × failureThreshold) of at least 60 seconds.",
			Why:     "A container killed before it finishes starting starts again from nothing: under load, or with a cold cache to fill, it never gets through, and the service stays in a restart loop, as Honeycomb's ingest hosts did for nine hours (IL-0106).",
			Fix:     "Add a startupProbe that allows the slowest start you have seen, and keep liveness for after start-up.",
			FixYAML: "startupProbe:\n  httpGet: {path: /livez, port: 8080}\n  periodSeconds: 10\n  failureThreshold: 30   # up to 5 minutes to start\n",
			Guards:  []incidentlib.TermRef{cf("health-check-dependency"), cf("cold-cache")},
		}, run: checkStartupProbe},
		{Check: incidentlib.Check{
			ID: "KG025", Title: "HPA-scaled workload that also sets spec.replicas", Severity: incidentlib.CheckMedium,
			Rule:    "A manifest of a workload that a HorizontalPodAutoscaler scales must leave spec.replicas out.",
			Why:     "Every apply of the manifest sets the replica count back to the number written down, whatever the autoscaler had scaled to: a deploy at peak cuts capacity at once, until the autoscaler notices and scales up again.",
			Fix:     "Remove spec.replicas from the manifest and let the HPA's minReplicas set the floor.",
			FixYAML: "spec:\n  replicas: null   # leave it to the HPA\n",
			Guards:  []incidentlib.TermRef{rc("traffic-surge")},
		}, run: checkHPAWithReplicas},
		{Check: incidentlib.Check{
			ID: "KG026", Title: "Container with no CPU request", Severity: incidentlib.CheckLow,
			Rule:    "Every container of a long-running workload must set a CPU request (or a CPU limit, which the request defaults to).",
			Why:     "The scheduler places pods by their requests: a container that requests no CPU counts as needing none, so busy pods are packed onto the same nodes until those saturate, as Moonlight's were until the nodes panicked (IL-0147).",
			Fix:     "Request the CPU the container uses under normal load.",
			FixYAML: "resources:\n  requests:\n    cpu: 250m\n",
			Guards:  []incidentlib.TermRef{cf("capacity-planning-gap")},
		}, run: checkNoCPURequest},
		{Check: incidentlib.Check{
			ID: "KG027", Title: "Long-running container with no liveness probe", Severity: incidentlib.CheckLow,
			Rule:    "Every container of a long-running workload should have a liveness probe that tests the process itself.",
			Why:     "A process that hangs without exiting keeps its place and does nothing, and Kubernetes restarts only what exits or fails a liveness probe: a Zendesk consumer stopped processing for four hours without crashing (IL-0869).",
			Fix:     "Add a liveness probe that checks only the process (an HTTP endpoint it answers itself, or a heartbeat file a worker touches), with a generous failure window.",
			FixYAML: "livenessProbe:\n  httpGet: {path: /livez, port: 8080}\n  periodSeconds: 10\n  failureThreshold: 6\n",
			Guards:  []incidentlib.TermRef{cf("fail-unsafe")},
		}, run: checkNoLiveness},
		{Check: incidentlib.Check{
			ID: "KG028", Title: "Single-replica Deployment on a ReadWriteOnce volume with a rolling update", Severity: incidentlib.CheckMedium,
			Rule:    "A Deployment of one replica that mounts a ReadWriteOnce volume must roll out with strategy Recreate (or maxSurge 0).",
			Why:     "A rolling update starts the new pod before the old one stops: on another node it cannot attach the volume and the rollout hangs; on the same node two writers share one database's files. No public outage in the library yet shows it.",
			Fix:     "Use strategy Recreate for a single writer on a ReadWriteOnce volume, or run it as a StatefulSet.",
			FixYAML: "spec:\n  strategy:\n    type: Recreate\n",
			Guards:  []incidentlib.TermRef{comp("container-orchestration")},
		}, run: checkRollingRWO},
		{Check: incidentlib.Check{
			ID: "KG029", Title: "imagePullPolicy Always on a StatefulSet", Severity: incidentlib.CheckLow,
			Rule:    "A StatefulSet's containers should not pull their image on every start (imagePullPolicy Always, or a latest or untagged image, which defaults to it).",
			Why:     "A stateful pod restarts in place, one at a time; when each restart must reach the registry, a registry outage keeps the datastore down although its image is on the node, as GitHub's pods could not restart while the registry was unreachable (IL-1100).",
			Fix:     "Pin the image by version or digest and use imagePullPolicy IfNotPresent.",
			FixYAML: "image: registry.example.com/db:16.4.1\nimagePullPolicy: IfNotPresent\n",
			Guards:  []incidentlib.TermRef{comp("deploy-pipeline")},
		}, run: checkStatefulSetPullAlways},
		{Check: incidentlib.Check{
			ID: "KG030", Title: "Image tag that floats", Severity: incidentlib.CheckLow,
			Rule:    "A container image tag should name one build: a patch-level version (1.4.2), a commit or build number (v14 counts, except on Docker Official Images), or a digest, not a moving tag such as alpine, stable, 20 or v2.10.",
			Why:     "A moving tag changes under the same name when its publisher pushes: pods started on different days run different builds, and a restart can bring in a release nobody tested. One server running different code lost Knight Capital $460 million (IL-0123).",
			Fix:     "Pin the tag to a patch-level version, or better a digest.",
			FixYAML: "image: redis:7.2.5-alpine   # or redis@sha256:…\n",
			Guards:  []incidentlib.TermRef{rc("deployment-error")},
		}, run: checkFloatingTag},
		{Check: incidentlib.Check{
			ID: "KG031", Title: "Fail-closed admission webhook served by one replica", Severity: incidentlib.CheckMedium,
			Rule:    "An admission webhook with failurePolicy Fail, on any kind, must be served by two or more replicas.",
			Why:     "While the webhook's only pod restarts, moves or fails, the API server refuses every request the webhook intercepts. The library has no outage yet from a webhook with exactly one replica; related ones show the cost of a fail-closed path whose server is down (IL-0752, IL-0719).",
			Fix:     "Run the webhook's Deployment with two or more replicas, spread and covered by a PodDisruptionBudget, or use failurePolicy Ignore where the policy allows it.",
			FixYAML: "spec:\n  replicas: 2\n",
			Guards:  []incidentlib.TermRef{cf("circular-dependency")},
		}, run: checkWebhookSingleReplica},
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
	for i := range cs {
		cs[i].Cases = chosenCases(cs[i].ID)
	}
	return cs
}
