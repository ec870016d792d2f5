package release

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// modulePath is the path go.mod declares; the test reads it back.
const modulePath = "github.com/incidentlib/incidentlib"

// repoRoot is the module's root, one directory up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(mod, []byte("module "+modulePath+"\n")) {
		t.Fatalf("go.mod does not declare module %s", modulePath)
	}
	return root
}

// printed is one shell command as a page prints it.
type printed struct {
	where string // file:line
	line  string
}

var (
	fence   = regexp.MustCompile("^\\s*```(\\w*)")
	codeTag = regexp.MustCompile(`<code>([^<]*)</code>`)
	yamlRun = regexp.MustCompile(`^\s*-?\s*run:\s*(.+)$`)
)

// printedCommands extracts the commands a reader would copy: lines of the
// shell code blocks of Markdown files (```sh, ```bash or unlabelled), the
// <code> elements of the golden web pages, and the run: steps of the CI
// recipes, keeping those that start with one of the project's commands.
func printedCommands(t *testing.T, root string) []printed {
	t.Helper()
	var files []string
	for _, g := range []string{"README.md", "docs/*.md", "deploy/*/*.md", "deploy/*/*/*.md", "web/testdata/*.golden.html", "deploy/github-actions/*.yml"} {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	var out []printed
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		inBlock, inShell, pending, pendingLine := false, false, "", 0
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			switch {
			case strings.HasSuffix(f, ".html"):
				for _, m := range codeTag.FindAllStringSubmatch(line, -1) {
					out = append(out, printed{fmt.Sprintf("%s:%d", rel, n), html.UnescapeString(m[1])})
				}
			case strings.HasSuffix(f, ".yml"):
				if m := yamlRun.FindStringSubmatch(line); m != nil {
					out = append(out, printed{fmt.Sprintf("%s:%d", rel, n), strings.Trim(m[1], `"'`)})
				}
			default:
				if m := fence.FindStringSubmatch(line); m != nil {
					if inBlock {
						inBlock, inShell = false, false
					} else {
						inBlock = true
						inShell = m[1] == "sh" || m[1] == "bash" || m[1] == "console"
					}
					continue
				}
				if !inShell {
					continue
				}
				l := strings.TrimPrefix(strings.TrimSpace(line), "$ ")
				if strings.HasSuffix(l, `\`) {
					if pending == "" {
						pendingLine = n
					}
					pending += strings.TrimSuffix(l, `\`) + " "
					continue
				}
				if pending != "" {
					l, n = pending+l, pendingLine
					pending = ""
				}
				out = append(out, printed{fmt.Sprintf("%s:%d", rel, n), l})
			}
		}
	}
	var keep []printed
	for _, p := range out {
		for _, seg := range segments(p.line) {
			if ours(seg) {
				keep = append(keep, p)
				break
			}
		}
	}
	return keep
}

// ours reports whether a command is one of the project's.
func ours(w []string) bool {
	if len(w) == 0 {
		return false
	}
	switch w[0] {
	case "incidentlib", "kubegap", "kubectl-kubegap":
		return true
	case "kubectl":
		return len(w) > 1 && w[1] == "kubegap"
	case "go":
		if len(w) > 2 && (w[1] == "run" || w[1] == "install" || w[1] == "build") {
			for _, a := range w[2:] {
				if strings.HasPrefix(a, "./cmd/") || strings.HasPrefix(a, modulePath+"/") || strings.Contains(a, "cmd/incidentlib") || strings.Contains(a, "cmd/kubegap") {
					return true
				}
			}
		}
	case "claude", "codex":
		for i, a := range w {
			if a == "--" {
				return ours(w[i+1:])
			}
		}
	}
	return false
}

// segments splits a shell line into its simple commands (at |, ||, &&, ;)
// as words, quotes removed, redirections and comments dropped.
func segments(line string) [][]string {
	var (
		segs  [][]string
		words []string
		cur   strings.Builder
		inW   bool
		quote rune
	)
	flushWord := func() {
		if inW {
			words = append(words, cur.String())
		}
		cur.Reset()
		inW = false
	}
	flushSeg := func() {
		flushWord()
		// Drop redirections: > f, 2> f, < f, >> f, 2>&1.
		var ws []string
		for i := 0; i < len(words); i++ {
			w := words[i]
			if strings.HasPrefix(w, ">") || strings.HasPrefix(w, "<") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "1>") {
				if w == ">" || w == "<" || w == ">>" || w == "2>" || w == "1>" {
					i++
				}
				continue
			}
			ws = append(ws, w)
		}
		if len(ws) > 0 {
			segs = append(segs, ws)
		}
		words = nil
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inW = r, true
		case r == '#' && !inW:
			flushSeg()
			return segs
		case r == '|' || r == ';' || r == '&':
			flushSeg()
			if i+1 < len(rs) && (rs[i+1] == '|' || rs[i+1] == '&') {
				i++
			}
		case r == ' ' || r == '\t':
			flushWord()
		default:
			cur.WriteRune(r)
			inW = true
		}
	}
	flushSeg()
	return segs
}

// builtBinaries builds incidentlib and kubegap once for the tests.
var builtBinaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "incidentlib-release-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/incidentlib", "./cmd/kubegap")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return dir, nil
})

// check says what is wrong with one printed command, or "".
func check(root, bin string, w []string) string {
	switch w[0] {
	case "claude", "codex":
		for i, a := range w {
			if a == "--" {
				return check(root, bin, w[i+1:])
			}
		}
	case "kubectl":
		return checkArgs(bin, "kubegap", w[2:])
	case "kubectl-kubegap":
		return checkArgs(bin, "kubegap", w[1:])
	case "incidentlib", "kubegap":
		return checkArgs(bin, w[0], w[1:])
	case "go":
		return checkGo(root, bin, w)
	}
	return ""
}

// checkGo checks go run, go install and go build lines: the package exists
// in this module (or, with -C, in the module of that directory), a path
// outside a checkout names a version, and the arguments after the package
// are ones the command accepts.
func checkGo(root, bin string, w []string) string {
	verb, args := w[1], w[2:]
	dir := root
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-C" {
			dir = filepath.Join(root, args[i+1])
		}
	}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if (args[0] == "-o" || args[0] == "-C") && len(args) > 1 {
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return "names no package"
	}
	if verb == "install" && len(args) > 1 {
		// go install a@v b@v: every argument is a package.
		for _, a := range args[1:] {
			if msg := checkGo(root, bin, []string{"go", "install", a}); msg != "" {
				return msg
			}
		}
	}
	pkg, rest := args[0], args[1:]
	var rel string
	switch {
	case strings.HasPrefix(pkg, "./"):
		rel = strings.TrimPrefix(pkg, "./")
	case strings.HasPrefix(pkg, modulePath+"/"):
		p, version, ok := strings.Cut(pkg, "@")
		if !ok && verb != "build" {
			return fmt.Sprintf("%s: go %s outside a checkout needs a version (@latest or @vX.Y.Z)", pkg, verb)
		}
		if ok && version != "latest" && !regexp.MustCompile(`^v\d+\.\d+\.\d+`).MatchString(version) {
			return fmt.Sprintf("%s: version %q is not @latest or a semantic version", pkg, version)
		}
		rel = strings.TrimPrefix(p, modulePath+"/")
	default:
		return fmt.Sprintf("%s: not a package of module %s", pkg, modulePath)
	}
	rel = strings.TrimSuffix(rel, "/...")
	if st, err := os.Stat(filepath.Join(dir, rel)); err != nil || !st.IsDir() {
		return fmt.Sprintf("%s: no such package directory %s", pkg, filepath.Join(dir, rel))
	}
	if dir != root || verb != "run" {
		return "" // another module's command, or an install: the package is enough
	}
	name := filepath.Base(rel)
	if name != "incidentlib" && name != "kubegap" {
		return ""
	}
	return checkArgs(bin, name, rest)
}

var helpCache sync.Map // "bin sub" → help text

// checkArgs checks that the command's subcommand exists and that every
// flag it is given is one that subcommand lists in its -h output.
func checkArgs(bin, prog string, args []string) string {
	if len(args) == 0 {
		return ""
	}
	sub := []string{args[0]}
	if strings.HasPrefix(args[0], "-") {
		if args[0] == "-h" || args[0] == "--help" {
			return ""
		}
		return fmt.Sprintf("%s %s: a flag where a command belongs", prog, args[0])
	}
	// Commands with commands of their own.
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") && (args[0] == "user" || args[0] == "token" || args[0] == "bench") {
		if strings.Contains(args[1], "|") {
			args[1], _, _ = strings.Cut(args[1], "|")
		}
		sub = append(sub, args[1])
	}
	key := prog + " " + strings.Join(sub, " ")
	help, ok := helpCache.Load(key)
	if !ok {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, prog), append(append([]string{}, sub...), "-h")...)
		cmd.Dir = os.TempDir()
		out, _ := cmd.CombinedOutput()
		if ctx.Err() != nil {
			return fmt.Sprintf("%s -h did not return", key)
		}
		help = string(out)
		helpCache.Store(key, help)
	}
	text := help.(string)
	if strings.Contains(text, "unknown command") || !strings.Contains(strings.ToLower(text), "usage") {
		return fmt.Sprintf("%s: no such command (its -h says: %.200s)", key, text)
	}
	for _, a := range args[len(sub):] {
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			continue
		}
		if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(name) + `\b`).MatchString(text) {
			return fmt.Sprintf("%s: no flag -%s (see %s -h)", key, name, key)
		}
	}
	return ""
}

// TestPrintedCommands runs every command the pages print through the built
// binaries' own flag parsing, so a renamed flag, a removed command or a
// module path that cannot be installed fails here, not for a reader.
func TestPrintedCommands(t *testing.T) {
	root := repoRoot(t)
	bin, err := builtBinaries()
	if err != nil {
		t.Fatal(err)
	}
	cmds := printedCommands(t, root)
	if len(cmds) < 20 {
		t.Fatalf("found only %d printed commands: is the extraction broken?", len(cmds))
	}
	checked := 0
	for _, p := range cmds {
		for _, seg := range segments(p.line) {
			if !ours(seg) {
				continue
			}
			checked++
			if msg := check(root, bin, seg); msg != "" {
				t.Errorf("%s: %s\n\t%s", p.where, msg, p.line)
			}
		}
	}
	t.Logf("%d printed commands checked", checked)
}

// TestCheckCatchesBadCommands makes sure the checker fails the lines it
// must: an unknown flag, an unknown command, a path that cannot be
// installed.
func TestCheckCatchesBadCommands(t *testing.T) {
	root := repoRoot(t)
	bin, err := builtBinaries()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"kubegap audit k8s/ --no-such-flag",
		"kubegap frobnicate",
		"incidentlib serve --adr 127.0.0.1:8080",
		"go run incidentlib/cmd/kubegap audit ./manifests",
		"go install github.com/incidentlib/incidentlib/cmd/kubegap",
		"go run github.com/incidentlib/incidentlib/cmd/nothere@latest",
		"helm template deploy/helm/incidentlib | kubegap audit - --formt sarif",
		"claude mcp add kubegap -- kubegap mcp --no-such-flag",
	} {
		bad := false
		for _, seg := range segments(line) {
			if ours(seg) && check(root, bin, seg) != "" {
				bad = true
			}
		}
		if !bad {
			t.Errorf("the checker accepts %q", line)
		}
	}
	for _, line := range []string{
		"go install github.com/incidentlib/incidentlib/cmd/kubegap@latest",
		"helm template deploy/helm/incidentlib | kubegap audit - --min-severity high",
		"kubectl kubegap audit --cluster -A",
	} {
		for _, seg := range segments(line) {
			if ours(seg) {
				if msg := check(root, bin, seg); msg != "" {
					t.Errorf("the checker rejects %q: %s", line, msg)
				}
			}
		}
	}
}
