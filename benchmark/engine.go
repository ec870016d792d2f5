package benchmark

import (
	"context"
	"errors"
	"fmt"
	"github.com/incidentlib/incidentlib/synthetic"
	"os"
	"path/filepath"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/engine"
)

// engineDir is where the engine keeps its index for a corpus size.
func engineDir(data string, size int) string {
	return filepath.Join(data, fmt.Sprintf("engine-%d", size))
}

// engineBuild indexes the corpus from nothing into the data directory, as
// a first start does, and measures the time, the index size and the peak
// memory of the build.
func engineBuild(ctx context.Context, p phaseInput) (Result, error) {
	res := Result{Engine: "engine", Cases: len(p.cases), CorpusRSS: p.corpusRSS}
	dir := engineDir(p.data, len(p.cases))
	if err := os.RemoveAll(dir); err != nil {
		return res, err
	}
	start := time.Now()
	e, err := engine.Open(ctx, p.vocab, p.cases, engine.Options{DataDir: dir})
	if err != nil {
		return res, err
	}
	res.BuildMS = ms(time.Since(start))
	res.BuildRSS = procStatus(0, "VmHWM")
	if err := e.Close(); err != nil {
		return res, err
	}
	res.IndexBytes, err = dirSize(dir)
	return res, err
}

// engineServe starts the engine on the index engineBuild left, as a
// restart does, then answers the query set.
func engineServe(ctx context.Context, p phaseInput) (Result, error) {
	res := Result{Engine: "engine", Cases: len(p.cases), CorpusRSS: p.corpusRSS}
	start := time.Now()
	e, err := engine.Open(ctx, p.vocab, p.cases, engine.Options{DataDir: engineDir(p.data, len(p.cases))})
	if err != nil {
		return res, err
	}
	defer e.Close()
	res.RestartMS = ms(time.Since(start))
	if !e.IndexReused() {
		return res, errors.New("the engine rebuilt its index instead of reusing it; the restart time would be a build time")
	}
	if err := queryEngine(ctx, e, p, &res); err != nil {
		return res, err
	}
	res.ServeRSS = procStatus(0, "VmHWM")
	return res, nil
}

// queryEngine times the query set against an open engine.
func queryEngine(ctx context.Context, e *engine.Engine, p phaseInput, res *Result) error {
	search := func(ctx context.Context, s synthetic.Search) (int, error) {
		r, err := e.SearchCases(ctx, s.Query())
		if err != nil {
			return 0, err
		}
		if r.Total > 0 && len(r.Hits) == 0 {
			return 0, errors.New("a result set without hits on its first page")
		}
		// The cases that hold every word: what the SQL engines' full-text
		// search finds, so result sizes compare.
		return r.Complete, nil
	}
	var err error
	if res.Broad, err = timeQueries(ctx, p.queries.Broad, p.warm, search); err != nil {
		return fmt.Errorf("broad: %w", err)
	}
	if res.Narrow, err = timeQueries(ctx, p.queries.Narrow, p.warm, search); err != nil {
		return fmt.Errorf("narrow: %w", err)
	}
	question := func(ctx context.Context, s synthetic.Search) (int, error) {
		r, err := e.SearchCases(ctx, s.Query())
		if err != nil {
			return 0, err
		}
		return r.Total, nil
	}
	if res.Question, err = timeQueries(ctx, p.queries.Questions, p.warm, question); err != nil {
		return fmt.Errorf("question: %w", err)
	}
	res.Similar, err = timeQueries(ctx, p.queries.Similar, p.warm, func(ctx context.Context, id string) (int, error) {
		rel, err := e.SimilarCases(ctx, id, synthetic.SimilarLimit)
		return len(rel), err
	})
	if err != nil {
		return fmt.Errorf("similar: %w", err)
	}
	return nil
}

// phaseInput is what every phase gets: the corpus, its queries, and where
// to keep data.
type phaseInput struct {
	vocab     *incidentlib.Vocabulary
	cases     []*incidentlib.Case
	queries   synthetic.QuerySet
	data      string
	warm      int
	postgres  string
	corpusRSS int64
}
