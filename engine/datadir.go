package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// The data directory is shared: `incidentlib serve` and `incidentlib mcp`
// default to the same one, a container may mount it read-only, and a
// killed process leaves what it was doing behind. The rules below keep
// every start safe:
//
//   - A finished index is never written again. Every process opens it
//     read-only, which takes a shared lock, so any number of processes
//     serve from one directory at once.
//   - Lock waits are bounded (lockTimeout); a lock still held after that
//     (an older binary holding it for writing) makes this process say so
//     and build its index in memory instead.
//   - An index is built in a directory of its own and renamed into place
//     whole, with a manifest of its files' sizes and checksums inside it.
//     An index whose files do not match its manifest, or that the index
//     library cannot open (even by panicking), is rebuilt, never served.
//   - Build directories of processes that no longer run are removed.
//   - Indexes are named by a hash of the corpus, so `serve --cases DIR`
//     and a plain `mcp` each have their own. Another corpus's index is
//     removed only when no process holds it open and none has opened it
//     for staleIndexAge.
//   - The directory is a cache: when the build cannot be written there (a
//     full disk), the index is built in memory and served, with a warning.

// manifestName is the file, inside an index directory, listing the size
// and CRC-32C of every other file, written when the build finished.
const manifestName = "incidentlib-manifest.json"

// lockTimeout bounds the wait for the index's lock file.
const lockTimeout = 2 * time.Second

// staleBuildAge: a build directory this old is a leftover even when its
// process number is in use again (by another process, after a reboot).
const staleBuildAge = time.Hour

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type manifestFile struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
}

type manifest struct {
	Version string         `json:"version"`
	Files   []manifestFile `json:"files"`
}

// writeManifest records the files of the finished index at dir.
func writeManifest(dir string) error {
	var m manifest
	m.Version = indexVersion
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if rel == manifestName {
			return nil
		}
		size, sum, err := checksum(path)
		if err != nil {
			return err
		}
		m.Files = append(m.Files, manifestFile{Name: filepath.ToSlash(rel), Size: size, CRC32C: sum})
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Name < m.Files[j].Name })
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, manifestName))
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// verifyManifest checks every file of the index at dir against its
// manifest. It reads each file once; CRC-32C runs at memory speed on
// current processors, so even a large index is checked in well under a
// second per gigabyte.
func verifyManifest(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return fmt.Errorf("no manifest: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("manifest unreadable: %w", err)
	}
	if m.Version != indexVersion || len(m.Files) == 0 {
		return errors.New("manifest of another index version")
	}
	for _, f := range m.Files {
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		if !filepath.IsLocal(f.Name) {
			return fmt.Errorf("manifest names %q outside the index", f.Name)
		}
		size, sum, err := checksum(path)
		if err != nil {
			return err
		}
		switch {
		case size != f.Size:
			return fmt.Errorf("%s does not match the manifest: %d bytes, the manifest says %d", f.Name, size, f.Size)
		case sum != f.CRC32C:
			return fmt.Errorf("%s does not match the manifest: its checksum (CRC-32C %08x) differs from the manifest's (%08x) at the same size", f.Name, sum, f.CRC32C)
		}
	}
	return nil
}

func checksum(path string) (int64, uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	return n, h.Sum32(), err
}

// openReadOnly opens a finished index without writing to it, waiting at
// most lockTimeout for its lock. A panic inside the index library (a
// corrupt file can make it index past a slice) becomes an error.
func openReadOnly(path string, wantDocs int) (idx bleve.Index, err error) {
	defer func() {
		if v := recover(); v != nil {
			if idx != nil {
				func() { defer func() { recover() }(); idx.Close() }()
			}
			idx = nil
			err = fmt.Errorf("index library panicked opening the index: %v\n%s", v, debug.Stack())
		}
	}()
	idx, err = bleve.OpenUsing(path, map[string]any{
		"read_only":    true,
		"bolt_timeout": lockTimeout.String(),
	})
	if err != nil {
		return nil, err
	}
	n, err := idx.DocCount()
	if err == nil && n != uint64(wantDocs) {
		err = fmt.Errorf("index holds %d documents, the corpus %d", n, wantDocs)
	}
	if err != nil {
		idx.Close()
		return nil, err
	}
	return idx, nil
}

