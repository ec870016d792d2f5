package kubegap

import (
	"fmt"
	"strings"
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

// What a container takes from a ConfigMap into its environment is bounded:
// a ConfigMap of a thousand keys read by a workload adds at most
// maxConfigMapEnv values, and no value longer than maxEnvValue.
func TestEnvironmentFromConfigMapsIsBounded(t *testing.T) {
	s := NewSnapshot()
	data := map[string]string{"BIG": strings.Repeat("x", maxEnvValue+1)}
	for i := range 1000 {
		data[fmt.Sprintf("KEY_%04d", i)] = "svc:80"
	}
	s.ConfigMaps = map[string]map[string]string{"ns/cm": data}
	c := corev1.Container{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
		Env: []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "KEY_0999"}}}}}
	env := s.environment(c, "ns")
	if len(env) != maxConfigMapEnv+1 {
		t.Errorf("%d values, want %d from the ConfigMap and one of the container's own", len(env), maxConfigMapEnv)
	}
	for _, e := range env {
		if len(e.Value) > maxEnvValue {
			t.Errorf("%s: a value of %d bytes was taken", e.Name, len(e.Value))
		}
	}
	if last := env[len(env)-1]; last.Name != "A" || last.Value != "svc:80" {
		t.Errorf("the key the container names: %+v", last)
	}
}
