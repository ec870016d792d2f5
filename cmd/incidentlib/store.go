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
	"github.com/incidentlib/incidentlib/kubegap"
	"github.com/incidentlib/incidentlib/pgstore"
	"github.com/incidentlib/incidentlib/replica"
	"github.com/incidentlib/incidentlib/server"
	"github.com/incidentlib/incidentlib/vocabulary"
	"github.com/incidentlib/incidentlib/web"
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
		dirs = append(dirs, corpus.Dir{FS: cases.FS, Name: corpus.BuiltinName, Builtin: true})
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
// that cannot be served — it does not parse, or its own id is not the ID
// the store keeps it under (two such files would share an ID and no index
// could hold both) — is left out and reported, never taking the good ones
// down with it. Parsed cases are kept by content hash between builds, so a
// change re-reads only the files it touched (parsing is about 0.4 s of a
// 681-case rebuild).
func buildFromStore(log *slog.Logger) replica.Builder { return newStoreLibraries(log).build }

// storeLibraries makes the replica's libraries from the store's files:
// build makes one from all of them, update applies a change to one in
// place. They share the parsed cases and the vocabulary.
type storeLibraries struct {
	log       *slog.Logger
	mu        sync.Mutex
	vocabHash string
	v         *incidentlib.Vocabulary
	parsed    map[string]parsedCase // by stored ID and content hash
}

type parsedCase struct {
	c      *incidentlib.Case
	reason string // why it cannot be served; "" when it can
}

func newStoreLibraries(log *slog.Logger) *storeLibraries {
	return &storeLibraries{log: log, parsed: map[string]parsedCase{}}
}

// vocabulary loads the store's vocabulary file when it changed. The
// caller holds mu.
func (b *storeLibraries) vocabulary(vocab []byte) error {
	h := pgstore.Hash(vocab)
	if h == b.vocabHash && b.v != nil {
		return nil
	}
	nv, problems := corpus.LoadVocabulary("store:vocabulary.yaml", vocab)
	if nv == nil {
		return fmt.Errorf("the store's vocabulary does not load: %v", problems)
	}
	// Search reads the terms' aliases and the synonyms shipped beside the
	// vocabulary, so a replica answers as the files do.
	if withAliases, ps := corpus.LoadAliases(vocabulary.AliasesFileName, vocabulary.AliasesYAML, nv); withAliases != nil && len(ps) == 0 {
		if sets, sps := corpus.LoadSynonyms(vocabulary.SynonymsFileName, vocabulary.SynonymsYAML); len(sps) == 0 {
			nv = withAliases.WithSynonyms(sets)
			if sigs, gps := corpus.LoadSignatures(vocabulary.SignaturesFileName, vocabulary.SignaturesYAML, nv); len(gps) == 0 {
				nv = nv.WithSignatures(sigs)
			}
		}
	} else {
		b.log.Warn("the shipped aliases do not fit the store's vocabulary; search runs without them", "problems", len(ps))
	}
	b.v, b.vocabHash, b.parsed = nv, h, map[string]parsedCase{} // cases read against the old vocabulary are stale
	return nil
}

// parse reads one stored file, or finds it read already. The caller holds
// mu.
func (b *storeLibraries) parse(f incidentlib.StoredCase, now time.Time) (string, parsedCase) {
	key := f.Hash
	if key == "" {
		key = pgstore.Hash(f.Content)
	}
	// The key holds the stored ID too: the same bytes under another ID
	// are another verdict.
	key = f.ID + " " + key
	if p, ok := b.parsed[key]; ok {
		return key, p
	}
	c, problems := corpus.ParseCase(b.v, "store/"+f.ID+".yaml", f.Content, now)
	for _, pr := range problems {
		b.log.Warn("a case in the store has a problem", "case", f.ID, "problem", pr.String())
	}
	p := parsedCase{c: c}
	switch {
	case c == nil && len(problems) > 0:
		p.reason = "it does not load: " + problems[0].Message
	case c == nil:
		p.reason = "it does not load"
	case c.ID != f.ID:
		p.c, p.reason = nil, fmt.Sprintf("its file's id is %q, not %s", c.ID, f.ID)
	}
	return key, p
}

