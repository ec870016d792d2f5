// Command mcpserve serves the shipped corpus over MCP for trying clients by
// hand before `incidentlib serve` and `incidentlib mcp` are at hand:
//
//	go run ./mcpserver/testdata/mcpserve -http 127.0.0.1:8090   # http://127.0.0.1:8090/mcp
//	go run ./mcpserver/testdata/mcpserve                         # stdio
//
// It lives under testdata so that it is never built with ./... .
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/mcpserver"
)

func main() {
	addr := flag.String("http", "", "listen address for Streamable HTTP at /mcp; empty serves stdio")
	base := flag.String("base-url", "http://127.0.0.1:8080", "absolute URL of the web pages (empty: answers give IDs and source URLs only)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*addr, *base, log); err != nil {
		fmt.Fprintln(os.Stderr, "mcpserve:", err)
		os.Exit(1)
	}
}

func run(addr, base string, log *slog.Logger) error {
	ctx := context.Background()
	c, _, err := corpus.Load(corpus.Options{})
	if err != nil {
		return err
	}
	lib, err := engine.Open(ctx, c.Vocabulary, c.Cases, engine.Options{})
	if err != nil {
		return err
	}
	cfg := mcpserver.Config{BaseURL: base, Logger: log}
	if addr == "" {
		return mcpserver.ServeStdio(ctx, lib, cfg, os.Stdin, os.Stdout)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpserver.NewHTTPHandler(lib, cfg))
	log.Info("serving MCP", "url", "http://"+addr+"/mcp")
	return http.ListenAndServe(addr, mux)
}
