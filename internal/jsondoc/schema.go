// Package jsondoc describes prebake's JSON documents: the registry entry of
// each one (Doc), the document types the CLI owns, a JSON Schema reflector
// over encoding/json's struct tags (Schema) and a validator for that subset
// of JSON Schema (Validate), so that a golden document can be checked
// against the schema of its Go type.
package jsondoc

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
)

// Doc is one JSON document a command prints.
type Doc struct {
	// Name is the document's file stem: docs/schemas/Name.schema.json and
	// testdata/json/Name.json.
	Name string
	// Command is what prints it, e.g. "prebake resolve -o json".
	Command string
	// Type is the Go type encoding/json marshals (a slice type for an array).
	Type reflect.Type
	// Note is one line on when the document is printed.
	Note string
	// NoGolden says why testdata/json has no example of it ("": it has).
	NoGolden string
}

// TypeOf is reflect.TypeFor: the registry's way to name a type.
func TypeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// Schema is a JSON Schema (draft 2020-12) node; the reflector emits only
// these keywords.
type Schema struct {
	SchemaURI            string             `json:"$schema,omitempty"`
	ID                   string             `json:"$id,omitempty"`
	Title                string             `json:"title,omitempty"`
	Description          string             `json:"description,omitempty"`
	Ref                  string             `json:"$ref,omitempty"`
	Type                 Types              `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	Defs                 map[string]*Schema `json:"$defs,omitempty"`
	// Closed marks an object with no other keys than Properties; it is
	// written as "additionalProperties": false.
	Closed bool `json:"-"`
}

// MarshalJSON writes Closed as "additionalProperties": false.
func (s *Schema) MarshalJSON() ([]byte, error) {
	type plain Schema
	b, err := json.Marshal((*plain)(s))
	if err != nil || !s.Closed {
		return b, err
	}
	return append(b[:len(b)-1], []byte(`,"additionalProperties":false}`)...), nil
}

// UnmarshalJSON reads "additionalProperties": false back as Closed.
func (s *Schema) UnmarshalJSON(b []byte) error {
	type plain Schema
	var raw struct {
		plain
		AP json.RawMessage `json:"additionalProperties,omitempty"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*s = Schema(raw.plain)
	switch a := strings.TrimSpace(string(raw.AP)); a {
	case "", "true":
	case "false":
		s.Closed = true
	default:
		s.AdditionalProperties = new(Schema)
		return json.Unmarshal(raw.AP, s.AdditionalProperties)
	}
	return nil
}

// Types is a schema's "type": one name, or a list.
type Types []string

// MarshalJSON writes one type as a string.
func (t Types) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return json.Marshal(t[0])
	}
	return json.Marshal([]string(t))
}

// UnmarshalJSON reads a string or a list.
func (t *Types) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*t = Types{one}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(t))
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	durationType  = reflect.TypeFor[time.Duration]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
	shaperType    = reflect.TypeFor[Shaper]()
)

// SchemaOf reflects d's Go type into a JSON Schema document: named struct
// types become $defs, so that a recursive type (a tree) has a finite schema.
// custom gives the schema of the types that marshal themselves.
func SchemaOf(d Doc, custom map[reflect.Type]*Schema) (*Schema, error) {
	r := &reflector{defs: map[string]*Schema{}, names: map[reflect.Type]string{}, custom: custom}
	s, err := r.schema(d.Type)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Name, err)
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok && !r.referenced(name) {
		// The document's own type is the root, not a definition.
		s = r.defs[name]
		delete(r.defs, name)
	}
	s.SchemaURI = "https://json-schema.org/draft/2020-12/schema"
	s.ID = d.Name + ".schema.json"
	s.Title = d.Command
	s.Description = d.Note
	if len(r.defs) > 0 {
		s.Defs = r.defs
	}
	return s, nil
}

type reflector struct {
	defs   map[string]*Schema
	names  map[reflect.Type]string
	custom map[reflect.Type]*Schema
}

// referenced reports whether a definition refers to $defs/name.
func (r *reflector) referenced(name string) bool {
	ref := "#/$defs/" + name
	var walk func(n *Schema) bool
	walk = func(n *Schema) bool {
		if n == nil {
			return false
		}
		if n.Ref == ref || walk(n.Items) || walk(n.AdditionalProperties) {
			return true
		}
		for _, p := range n.Properties {
			if walk(p) {
				return true
			}
		}
		return slices.ContainsFunc(n.AnyOf, walk)
	}
	for _, d := range r.defs {
		if walk(d) {
			return true
		}
	}
	return false
}

// defName is t's $defs key: package.Type, with a number for a clash.
func (r *reflector) defName(t reflect.Type) string {
	if n, ok := r.names[t]; ok {
		return n
	}
	pkg := t.PkgPath()
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	base := pkg + "." + t.Name()
	n := base
	for i := 2; ; i++ {
		if _, clash := r.defs[n]; !clash {
			break
		}
		n = fmt.Sprintf("%s%d", base, i)
	}
	r.names[t] = n
	return n
}

