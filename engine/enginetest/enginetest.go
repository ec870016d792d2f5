// Package enginetest opens the shipped corpus in an in-memory engine for
// the tests of the packages built on it, once per test binary.
package enginetest

import (
	"context"
	"sync"
	"testing"

	"incidentlib/corpus"
	"incidentlib/engine"
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
// once found nothing, with a case it must now rank in the top 3.
type IssueQuery struct {
	Text string
	Want string // a case ID
}

// IssueQueries are the questions every protocol's tests put to the shipped
// corpus: each must find its case in the top 3 through the web page, the
// JSON API and search_incidents.
var IssueQueries = []IssueQuery{
	{"engineer deleted the wrong database directory", "IL-0086"},
	{"certificate expired and service discovery broke", "IL-0109"},
	{"our auth service fell over when a database migration made a query slow and clients retried — have others seen this?", "IL-0561"},
	{"auth outage slow query retries", "IL-0561"},
	{"auth", "IL-0561"},
	{"retry amplification", "IL-0216"},
	{"thundering herd", "IL-0137"},
}
