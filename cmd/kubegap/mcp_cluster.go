package main

import (
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/incidentlib/incidentlib/kubegap"
	"github.com/incidentlib/incidentlib/kubegap/cluster"
	"github.com/incidentlib/incidentlib/mcpserver"
)

// clusterInput is the input of audit_cluster.
type clusterInput struct {
	Context       string `json:"context,omitempty" jsonschema:"kubeconfig context; default the current one"`
	Namespace     string `json:"namespace,omitempty" jsonschema:"the namespace to audit; default the context's"`
	AllNamespaces bool   `json:"all_namespaces,omitempty" jsonschema:"audit every namespace"`
	MinSeverity   string `json:"min_severity,omitempty" jsonschema:"report only findings at or above this severity: low (default, everything), medium, high or critical"`
}

// addClusterTool registers audit_cluster, which reads the live cluster
// through package kubegap/cluster: only get, list and watch, with the
// bounds of kubegap audit --cluster.
func (t *mcpTools) addClusterTool(s *mcp.Server) {
	f, tr := false, true
	mcp.AddTool(s, &mcp.Tool{
		Name:  "audit_cluster",
		Title: "Audit the live Kubernetes cluster",
		Description: "Audits the live Kubernetes cluster of the kubeconfig (the current context unless context is given; one namespace, or all_namespaces) with kubegap's checks. " +
			"kubegap only lists objects, never changes anything; kinds the account may not list are reported and the rest is audited. " +
			"Each finding names the object, the fix with YAML, and the public incidents where the same gap caused an outage: cite them.",
		InputSchema: schema[clusterInput](),
		// Read-only, but it talks to a cluster outside this machine.
		Annotations: &mcp.ToolAnnotations{Title: "Audit the live cluster", ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &f, OpenWorldHint: &tr},
	}, t.auditCluster)
}

func (t *mcpTools) auditCluster(ctx context.Context, _ *mcp.CallToolRequest, in clusterInput) (*mcp.CallToolResult, *mcpserver.AuditOutput, error) {
	min, err := mcpserver.ParseMinSeverity(in.MinSeverity)
	if err != nil {
		return nil, nil, inputError{err.Error()}
	}
	snap := kubegap.NewSnapshot()
	opts := cluster.Options{Kubeconfig: t.kubeconfig, Context: in.Context, Namespace: in.Namespace, AllNamespaces: in.AllNamespaces}
	// Progress lines would interleave with the client's view of stderr;
	// the answer says what was read.
	res, err := cluster.Load(ctx, opts, snap, io.Discard)
	if err != nil {
		return nil, nil, inputError{err.Error()}
	}
	result, out, err := t.audit(ctx, snap, res.Problems, min)
	if err != nil {
		return nil, nil, err
	}
	if res.Target != "" {
		result.Content = append([]mcp.Content{&mcp.TextContent{Text: "Cluster: " + res.Target}}, result.Content...)
	}
	return result, out, nil
}
