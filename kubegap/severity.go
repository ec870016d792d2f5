package kubegap

// severityReasons says why each check has its severity. The rule: high
// only where the library holds public outages caused by exactly that gap;
// medium where the gap costs availability but the outages it cites show it
// only in part, or none yet; low for hygiene whose cost is indirect or
// rare, or where the check flags much that is harmless. docs/kubegap.md's
// check table prints these (TestDocsChecksTable).
var severityReasons = map[string]string{
	"KG001": "high: IL-0601 is an outage caused by exactly a restart check tied to a dependency",
	"KG002": "medium: the cited restart loops had probes that restarted on what should only shed traffic, but not always the identical-probe form",
	"KG003": "high: IL-0790 is an outage caused by retries with nothing to stop them",
	"KG004": "medium: multiplies retries, but no public outage of stacked retries alone is in the library yet",
	"KG005": "medium: wasted retries under load; IL-0954 shows the cost only in part",
	"KG006": "medium: replayed writes are costly, but no public outage of it is in the library yet",
	"KG007": "high: IL-0790 is an outage caused by retries with no budget",
	"KG008": "medium: the cited outages removed capacity with nothing to cap it, not Kubernetes drains as such",
	"KG009": "medium: one replica is an outage on every restart, but many flagged workloads can afford minutes of downtime",
	"KG010": "low: the scheduler often spreads anyway; losses of one node or zone cost only the unspread",
	"KG011": "medium: the cited outages are autoscaling that did not add capacity, from other causes than these settings",
	"KG012": "medium: an unbounded container can starve its node, but no public outage of exactly that is in the library yet",
	"KG013": "low: throttling costs latency; IL-1116 shows one outage, and the flagged setting is common and often harmless",
	"KG014": "high: IL-0839 and IL-0832 are outages caused by replacing every instance at once",
	"KG015": "medium: caches going cold together caused outages (IL-0207, IL-1192), but no case in the library replaced more than a quarter of a cache fleet in one rollout, which is the gap this check finds",
	"KG016": "high: IL-0719 is a cluster outage caused by exactly a fail-closed webhook over the whole cluster",
	"KG017": "low: IL-0802 shows the worst case, but most node agents need some cluster-wide reads",
	"KG018": "low: kubelets still set beta.kubernetes.io/os and /arch; the risk is the next removal (IL-0122)",
	"KG019": "medium: failed requests on every rollout, not a full outage",
	"KG020": "medium: mixed or untested code on restart; IL-0123 shows the cost of mixed versions",
	"KG021": "medium: traffic to pods that cannot answer; IL-0868 shows it in part",
	"KG022": "medium: IL-1100 is a four-hour outage caused by pulling on every start when the registry was unreachable",
	"KG023": "low: probe tuning; the cited outages had tight health checks, not exactly this setting",
	"KG024": "medium: restart loops at start-up; IL-0106 shows the cost",
	"KG025": "medium: every apply cuts capacity back; no public outage of it is in the library yet",
	"KG026": "low: packing by the scheduler; IL-0147 shows the cost, but most clusters have headroom",
	"KG027": "low: only a hang without exit is missed; IL-0869 shows the cost",
	"KG028": "medium: a stuck rollout or two writers on one volume; no public outage of it is in the library yet",
	"KG029": "low: a registry dependency on restart; IL-1100 shows the cost for Deployments",
	"KG030": "low: less drift than latest, but still a moving tag; IL-0123 shows what mixed code costs",
	"KG031": "medium: fail-closed admission paths whose server was down caused outages (IL-0752, IL-0719), but no case shows a webhook served by exactly one replica",
}