// isLockTimeout reports whether err is the lock wait running out.
func isLockTimeout(err error) bool {
	return err != nil && strings.Contains(err.Error(), "timeout")
}

// buildDirPattern names a build directory after the process that owns it, so
// a later start can tell a leftover from a build in progress.
func buildDirPattern(name string) string {
	return name + ".building-p" + strconv.Itoa(os.Getpid()) + "-"
}

// removeLeftoverBuilds deletes build directories whose process is gone
// (or that are older than staleBuildAge). It reports what it removed.
func removeLeftoverBuilds(dataDir string) []string {
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		i := strings.Index(e.Name(), ".building-")
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "index-") || i < 0 {
			continue
		}
		// "p<pid>-<random>"; anything else is from an older build.
		rest := e.Name()[i+len(".building-"):]
		pid := 0
		if p, ok := strings.CutPrefix(rest, "p"); ok {
			pid, _ = strconv.Atoi(strings.SplitN(p, "-", 2)[0])
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if pid > 0 && pid != os.Getpid() && processAlive(pid) && time.Since(info.ModTime()) < staleBuildAge {
			continue
		}
		if pid == os.Getpid() {
			continue
		}
		if os.RemoveAll(filepath.Join(dataDir, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}

// processAlive reports whether a process with this number exists.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// safeDocNumbers is docNumbers with a panic inside the index library
// turned into an error.
func safeDocNumbers(e *Engine, byID map[string]int) (out []int32, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, fmt.Errorf("index library panicked reading the index: %v", v)
		}
	}()
	r, err := e.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return docNumbersIn(r, byID)
}

// diskFault, set only by tests, makes a stage of the build on disk fail as
// a full or failing disk would.
var diskFault func(stage string) error

func faultAt(stage string) error {
	if diskFault != nil {
		return diskFault(stage)
	}
	return nil
}

// shortErr is an error's text cut to a length fit for a status line.
func shortErr(err error) string {
	s := err.Error()
	if errors.Is(err, syscall.ENOSPC) {
		return "no space left on device"
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// staleIndexAge: an index of another corpus that no process has opened for
// this long is removed when a new index is built. Indexes of different
// corpora (serve --cases DIR, a plain mcp) share one directory, so an
// index is never removed merely for being another corpus's, nor while a
// process holds it open.
const staleIndexAge = 7 * 24 * time.Hour

// usedMark names the file beside an index whose modification time says
// when the index was last opened (beside it, not in it: the index's own
// files are exactly those of its manifest).
func usedMark(dir string) string {
	return filepath.Join(filepath.Dir(dir), "last-used-"+filepath.Base(dir))
}

// markUsed records that the index at dir was opened now. In a read-only
// directory it fails, which only makes the index look older.
func markUsed(dir string) {
	p := usedMark(dir)
	now := time.Now()
	if os.Chtimes(p, now, now) != nil {
		if f, err := os.Create(p); err == nil {
			f.Close()
		}
	}
}

// lastUsed is when the index at dir was last opened (its manifest's time
// when it never was marked).
func lastUsed(dir string) time.Time {
	for _, p := range []string{usedMark(dir), filepath.Join(dir, manifestName)} {
		if info, err := os.Stat(p); err == nil {
			return info.ModTime()
		}
	}
	info, err := os.Stat(dir)
	if err != nil {
		return time.Time{}
	}
	return info.ModTime()
}

// removeStaleIndexes deletes the indexes of other corpora that no process
// holds open and none has opened for staleIndexAge.
func removeStaleIndexes(dataDir, keep string, log interface{ Info(string, ...any) }) {
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "index-") || e.Name() == keep || strings.Contains(e.Name(), ".building-") {
			continue
		}
		dir := filepath.Join(dataDir, e.Name())
		if time.Since(lastUsed(dir)) < staleIndexAge || inUse(dir) {
			continue
		}
		if os.RemoveAll(dir) == nil {
			os.Remove(usedMark(dir))
			log.Info("removed an index no process has used for a week", "index", dir)
		}
	}
}
