package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAuditClusterUsage: the cluster flags are checked before anything is
// read, and a cluster that cannot be reached is an input error (exit 2)
// that says so. Reading a cluster that answers is covered by
// kubegap/cluster's tests, against the fake client and a real API server.
func TestAuditClusterUsage(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	// A server on a port nothing listens on: discovery fails at once.
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--namespace", "web", "k8s/"}, "-namespace needs --cluster"},
		{[]string{"-A", "k8s/"}, "-A needs --cluster"},
		{[]string{"--cluster", "k8s/"}, "do not name manifest paths as well"},
		{[]string{"--cluster", "--max-objects", "0"}, "--max-objects must be at least 1"},
		{[]string{"--cluster", "--kubeconfig", filepath.Join(dir, "missing")}, "kubeconfig"},
		{[]string{"--cluster", "--kubeconfig", kc, "--context", "nope"}, `context "nope" does not exist`},
		{[]string{"--cluster", "--kubeconfig", kc, "--cluster-timeout", "20s"}, "discovery"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var errOut strings.Builder
			m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errOut, Now: time.Now}
			code := m.Run(context.Background(), append([]string{"audit"}, tt.args...))
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr does not say %q:\n%s", tt.want, errOut.String())
			}
			if strings.Contains(errOut.String(), "panic") {
				t.Errorf("panic:\n%s", errOut.String())
			}
		})
	}
}
