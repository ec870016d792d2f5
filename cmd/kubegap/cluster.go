package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/incidentlib/incidentlib"
	"github.com/incidentlib/incidentlib/kubegap"
	"github.com/incidentlib/incidentlib/kubegap/cluster"
)

// clusterFlags are the flags of `kubegap audit` that read a live cluster
// instead of manifests.
type clusterFlags struct {
	on   bool
	opts cluster.Options
	fs   *flag.FlagSet
}

// addClusterFlags registers --cluster and the flags that say which cluster
// and how much of it, with kubectl's names and short forms.
func addClusterFlags(fs *flag.FlagSet) *clusterFlags {
	c := &clusterFlags{fs: fs}
	fs.BoolVar(&c.on, "cluster", false, "audit a live cluster instead of manifests (read-only: kubegap only lists; see deploy/kubegap-rbac.yaml)")
	fs.StringVar(&c.opts.Kubeconfig, "kubeconfig", "", "with --cluster: kubeconfig file (default $KUBECONFIG, then ~/.kube/config, then the pod's service account)")
	fs.StringVar(&c.opts.Context, "context", "", "with --cluster: kubeconfig context (default the current one)")
	fs.StringVar(&c.opts.Namespace, "namespace", "", "with --cluster: the namespace to audit (default the context's)")
	fs.StringVar(&c.opts.Namespace, "n", "", "short for --namespace")
	fs.BoolVar(&c.opts.AllNamespaces, "all-namespaces", false, "with --cluster: audit every namespace")
	fs.BoolVar(&c.opts.AllNamespaces, "A", false, "short for --all-namespaces")
	fs.IntVar(&c.opts.MaxObjects, "max-objects", cluster.DefaultMaxObjects, "with --cluster: stop if the cluster has more objects than this")
	fs.DurationVar(&c.opts.Timeout, "cluster-timeout", cluster.DefaultTimeout, "with --cluster: stop if listing takes longer than this")
	return c
}

// check reports a command line that mixes the two inputs or gives a
// cluster flag without --cluster. It runs after parsing.
func (c *clusterFlags) check(paths int) error {
	var given []string
	c.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "kubeconfig", "context", "namespace", "n", "all-namespaces", "A", "max-objects", "cluster-timeout":
			given = append(given, "-"+f.Name)
		}
	})
	switch {
	case c.on && paths > 0:
		return errors.New("--cluster reads a live cluster; do not name manifest paths as well")
	case !c.on && len(given) > 0:
		return fmt.Errorf("%s needs --cluster", given[0])
	case c.opts.MaxObjects < 1:
		return errors.New("--max-objects must be at least 1")
	case c.opts.Timeout <= 0:
		return errors.New("--cluster-timeout must be positive")
	}
	return nil
}

// loadCluster lists the cluster into snap, with progress on standard
// error. Kinds the account may not list come back as problems; an error
// means the cluster could not be read at all.
func (m *Main) loadCluster(ctx context.Context, c *clusterFlags, snap *kubegap.Snapshot) ([]incidentlib.InputProblem, error) {
	res, err := cluster.Load(ctx, c.opts, snap, m.Stderr)
	if err != nil {
		return nil, err
	}
	return res.Problems, nil
}
