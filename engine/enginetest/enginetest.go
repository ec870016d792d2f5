// Package enginetest opens the shipped corpus in an in-memory engine for
// the tests of the packages built on it, once per test binary.
package enginetest

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
)

var shipped = sync.OnceValues(func() (*engine.Engine, error) {
	c, problems, err := corpus.Load(corpus.Options{})
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return engine.Open(context.Background(), c.Vocabulary, c.Cases, engine.Options{})
})

// Shipped returns an engine over the shipped corpus, failing tb when the
// corpus does not load cleanly. The engine is shared: do not close it.
func Shipped(tb testing.TB) *engine.Engine {
	tb.Helper()
	e, err := shipped()
	if err != nil {
		tb.Fatalf("opening the shipped corpus: %v", err)
	}
	return e
}

// IssueQuery is a query people and agents asked the shipped corpus that
// once found nothing, with the case the issue named for it. Want must rank
// in the top 10, and Want or one of Also in the top 3: Also are cases added
// to the corpus later that a reader judged to answer the same question as
// well (an authentication outage from a slow query and retries; a
// thundering herd named in the title), which may rightly rank beside it.
type IssueQuery struct {
	Text string
	Want string   // a case ID
	Also []string // case IDs judged to answer it as well
}

// InTop3 reports whether the first three IDs of a result hold Want or one
// of Also.
func (q IssueQuery) InTop3(ids []string) bool {
	for i, id := range ids {
		if i == 3 {
			break
		}
		if id == q.Want || slices.Contains(q.Also, id) {
			return true
		}
	}
	return false
}

// IssueQueries are the questions every protocol's tests put to the shipped
// corpus: each must find its case in the top 3 through the web page, the
// JSON API and search_incidents.
var IssueQueries = []IssueQuery{
	{Text: "engineer deleted the wrong database directory", Want: "IL-0086"},
	{Text: "certificate expired and service discovery broke", Want: "IL-0109"},
	{Text: "our auth service fell over when a database migration made a query slow and clients retried — have others seen this?", Want: "IL-0561"},
	// Clerk's outages: a query plan flipped by auto-analyze, and a
	// hand-run query, each followed by retries, at an authentication
	// provider.
	{Text: "auth outage slow query retries", Want: "IL-0561", Also: []string{"IL-1137", "IL-1135"}},
	{Text: "auth", Want: "IL-0561"},
	{Text: "retry amplification", Want: "IL-0216"},
	// Cases whose titles name a thundering herd.
	{Text: "thundering herd", Want: "IL-0137", Also: []string{"IL-0613", "IL-0879", "IL-1167"}},
}

// PastedQuery is text engineers paste into a search (an alert, a log line,
// `kubectl describe` output) that names a known error signature. The first
// hit must be one of the cases that show the symptom, and its "why it
// matched" must name the signature and what it means.
type PastedQuery struct {
	Text      string
	Signature string   // the signature's name, as "why it matched" shows it
	Means     string   // what it means, shown after the arrow
	Cases     []string // cases whose text shows the symptom
}

// PastedQueries are the issue's own pasted examples, and one of each
// family the signature catalogue covers that the corpus can answer.
var PastedQueries = []PastedQuery{
	{Text: "Last State: Terminated\n  Reason: OOMKilled\n  Exit Code: 137\n  Started: Mon, 01 Dec 2025 10:02:11 +0000",
		Signature: "OOMKilled", Means: "out of memory",
		Cases: []string{"IL-0066", "IL-0216", "IL-0608", "IL-0718", "IL-0726", "IL-0796", "IL-0825", "IL-0872", "IL-0935", "IL-1100", "IL-1172",
			"IL-1202", "IL-1213", "IL-1217", "IL-1308", // the Kubernetes cases of 2 December 2026
			"IL-1455", "IL-1456", // Prometheus OOMKilled at its container limit (exit code 137)
			"IL-1330"}}, // CoreDNS pods OOM-killed, added later that day
	{Text: "2025/12/01 10:02:11 http: Accept error: accept tcp [::]:8080: accept4: too many open files; retrying in 1s",
		Signature: "too many open files", Means: "file descriptor limit", Cases: []string{"IL-0049", "IL-1407",
			"IL-1689"}}, // GitLab's CI runners out of file descriptors, written later on 2 December 2026
	{Text: "dial tcp: lookup db.internal on 10.96.0.10:53: read udp 10.244.1.7:41235->10.96.0.10:53: i/o timeout",
		Signature: "DNS lookup failure", Means: "DNS resolution failing",
		Cases: []string{"IL-0029", "IL-0067", "IL-0149", "IL-0216", "IL-0802", "IL-0850",
			"IL-1735"}}, // CoreDNS in Gitpod's clusters timing out lookups, written later on 2 December 2026
}
