package mcpserver

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plainArgumentErrors rewrites the protocol library's schema-validation
// errors ("validating \"arguments\": validating root: validating
// /properties/limit: maximum: 51 is greater than 50") in plain words that
// name the argument and what is valid. The rewrite never repeats the value
// sent, so a 2,000-character query is not echoed back.
func (h *handlers) plainArgumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" || err != nil {
			return res, err
		}
		r, ok := res.(*mcp.CallToolResult)
		if !ok || !r.IsError || len(r.Content) != 1 {
			return res, err
		}
		tc, ok := r.Content[0].(*mcp.TextContent)
		if !ok || !(strings.HasPrefix(tc.Text, `validating "arguments"`) || strings.HasPrefix(tc.Text, "unmarshaling")) {
			return res, err
		}
		tool := ""
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
			tool = p.Name
		}
		msg := plainArgumentError(h.inputSchemas[tool], tc.Text)
		out := &mcp.CallToolResult{}
		out.SetError(toolError{msg})
		return out, nil
	}
}

var (
	propertyPath = regexp.MustCompile(`/properties/([A-Za-z_]+)`)
	keyword      = regexp.MustCompile(`(?:^|: )(type|enum|minimum|maximum|minLength|maxLength|minItems|maxItems|required|unexpected additional properties)\b`)
	quotedNames  = regexp.MustCompile(`"([A-Za-z_]+)"`)
)

// plainArgumentError words one validation error against the tool's schema.
func plainArgumentError(schema *jsonschema.Schema, raw string) string {
	if strings.HasPrefix(raw, "unmarshaling") {
		return "the arguments are not a JSON object of the tool's arguments; see its input schema"
	}
	var arg string
	if m := propertyPath.FindAllStringSubmatch(raw, -1); len(m) > 0 {
		arg = m[len(m)-1][1]
	}
	kws := keyword.FindAllStringSubmatch(raw, -1)
	kw := ""
	if len(kws) > 0 {
		kw = kws[len(kws)-1][1]
	}
	var prop *jsonschema.Schema
	if schema != nil && arg != "" {
		prop = schema.Properties[arg]
	}
	valid := func() string {
		if schema == nil {
			return ""
		}
		names := make([]string, 0, len(schema.Properties))
		for n := range schema.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		return strings.Join(names, ", ")
	}
	switch kw {
	case "required":
		var missing []string
		for _, m := range quotedNames.FindAllStringSubmatch(raw[strings.Index(raw, "required"):], -1) {
			missing = append(missing, m[1])
		}
		return fmt.Sprintf("missing argument %s: it is required", strings.Join(missing, ", "))
	case "unexpected additional properties":
		var extra []string
		for _, m := range quotedNames.FindAllStringSubmatch(raw[strings.Index(raw, "unexpected additional properties"):], -1) {
			extra = append(extra, m[1])
		}
		return fmt.Sprintf("unknown argument %s; the tool takes: %s", truncate(strings.Join(extra, ", "), 60), valid())
	}
	if prop == nil {
		return "the arguments do not match the tool's input schema; it takes: " + valid()
	}
	switch kw {
	case "minimum", "maximum":
		if prop.Minimum != nil && prop.Maximum != nil {
			return fmt.Sprintf("%s must be between %g and %g", arg, *prop.Minimum, *prop.Maximum)
		}
	case "maxLength":
		if prop.MaxLength != nil {
			return fmt.Sprintf("%s is longer than %d characters; send at most %d (the question itself or its key words)", arg, *prop.MaxLength, *prop.MaxLength)
		}
	case "minLength":
		return arg + " is too short"
	case "maxItems":
		if prop.MaxItems != nil {
			return fmt.Sprintf("%s lists too many values; at most %d", arg, *prop.MaxItems)
		}
	case "enum":
		var vals []string
		for _, v := range prop.Enum {
			vals = append(vals, fmt.Sprint(v))
		}
		return fmt.Sprintf("%s must be one of: %s", arg, strings.Join(vals, ", "))
	case "type":
		return fmt.Sprintf("%s must be %s", arg, describeType(prop))
	}
	return fmt.Sprintf("%s is not valid; it must be %s", arg, describeType(prop))
}

// describeType says in words what a property takes.
func describeType(p *jsonschema.Schema) string {
	switch p.Type {
	case "array":
		if p.Items != nil && p.Items.Type == "string" {
			return "a list of strings, e.g. [\"config-change\"]"
		}
		return "a list"
	case "integer":
		if p.Minimum != nil && p.Maximum != nil {
			return fmt.Sprintf("a whole number from %g to %g", *p.Minimum, *p.Maximum)
		}
		return "a whole number"
	case "string":
		if len(p.Enum) > 0 {
			var vals []string
			for _, v := range p.Enum {
				vals = append(vals, fmt.Sprint(v))
			}
			return "one of: " + strings.Join(vals, ", ")
		}
		return "a string"
	case "boolean":
		return "true or false"
	}
	if slices.Contains(p.Types, "array") {
		return "a list"
	}
	return "of the type the input schema gives"
}
