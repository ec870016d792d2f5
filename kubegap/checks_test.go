package kubegap

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkFixtures lists every fixture under testdata/checks with the checks
// that must fire on it: exactly these, so a pass fixture also proves that
// the other checks stay quiet on a well-configured object.
var checkFixtures = []struct {
	file string
	want []string
}{
	{"KG001/fail-deep-path.yaml", []string{"KG001"}},
	{"KG001/fail-exec-remote-db.yaml", []string{"KG001"}},
	{"KG001/fail-liveness-on-other-readiness-endpoint.yaml", []string{"KG001"}},
	{"KG001/fail-other-host.yaml", []string{"KG001"}},
	{"KG001/fail-spring-actuator-health.yaml", []string{"KG001"}},
	{"KG001/pass-exec-local-client.yaml", nil},
	{"KG001/pass-local-query-string.yaml", nil},
	{"KG001/pass-liveness-is-readiness-endpoint-more-tolerant.yaml", nil},
	{"KG001/pass-local.yaml", nil},
	{"KG001/pass-spring-liveness-group.yaml", nil},
	{"KG002/fail-same-check.yaml", []string{"KG002"}},
	{"KG002/fail-same-readyz-endpoint.yaml", []string{"KG002"}},
	{"KG002/pass-longer-window.yaml", nil},
	{"KG003/fail-destinationrule-without-brakes.yaml", []string{"KG003"}},
	{"KG003/fail-no-destinationrule.yaml", []string{"KG003"}},
	{"KG003/pass-outlier-detection.yaml", nil},
	{"KG004/fail-gateway-and-mesh.yaml", []string{"KG004"}},
	{"KG004/fail-httproute-and-mesh.yaml", []string{"KG004"}},
	{"KG004/pass-one-layer.yaml", nil},
	{"KG005/fail-attempts-exceed-timeout.yaml", []string{"KG005"}},
	{"KG005/pass-fits.yaml", nil},
	{"KG006/fail-5xx-any-method.yaml", []string{"KG006"}},
	{"KG006/fail-5xx-post.yaml", []string{"KG006"}},
	{"KG006/fail-linkerd-post-retryable.yaml", []string{"KG006"}},
	{"KG006/pass-get-only.yaml", nil},
	{"KG006/fail-grpc-write-method.yaml", []string{"KG006"}},
	{"KG006/pass-grpc-read-methods.yaml", nil},
	{"KG007/fail-annotation-retries.yaml", []string{"KG007"}},
	{"KG007/fail-budget-ratio.yaml", []string{"KG007"}},
	{"KG007/pass-budget.yaml", nil},
	{"KG008/fail-max-unavailable-zero.yaml", []string{"KG008"}},
	{"KG008/fail-min-available-all.yaml", []string{"KG008"}},
	{"KG008/fail-missing.yaml", []string{"KG008"}},
	{"KG008/pass-max-unavailable-one.yaml", nil},
	{"KG009/fail-routed-by-configmap-env.yaml", []string{"KG009"}},
	{"KG009/fail-routed-by-configmap-key.yaml", []string{"KG009"}},
	{"KG009/pass-configmap-read-by-nobody.yaml", nil},
	{"KG009/fail-bare-pod.yaml", []string{"KG009"}},
	{"KG009/fail-ingress.yaml", []string{"KG009", "KG019"}},
	{"KG009/fail-one-replica.yaml", []string{"KG009"}},
	{"KG009/fail-routed-by-command-line.yaml", []string{"KG009"}},
	{"KG009/pass-datastore.yaml", nil},
	{"KG009/pass-hpa-min-two.yaml", nil},
	{"KG009/pass-job.yaml", nil},
	{"KG009/pass-metrics-only-service.yaml", nil},
	{"KG009/pass-service-nothing-routes-to.yaml", nil},
	{"KG009/pass-servicemonitor-scraped.yaml", nil},
	{"KG010/fail-no-spread.yaml", []string{"KG010"}},
	{"KG010/fail-statefulset-no-spread.yaml", []string{"KG010"}},
	{"KG010/pass-anti-affinity.yaml", nil},
	{"KG011/fail-max-below-replicas.yaml", []string{"KG011", "KG025"}},
	{"KG011/fail-min-equals-max.yaml", []string{"KG011"}},
	{"KG011/fail-no-cpu-request.yaml", []string{"KG011", "KG026"}},
	{"KG011/pass-can-scale.yaml", nil},
	{"KG012/fail-cronjob-no-memory.yaml", []string{"KG012"}},
	{"KG012/fail-no-limit.yaml", []string{"KG012"}},
	{"KG012/fail-no-memory.yaml", []string{"KG012"}},
	{"KG012/pass-request-and-limit.yaml", nil},
	{"KG013/fail-limit-equals-request.yaml", []string{"KG013"}},
	{"KG013/pass-headroom.yaml", nil},
	{"KG014/fail-max-unavailable-100.yaml", []string{"KG014"}},
	{"KG014/fail-recreate.yaml", []string{"KG014"}},
	{"KG014/fail-rollout-canary-all.yaml", []string{"KG014"}},
	{"KG014/pass-recreate-single-rwo.yaml", nil},
	{"KG014/pass-rolling.yaml", nil},
	{"KG015/fail-half-at-once.yaml", []string{"KG015"}},
	{"KG015/pass-one-at-a-time.yaml", nil},
	{"KG016/fail-every-namespace.yaml", []string{"KG016"}},
	{"KG016/fail-selector-keeps-kube-system.yaml", []string{"KG016"}},
	{"KG016/pass-excludes-kube-system.yaml", nil},
	{"KG016/pass-fail-open.yaml", nil},
	{"KG016/fail-object-selector-excludes-only.yaml", []string{"KG016"}},
	{"KG016/pass-opt-in-object-selector.yaml", nil},
	{"KG017/fail-cluster-wide-watch.yaml", []string{"KG017"}},
	{"KG017/pass-namespaced-role.yaml", nil},
	{"KG018/fail-beta-node-selector.yaml", []string{"KG018"}},
	{"KG018/fail-beta-topology-key.yaml", []string{"KG018"}},
	{"KG018/pass-stable-labels.yaml", nil},
	{"KG019/fail-grace-shorter-than-sleep.yaml", []string{"KG019"}},
	{"KG019/fail-no-prestop.yaml", []string{"KG019"}},
	{"KG019/pass-cluster-ip.yaml", nil},
	{"KG019/pass-prestop.yaml", nil},
	{"KG020/fail-latest.yaml", []string{"KG020"}},
	{"KG020/fail-untagged.yaml", []string{"KG020"}},
	{"KG020/pass-digest.yaml", nil},
	{"KG021/fail-no-readiness.yaml", []string{"KG021"}},
	{"KG021/pass-no-service.yaml", nil},
	{"KG022/fail-always-with-hpa.yaml", []string{"KG022"}},
	{"KG022/fail-latest-default-with-hpa.yaml", []string{"KG020", "KG022"}},
	{"KG022/pass-if-not-present.yaml", nil},
	{"KG023/fail-timeout-equals-period.yaml", []string{"KG023"}},
	{"KG023/pass-timeout-shorter.yaml", nil},
	{"KG024/fail-java-options-env.yaml", []string{"KG024"}},
	{"KG024/fail-jdk-java-options-env.yaml", []string{"KG024"}},
	{"KG024/fail-jvm-short-window.yaml", []string{"KG024"}},
	{"KG024/pass-startup-probe.yaml", nil},
	{"KG025/fail-hpa-and-replicas.yaml", []string{"KG025"}},
	{"KG025/pass-hpa-no-replicas.yaml", nil},
	{"KG026/fail-no-cpu-request.yaml", []string{"KG026"}},
	{"KG026/pass-cpu-limit-only.yaml", nil},
	{"KG027/fail-no-liveness.yaml", []string{"KG027"}},
	{"KG027/pass-cronjob.yaml", nil},
	{"KG027/pass-datastore.yaml", nil},
	{"KG027/pass-datastore-custom-image.yaml", nil},
	{"KG027/pass-load-generator.yaml", nil},
	{"KG028/fail-rolling-single-rwo.yaml", []string{"KG028"}},
	{"KG028/pass-max-surge-zero.yaml", nil},
	{"KG028/pass-read-write-many.yaml", nil},
	{"KG029/fail-statefulset-pull-always.yaml", []string{"KG029"}},
	{"KG029/pass-statefulset-if-not-present.yaml", nil},
	{"KG030/fail-alpine-tag.yaml", []string{"KG030"}},
	{"KG030/fail-major-only-tag.yaml", []string{"KG030"}},
	{"KG030/fail-minor-only-v-tag.yaml", []string{"KG030"}},
	{"KG030/fail-official-image-v-major.yaml", []string{"KG030"}},
	{"KG030/fail-stable-tag.yaml", []string{"KG030"}},
	{"KG030/pass-build-counter-tag.yaml", nil},
	{"KG030/pass-commit-tag.yaml", nil},
	{"KG030/pass-dated-release.yaml", nil},
	{"KG030/pass-patch-version.yaml", nil},
	{"KG031/fail-single-replica-webhook.yaml", []string{"KG031"}},
	{"KG031/pass-fail-open.yaml", nil},
	{"KG031/pass-two-replicas.yaml", nil},
}

