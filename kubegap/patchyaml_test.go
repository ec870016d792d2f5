package kubegap

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// TestJSONToYAML: a patch reads back as the same value, keys keep the
// patch's order, list items sit level with their key, and strings that
// would read back as another type are quoted.
func TestJSONToYAML(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"spec":{"replicas":2}}`, "spec:\n  replicas: 2\n"},
		{`{"spec":{"template":{"spec":{"containers":[{"name":"web","resources":{"limits":{},"requests":{"cpu":"100m"}}}]}}}}`,
			"spec:\n  template:\n    spec:\n      containers:\n      - name: web\n        resources:\n          limits: {}\n          requests:\n            cpu: 100m\n"},
		{`{"b":null,"a":[],"c":["1","true","yes","Off","1:20","null","25%","x: y","",1.5,false]}`,
			"b: null\na: []\nc:\n- \"1\"\n- \"true\"\n- \"yes\"\n- \"Off\"\n- \"1:20\"\n- \"null\"\n- 25%\n- 'x: y'\n- \"\"\n- 1.5\n- false\n"},
	} {
		got, err := jsonToYAML([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if diff := cmp.Diff(tc.want, string(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
		var back any
		if err := yaml.Unmarshal(got, &back); err != nil {
			t.Errorf("%s: the YAML does not read back: %v", tc.in, err)
		}
	}
	for _, bad := range []string{``, `{"a":`, `{"a":1} 2`} {
		if _, err := jsonToYAML([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
