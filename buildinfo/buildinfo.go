// Package buildinfo says what a binary was built from: the module version
// (a tag or pseudo-version when installed with go install, "(devel)" from a
// checkout), the commit when it is known, and the corpus compiled into it.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/incidentlib/incidentlib"
)

// Info is what `incidentlib version` and `kubegap version` print.
type Info struct {
	Program   string // "kubegap"
	Module    string // the main module's path
	Version   string // "v1.2.0", "v0.0.0-20261202043000-f957e09c1a2b" or "(devel)"
	Commit    string // the VCS revision, or the one a pseudo-version names; "" when unknown
	Modified  bool   // the checkout had uncommitted changes
	GoVersion string
	Platform  string // GOOS/GOARCH

	Cases  int    // cases in the shipped corpus
	Newest string // start date of the newest shipped case, at the precision its source gives
}

// Read describes the running binary and the corpus cs compiled into it.
func Read(program string, cs []*incidentlib.Case) Info {
	info := Info{Program: program, Version: "(devel)", GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.fromBuild(bi)
	}
	info.Cases, info.Newest = newest(cs)
	return info
}

// Version is the module version alone, for protocols that report one
// (MCP's server info).
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func (info *Info) fromBuild(bi *debug.BuildInfo) {
	info.Module = bi.Main.Path
	if bi.Main.Version != "" {
		info.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	if info.Commit == "" {
		// go install module@version builds from the module zip, which
		// carries no VCS stamp; a pseudo-version still names its commit.
		info.Commit = pseudoVersionRev(info.Version)
	}
}

// pseudoVersionRev returns the commit prefix a pseudo-version ends with
// (vX.Y.Z-yyyymmddhhmmss-abcdefabcdef, or vX.Y.(Z+1)-0.yyyymmddhhmmss-abcdefabcdef),
// or "" for a release version.
func pseudoVersionRev(v string) string {
	v, _, _ = strings.Cut(v, "+") // +incompatible, +dirty
	i := strings.LastIndexByte(v, '-')
	if i < 0 {
		return ""
	}
	rev, stamp := v[i+1:], v[:i]
	j := strings.LastIndexAny(stamp, "-.")
	if len(rev) != 12 || j < 0 || len(stamp)-j-1 != 14 || !isDigits(stamp[j+1:]) || !isHex(rev) {
		return ""
	}
	return rev
}

func isDigits(s string) bool { return strings.Trim(s, "0123456789") == "" }
func isHex(s string) bool    { return strings.Trim(s, "0123456789abcdef") == "" }

// newest counts the cases and finds the latest start date among them.
func newest(cs []*incidentlib.Case) (int, string) {
	var latest incidentlib.Timestamp
	var latestDay time.Time
	for _, c := range cs {
		day := c.Timeline.Date().Truncate(incidentlib.PrecisionDay)
		if latest.IsZero() || day.After(latestDay) {
			latest, latestDay = c.Timeline.Date(), day
		}
	}
	if latest.IsZero() {
		return len(cs), ""
	}
	if latest.Exact() {
		return len(cs), latestDay.Format(time.DateOnly)
	}
	return len(cs), latest.String()
}

// String is the text of the version command.
func (info Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", info.Program, info.Version)
	if info.Module != "" {
		fmt.Fprintf(&b, "module:  %s\n", info.Module)
	}
	commit := info.Commit
	switch {
	case commit == "":
		commit = "not recorded in this build"
	case info.Modified:
		commit += " (with uncommitted changes)"
	}
	fmt.Fprintf(&b, "commit:  %s\n", commit)
	fmt.Fprintf(&b, "go:      %s %s\n", info.GoVersion, info.Platform)
	if info.Newest != "" {
		fmt.Fprintf(&b, "corpus:  %d cases, the newest started %s\n", info.Cases, info.Newest)
	} else {
		fmt.Fprintf(&b, "corpus:  %d cases\n", info.Cases)
	}
	return b.String()
}
