// Command incidentlib-bench holds what only measurement needs, so that the
// server's own build stays lean (no SQL drivers):
//
//	incidentlib-bench search [flags]   the search benchmark against SQLite and PostgreSQL
//	incidentlib-bench relevance --set FILE  relevance on a judged set, beside a plain FTS5 baseline
//	incidentlib-bench load --bin PATH  the load harness against a running incidentlib serve
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/incidentlib/incidentlib/benchmark"
	"github.com/incidentlib/incidentlib/benchmark/load"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: incidentlib-bench search|relevance|load [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "search":
		os.Exit(benchmark.Main(ctx, os.Args[2:], os.Stdout, os.Stderr))
	case "relevance":
		os.Exit(benchmark.RelevanceMain(ctx, os.Args[2:], os.Stdout, os.Stderr))
	case "load":
		os.Exit(load.Main(ctx, os.Args[2:], os.Stdout, os.Stderr))
	}
	fmt.Fprintf(os.Stderr, "incidentlib-bench: unknown command %q; want search, relevance or load\n", os.Args[1])
	os.Exit(2)
}
