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