func (b *storeLibraries) build(ctx context.Context, vocab []byte, files []incidentlib.StoredCase) (replica.Library, []replica.Skipped, error) {
	if vocab == nil {
		return nil, nil, replica.ErrNoLibrary
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.vocabulary(vocab); err != nil {
		return nil, nil, err
	}
	now := time.Now()
	next := make(map[string]parsedCase, len(files))
	loaded := make([]*incidentlib.Case, 0, len(files))
	var skipped []replica.Skipped
	for _, f := range files {
		key, p := b.parse(f, now)
		next[key] = p
		if p.c != nil {
			loaded = append(loaded, p.c)
		} else {
			skipped = append(skipped, replica.Skipped{ID: f.ID, Seq: f.Seq, Reason: p.reason})
		}
	}
	// Keep what other libraries (a team's) read too: they share the cache.
	for k, p := range next {
		b.parsed[k] = p
	}
	if len(b.parsed) > 4*len(files)+1000 {
		b.parsed = next
	}
	lib, err := engine.Open(ctx, b.v, loaded, engine.Options{})
	if err != nil {
		return nil, nil, err
	}
	return lib, skipped, nil
}

// update applies a change to an engine in place (engine.Apply): only the
// changed files are read and indexed. A changed file that cannot be
// served is left out, and its earlier version taken out.
func (b *storeLibraries) update(ctx context.Context, old replica.Library, vocab []byte, changed []incidentlib.StoredCase, removed []string) (replica.Library, []replica.Skipped, error) {
	eng, ok := old.(*engine.Engine)
	if !ok {
		return nil, nil, fmt.Errorf("library %T cannot be changed in place", old)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if pgstore.Hash(vocab) != b.vocabHash {
		return nil, nil, errors.New("the vocabulary changed: rebuild")
	}
	now := time.Now()
	var good []*incidentlib.Case
	var skipped []replica.Skipped
	removed = append([]string{}, removed...)
	for _, f := range changed {
		key, p := b.parse(f, now)
		b.parsed[key] = p
		if p.c != nil {
			good = append(good, p.c)
		} else {
			skipped = append(skipped, replica.Skipped{ID: f.ID, Seq: f.Seq, Reason: p.reason})
			removed = append(removed, f.ID)
		}
	}
	lib, err := eng.Apply(ctx, good, removed)
	if err != nil {
		return nil, nil, err
	}
	return lib, skipped, nil
}

// openReplica serves the library from the store: built from its snapshot,
// then kept current by a goroutine that follows the change feed until ctx
// ends.
func (m *Main) openReplica(ctx context.Context, cmd, url string, log *slog.Logger) (*replica.Replica, func(), int) {
	// serve waits for a database that does not answer at start (it
	// listens meanwhile, and /readyz says it is starting), so a replica
	// started during a database outage comes up when the database does
	// instead of crash-looping; other commands fail at once.
	wait := cmd == "serve"
	var st *pgstore.Store
	var r *replica.Replica
	backoff := time.Second
	for {
		var err error
		if st == nil {
			st, err = pgstore.Open(ctx, url)
			if err != nil {
				fmt.Fprintf(m.Stderr, "incidentlib %s: --store: %v\n", cmd, err)
				return nil, nil, exitUsage
			}
		}
		start := time.Now()
		var applied []int
		applied, err = st.Migrate(ctx)
		if err == nil {
			if len(applied) > 0 {
				log.Info("store migrated", "versions", applied)
			}
			libs := newStoreLibraries(log)
			r, err = replica.Open(ctx, st, libs.build, log)
			if err == nil {
				r.SetUpdater(libs.update)
			}
		}
		if err == nil {
			log.Info("library loaded from the store", "cases", r.Status().Cases, "seq", r.Status().Seq, "took", time.Since(start).Round(time.Millisecond))
			break
		}
		if wait && errors.Is(err, pgstore.ErrUnavailable) && ctx.Err() == nil {
			log.Warn("the store does not answer; the library loads when it does", "retry_in", backoff, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 15*time.Second)
			continue
		}
		st.Close()
		switch {
		case errors.Is(err, replica.ErrNoLibrary):
			fmt.Fprintf(m.Stderr, "incidentlib %s: %v\n", cmd, err)
			return nil, nil, exitUsage
		case ctx.Err() != nil:
			return nil, nil, exitOK
		}
		fmt.Fprintf(m.Stderr, "incidentlib %s: loading the library from the store: %v\n", cmd, err)
		return nil, nil, exitProblems
	}
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { r.Follow(fctx); close(done) }()
	return r, func() { cancel(); <-done; r.Close(); st.Close() }, exitOK
}

// withWritePath adds the write path of a shared library to the handlers,
// and routes each signed-in team to handlers over its own library (the
// public cases and its private ones), made on first use.
func (m *Main) withWritePath(public server.Handlers, r *replica.Replica, cfg serveConfig, log *slog.Logger,
	makeHandlers func(incidentlib.Library, bool) (server.Handlers, error)) server.Handlers {
	wf, ok := r.Feed().(incidentlib.Workflow)
	if !ok {
		return public
	}
	if st, ok := r.Feed().(*pgstore.Store); ok {
		st.SetIDRanges(cfg.idRanges.public, cfg.idRanges.teams)
		st.SetPublishCheck(publishCheck(r.Vocabulary))
	}
	frame, err := web.NewFrame(web.Config{BaseURL: cfg.baseURL, Logger: log, Contribute: true, Checks: kubegap.Checks()})
	if err != nil {
		log.Error("contributor pages", "err", err)
		return public
	}
	write := contribute.New(contribute.Config{
		Workflow: wf,
		Validate: func(content []byte, id string) []incidentlib.Problem {
			return validateDraft(r.Vocabulary(), content, id)
		},
		Vocabulary: r.Vocabulary,
		Parse: func(content []byte, id string) (*incidentlib.Case, []incidentlib.Problem) {
			return corpus.ParseDraft(r.Vocabulary(), content, id, time.Now())
		},
		Site:          frame,
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
		h, err := makeHandlers(r.ForTeam(team), true)
		if err != nil {
			log.Error("handlers for a team", "team", team, "err", err)
			return public
		}
		teams[team] = h
		return h
	}
	out := server.Handlers{
		Web:      write.ByTeam(public.Web, func(t string) http.Handler { return forTeam(t).Web }),
		API:      write.ByTeam(public.API, func(t string) http.Handler { return forTeam(t).API }),
		MCP:      write.ByTeam(public.MCP, func(t string) http.Handler { return forTeam(t).MCP }),
		More:     map[string]http.Handler{},
		WebError: public.WebError,
	}
	for _, p := range contribute.Patterns {
		out.More[p] = write
	}
	return out
}

// validateDraft checks a draft's case file as incidentlib validate does,
// as it will be published: with id given on its parsed document (never on
// a line that merely starts with "id:"). Problems are reported at the
// lines the author wrote.
func validateDraft(v *incidentlib.Vocabulary, content []byte, id string) []incidentlib.Problem {
	_, ps := corpus.ParseDraft(v, content, id, time.Now())
	return ps
}

// publishCheck is what the store runs on a draft as it publishes it, in
// the transaction that writes it: the ID given on the parsed document, and
// the file that results validated under that ID, so no draft can publish a
// case that loads under another ID than the one it got.
func publishCheck(v func() *incidentlib.Vocabulary) func(content []byte, id string) ([]byte, []incidentlib.Problem) {
	return func(content []byte, id string) ([]byte, []incidentlib.Problem) {
		withID, _, err := corpus.SetCaseID(content, id)
		if err != nil {
			return nil, []incidentlib.Problem{idProblem(err)}
		}
		_, ps := corpus.ParseCase(v(), id+".yaml", withID, time.Now())
		if len(ps) > 0 {
			out := make([]incidentlib.Problem, len(ps))
			for i, p := range ps {
				out[i] = incidentlib.Problem{Line: p.Line, Message: p.Message}
			}
			return nil, out
		}
		return withID, nil
	}
}

// idProblem is a case file that cannot take an ID, as a problem.
func idProblem(err error) incidentlib.Problem {
	var e *corpus.IDError
	if errors.As(err, &e) {
		return incidentlib.Problem{Line: e.Line, Message: e.Message}
	}
	return incidentlib.Problem{Message: err.Error()}
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
