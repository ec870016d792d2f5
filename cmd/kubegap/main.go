// Command kubegap audits Kubernetes manifests for the gaps that public
// incidents show the cost of; every finding cites the library's cases.
//
//	kubegap audit  [PATH|-]... [--format text|json|sarif] [--config FILE]
//	               [--min-severity S] [--cases DIR]... [--no-builtin] [--base-url URL]
//	kubegap checks [--format text|json]
//	kubegap mcp    [--cases DIR]... [--base-url URL] [--config FILE] [--kubeconfig FILE]
//	kubegap version
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/incidentlib/incidentlib/buildinfo"
	"github.com/incidentlib/incidentlib/corpus"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Now: time.Now,
		Color: isTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"}
	os.Exit(m.Run(ctx, os.Args[1:]))
}

// Exit codes, usable as a CI gate.
const (
	exitOK       = 0 // nothing at or above the severity threshold
	exitFindings = 1 // findings at or above the threshold
	exitUsage    = 2 // the command line or the input was wrong
)

// Main is the program, with its inputs and outputs explicit so that tests
// run it whole.
type Main struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Now            func() time.Time
	// Color turns on ANSI colours in the text report (main sets it when
	// standard output is a terminal).
	Color bool
}

// Run runs one subcommand and returns the process exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		m.usage()
		return exitUsage
	}
	switch args[0] {
	case "audit":
		return m.runAudit(ctx, args[1:])
	case "checks":
		return m.runChecks(args[1:])
	case "mcp":
		return m.runMCP(ctx, args[1:])
	case "version":
		return m.runVersion(args[1:])
	case "-h", "--help", "help":
		m.usage()
		return exitOK
	}
	fmt.Fprintf(m.Stderr, "kubegap: unknown command %q\n", args[0])
	m.usage()
	return exitUsage
}

func (m *Main) usage() {
	fmt.Fprint(m.Stderr, `usage: kubegap <command> [flags]

commands:
  audit    audit manifests (files, directories, - for standard input)
  checks   list the checks
  mcp      serve the audits to AI agents over MCP on standard input and output
  version  print the module version, the commit and the corpus compiled in

Exit codes: 0 nothing at or above --min-severity, 1 findings, 2 usage or input error.
Run 'kubegap <command> -h' for a command's flags.
`)
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runVersion prints what the binary was built from and the corpus it cites.
func (m *Main) runVersion(args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(m.Stderr, "usage: kubegap version\n\nPrints the module version (\"(devel)\" when built in a checkout), the commit\nwhen it is known, and the shipped corpus's case count and newest case.\n")
		if args[0] == "-h" || args[0] == "--help" {
			return exitOK
		}
		return exitUsage
	}
	c, _, err := corpus.Load(corpus.Options{Now: m.Now()})
	if err != nil {
		fmt.Fprintf(m.Stderr, "kubegap version: %v\n", err)
		return exitUsage
	}
	fmt.Fprint(m.Stdout, buildinfo.Read("kubegap", c.Cases))
	return exitOK
}
