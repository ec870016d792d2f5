package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/incidentlib/incidentlib/corpus"
)

// caseDirs is a repeatable --cases flag.
type caseDirs []string

func (d *caseDirs) String() string     { return strings.Join(*d, ",") }
func (d *caseDirs) Set(s string) error { *d = append(*d, s); return nil }

// corpusFlags are the flags every command that reads a corpus takes.
type corpusFlags struct {
	dirs      caseDirs
	noBuiltin bool
}

func (c *corpusFlags) register(fs *flag.FlagSet) {
	fs.Var(&c.dirs, "cases", "a directory of your own case files, read beside the shipped ones (repeatable)")
	fs.BoolVar(&c.noBuiltin, "no-builtin", false, "leave the shipped cases out")
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("incidentlib "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and reports whether the command should go on; the
// exit code is set when it should not.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return 0, true
}

func (m *Main) runValidate(args []string) int {
	fs := newFlagSet("validate", m.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, "usage: incidentlib validate [--no-builtin] [DIR]...\n\nChecks the vocabulary, the shipped cases (unless --no-builtin) and the cases in each DIR.\nPrints every problem as file:line: message. Exit 0 clean, 1 problems, 2 usage.")
		fs.PrintDefaults()
	}
	var cf corpusFlags
	fs.BoolVar(&cf.noBuiltin, "no-builtin", false, "leave the shipped cases out")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	cf.dirs = fs.Args()
	c, problems, err := corpus.Load(corpus.Options{CaseDirs: cf.dirs, NoBuiltin: cf.noBuiltin, Now: m.Now()})
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib validate: %v\n", err)
		return exitUsage
	}
	for _, p := range problems {
		fmt.Fprintln(m.Stdout, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(m.Stderr, "%d problems\n", len(problems))
		return exitProblems
	}
	fmt.Fprintf(m.Stderr, "ok: %d cases, no problems\n", len(c.Cases))
	return exitOK
}

func (m *Main) runList(args []string) int {
	fs := newFlagSet("list", m.Stderr)
	var cf corpusFlags
	cf.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	c, code := m.loadCorpus("list", cf)
	if c == nil {
		return code
	}
	for _, k := range c.Cases {
		when := k.Timeline.Started.String()
		if when == "" && !k.Timeline.Reported.IsZero() {
			when = "made public " + k.Timeline.Reported.String()
		}
		fmt.Fprintf(m.Stdout, "%s\t%s\t%s\t%s\n", k.ID, when, k.Company, k.Title)
	}
	return exitOK
}

// loadCorpus loads the corpus for a command that needs it clean. On failure
// it prints why and returns a nil corpus with the exit code.
func (m *Main) loadCorpus(cmd string, cf corpusFlags) (*corpus.Corpus, int) {
	c, problems, err := corpus.Load(corpus.Options{CaseDirs: cf.dirs, NoBuiltin: cf.noBuiltin, Now: m.Now()})
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib %s: %v\n", cmd, err)
		return nil, exitUsage
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(m.Stderr, p)
		}
		fmt.Fprintf(m.Stderr, "incidentlib %s: the corpus has %d problems; fix them (incidentlib validate lists them)\n", cmd, len(problems))
		return nil, exitProblems
	}
	return c, exitOK
}
