package jsondoc

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Validate checks the JSON document data against s, for the keywords the
// reflector emits: it returns every violation, as "path: problem".
func (s *Schema) Validate(data []byte) []string {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var errs []string
	s.validate(s, v, "$", &errs)
	return errs
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := x.Int64(); err == nil && !strings.ContainsAny(x.String(), ".eE") {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func (root *Schema) validate(n *Schema, v any, path string, errs *[]string) {
	if n.Ref != "" {
		d := root.resolve(n)
		if d == nil {
			*errs = append(*errs, path+": unknown "+n.Ref)
			return
		}
		n = d
	}
	if len(n.AnyOf) > 0 {
		for _, a := range n.AnyOf {
			var sub []string
			root.validate(a, v, path, &sub)
			if len(sub) == 0 {
				return
			}
		}
		*errs = append(*errs, fmt.Sprintf("%s: %s matches none of anyOf", path, jsonType(v)))
		return
	}
	if len(n.Type) > 0 {
		jt := jsonType(v)
		if !slices.Contains(n.Type, jt) && !(jt == "integer" && slices.Contains(n.Type, "number")) {
			*errs = append(*errs, fmt.Sprintf("%s: %s, want %s", path, jt, strings.Join(n.Type, "|")))
			return
		}
	}
	switch x := v.(type) {
	case []any:
		if n.Items != nil {
			for i, e := range x {
				root.validate(n.Items, e, fmt.Sprintf("%s[%d]", path, i), errs)
			}
		}
	case map[string]any:
		for _, k := range n.Required {
			if _, ok := x[k]; !ok {
				*errs = append(*errs, fmt.Sprintf("%s: required key %q missing", path, k))
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := path + "." + k
			switch ps, ok := n.Properties[k]; {
			case ok:
				root.validate(ps, x[k], p, errs)
			case n.AdditionalProperties != nil:
				root.validate(n.AdditionalProperties, x[k], p, errs)
			case n.Closed:
				*errs = append(*errs, p+": not in the schema")
			}
		}
	}
}
