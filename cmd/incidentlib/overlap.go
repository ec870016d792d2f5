package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/incidentlib/incidentlib/overlap"
)

// proseKeys are the case fields written in the library's own words. Other
// fields hold facts (IDs, dates, URLs, slugs, names) that may match a source.
var proseKeys = map[string]bool{
	"title": true, "scope": true, "users_affected": true, "summary": true,
	"symptoms": true, "trigger": true, "detection": true, "remediation": true,
	"action_items": true, "text": true, "lessons": true, "note": true,
	"verification": true,
}

// maxOverlapInput bounds each file the overlap command reads.
const maxOverlapInput = 32 << 20

func (m *Main) runOverlap(args []string) int {
	fs := newFlagSet("overlap", m.Stderr)
	fs.Usage = func() {
		fmt.Fprint(m.Stderr, `usage: incidentlib overlap [--min N] CASE.yaml SOURCE...

Lists every run of words that the case's prose fields share with a source
(plain text or a saved HTML page; "-" reads one source from standard input).
Case, punctuation, accents and British/US spelling are folded; words with a
digit and words the case puts in quotes or backticks match but do not count
towards the minimum. Exit 0 when there is none, 1 when there are runs, 2 on
a usage or input error.
`)
		fs.PrintDefaults()
	}
	min := fs.Int("min", overlap.MinWords, "the shortest run that counts, in words")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() < 2 || *min < 2 {
		fs.Usage()
		return exitUsage
	}
	caseFile := fs.Arg(0)
	data, err := readLimited(caseFile, nil)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib overlap: %v\n", err)
		return exitUsage
	}
	fields, err := caseProse(data)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib overlap: %s: %v\n", caseFile, err)
		return exitUsage
	}
	var sources []overlap.Source
	for _, name := range fs.Args()[1:] {
		b, err := readLimited(name, m.Stdin)
		if err != nil {
			fmt.Fprintf(m.Stderr, "incidentlib overlap: %v\n", err)
			return exitUsage
		}
		text := string(b)
		if overlap.LooksLikeHTML(text) {
			text = overlap.TextFromHTML(text)
		}
		sources = append(sources, overlap.Source{Name: name, Text: text})
	}
	runs := overlap.Find(fields, sources, *min)
	for _, r := range runs {
		fmt.Fprintf(m.Stdout, "%s: %s: %d words shared with %s: %q\n", caseFile, r.Field, r.Words, r.Source, r.Text)
	}
	if len(runs) > 0 {
		fmt.Fprintf(m.Stderr, "%d runs of %d or more words shared with the sources\n", len(runs), *min)
		return exitProblems
	}
	fmt.Fprintf(m.Stderr, "ok: no run of %d words shared with %d sources\n", *min, len(sources))
	return exitOK
}

// readLimited reads a file, or stdin for "-", refusing one over the bound.
func readLimited(name string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		if stdin == nil {
			return nil, fmt.Errorf("the case cannot be read from standard input")
		}
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %v", name, cleanPathError(err))
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxOverlapInput+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", name, cleanPathError(err))
	}
	if len(b) > maxOverlapInput {
		return nil, fmt.Errorf("%s is larger than %d MiB", name, maxOverlapInput>>20)
	}
	return b, nil
}

func cleanPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// caseProse returns the prose fields of a case file, named by their path
// ("action_items[1].text").
func caseProse(data []byte) ([]overlap.Field, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a readable case file: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a case file: expected a mapping of fields")
	}
	var fields []overlap.Field
	var walk func(n *yaml.Node, path string, prose bool)
	walk = func(n *yaml.Node, path string, prose bool) {
		switch n.Kind {
		case yaml.ScalarNode:
			if prose && n.Tag == "!!str" {
				fields = append(fields, overlap.Field{Name: path, Text: n.Value})
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i+1), prose)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				p := key
				if path != "" {
					p = path + "." + key
				}
				walk(n.Content[i+1], p, proseKeys[key] && (prose || path == ""))
			}
		}
	}
	walk(doc.Content[0], "", true)
	if len(fields) == 0 {
		return nil, fmt.Errorf("not a case file: no prose fields (summary, trigger, …)")
	}
	return fields, nil
}
