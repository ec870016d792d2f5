package httpapi

import (
	"reflect"
	"strings"
)

// object is a JSON object of the OpenAPI document. Maps encode with sorted
// keys, so the document is byte-for-byte stable.
type object = map[string]any

// schemas generates JSON Schemas (draft 2020-12, as OpenAPI 3.1 uses) from
// the Go types of types.go: one named schema per struct, every field
// required (the API never omits a field), pointers nullable, and no
// properties beyond those declared, so that a test checking responses
// against the document also catches a field added to a type but not seen
// by the schema.
type schemas struct {
	defs object
}

func (s *schemas) of(t reflect.Type) object {
	switch t.Kind() {
	case reflect.Pointer:
		inner := s.of(t.Elem())
		if ref, ok := inner["$ref"]; ok {
			return object{"anyOf": []any{object{"$ref": ref}, object{"type": "null"}}}
		}
		inner["type"] = []any{inner["type"], "null"}
		if enum, ok := inner["enum"].([]any); ok {
			inner["enum"] = append(enum, nil)
		}
		return inner
	case reflect.String:
		return object{"type": "string"}
	case reflect.Bool:
		return object{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return object{"type": "integer"}
	case reflect.Float64:
		return object{"type": "number"}
	case reflect.Slice:
		return object{"type": "array", "items": s.of(t.Elem())}
	case reflect.Map:
		return object{"type": "object", "additionalProperties": s.of(t.Elem())}
	case reflect.Struct:
		name := t.Name()
		if _, done := s.defs[name]; !done {
			s.defs[name] = nil // break cycles
			s.defs[name] = s.structSchema(t)
		}
		return object{"$ref": "#/components/schemas/" + name}
	}
	panic("httpapi: no schema for Go type " + t.String())
}

func (s *schemas) structSchema(t reflect.Type) object {
	props := object{}
	var required []any
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous {
				walk(f.Type) // embedded: its fields are promoted in JSON
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			fs := s.of(f.Type)
			if d := f.Tag.Get("doc"); d != "" {
				if _, isRef := fs["$ref"]; isRef {
					// A sibling of $ref is allowed in 3.1, but some tools
					// drop it; wrap to keep the description.
					fs = object{"allOf": []any{fs}, "description": d}
				} else {
					fs["description"] = d
				}
			}
			if p := f.Tag.Get("pattern"); p != "" {
				fs["pattern"] = p
			}
			if e := f.Tag.Get("enum"); e != "" {
				var vals []any
				for _, v := range strings.Split(e, ",") {
					vals = append(vals, v)
				}
				if f.Type.Kind() == reflect.Pointer {
					vals = append(vals, nil)
				}
				fs["enum"] = vals
			}
			props[name] = fs
			required = append(required, name)
		}
	}
	walk(t)
	return object{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// openAPIDocument describes every route of the table.
func (a *api) openAPIDocument() object {
	s := &schemas{defs: object{}}
	problemRef := s.of(reflect.TypeOf(Problem{}))
	problem := func(desc string) object {
		return object{"description": desc, "content": object{"application/problem+json": object{"schema": problemRef}}}
	}
	header := func(desc string) object {
		return object{"description": desc, "schema": object{"type": "string"}}
	}
	paths := object{}
	for _, rt := range a.routes {
		var params []any
		for _, p := range rt.Params {
			ps := object{"type": p.Type}
			if len(p.Enum) > 0 {
				var e []any
				for _, v := range p.Enum {
					e = append(e, v)
				}
				ps["enum"] = e
			}
			if p.Min != nil {
				ps["minimum"] = *p.Min
			}
			if p.Max != nil {
				ps["maximum"] = *p.Max
			}
			if p.Pattern != "" {
				ps["pattern"] = p.Pattern
			}
			po := object{"name": p.Name, "in": p.In, "description": p.Doc, "schema": ps}
			if p.In == "path" {
				po["required"] = true
			}
			if p.Repeat {
				po["schema"] = object{"type": "array", "items": ps}
				po["style"] = "form"
				po["explode"] = true
			}
			if p.Example != "" {
				po["example"] = p.Example
			}
			params = append(params, po)
		}
		var body object
		switch {
		case rt.ID == "getOpenAPI":
			body = object{"type": "object", "description": "An OpenAPI 3.1 document."}
		case rt.Body != nil:
			body = s.of(reflect.TypeOf(rt.Body))
		default:
			body = object{"type": "string"}
		}
		okHeaders := object{
			"ETag":          header("Strong validator of this representation; send it back in If-None-Match to get 304."),
			"Cache-Control": header("How long the response may be reused before revalidating."),
			"Vary":          header("Accept-Encoding: the body is gzip-compressed when the client accepts it."),
		}
		if rt.Paged {
			okHeaders["Link"] = header(`RFC 8288 links to the first, prev, next and last pages: <url>; rel="next".`)
		}
		if rt.Media != "" && rt.Media != "application/json" {
			okHeaders["Content-Disposition"] = header("attachment, with a file name.")
		}
		mediaKey, _, _ := strings.Cut(rt.media(), ";")
		responses := object{
			"200": object{"description": "OK", "headers": okHeaders, "content": object{mediaKey: object{"schema": body}}},
			"304": object{"description": "Not Modified: the ETag in If-None-Match is current."},
			"400": problem("A query parameter is unknown, repeated, or has a bad value; param names it."),
			"406": problem("The Accept header rules out " + mediaKey + "."),
			"413": problem("The request has a body; the API takes none."),
			"414": problem("The URL, or the q parameter, is too long."),
			"429": problem("Too many requests from this address; see Retry-After."),
			"500": problem("An internal error; its detail is logged, not shown."),
		}
		if rt.NotFound {
			responses["404"] = problem("No case, facet, term or check by that name; param names which.")
		}
		get := object{
			"operationId": rt.ID,
			"summary":     rt.Summary,
			"description": rt.Doc,
			"responses":   responses,
		}
		if len(params) > 0 {
			get["parameters"] = params
		}
		// HEAD answers as GET does, statuses and headers alike, without
		// a body.
		headResponses := object{}
		for code, resp := range responses {
			r := object{"description": resp.(object)["description"]}
			if code == "200" {
				r["headers"] = okHeaders
			}
			headResponses[code] = r
		}
		head := object{
			"operationId": rt.ID + "Head",
			"summary":     rt.Summary + " (headers only)",
			"description": "As GET, without the body: the same status and headers, including ETag and Content-Length.",
			"responses":   headResponses,
		}
		if len(params) > 0 {
			head["parameters"] = params
		}
		paths[strings.TrimSuffix(rt.Path, "{$}")] = object{"get": get, "head": head}
	}
	server := a.links.base
	if server == "" {
		server = "/"
	}
	return object{
		"openapi": "3.1.0",
		"info": object{
			"title":   "Incident Library API",
			"version": "1.0.0",
			"description": "Public production incidents, structured and searchable. Read-only, no key, open CORS. " +
				"Every response has an ETag (send If-None-Match for 304), Cache-Control, and gzip on request. " +
				"Unknown values are null; timestamps are RFC 3339 UTC or a shorter calendar form with a *_precision field. " +
				"Errors are RFC 9457 problem documents with a stable code. Other methods than GET, HEAD and OPTIONS get 405 " +
				"with Allow; unknown paths get 404. Requests over the per-address rate limit get 429 with Retry-After.",
		},
		// Public data: no operation needs credentials.
		"security":          []any{},
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"servers":           []any{object{"url": server}},
		"paths":             paths,
		"components":        object{"schemas": s.defs},
	}
}
