package release

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// TestGoInstallFromProxy proves the documented install works once the
// module is published: it packs the committed HEAD into a module zip the
// way a module proxy serves it, lays it out as a file-based GOPROXY, and
// runs the README's go install line against it (the module's dependencies
// come from the usual proxy), then runs the installed kubegap on a
// directory of manifests and asks it its version.
//
// It builds everything again from the zip, so it is off unless
// INCIDENTLIB_INSTALL_TESTS=1 (.ci/run sets it).
func TestGoInstallFromProxy(t *testing.T) {
	if os.Getenv("INCIDENTLIB_INSTALL_TESTS") != "1" {
		t.Skip("INCIDENTLIB_INSTALL_TESTS=1 runs go install from a module proxy made of this checkout (a full build)")
	}
	root := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	// The pseudo-version of HEAD, as the proxy would name an untagged commit.
	out, err := exec.CommandContext(ctx, "git", "-C", root, "log", "-1", "--format=%H %cd", "--date=format-local:%Y%m%d%H%M%S").Output()
	if err != nil {
		t.Skipf("not a git checkout, nothing to pack: %v", err)
	}
	hash, stamp, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	version := fmt.Sprintf("v0.0.0-%s-%s", stamp, hash[:12])
	mv := module.Version{Path: modulePath, Version: version}

	proxy := t.TempDir()
	dir := filepath.Join(proxy, modulePath, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	// The commit as git has it (no untracked files, no build output),
	// packed by CreateFromDir, which leaves out nested modules (benchmark/)
	// and checks the proxy's size and file-name rules.
	tree := t.TempDir()
	archive := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", root, hash, tree)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", hash, err, out)
	}
	if err := modzip.CreateFromDir(zf, mv, tree); err != nil {
		zf.Close()
		t.Fatalf("packing %s: %v", mv, err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := exec.CommandContext(ctx, "git", "-C", root, "show", hash+":go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Now().UTC().Format(time.RFC3339))
	for name, data := range map[string][]byte{
		version + ".mod":  gomod,
		version + ".info": []byte(info),
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	upstream, err := exec.CommandContext(ctx, "go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	gobin := t.TempDir()
	install := exec.CommandContext(ctx, "go", "install", modulePath+"/cmd/kubegap@"+version)
	install.Dir = t.TempDir() // outside any module, as a reader runs it
	install.Env = append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+","+strings.TrimSpace(string(upstream)),
		"GONOSUMDB=github.com/incidentlib/*",
		"GOFLAGS=-mod=mod",
		"GOBIN="+gobin,
	)
	start := time.Now()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install %s/cmd/kubegap@%s: %v\n%s", modulePath, version, err, out)
	}
	t.Logf("go install from the proxy took %s", time.Since(start).Round(time.Second))

	kubegap := filepath.Join(gobin, "kubegap")
	ver, err := exec.CommandContext(ctx, kubegap, "version").Output()
	if err != nil {
		t.Fatalf("kubegap version: %v", err)
	}
	if !strings.Contains(string(ver), "kubegap "+version) || !strings.Contains(string(ver), "commit:  "+hash[:12]) || !strings.Contains(string(ver), " cases, the newest started ") {
		t.Errorf("kubegap version from the installed binary:\n%s\nwant the version %s, its commit and the corpus", ver, version)
	}

	// Audit a directory: a Deployment with one replica behind a Service
	// must be reported (exit 1) with a finding citing cases.
	manifests := t.TempDir()
	os.WriteFile(filepath.Join(manifests, "app.yaml"), []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: web:latest
          ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`), 0o644)
	audit := exec.CommandContext(ctx, kubegap, "audit", manifests)
	report, err := audit.Output()
	if code := audit.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("kubegap audit of a directory with gaps: exit %d (%v), want 1\n%s", code, err, report)
	}
	for _, want := range []string{"KG009", "KG020", "IL-"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("the installed kubegap's report lacks %s:\n%s", want, report)
		}
	}
}