func TestCheckFixtures(t *testing.T) {
	for _, tc := range checkFixtures {
		t.Run(tc.file, func(t *testing.T) {
			rep := auditFile(t, filepath.Join("testdata", "checks", tc.file), Policy{})
			if len(rep.Problems) > 0 {
				t.Fatalf("input problems: %+v", rep.Problems)
			}
			want := tc.want
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, firedIDs(rep)); diff != "" {
				for _, f := range rep.Findings {
					t.Logf("%s %s", f.CheckID, f.Message)
				}
				t.Errorf("checks fired (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEveryCheckHasFixtures keeps the table and the files in step: every
// file is in the table, and every check has a pass and a fail fixture.
func TestEveryCheckHasFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "checks", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inTable := map[string]bool{}
	for _, tc := range checkFixtures {
		inTable[tc.file] = true
	}
	has := map[string]map[string]bool{}
	for _, f := range files {
		rel := filepath.ToSlash(strings.TrimPrefix(f, filepath.Join("testdata", "checks")+string(filepath.Separator)))
		if !inTable[rel] {
			t.Errorf("fixture %s is not in checkFixtures", rel)
		}
		id, name, _ := strings.Cut(rel, "/")
		if has[id] == nil {
			has[id] = map[string]bool{}
		}
		has[id][name[:4]] = true
	}
	for _, c := range Checks() {
		if !has[c.ID]["pass"] || !has[c.ID]["fail"] {
			t.Errorf("%s needs a pass-*.yaml and a fail-*.yaml fixture under testdata/checks/%s", c.ID, c.ID)
		}
	}
	if len(Checks()) < 30 {
		t.Errorf("%d checks; the catalogue promises at least 30", len(Checks()))
	}
}
