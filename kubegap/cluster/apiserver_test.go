package cluster

// The integration suite: a real etcd and kube-apiserver on loopback, the
// fixtures applied to them, and `kubegap audit --cluster` run as an account
// bound only to the shipped ClusterRole. It needs the binaries that
// scripts/kube-test-binaries.sh builds:
//
//	KUBEGAP_APISERVER_TESTS=1 KUBEGAP_KUBE_BIN=$(scripts/kube-test-binaries.sh) \
//	  go test -run APIServer -v ./kubegap/cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/incidentlib/incidentlib/kubegap"
)

// The two accounts of the test server. kubegap authenticates as the
// shipped service account, so the shipped ClusterRoleBinding is what
// authorizes it; partial is bound to a role that may list only a few
// kinds, for the 403 path.
const (
	kubegapUser = "system:serviceaccount:kubegap:kubegap"
	partialUser = "partial"
	testNS      = "shop"
)

func TestAPIServer(t *testing.T) {
	if os.Getenv("KUBEGAP_APISERVER_TESTS") != "1" {
		t.Skip("integration suite against a real kube-apiserver: set KUBEGAP_APISERVER_TESTS=1 and KUBEGAP_KUBE_BIN=$(scripts/kube-test-binaries.sh)")
	}
	bin := os.Getenv("KUBEGAP_KUBE_BIN")
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("KUBEGAP_KUBE_BIN=%q has no %s (run scripts/kube-test-binaries.sh): %v", bin, b, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	srv := startAPIServer(ctx, t, bin)
	admin := srv.clients(t, srv.adminToken)
	applyFile(ctx, t, admin, "testdata/crds.yaml", "")
	waitCRDs(ctx, t, admin, "virtualservices.networking.istio.io", "destinationrules.networking.istio.io", "httproutes.gateway.networking.k8s.io",
		"grpcroutes.gateway.networking.k8s.io", "servicemonitors.monitoring.coreos.com", "podmonitors.monitoring.coreos.com")
	admin = srv.clients(t, srv.adminToken) // a fresh mapper that knows the CRDs
	applyFile(ctx, t, admin, "../../deploy/kubegap-rbac.yaml", "")
	applyObjects(ctx, t, admin, []*unstructured.Unstructured{namespace(testNS)}, "")
	applyObjects(ctx, t, admin, kubegapKinds(readObjects(t, fixtureFiles)), testNS)
	applyFile(ctx, t, admin, "testdata/partial-rbac.yaml", "")

	// The command, built from this module, against the cluster and against
	// the same manifests as files.
	kg := filepath.Join(t.TempDir(), "kubegap")
	build := exec.CommandContext(ctx, "go", "build", "-o", kg, "github.com/incidentlib/incidentlib/cmd/kubegap")
	build.Env = append(os.Environ(), "GOFLAGS=") // CI's test flags are not build flags
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/kubegap: %v\n%s", err, out)
	}
	kubeconfig := srv.writeKubeconfig(t, "kubegap", srv.kubegapToken)
	start := time.Now()
	live, stderr := runKubegap(ctx, t, kg, "audit", "--cluster", "--kubeconfig", kubeconfig, "--all-namespaces", "--format", "json")
	t.Logf("kubegap audit --cluster: %s, %d findings, %d objects", time.Since(start).Round(time.Millisecond), len(live.Findings), live.Objects)
	t.Logf("progress on standard error:\n%s", stderr)
	if len(live.Problems) > 0 {
		t.Errorf("live audit problems: %+v", live.Problems)
	}
	if !strings.Contains(stderr, "kubegap: reading https://127.0.0.1:") || !strings.Contains(stderr, "deployments.apps") {
		t.Errorf("no progress on standard error:\n%s", stderr)
	}
	files, _ := runKubegap(ctx, t, kg, append([]string{"audit", "--format", "json"}, fixtureFiles...)...)
	want, got := files.keys(), live.keys()
	if len(want) == 0 {
		t.Fatal("the fixtures have no findings; the comparison would prove nothing")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings of the live cluster differ from those of the manifests (-files +cluster):\n%s", diff)
	}

	// Text output for one namespace, as a person runs it: findings for
	// the namespace's objects, exit 1, progress naming the namespace.
	text := exec.CommandContext(ctx, kg, "audit", "--cluster", "--kubeconfig", kubeconfig, "-n", testNS)
	var textOut, textErr bytes.Buffer
	text.Stdout, text.Stderr = &textOut, &textErr
	var exit *exec.ExitError
	if err := text.Run(); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("kubegap audit --cluster -n %s: %v (want exit 1)\n%s", testNS, err, textErr.String())
	}
	if !strings.Contains(textOut.String(), "KG022") || !strings.Contains(textOut.String(), "cache") || !strings.Contains(textErr.String(), "namespace "+testNS) {
		t.Errorf("text report or progress lacks the namespace's findings:\nstdout:\n%s\nstderr:\n%s", textOut.String(), textErr.String())
	}

	// The same scan in process, a few objects per page, follows continue
	// tokens on a real server.
	rc := srv.restConfig(srv.kubegapToken)
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := newAPIDiscovery(rc)
	if err != nil {
		t.Fatal(err)
	}
	snap := kubegap.NewSnapshot()
	res, err := load(ctx, clients{dyn: dyn, disc: disc}, "", "test", Options{PageSize: 3}, snap, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, findingKeys(kubegap.Audit(ctx, snap, kubegap.Policy{}, nil), testNS)); diff != "" {
		t.Errorf("paged scan (-files +cluster):\n%s", diff)
	}
	if res.Objects != live.Objects {
		t.Errorf("paged scan read %d objects, the command %d", res.Objects, live.Objects)
	}

	// An account that may list only some kinds: the others are reported
	// by name, the rest still audited.
	snap = kubegap.NewSnapshot()
	res, err = load(ctx, clients{dyn: mustDynamic(t, srv.restConfig(srv.partialToken)), disc: disc}, testNS, "test", Options{}, snap, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]bool{}
	for _, p := range res.Problems {
		if strings.HasPrefix(p.Message, "forbidden: ") {
			forbidden[p.Object.Kind] = true
		} else {
			t.Errorf("unexpected problem: %+v", p)
		}
	}
	if !forbidden["Service"] || !forbidden["ValidatingWebhookConfiguration"] || forbidden["Deployment"] {
		t.Errorf("forbidden kinds %v: want Service and ValidatingWebhookConfiguration, not Deployment", forbidden)
	}
	if rep := kubegap.Audit(ctx, snap, kubegap.Policy{}, nil); len(snap.Workloads) == 0 || len(rep.Findings) == 0 {
		t.Errorf("with some kinds forbidden, nothing else was audited: %d workloads, %d findings", len(snap.Workloads), len(rep.Findings))
	}

	// Every request kubegap's account made was a read.
	srv.checkAuditLog(ctx, t)
}

