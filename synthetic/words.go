package synthetic

// The word lists the synthetic corpus draws from. They are ordered roughly
// from most to least common in incident write-ups, because the generator
// gives each word a Zipf weight by its position: a handful of words appear
// in most cases and the long tail in few, as in real text.

// stopWords are the function words that make up about two fifths of real
// English prose. Search engines differ in whether they index them (Bleve's
// English analyzer and PostgreSQL's english configuration drop them; FTS5's
// porter tokenizer keeps them), so leaving them out would flatter one side.
var stopWords = []string{
	"the", "of", "to", "and", "a", "in", "was", "for", "on", "that", "is",
	"with", "as", "by", "at", "from", "this", "it", "were", "be", "an",
	"which", "had", "not", "after", "all", "its", "their", "when", "but",
	"or", "we", "our", "has", "have", "been", "into", "during", "more",
	"than", "some", "no", "these", "other", "so", "could", "would", "also",
	"then", "while", "because", "until", "before", "each", "there", "they",
	"only", "over", "about", "one", "two", "any", "both", "between", "those",
	"most", "such", "through", "again", "under", "once", "very", "did",
}

// contentWords are the words that carry an incident's meaning, in rough
// order of how often post-mortems use them.
var contentWords = []string{
	"service", "error", "requests", "database", "traffic", "customers",
	"latency", "team", "change", "failed", "deployment", "configuration",
	"system", "users", "servers", "network", "minutes", "region", "cluster",
	"outage", "load", "api", "impact", "engineers", "data", "time", "cache",
	"incident", "production", "capacity", "alert", "rollback", "hours",
	"monitoring", "queue", "storage", "instances", "connections", "dns",
	"failover", "retries", "timeout", "nodes", "replica", "primary", "disk",
	"memory", "cpu", "certificate", "proxy", "gateway", "authentication",
	"backend", "frontend", "release", "build", "pipeline", "region's",
	"availability", "degraded", "recovered", "restored", "mitigated",
	"increased", "elevated", "errors", "latencies", "timeouts", "failures",
	"failure", "failing", "restart", "restarted", "restarts", "deploy",
	"deployed", "deploys", "rolled", "back", "root", "cause", "trigger",
	"triggered", "detected", "detection", "paged", "pager", "on-call",
	"escalated", "dashboard", "metrics", "logs", "tracing", "health",
	"check", "checks", "probe", "probes", "load-balancer", "balancer",
	"upstream", "downstream", "dependency", "dependencies", "client",
	"clients", "backoff", "throttling", "rate", "limit", "limits", "quota",
	"quotas", "saturation", "exhausted", "exhaustion", "pool", "pools",
	"thread", "threads", "process", "processes", "container", "containers",
	"kubernetes", "pods", "pod", "scheduler", "autoscaler", "scaling",
	"scaled", "scale", "shard", "shards", "partition", "partitions",
	"leader", "election", "quorum", "consensus", "replication", "lag",
	"snapshot", "backup", "restore", "migration", "schema", "index",
	"query", "queries", "slow", "locks", "lock", "deadlock", "contention",
	"write", "writes", "read", "reads", "latency-sensitive", "throughput",
	"bandwidth", "packet", "packets", "loss", "routing", "route", "routes",
	"bgp", "peering", "link", "links", "fiber", "datacenter", "datacenters",
	"zone", "zones", "power", "cooling", "hardware", "switch", "switches",
	"router", "routers", "firewall", "rules", "rule", "policy", "policies",
	"permission", "permissions", "credentials", "token", "tokens", "key",
	"keys", "secret", "secrets", "expired", "expiry", "renewal", "rotation",
	"certificate's", "tls", "handshake", "session", "sessions", "login",
	"logins", "checkout", "payments", "payment", "orders", "search",
	"storefront", "mobile", "app", "website", "console", "dashboard's",
	"customer-facing", "internal", "external", "vendor", "provider",
	"third-party", "cloud", "object", "bucket", "buckets", "volume",
	"volumes", "filesystem", "inode", "inodes", "full", "space", "leak",
	"leaked", "garbage", "collection", "pause", "pauses", "heap", "oom",
	"killed", "crash", "crashed", "crashes", "looping", "loop", "stuck",
	"hung", "hang", "spike", "spikes", "surge", "burst", "thundering",
	"herd", "amplification", "cascade", "cascading", "overload",
	"overloaded", "shedding", "circuit", "breaker", "fallback", "canary",
	"staged", "rollout", "flag", "flags", "feature", "toggle", "percent",
	"gradual", "global", "regional", "single", "multiple", "entire",
	"partial", "complete", "intermittent", "sporadic", "sustained",
	"prolonged", "brief", "initial", "subsequent", "manual", "automated",
	"automation", "script", "scripts", "command", "typo", "operator",
	"maintenance", "window", "planned", "unplanned", "emergency", "hotfix",
	"patch", "patched", "upgrade", "upgraded", "version", "kernel", "os",
	"library", "runtime", "compiler", "regex", "parser", "serialization",
	"encoding", "unicode", "timezone", "clock", "leap", "second", "ntp",
	"drift", "skew", "cron", "batch", "job", "jobs", "worker", "workers",
	"consumer", "consumers", "producer", "topic", "topics", "kafka",
	"broker", "brokers", "messages", "backlog", "offset", "retention",
	"compaction", "tombstones", "corruption", "corrupted", "inconsistent",
	"stale", "invalidation", "eviction", "evicted", "warm", "cold",
	"miss", "misses", "hit", "ratio", "origin", "edge", "cdn", "pop",
	"anycast", "resolver", "resolvers", "ttl", "record", "records", "zone's",
	"registrar", "domain", "email", "notifications", "webhooks", "sms",
	"status", "page", "communication", "postmortem", "review", "blameless",
	"timeline", "action", "items", "follow-up", "lessons", "learned",
	"runbook", "playbook", "procedure", "tooling", "visibility",
	"observability", "alerting", "threshold", "thresholds", "noisy",
	"false", "positive", "missed", "delayed", "paging", "responders",
	"investigation", "hypothesis", "bisect", "revert", "reverted",
	"redeploy", "drain", "drained", "traffic-shift", "evacuate", "isolate",
	"isolated", "blast", "radius", "cell", "cells", "bulkhead", "tenant",
	"tenants", "noisy-neighbor", "multi-tenant", "control", "plane", "data-plane",
	"metadata", "orchestration", "provisioning", "allocation", "ip",
	"address", "addresses", "subnet", "vpc", "nat", "ports", "port",
	"socket", "sockets", "file", "descriptors", "ulimit", "keepalive",
	"idle", "connection", "reset", "resets", "refused", "unreachable",
	"503", "500", "502", "504", "429", "http", "grpc", "websocket",
	"protocol", "header", "headers", "payload", "size", "large", "oversized",
	"truncated", "overflow", "integer", "counter", "wraparound", "id",
	"ids", "sequence", "uuid", "collision", "hash", "ring", "consistent",
	"hashing", "rebalance", "rebalancing", "hot", "hotspot", "skewed",
	"uneven", "distribution", "weights", "weighting", "retry", "storm",
	"jitter", "exponential", "idempotent", "duplicate", "duplicates",
	"ordering", "race", "condition", "concurrency", "mutex", "atomic",
	"transaction", "transactions", "rollback's", "commit", "commits",
	"vacuum", "wraparound's", "autovacuum", "replication-slot", "wal",
	"binlog", "checkpoint", "fsync", "durability", "raid", "ssd", "firmware",
	"bios", "power-supply", "generator", "ups", "battery", "utility",
	"hvac", "temperature", "thermal", "overheating", "flood", "fire",
	"earthquake", "storm's", "weather", "cable", "cut", "submarine",
	"transit", "isp", "carrier", "mobile-network", "ddos", "attack",
	"botnet", "mitigation", "scrubbing", "waf", "abuse", "malicious",
	"vulnerability", "exploit", "compromise", "revoked", "revocation",
	"compliance", "audit", "legal", "billing", "invoices", "refunds",
	"credits", "sla", "slo", "budget", "burn", "apology", "trust",
}

