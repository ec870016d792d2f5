// Command incidentlib serves and checks the Incident Library.
//
//	incidentlib serve    --addr 127.0.0.1:8080 [--cases DIR]... [--data DIR]
//	incidentlib validate [--no-builtin] [DIR]...
//	incidentlib list     [--cases DIR]...
//	incidentlib overlap  CASE.yaml SOURCE...
//	incidentlib stats    [--cases DIR]...
//	incidentlib mcp      [--cases DIR]...
//	incidentlib version
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/incidentlib/incidentlib/buildinfo"
	"github.com/incidentlib/incidentlib/corpus"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Now: time.Now}
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		spareProcessors()
	}
	os.Exit(m.Run(ctx, os.Args[1:]))
}

// Exit codes.
const (
	exitOK       = 0
	exitProblems = 1 // the command ran and found problems, or failed
	exitUsage    = 2 // the command line was wrong
)

// Main is the program, with its inputs and outputs explicit so that tests
// run it whole.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Now            func() time.Time
	// OnListen, when set, is told the address serve listens on (tests
	// listen on port 0 and need to learn the port).
	OnListen func(addr string)

	// indexWhere is where the engine opened by openLibrary keeps its
	// index (a path, or memory and why).
	indexWhere string
}

// Run runs one subcommand and returns the process exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		m.usage()
		return exitUsage
	}
	switch args[0] {
	case "validate":
		return m.runValidate(args[1:])
	case "list":
		return m.runList(args[1:])
	case "overlap":
		return m.runOverlap(args[1:])
	case "version":
		return m.runVersion(args[1:])
	case "-h", "--help", "help":
		m.usage()
		return exitOK
	}
	if run, ok := m.moreCommands()[args[0]]; ok {
		return run(ctx, args[1:])
	}
	fmt.Fprintf(m.Stderr, "incidentlib: unknown command %q\n", args[0])
	m.usage()
	return exitUsage
}

func (m *Main) usage() {
	fmt.Fprint(m.Stderr, `usage: incidentlib <command> [flags]

commands:
  serve     serve the web pages, the JSON API and the MCP endpoint over HTTP
  mcp       serve the MCP tools over standard input and output
  validate  check the vocabulary and every case; exit 0 clean, 1 problems, 2 usage
  list      print one line per case
  overlap   list the runs of six or more words a case shares with its sources
  stats     count cases per term and show which fields are known
  migrate   create or update the schema of a shared library on PostgreSQL (--store URL)
  import    load case files into a shared library (--store URL)
  user      add or disable an account of a shared library: user add|disable (--store URL)
  token     create or revoke an account's API token: token create|revoke (--store URL)
  withdraw  take a published case out of a shared library, for maintainers (--store URL)
  unpublish the same as withdraw
  purge     delete a case's old versions, or every text of a withdrawn case (--store URL)
  bench     score search on the judged relevance set: bench relevance [-v]
  version   print the module version, the commit and the corpus compiled in

Run 'incidentlib <command> -h' for a command's flags.
`)
}

// runVersion prints what the binary was built from and the corpus it ships.
func (m *Main) runVersion(args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(m.Stderr, "usage: incidentlib version\n\nPrints the module version (\"(devel)\" when built in a checkout), the commit\nwhen it is known, and the shipped corpus's case count and newest case.\n")
		if args[0] == "-h" || args[0] == "--help" {
			return exitOK
		}
		return exitUsage
	}
	c, _, err := corpus.Load(corpus.Options{Now: m.Now()})
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib version: %v\n", err)
		return exitProblems
	}
	fmt.Fprint(m.Stdout, buildinfo.Read("incidentlib", c.Cases))
	return exitOK
}
