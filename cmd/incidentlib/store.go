package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/cases"
	"github.com/incidentlib/incidentlib/contribute"
	"github.com/incidentlib/incidentlib/corpus"
	"github.com/incidentlib/incidentlib/engine"
	"github.com/incidentlib/incidentlib/pgstore"
	"github.com/incidentlib/incidentlib/replica"
	"github.com/incidentlib/incidentlib/server"
	"github.com/incidentlib/incidentlib/vocabulary"
)

// storeEnv names the environment variable that gives --store its default.
const storeEnv = "INCIDENTLIB_DATABASE_URL"

// storeFlag registers --store, defaulting to $INCIDENTLIB_DATABASE_URL.
func storeFlag(fsFlags interface {
	StringVar(p *string, name, value, usage string)
}, p *string) {
	fsFlags.StringVar(p, "store", os.Getenv(storeEnv), "PostgreSQL URL of a shared library (default $"+storeEnv+"); without it the library is the case files")
}

// openStore connects to the store and brings its schema up to date.
func (m *Main) openStore(ctx context.Context, cmd, url string, log *slog.Logger) (*pgstore.Store, int) {
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib %s: --store: %v\n", cmd, err)
		return nil, exitUsage
	}
	applied, err := st.Migrate(ctx)
	if err != nil {
		st.Close()
		fmt.Fprintf(m.Stderr, "incidentlib %s: migrating the store: %v\n", cmd, err)
		return nil, exitProblems
	}
	if len(applied) > 0 {
		log.Info("store migrated", "versions", applied)
	}
	return st, exitOK
}

func (m *Main) runMigrate(ctx context.Context, args []string) int {
	fs := newFlagSet("migrate", m.Stderr)
	var url string
	storeFlag(fs, &url)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if url == "" || fs.NArg() > 0 {
		fmt.Fprintln(m.Stderr, "usage: incidentlib migrate --store postgres://…  (or set "+storeEnv+")")
		return exitUsage
	}
	log, _ := m.logger("warn", "text")
	st, code := m.openStore(ctx, "migrate", url, log)
	if st == nil {
		return code
	}
	st.Close()
	fmt.Fprintln(m.Stderr, "ok: the store's schema is current")
	return exitOK
}

func (m *Main) runImport(ctx context.Context, args []string) int {
	fs := newFlagSet("import", m.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, "usage: incidentlib import [--no-builtin] [--store URL] [DIR]...\n\nValidates the shipped cases (unless --no-builtin) and the cases in each DIR,\nthen writes them and the vocabulary to the store in one transaction: new\ncases are added, changed ones get a new version, unchanged ones are left\nalone. Any problem writes nothing.")
		fs.PrintDefaults()
	}
	var url, actor string
	var noBuiltin bool
	storeFlag(fs, &url)
	fs.BoolVar(&noBuiltin, "no-builtin", false, "leave the shipped cases out")
	fs.StringVar(&actor, "as", "import", "who the versions and the audit log name as the writer")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if url == "" {
		fmt.Fprintln(m.Stderr, "incidentlib import: no store: give --store postgres://… or set "+storeEnv)
		return exitUsage
	}
	dirs, files, err := readCaseDirs(fs.Args(), noBuiltin)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib import: %v\n", err)
		return exitUsage
	}
	v, problems := corpus.LoadVocabulary(vocabulary.FileName, vocabulary.YAML)
	if v == nil {
		for _, p := range problems {
			fmt.Fprintln(m.Stdout, p)
		}
		return exitProblems
	}
	loaded, problems := corpus.LoadCases(v, dirs, m.Now())
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(m.Stdout, p)
		}
		fmt.Fprintf(m.Stderr, "%d problems; nothing was imported\n", len(problems))
		return exitProblems
	}
	if len(loaded) == 0 {
		fmt.Fprintln(m.Stderr, "incidentlib import: no case files to import")
		return exitUsage
	}
	stored := make([]incidentlib.StoredCase, len(loaded))
	for i, c := range loaded {
		stored[i] = incidentlib.StoredCase{ID: c.ID, Name: path.Base(c.Origin), Content: files[c.Origin]}
	}
	log, _ := m.logger("warn", "text")
	st, code := m.openStore(ctx, "import", url, log)
	if st == nil {
		return code
	}
	defer st.Close()
	res, err := st.Import(ctx, vocabulary.YAML, stored, actor)
	if err != nil {
		fmt.Fprintf(m.Stderr, "incidentlib import: nothing was imported: %v\n", err)
		return exitProblems
	}
	fmt.Fprintf(m.Stderr, "ok: %d added, %d updated, %d unchanged; vocabulary %s\n", res.Added, res.Updated, res.Unchanged,
		map[bool]string{true: "updated", false: "unchanged"}[res.VocabularyChanged])
	return exitOK
}