// kubegapKinds keeps the objects of kinds kubegap reads: the fixtures also
// hold Istio Gateways and ServiceEntries, which the test server has no CRD
// for and kubegap skips in files too.
func kubegapKinds(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	read := map[string]bool{}
	for _, k := range Kinds() {
		read[k.Group+"/"+k.Kind] = true
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		gk := o.GroupVersionKind().GroupKind()
		if read[gk.Group+"/"+gk.Kind] {
			out = append(out, o)
		}
	}
	return out
}

func namespace(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	u.SetName(name)
	return u
}

// apiServer is a running etcd and kube-apiserver pair.
type apiServer struct {
	dir                                    string
	url                                    string
	caPEM                                  []byte
	adminToken, kubegapToken, partialToken string
	auditLog                               string
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomToken(t *testing.T) string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", b)
}

// startAPIServer starts etcd and kube-apiserver in a temporary directory,
// on free loopback ports, and waits until the API server is ready. Both are
// stopped when the test ends.
func startAPIServer(ctx context.Context, t *testing.T, bin string) *apiServer {
	t.Helper()
	dir := t.TempDir()
	s := &apiServer{dir: dir, adminToken: randomToken(t), kubegapToken: randomToken(t), partialToken: randomToken(t),
		auditLog: filepath.Join(dir, "audit.log")}

	// Certificates: a CA, the server's certificate for 127.0.0.1, and a key
	// for signing service account tokens, all made here.
	caKey, caCert, caDER := newCA(t)
	s.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	write(t, dir, "ca.crt", s.caPEM)
	srvCert, srvKey := newServing(t, caKey, caCert)
	write(t, dir, "server.crt", srvCert)
	write(t, dir, "server.key", srvKey)
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	saDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "sa.key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saDER}))
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "sa.pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}))
	write(t, dir, "tokens.csv", []byte(fmt.Sprintf("%s,admin,admin-uid,\"system:masters\"\n%s,%s,kubegap-uid,\"system:serviceaccounts,system:serviceaccounts:kubegap\"\n%s,%s,partial-uid\n",
		s.adminToken, s.kubegapToken, kubegapUser, s.partialToken, partialUser)))
	write(t, dir, "audit-policy.yaml", []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: Metadata\n"))

	etcdPort, peerPort, apiPort := freePort(t), freePort(t), freePort(t)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	_ = startProcess(t, dir, "etcd", filepath.Join(bin, "etcd"),
		"--name=test", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=test="+peerURL, "--log-level=warn", "--unsafe-no-fsync=true")
	apiDone := startProcess(t, dir, "kube-apiserver", filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", apiPort),
		// The "kubernetes" Service's endpoints may not be a loopback
		// address, and nothing in the test needs them.
		"--endpoint-reconciler-type=none",
		"--tls-cert-file="+filepath.Join(dir, "server.crt"), "--tls-private-key-file="+filepath.Join(dir, "server.key"),
		"--token-auth-file="+filepath.Join(dir, "tokens.csv"), "--anonymous-auth=false",
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/24",
		// No controller manager runs, so nothing creates the namespaces'
		// default service accounts that this plugin would insist on.
		"--disable-admission-plugins=ServiceAccount",
		"--audit-policy-file="+filepath.Join(dir, "audit-policy.yaml"),
		"--audit-log-path="+s.auditLog, "--audit-log-mode=blocking",
		"--profiling=false", "--v=0")
	s.url = fmt.Sprintf("https://127.0.0.1:%d", apiPort)

	// Ready when /readyz answers 200: etcd reached, bootstrap RBAC roles
	// made.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.caPEM)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(4 * time.Minute)
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+s.adminToken)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-apiDone:
			t.Fatalf("kube-apiserver exited; its log:\n%s", tail(filepath.Join(dir, "kube-apiserver.log")))
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("kube-apiserver not ready after 4 minutes (last: %v); its log:\n%s", err, tail(filepath.Join(dir, "kube-apiserver.log")))
		}
		time.Sleep(500 * time.Millisecond)
	}
	return s
}