// companyWords build company names: a first word and, often, a second.
var companyFirst = []string{
	"Northwind", "Bluebird", "Granite", "Harbor", "Juniper", "Kestrel",
	"Lumen", "Meridian", "Nimbus", "Orchid", "Pinecone", "Quarry",
	"Redwood", "Saffron", "Tundra", "Umber", "Vertex", "Willow", "Yarrow",
	"Zephyr", "Aurora", "Beacon", "Cobalt", "Delta", "Ember", "Falcon",
	"Glacier", "Horizon", "Iris", "Jasper", "Keystone", "Lattice", "Mosaic",
	"Nova", "Onyx", "Prism", "Quantum", "Rover", "Summit", "Tidal",
	"Unity", "Voyager", "Wavelength", "Xenon", "Yonder", "Zenith", "Atlas",
	"Boreal", "Cinder", "Drift", "Echo", "Fjord", "Gale", "Haven",
}

var companySecond = []string{
	"", "", "", "Cloud", "Payments", "Labs", "Systems", "Networks", "Bank",
	"Games", "Health", "Logistics", "Media", "Mobile", "Pay", "Retail",
	"Software", "Telecom", "Travel", "Data", "Hosting", "Security",
	"Analytics", "Commerce", "Energy", "Insurance", "Markets", "Social",
}

// syllables build the long tail of rare words: product, host and team
// names that real write-ups are full of and that each appear in few cases.
var syllables = []string{
	"ka", "lo", "mi", "ren", "tor", "vex", "qua", "zil", "dor", "fen",
	"gar", "hul", "ix", "jor", "kel", "lin", "mor", "nax", "opt", "pra",
	"ros", "sul", "tek", "ul", "vin", "wex", "yor", "zan", "bri", "cal",
}