// readCaseDirs lists the case directories as corpus.Dirs and reads every
// case file in them, keyed the way corpus names a case's origin.
func readCaseDirs(paths []string, noBuiltin bool) ([]corpus.Dir, map[string][]byte, error) {
	var dirs []corpus.Dir
	if !noBuiltin {
		dirs = append(dirs, corpus.Dir{FS: cases.FS, Name: corpus.BuiltinName})
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("case directory %s: %w", p, err)
		}
		if !st.IsDir() {
			return nil, nil, fmt.Errorf("case directory %s: not a directory", p)
		}
		dirs = append(dirs, corpus.Dir{FS: os.DirFS(p), Name: p})
	}
	files := map[string][]byte{}
	for _, d := range dirs {
		err := fs.WalkDir(d.FS, ".", func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				return nil // corpus.LoadCases reports unreadable entries
			}
			if info, err := e.Info(); err == nil && info.Size() > corpus.MaxCaseFileSize {
				return nil // and files over the size limit
			}
			data, err := fs.ReadFile(d.FS, p)
			if err == nil {
				files[path.Join(d.Name, p)] = data
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return dirs, files, nil
}

// buildFromStore makes an in-memory engine from the store's files. A file
// that does not validate (the store should hold none) is logged and left
// out rather than taking the replica down. Parsed cases are kept by
// content hash between builds, so a change re-reads only the files it
// touched (parsing is about 0.4 s of a 681-case rebuild).
func buildFromStore(log *slog.Logger) replica.Builder {
	var mu sync.Mutex
	var vocabHash string
	var v *incidentlib.Vocabulary
	parsed := map[string]*incidentlib.Case{} // by content hash
	return func(ctx context.Context, vocab []byte, files []incidentlib.StoredCase) (replica.Library, error) {
		if vocab == nil {
			return nil, replica.ErrNoLibrary
		}
		mu.Lock()
		defer mu.Unlock()
		if h := pgstore.Hash(vocab); h != vocabHash || v == nil {
			nv, problems := corpus.LoadVocabulary("store:vocabulary.yaml", vocab)
			if nv == nil {
				return nil, fmt.Errorf("the store's vocabulary does not load: %v", problems)
			}
			// Search reads the terms' aliases and the synonyms shipped
			// beside the vocabulary, so a replica answers as the files do.
			if withAliases, ps := corpus.LoadAliases(vocabulary.AliasesFileName, vocabulary.AliasesYAML, nv); withAliases != nil && len(ps) == 0 {
				if sets, sps := corpus.LoadSynonyms(vocabulary.SynonymsFileName, vocabulary.SynonymsYAML); len(sps) == 0 {
					nv = withAliases.WithSynonyms(sets)
					if sigs, gps := corpus.LoadSignatures(vocabulary.SignaturesFileName, vocabulary.SignaturesYAML, nv); len(gps) == 0 {
						nv = nv.WithSignatures(sigs)
					}
				}
			} else {
				log.Warn("the shipped aliases do not fit the store's vocabulary; search runs without them", "problems", len(ps))
			}
			v, vocabHash, parsed = nv, h, map[string]*incidentlib.Case{} // cases read against the old vocabulary are stale
		}
		now := time.Now()
		next := make(map[string]*incidentlib.Case, len(files))
		loaded := make([]*incidentlib.Case, 0, len(files))
		for _, f := range files {
			key := f.Hash
			if key == "" {
				key = pgstore.Hash(f.Content)
			}
			c, ok := parsed[key]
			if !ok {
				var problems corpus.Problems
				c, problems = corpus.ParseCase(v, "store/"+f.ID+".yaml", f.Content, now)
				for _, p := range problems {
					log.Warn("a case in the store has a problem", "problem", p.String())
				}
			}
			next[key] = c
			if c != nil {
				loaded = append(loaded, c)
			}
		}
		parsed = next
		return engine.Open(ctx, v, loaded, engine.Options{})
	}
}

// openReplica serves the library from the store: built from its snapshot,
// then kept current by a goroutine that follows the change feed until ctx
// ends.
func (m *Main) openReplica(ctx context.Context, cmd, url string, log *slog.Logger) (*replica.Replica, func(), int) {
	st, code := m.openStore(ctx, cmd, url, log)
	if st == nil {
		return nil, nil, code
	}
	start := time.Now()
	r, err := replica.Open(ctx, st, buildFromStore(log), log)
	if err != nil {
		st.Close()
		if errors.Is(err, replica.ErrNoLibrary) {
			fmt.Fprintf(m.Stderr, "incidentlib %s: %v\n", cmd, err)
			return nil, nil, exitUsage
		}
		fmt.Fprintf(m.Stderr, "incidentlib %s: loading the library from the store: %v\n", cmd, err)
		return nil, nil, exitProblems
	}
	log.Info("library loaded from the store", "cases", r.Status().Cases, "seq", r.Status().Seq, "took", time.Since(start).Round(time.Millisecond))
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { r.Follow(fctx); close(done) }()
	return r, func() { cancel(); <-done; r.Close(); st.Close() }, exitOK
}

// withWritePath adds the write path of a shared library to the handlers,
// and routes each signed-in team to handlers over its own library (the
// public cases and its private ones), made on first use.
func (m *Main) withWritePath(public server.Handlers, r *replica.Replica, cfg serveConfig, log *slog.Logger,
	makeHandlers func(incidentlib.Library) (server.Handlers, error)) server.Handlers {
	wf, ok := r.Feed().(incidentlib.Workflow)
	if !ok {
		return public
	}
	if st, ok := r.Feed().(*pgstore.Store); ok {
		st.SetIDRanges(cfg.idRanges.public, cfg.idRanges.teams)
	}
	write := contribute.New(contribute.Config{
		Workflow: wf,
		Validate: func(content []byte, id string) []incidentlib.Problem {
			return validateDraft(r.Vocabulary(), content, id)
		},
		Logger:        log,
		RateLimit:     cfg.rateLimit,
		RateBurst:     cfg.rateBurst,
		SecureCookies: strings.HasPrefix(cfg.baseURL, "https://"),
	})
	var mu sync.Mutex
	teams := map[string]server.Handlers{}
	forTeam := func(team string) server.Handlers {
		mu.Lock()
		defer mu.Unlock()
		if h, ok := teams[team]; ok {
			return h
		}
		h, err := makeHandlers(r.ForTeam(team))
		if err != nil {
			log.Error("handlers for a team", "team", team, "err", err)
			return public
		}
		teams[team] = h
		return h
	}
	out := server.Handlers{
		Web:  write.ByTeam(public.Web, func(t string) http.Handler { return forTeam(t).Web }),
		API:  write.ByTeam(public.API, func(t string) http.Handler { return forTeam(t).API }),
		MCP:  write.ByTeam(public.MCP, func(t string) http.Handler { return forTeam(t).MCP }),
		More: map[string]http.Handler{},
	}
	for _, p := range contribute.Patterns {
		out.More[p] = write
	}
	return out
}

// validateDraft checks a draft's case file as incidentlib validate does.
func validateDraft(v *incidentlib.Vocabulary, content []byte, id string) []incidentlib.Problem {
	_, ps := corpus.ParseCase(v, id+".yaml", content, time.Now())
	out := make([]incidentlib.Problem, len(ps))
	for i, p := range ps {
		out[i] = incidentlib.Problem{Line: p.Line, Message: p.Message}
	}
	return out
}

// idRanges are the case numbers publication draws from.
type idRanges struct {
	public pgstore.IDRange
	teams  map[string]pgstore.IDRange
}

// parseIDRanges reads --public-ids FROM-TO and --team-ids TEAM=FROM-TO;
// ranges must lie within 1–9999 and may not overlap.
func parseIDRanges(public string, teams []string) (idRanges, error) {
	parse := func(flag, s string) (pgstore.IDRange, error) {
		var r pgstore.IDRange
		if _, err := fmt.Sscanf(s, "%d-%d", &r.From, &r.To); err != nil || r.From < 1 || r.To > 9999 || r.From > r.To {
			return r, fmt.Errorf("%s %q: want FROM-TO, case numbers from 1 to 9999 (e.g. 5000-8999)", flag, s)
		}
		return r, nil
	}
	out := idRanges{teams: map[string]pgstore.IDRange{}}
	var err error
	if out.public, err = parse("--public-ids", public); err != nil {
		return out, err
	}
	seen := []pgstore.IDRange{out.public}
	for _, t := range teams {
		name, rng, ok := strings.Cut(t, "=")
		if !ok || name == "" {
			return out, fmt.Errorf("--team-ids %q: want TEAM=FROM-TO", t)
		}
		r, err := parse("--team-ids", rng)
		if err != nil {
			return out, err
		}
		for _, o := range seen {
			if r.From <= o.To && o.From <= r.To {
				return out, fmt.Errorf("--team-ids %q overlaps another range (%d-%d)", t, o.From, o.To)
			}
		}
		seen = append(seen, r)
		out.teams[name] = r
	}
	return out, nil
}
