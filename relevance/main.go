package relevance

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
)

// Main is `incidentlib bench relevance`: it scores the shipped corpus's
// search on both parts of the judged set and prints the table
// docs/search.md records. -v lists the queries that missed.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench relevance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "list every query that misses a judged case")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	c, problems, err := corpus.Load(corpus.Options{})
	if err == nil && len(problems) > 0 {
		err = problems
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench relevance: %v\n", err)
		return 1
	}
	e, err := engine.Open(ctx, c.Vocabulary, c.Cases, engine.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "bench relevance: %v\n", err)
		return 1
	}
	defer e.Close()
	set, err := Load()
	if err != nil {
		fmt.Fprintf(stderr, "bench relevance: %v\n", err)
		return 1
	}
	tune, held := set.Split()
	fmt.Fprintf(stdout, "judged set: %d queries, seed %d; held out: %d\n\n", len(set.Queries), set.Seed, len(held))
	fmt.Fprintf(stdout, "| part | queries | recall@10 | MRR | nDCG@10 | judged case in top 10 | top-3 cases in top 3 |\n|---|---|---|---|---|---|---|\n")
	type miss struct {
		part string
		r    Result
	}
	var misses []miss
	for _, part := range []struct {
		name string
		qs   []Query
	}{{"tuning", tune}, {"held out", held}} {
		sc, rs, err := Evaluate(ctx, e, part.qs)
		if err != nil {
			fmt.Fprintf(stderr, "bench relevance: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "| %s | %d | %.3f | %.3f | %.3f | %d of %d | %d of %d |\n",
			part.name, sc.Queries, sc.RecallAt10, sc.MRR, sc.NDCGAt10, sc.Found, sc.Queries, sc.Top3OK, sc.Top3Judged)
		for _, r := range rs {
			if r.Recall < 1 || !r.Top3OK || r.RR < 1 {
				misses = append(misses, miss{part.name, r})
			}
		}
	}
	if *verbose {
		fmt.Fprintf(stdout, "\nqueries not answered perfectly (a judged case missing, or the first judged case below rank 1):\n")
		for _, m := range misses {
			r := m.r
			fmt.Fprintf(stdout, "  %s [%s] %q rr=%.2f top3=%v top10=%v got=%s\n", m.part, r.Kind, r.Text, r.RR, r.Top3, r.Top10, strings.Join(r.Got, " "))
		}
	}
	return 0
}