// startProcess runs a server with its output in dir/name.log and stops it
// (SIGTERM, then SIGKILL) when the test ends. The channel closes when the
// process exits.
func startProcess(t *testing.T, dir, name, path string, args ...string) <-chan struct{} {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		logf.Close()
		if t.Failed() {
			t.Logf("%s log (last lines):\n%s", name, tail(filepath.Join(dir, name+".log")))
		}
	})
	return done
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 1500 {
		b = b[len(b)-1500:]
	}
	return string(b)
}

func write(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func newCA(t *testing.T) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubegap test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

func newServing(t *testing.T, caKey *ecdsa.PrivateKey, ca *x509.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}, DNSNames: []string{"localhost", "kubernetes.default.svc"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func (s *apiServer) restConfig(token string) *rest.Config {
	return &rest.Config{Host: s.url, BearerToken: token, QPS: 100, Burst: 200,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.caPEM}, WarningHandler: rest.NoWarnings{}}
}

func mustDynamic(t *testing.T, rc *rest.Config) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// writeKubeconfig writes a kubeconfig for one account, as a cluster admin
// would hand it out.
func (s *apiServer) writeKubeconfig(t *testing.T, name, token string) string {
	t.Helper()
	path := filepath.Join(s.dir, name+".kubeconfig")
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: %s\n    certificate-authority: %s\n", s.url, filepath.Join(s.dir, "ca.crt"))
	fmt.Fprintf(&b, "users:\n- name: %s\n  user:\n    token: %s\ncontexts:\n- name: %s\n  context:\n    cluster: test\n    user: %s\ncurrent-context: %s\n", name, token, name, name, name)
	write(t, s.dir, name+".kubeconfig", []byte(b.String()))
	return path
}

// admin holds the clients the test applies objects with.
type admin struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func (s *apiServer) clients(t *testing.T, token string) admin {
	t.Helper()
	rc := s.restConfig(token)
	disc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return admin{dyn: mustDynamic(t, rc), mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
}

func applyFile(ctx context.Context, t *testing.T, a admin, path, ns string) {
	t.Helper()
	applyObjects(ctx, t, a, readObjects(t, []string{path}), ns)
}

// applyObjects creates the objects, in ns when they name no namespace.
// Webhook configurations go last, so that one which fails closed does not
// refuse the objects after it.
func applyObjects(ctx context.Context, t *testing.T, a admin, objs []*unstructured.Unstructured, ns string) {
	t.Helper()
	sort.SliceStable(objs, func(i, j int) bool {
		return !strings.HasSuffix(objs[i].GetKind(), "WebhookConfiguration") && strings.HasSuffix(objs[j].GetKind(), "WebhookConfiguration")
	})
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk, o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = a.dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if o.GetNamespace() == "" {
				o = o.DeepCopy()
				o.SetNamespace(ns)
			}
			ri = a.dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		if _, err := ri.Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %s %s/%s: %v", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
	}
}

// waitCRDs waits until the API server serves the custom resources.
func waitCRDs(ctx context.Context, t *testing.T, a admin, names ...string) {
	t.Helper()
	crds := a.dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	for _, n := range names {
		for {
			u, err := crds.Get(ctx, n, metav1.GetOptions{})
			if err == nil && established(u) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("CRD %s not established: %v", n, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// jsonReport is the part of `kubegap audit --format json` the test reads.
type jsonReport struct {
	Objects  int `json:"objects"`
	Findings []struct {
		Check  string `json:"check"`
		Object struct {
			Kind      string `json:"kind"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"object"`
	} `json:"findings"`
	Problems []json.RawMessage `json:"problems"`
}

// keys names the findings by check and object, a file's objects without a
// namespace read as in testNS, where the test applied them.
func (r jsonReport) keys() []string {
	var out []string
	for _, f := range r.Findings {
		if manifestOnly[f.Check] {
			continue
		}
		ns := f.Object.Namespace
		if ns == "" && !clusterScoped[f.Object.Kind] {
			ns = testNS
		}
		out = append(out, fmt.Sprintf("%s %s %s/%s", f.Check, f.Object.Kind, ns, f.Object.Name))
	}
	sort.Strings(out)
	return out
}

// runKubegap runs the built command; exit 1 (findings) is expected.
func runKubegap(ctx context.Context, t *testing.T, kg string, args ...string) (jsonReport, string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, kg, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "KUBECONFIG=/nonexistent") // only --kubeconfig counts
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("kubegap %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var rep jsonReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("kubegap %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, stdout.String())
	}
	return rep, stderr.String()
}

// kubegapRequests reads the API server's audit log and returns, for the
// requests kubegap's account made, the count per verb, those that were not
// a get, list or watch, and the resources asked for.
func (s *apiServer) kubegapRequests(t *testing.T) (verbs map[string]int, nonReads []string, resources map[string]bool) {
	t.Helper()
	f, err := os.Open(s.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	verbs, resources = map[string]int{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Verb       string `json:"verb"`
			RequestURI string `json:"requestURI"`
			User       struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				Resource string `json:"resource"`
			} `json:"objectRef"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit log line: %v", err)
		}
		if ev.User.Username != kubegapUser {
			continue
		}
		verbs[ev.Verb]++
		switch ev.Verb {
		case "get", "list", "watch":
		default:
			nonReads = append(nonReads, ev.Verb+" "+ev.RequestURI)
		}
		if ev.ObjectRef != nil {
			resources[ev.ObjectRef.Resource] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return verbs, nonReads, resources
}

// checkAuditLog: the kubegap account made requests, among them lists of
// the main kinds, and every one was a read, none for Secrets or
// ConfigMaps. Then, to show the log check can fail, the test itself makes
// one write as that account (refused: the role has no write verb) and
// requires the log check to see it.
func (s *apiServer) checkAuditLog(ctx context.Context, t *testing.T) {
	t.Helper()
	verbs, nonReads, resources := s.kubegapRequests(t)
	t.Logf("audit log: kubegap's account made %v requests", verbs)
	for _, r := range nonReads {
		t.Errorf("kubegap's account made a request that is not a read: %s", r)
	}
	if verbs["list"] == 0 {
		t.Fatal("the audit log holds no list request by kubegap's account: the log proves nothing")
	}
	for _, r := range []string{"deployments", "services", "virtualservices", "validatingwebhookconfigurations"} {
		if !resources[r] {
			t.Errorf("the audit log holds no request by kubegap for %s", r)
		}
	}
	for _, r := range []string{"secrets", "configmaps"} {
		if resources[r] {
			t.Errorf("kubegap's account asked for %s", r)
		}
	}

	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName("control")
	_, err := mustDynamic(t, s.restConfig(s.kubegapToken)).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).
		Namespace(testNS).Create(ctx, cm, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("kubegap's account creating a ConfigMap: got %v, want forbidden", err)
	}
	if _, nonReads, _ := s.kubegapRequests(t); len(nonReads) != 1 || !strings.HasPrefix(nonReads[0], "create ") {
		t.Errorf("after one create as kubegap's account the log check found %v; it cannot tell reads from writes", nonReads)
	}
}