func (r *reflector) schema(t reflect.Type) (*Schema, error) {
	if t.Kind() == reflect.Pointer {
		s, err := r.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return nullable(s), nil
	}
	if c, ok := r.custom[t]; ok {
		cp := *c
		return &cp, nil
	}
	switch {
	case t == timeType:
		return &Schema{Type: Types{"string"}, Format: "date-time"}, nil
	case t == durationType:
		return &Schema{Type: Types{"integer"}, Description: "nanoseconds"}, nil
	case t == rawType:
		return &Schema{}, nil
	case t.Implements(shaperType):
		return r.shaped(t)
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return nil, fmt.Errorf("%s has its own MarshalJSON: describe it in the registry", t)
	case t.Kind() != reflect.String && (t.Implements(textType) || reflect.PointerTo(t).Implements(textType)):
		return &Schema{Type: Types{"string"}}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: Types{"boolean"}}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Schema{Type: Types{"integer"}}, nil
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: Types{"number"}}, nil
	case reflect.String:
		return &Schema{Type: Types{"string"}}, nil
	case reflect.Interface:
		return &Schema{}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &Schema{Type: Types{"string", "null"}, Format: "base64"}, nil
		}
		items, err := r.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		s := &Schema{Type: Types{"array"}, Items: items}
		if t.Kind() == reflect.Slice {
			s.Type = append(s.Type, "null")
		}
		return s, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key %s: only string keys", t.Key())
		}
		v, err := r.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return &Schema{Type: Types{"object", "null"}, AdditionalProperties: v}, nil
	case reflect.Struct:
		if t.Name() == "" {
			return r.object(t)
		}
		name := r.defName(t)
		if _, ok := r.defs[name]; !ok {
			r.defs[name] = nil // a recursive use refers to it
			s, err := r.object(t)
			if err != nil {
				return nil, err
			}
			r.defs[name] = s
		}
		return &Schema{Ref: "#/$defs/" + name}, nil
	}
	return nil, fmt.Errorf("%s: no JSON schema for kind %s", t, t.Kind())
}

// shaped is the schema of a Shaper: its shape's object, a definition
// named after t.
func (r *reflector) shaped(t reflect.Type) (*Schema, error) {
	st, err := reflect.Zero(t).Interface().(Shaper).JSONShape()
	if err != nil {
		return nil, err
	}
	if t.Name() == "" {
		return r.object(st)
	}
	name := r.defName(t)
	if _, ok := r.defs[name]; !ok {
		r.defs[name] = nil
		s, err := r.object(st)
		if err != nil {
			return nil, err
		}
		r.defs[name] = s
	}
	return &Schema{Ref: "#/$defs/" + name}, nil
}

// nullable is s that also allows null.
func nullable(s *Schema) *Schema {
	switch {
	case s.Ref != "":
		return &Schema{AnyOf: []*Schema{s, {Type: Types{"null"}}}}
	case len(s.Type) == 0 || slices.Contains(s.Type, "null"):
		return s
	}
	c := *s
	c.Type = append(append([]string{}, s.Type...), "null")
	return &c
}

// field is one key of an object, in encoding order.
type field struct {
	name      string
	depth     int
	tagged    bool
	omitEmpty bool
	t         reflect.Type
	asString  bool
}

// object is the schema of struct t: its keys as encoding/json finds them,
// embedded structs flattened, the shallowest (or tagged) field winning.
func (r *reflector) object(t reflect.Type) (*Schema, error) {
	var fields []field
	collect(t, 0, map[reflect.Type]bool{}, &fields)
	best := map[string]field{}
	count := map[string]int{}
	var order []string
	for _, f := range fields {
		b, ok := best[f.name]
		if !ok {
			order = append(order, f.name)
		}
		switch {
		case !ok || f.depth < b.depth || (f.depth == b.depth && f.tagged && !b.tagged):
			best[f.name], count[f.name] = f, 1
		case f.depth == b.depth && f.tagged == b.tagged:
			count[f.name]++
		}
	}
	s := &Schema{Type: Types{"object"}, Properties: map[string]*Schema{}, Closed: true}
	for _, n := range order {
		if count[n] > 1 { // ambiguous: encoding/json drops it
			continue
		}
		f := best[n]
		var ps *Schema
		if f.asString {
			ps = &Schema{Type: Types{"string"}}
		} else {
			var err error
			if ps, err = r.schema(f.t); err != nil {
				return nil, fmt.Errorf("%s.%s: %w", t, n, err)
			}
		}
		s.Properties[n] = ps
		if !f.omitEmpty {
			s.Required = append(s.Required, n)
		}
	}
	return s, nil
}

func collect(t reflect.Type, depth int, seen map[reflect.Type]bool, out *[]field) {
	if seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if name == "" && et.Kind() == reflect.Struct {
				collect(et, depth+1, seen, out)
				continue
			}
			if !sf.IsExported() && et.Kind() != reflect.Struct {
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		f := field{name: name, depth: depth, tagged: name != "", t: ft}
		if name == "" {
			f.name = sf.Name
		}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				f.omitEmpty = true
			case "string":
				switch ft.Kind() {
				case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
					reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64, reflect.String:
					f.asString = true
				}
			}
		}
		*out = append(*out, f)
	}
}

// Keys are the property names of s's top-level object (following a $ref),
// sorted; nil when it is not an object.
func (s *Schema) Keys() []string {
	o := s.resolve(s)
	if o == nil {
		return nil
	}
	if o.Items != nil && o.Properties == nil {
		o = s.resolve(o.Items)
	}
	var keys []string
	for k := range o.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AllKeys are the property names of every object in s, sorted.
func (s *Schema) AllKeys() []string {
	seen := map[string]bool{}
	var walk func(n *Schema)
	walk = func(n *Schema) {
		if n == nil {
			return
		}
		for k, p := range n.Properties {
			seen[k] = true
			walk(p)
		}
		walk(n.Items)
		walk(n.AdditionalProperties)
	}
	walk(s)
	for _, d := range s.Defs {
		walk(d)
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// resolve follows n's $ref into root's $defs.
func (s *Schema) resolve(n *Schema) *Schema {
	for n != nil && n.Ref != "" {
		n = s.Defs[strings.TrimPrefix(n.Ref, "#/$defs/")]
	}
	return n
}
