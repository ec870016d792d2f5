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
