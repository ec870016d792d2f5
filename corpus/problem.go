// Package corpus loads the controlled vocabulary and case files into domain
// values, and reports every problem it finds as file:line: message, so a
// curator can fix a whole corpus in one pass.
package corpus

import (
	"fmt"
	"sort"
)

// Problem is one thing wrong with a corpus file.
type Problem struct {
	File    string
	Line    int // 0 when the problem concerns the whole file
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Message)
}

// Problems is a list of problems that is also an error.
type Problems []Problem

func (ps Problems) Error() string {
	switch len(ps) {
	case 0:
		return "no problems"
	case 1:
		return ps[0].String()
	}
	return fmt.Sprintf("%s (and %d more problems)", ps[0], len(ps)-1)
}

// Sort orders problems by file, then line, then message.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Message < b.Message
	})
}
