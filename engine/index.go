package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/incidentlib/incidentlib"
)

// indexVersion changes whenever the mapping or the document shape changes,
// so that an index built by an older binary is never reused.
const indexVersion = "incidentlib-index-v2"

// Indexed text fields, with the boost each gets at query time: title and
// company above what people saw (the error messages and alerts a case
// quotes: few words, each one an engineer pasted) above summary above the
// rest.
var textFields = []struct {
	name  string
	boost float64
}{
	{"title", 4},
	{"company", 4},
	{"quoted", 3},
	{"summary", 2},
	{"body", 1},
}

// indexDoc is what Bleve indexes for a case. Nothing is stored: the engine
// keeps the cases in memory and makes its own snippets.
type indexDoc struct {
	Title   string `json:"title"`
	Company string `json:"company"`
	Quoted  string `json:"quoted"`
	Summary string `json:"summary"`
	Body    string `json:"body"`
}

func docFor(c *incidentlib.Case) indexDoc {
	var b strings.Builder
	for _, s := range bodyTexts(c) {
		b.WriteString(s.text)
		b.WriteString("\n")
	}
	return indexDoc{Title: c.Title, Company: c.Company, Quoted: quotedText(c), Summary: c.Summary, Body: b.String()}
}

// quotedText is what people saw, one quote a line.
func quotedText(c *incidentlib.Case) string {
	var b strings.Builder
	for _, q := range c.Quotes {
		b.WriteString(q.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// fieldText is one piece of a case's text, named by the case field it
// comes from.
type fieldText struct {
	field string
	text  string
}

// bodyTexts lists the text searched under "body", in the order snippets
// prefer them.
func bodyTexts(c *incidentlib.Case) []fieldText {
	out := []fieldText{
		{"symptoms", c.Symptoms}, {"trigger", c.Trigger}, {"detection", c.Detection},
		{"lessons", c.Lessons}, {"scope", c.Scope},
	}
	for _, r := range c.Remediation {
		out = append(out, fieldText{"remediation", r})
	}
	for _, a := range c.ActionItems {
		out = append(out, fieldText{"action_items", a.Text})
	}
	return out
}

func newMapping() mapping.IndexMapping {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.DefaultAnalyzer = en.AnalyzerName
	dm := bleve.NewDocumentStaticMapping()
	for _, f := range textFields {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = en.AnalyzerName
		fm.Store = false
		fm.IncludeInAll = false
		fm.DocValues = false
		fm.IncludeTermVectors = true // phrase queries need positions
		dm.AddFieldMappingsAt(f.name, fm)
	}
	im.DefaultMapping = dm
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false
	return im
}

// corpusHash identifies a corpus's indexed content: the same hash means an
// existing index can be reused. It hashes the fields the index is built
// from, each with its length, without building the documents themselves.
func corpusHash(cases []*incidentlib.Case) string {
	h := sha256.New()
	var buf []byte // reused: writing a string to a hash would copy it anew each time
	put := func(s string) {
		buf = binary.BigEndian.AppendUint64(buf[:0], uint64(len(s)))
		buf = append(buf, s...)
		h.Write(buf)
	}
	put(indexVersion)
	for _, c := range cases {
		put(c.ID)
		put(c.Title)
		put(c.Company)
		put(c.Summary)
		for _, q := range c.Quotes {
			put(q.Text)
		}
		for _, f := range bodyTexts(c) {
			put(f.text)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// openIndex opens the index for cases under dataDir, building it when no
// sound index for this exact content exists. An empty dataDir builds in
// memory. Whatever the directory holds, it returns an index or a build
// error, never a wait without end: see datadir.go for the rules. where
// says what the index is (a path, "read-only", or memory and why).
func openIndex(ctx context.Context, cases []*incidentlib.Case, dataDir string, log *slog.Logger) (idx bleve.Index, reused bool, where string, err error) {
	inMemory := func(why string) (bleve.Index, bool, string, error) {
		idx, err := bleve.NewUsing("", newMapping(), scorch.Name, scorch.Name, nil)
		if err != nil {
			return nil, false, "", err
		}
		return idx, false, "memory (" + why + ")", fillIndex(ctx, idx, cases)
	}
	if dataDir == "" {
		return inMemory("no data directory")
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, false, "", fmt.Errorf("data directory: %w", err)
	}
	if removed := removeLeftoverBuilds(dataDir); len(removed) > 0 {
		log.Warn("removed leftovers of index builds that did not finish", "dir", dataDir, "removed", removed)
	}
	name := "index-" + corpusHash(cases)
	final := filepath.Join(dataDir, name)
	if _, err := os.Stat(final); err == nil {
		if err := verifyManifest(final); err != nil {
			log.Warn("index on disk is damaged or incomplete; rebuilding it", "index", final, "err", err)
		} else {
			idx, err := openReadOnly(final, len(cases))
			switch {
			case err == nil:
				markUsed(final)
				return idx, true, final, nil
			case isLockTimeout(err):
				log.Warn("another process holds the index lock for writing (an older incidentlib?); building the index in memory instead",
					"lock", filepath.Join(final, "store", "root.bolt"), "waited", lockTimeout)
				return inMemory("index locked by another process")
			default:
				log.Warn("index on disk cannot be opened; rebuilding it", "index", final, "err", err)
			}
		}
	}
	// Build beside the final name and rename, so a crash mid-build never
	// leaves a half index that a later start would take for whole.
	tmp, err := os.MkdirTemp(dataDir, buildDirPattern(name))
	if err != nil {
		log.Warn("data directory is not writable; building the index in memory", "dir", dataDir, "err", err)
		return inMemory("data directory not writable")
	}
	defer os.RemoveAll(tmp)
	// The data directory is a cache: a build that cannot be written there
	// (a full disk, a failing one) is built in memory instead, and served.
	toMemory := func(err error) (bleve.Index, bool, string, error) {
		if ctx.Err() != nil {
			return nil, false, "", ctx.Err()
		}
		log.Warn("cannot write the index to the data directory (full disk?); building it in memory", "dir", dataDir, "err", err)
		os.RemoveAll(tmp)
		return inMemory("data directory not writable: " + shortErr(err))
	}
	path := filepath.Join(tmp, "index")
	if err := faultAt("build"); err != nil {
		return toMemory(err)
	}
	idx, err = bleve.New(path, newMapping())
	if err != nil {
		return toMemory(err)
	}
	if err := fillIndex(ctx, idx, cases); err != nil {
		idx.Close()
		return toMemory(err)
	}
	if err := idx.Close(); err != nil {
		return toMemory(err)
	}
	if err := faultAt("manifest"); err != nil {
		return toMemory(err)
	}
	if err := writeManifest(path); err != nil {
		return toMemory(err)
	}
	// A damaged index in the way is moved aside first: another process
	// may still have its files open, which is safe once they are unlinked.
	if _, err := os.Stat(final); err == nil {
		old := tmp + "-old"
		if err := os.Rename(final, old); err == nil {
			os.RemoveAll(old)
		}
	}
	if err := os.Rename(path, final); err != nil {
		// Another process may have put the same index in place first.
		if idx, oerr := openReadOnly(final, len(cases)); oerr == nil && verifyManifest(final) == nil {
			return idx, true, final, nil
		}
		return toMemory(err)
	}
	removeStaleIndexes(dataDir, name, log)
	idx, err = openReadOnly(final, len(cases))
	if err != nil {
		return nil, false, "", err
	}
	markUsed(final)
	return idx, false, final, nil
}

func fillIndex(ctx context.Context, idx bleve.Index, cases []*incidentlib.Case) error {
	const batchSize = 2000
	b := idx.NewBatch()
	for i, c := range cases {
		if err := b.Index(c.ID, docFor(c)); err != nil {
			return err
		}
		if b.Size() >= batchSize || i == len(cases)-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := idx.Batch(b); err != nil {
				return err
			}
			b.Reset()
		}
	}
	return nil
}

// docNumbersIn maps the internal document numbers of one snapshot of the
// index to positions in cases. An engine answers from the snapshot it was
// opened (or Applied) on, so the numbers hold for its life.
func docNumbersIn(r index.IndexReader, byID map[string]int) ([]int32, error) {
	all, err := r.DocIDReaderAll()
	if err != nil {
		return nil, err
	}
	defer all.Close()
	var out []int32
	for {
		id, err := all.Next()
		if err != nil {
			return nil, err
		}
		if id == nil {
			break
		}
		ext, err := r.ExternalID(id)
		if err != nil {
			return nil, err
		}
		pos, ok := byID[ext]
		if !ok {
			return nil, fmt.Errorf("index holds unknown document %q", ext)
		}
		n, err := internalNumber(id)
		if err != nil {
			return nil, err
		}
		for uint64(len(out)) <= n {
			out = append(out, -1)
		}
		out[n] = int32(pos)
	}
	return out, nil
}

func internalNumber(id index.IndexInternalID) (uint64, error) {
	if len(id) != 8 {
		return 0, errors.New("unexpected internal document id")
	}
	return binary.BigEndian.Uint64(id), nil
}
