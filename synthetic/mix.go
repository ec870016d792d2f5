package synthetic

import "fmt"

// mixWords are single words of the incident domain, most of them broad
// (matching a large share of the shipped cases), so that each request is
// a real search with a large result set to count and rank.
var mixWords = []string{"database", "dns", "certificate", "network", "configuration", "deploy", "cache", "storage",
	"latency", "region", "outage", "retry", "load", "timeout", "memory", "disk", "queue", "replication", "failover", "traffic",
	"error", "service", "cluster", "kubernetes", "proxy", "backup", "migration", "capacity", "monitoring", "alert"}

var mixSorts = []string{"relevance", "newest", "oldest", "longest"}

// SearchMix is the i-th request path of a stream of /api/v1/cases searches
// over the shipped corpus that do not repeat for 194,400 requests:
// word, sort, page size and a year bound vary, so a response cache cannot
// answer them and each runs the engine and renders a page. The load
// harness and the API's Go benchmark use the same stream.
func SearchMix(i int64) string {
	w := mixWords[i%int64(len(mixWords))]
	i /= int64(len(mixWords))
	so := mixSorts[i%4]
	i /= 4
	pp := 20 + i%81
	i /= 81
	year := 2000 + i%20
	return fmt.Sprintf("/api/v1/cases?q=%s&sort=%s&per_page=%d&year_from=%d", w, so, pp, year)
}
