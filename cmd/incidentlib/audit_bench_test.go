package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib/engine/enginetest"
	"github.com/incidentlib/incidentlib/mcpserver"
)

// BenchmarkAuditKubernetes1MiB measures one audit_kubernetes call at the
// tool's size limit, through the MCP server over the in-memory transport
// with kubegap's real auditor and citations from the shipped corpus: the
// cost one client can ask for per call.
func BenchmarkAuditKubernetes1MiB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < mcpserver.MaxManifestBytes-2048; i++ {
		fmt.Fprintf(&sb, `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app-%[1]d, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: app-%[1]d}}
  template:
    metadata: {labels: {app: app-%[1]d}}
    spec:
      containers:
      - name: app
        image: registry.example.com/app:latest
        livenessProbe: {httpGet: {path: /health/deep, port: 8080}}
---
apiVersion: v1
kind: Service
metadata: {name: app-%[1]d, namespace: shop}
spec: {selector: {app: app-%[1]d}, ports: [{port: 80}]}
`, i)
	}
	manifests := sb.String()
	eng := enginetest.Shipped(b)
	checks, auditor := kubegapFor(eng, "http://127.0.0.1:8080")
	srv := mcpserver.NewServer(eng, mcpserver.Config{Auditor: auditor, Checks: checks})
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.SetBytes(int64(len(manifests)))
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "audit_kubernetes", Arguments: map[string]any{"manifests": manifests}})
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
	b.ReportMetric(float64(2*strings.Count(manifests, "kind: Deployment")), "objects")
}
