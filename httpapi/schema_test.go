package httpapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// validate checks a decoded JSON value against a schema of the OpenAPI
// document. It understands the keywords the generator emits: $ref, type
// (one or a list), properties, required, additionalProperties, items,
// enum, anyOf, allOf, pattern, minimum and maximum.
func validate(doc map[string]any, schema map[string]any, v any, path string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if ref, ok := schema["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		s, ok := doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
		if !ok {
			fail("dangling $ref %s", ref)
			return errs
		}
		return validate(doc, s, v, path)
	}
	if all, ok := schema["allOf"].([]any); ok {
		for _, s := range all {
			errs = append(errs, validate(doc, s.(map[string]any), v, path)...)
		}
	}
	if any_, ok := schema["anyOf"].([]any); ok {
		var all []string
		for _, s := range any_ {
			e := validate(doc, s.(map[string]any), v, path)
			if len(e) == 0 {
				all = nil
				break
			}
			all = append(all, e...)
		}
		if all != nil {
			fail("matches none of anyOf: %v", all)
		}
	}
	if t, ok := schema["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, x := range t {
				types = append(types, x.(string))
			}
		}
		if !typeIn(v, types) {
			fail("%s is not of type %v", short(v), types)
			return errs
		}
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if e == v {
				found = true
			}
		}
		if !found {
			fail("%s not in enum %v", short(v), enum)
		}
	}
	if p, ok := schema["pattern"].(string); ok {
		if s, isStr := v.(string); isStr && !regexp.MustCompile(p).MatchString(s) {
			fail("%q does not match %s", s, p)
		}
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if m, ok := number(schema["minimum"]); ok && f < m {
			fail("%v below minimum %v", f, m)
		}
		if m, ok := number(schema["maximum"]); ok && f > m {
			fail("%v above maximum %v", f, m)
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		for _, r := range asList(schema["required"]) {
			if _, ok := v[r.(string)]; !ok {
				fail("missing required %q", r)
			}
		}
		for k, val := range v {
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, validate(doc, ps, val, path+"."+k)...)
				continue
			}
			switch ap := schema["additionalProperties"].(type) {
			case bool:
				if !ap {
					fail("property %q not in the schema", k)
				}
			case map[string]any:
				errs = append(errs, validate(doc, ap, val, path+"."+k)...)
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, x := range v {
				errs = append(errs, validate(doc, items, x, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return errs
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

func typeIn(v any, types []string) bool {
	for _, t := range types {
		switch t {
		case "null":
			if v == nil {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "number":
			if _, ok := v.(json.Number); ok {
				return true
			}
		case "integer":
			if n, ok := v.(json.Number); ok && !strings.ContainsAny(n.String(), ".eE") {
				return true
			}
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		}
	}
	return false
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		b = append(b[:60], "…"...)
	}
	return string(b)
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("invalid JSON: %v\n%.300s", err, b)
	}
	return v
}

// TestValidatorCatchesDrift makes sure the validator can fail: a response
// with an extra field, a missing field, a wrong type or a placeholder where
// null belongs must each be caught.
func TestValidatorCatchesDrift(t *testing.T) {
	doc := decode(t, newAPI(t, Config{}).openapiBytes()).(map[string]any)
	problem := map[string]any{"$ref": "#/components/schemas/Problem"}
	good := `{"type":"about:blank","title":"Not Found","status":404,"detail":"x","code":"not_found","param":null,"instance":"/x"}`
	if errs := validate(doc, problem, decode(t, []byte(good)), "$"); len(errs) > 0 {
		t.Fatalf("valid problem refused: %v", errs)
	}
	bad := map[string]string{
		"extra field":   `{"type":"about:blank","title":"Not Found","status":404,"detail":"x","code":"not_found","param":null,"instance":"/x","extra":1}`,
		"missing field": `{"type":"about:blank","title":"Not Found","status":404,"detail":"x","code":"not_found","instance":"/x"}`,
		"wrong type":    `{"type":"about:blank","title":"Not Found","status":"404","detail":"x","code":"not_found","param":null,"instance":"/x"}`,
		"unknown code":  `{"type":"about:blank","title":"Not Found","status":404,"detail":"x","code":"oops","param":null,"instance":"/x"}`,
	}
	for name, body := range bad {
		if errs := validate(doc, problem, decode(t, []byte(body)), "$"); len(errs) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
	tl := map[string]any{"$ref": "#/components/schemas/Timeline"}
	dash := `{"started":"–","started_precision":"time","detected":null,"detected_precision":null,"mitigated":null,"mitigated_precision":null,"resolved":null,"resolved_precision":null,"reported":null,"reported_precision":null}`
	if errs := validate(doc, tl, decode(t, []byte(dash)), "$"); len(errs) == 0 {
		t.Error("a dash placeholder for a time was not caught")
	}
	for _, s := range []string{"2026", "2026-08", "2026-08-24", "2026-08-24T16:56:00Z"} {
		ok := `{"started":"` + s + `","started_precision":"time","detected":null,"detected_precision":null,"mitigated":null,"mitigated_precision":null,"resolved":null,"resolved_precision":null,"reported":null,"reported_precision":null}`
		if errs := validate(doc, tl, decode(t, []byte(ok)), "$"); len(errs) > 0 {
			t.Errorf("%s refused: %v", s, errs)
		}
		if len(s) > 10 {
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				t.Errorf("pattern admits non-RFC 3339 %q", s)
			}
		}
	}
}
