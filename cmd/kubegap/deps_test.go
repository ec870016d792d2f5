package main

import (
	"os/exec"
	"strings"
	"testing"
)

// unlinked are packages the kubegap binary must not link. Every linked
// package's init runs at each start, whatever the command, so what the
// audit does not use costs every audit: the library's search index (an
// audit cites from the compiled-in citation table, and so does kubegap
// mcp), and client-go's typed discovery, which brings client-go's scheme
// and registers every built-in API group at start (a cluster scan reads
// discovery with its own small client).
var unlinked = []string{
	"github.com/blevesearch/",
	"github.com/incidentlib/incidentlib/engine",
	"k8s.io/client-go/discovery",
	"k8s.io/client-go/kubernetes",
}

func TestUnlinkedPackages(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the linked packages")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps gave %d packages; the check would prove nothing", len(deps))
	}
	for _, d := range deps {
		for _, u := range unlinked {
			if d == u || strings.HasPrefix(d, u+"/") || (strings.HasSuffix(u, "/") && strings.HasPrefix(d, u)) {
				t.Errorf("kubegap links %s (matching %s): its init would run on every start", d, u)
			}
		}
	}
}
