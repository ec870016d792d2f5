package corpus

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/cases"
)

// Options says which cases make up a corpus.
type Options struct {
	// CaseDirs are a team's own case directories, read after the shipped
	// corpus.
	CaseDirs []string
	// NoBuiltin leaves the shipped cases out.
	NoBuiltin bool
	// Now bounds start dates; zero means time.Now().
	Now time.Time
}

// Corpus is a loaded, checked set of cases with the vocabulary they use.
type Corpus struct {
	Vocabulary *incidentlib.Vocabulary
	Cases      []*incidentlib.Case
}

// BuiltinName is how the shipped case directory is named in problems.
const BuiltinName = "cases"

// Load reads the shipped vocabulary, the shipped cases (unless NoBuiltin)
// and each case directory. It returns an error, and no corpus, when a
// directory cannot be opened; otherwise the corpus and every problem found.
func Load(opts Options) (*Corpus, Problems, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	var dirs []Dir
	if !opts.NoBuiltin {
		dirs = append(dirs, Dir{FS: cases.FS, Name: BuiltinName, Builtin: true})
	}
	for _, d := range opts.CaseDirs {
		st, err := os.Stat(d)
		if err != nil {
			return nil, nil, fmt.Errorf("case directory %s: %w", d, err)
		}
		if !st.IsDir() {
			return nil, nil, fmt.Errorf("case directory %s: not a directory", d)
		}
		dirs = append(dirs, Dir{FS: os.DirFS(d), Name: d})
	}
	v, ps := LoadShippedVocabulary()
	if v == nil {
		return nil, ps, nil
	}
	cs, cps := LoadCases(v, dirs, now)
	if len(cs) == 0 && len(cps) == 0 {
		// Nothing to check or serve is a mistake in the command line, not
		// a clean result: say so rather than "ok: 0 cases".
		where := "the shipped corpus is left out and no case directory was given"
		if len(opts.CaseDirs) > 0 {
			where = "no .yaml case files in " + strings.Join(opts.CaseDirs, ", ")
			if !opts.NoBuiltin {
				where += " and the shipped corpus is empty"
			}
		}
		return nil, ps, fmt.Errorf("no cases: %s", where)
	}
	return &Corpus{Vocabulary: v, Cases: cs}, append(ps, cps...), nil
}
