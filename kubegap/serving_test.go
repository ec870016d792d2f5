package kubegap

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/incidentlib/incidentlib"
)

// TestEnvServiceRefs: a workload's environment names a Service when it
// holds it as a URL host, host:port or a dotted service name, or as a bare
// value in a variable whose name says it holds a host; a bare word
// elsewhere is not a reference.
func TestEnvServiceRefs(t *testing.T) {
	svc := func(ns, name string) *Service {
		return &Service{Object: Object{Ref: incidentlib.ObjectRef{Kind: "Service", Namespace: ns, Name: name}}}
	}
	api, apiProd := svc("shop", "api"), svc("prod", "api")
	byName := map[string][]*Service{"api": {api, apiProd}}
	for _, tc := range []struct {
		name, value string
		want        *Service
	}{
		{"API_URL", "http://api:8080/v1", api},
		{"UPSTREAM", "api:8080", api},
		{"TARGETS", "cache:6379,api.prod.svc.cluster.local:443", apiProd},
		{"API_HOST", "api", api},
		{"API_ADDR", "api.prod", apiProd},
		{"MODE", "api", nil},              // a bare word in a variable that holds no host
		{"GREETING", "call the api", nil}, // prose
		{"API_URL", "http://apiserver:8080", nil},
	} {
		got := envServiceRefs(corev1.EnvVar{Name: tc.name, Value: tc.value}, "shop", byName)
		switch {
		case tc.want == nil && len(got) > 0:
			t.Errorf("%s=%q names %s/%s, want nothing", tc.name, tc.value, got[0].Ref.Namespace, got[0].Ref.Name)
		case tc.want != nil && (len(got) != 1 || got[0] != tc.want):
			t.Errorf("%s=%q names %d services, want %s/%s", tc.name, tc.value, len(got), tc.want.Ref.Namespace, tc.want.Ref.Name)
		}
	}
}
