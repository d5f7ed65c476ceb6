package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Outcome is a submit backend's result as the CLI prints it: the
// result's own object with the run's exit code and where that code came
// from ("driver" | "prebake"), which the CLI decides from the result's
// error; the backends only say what failed. The two keys sit where the
// documents have always had them: "exitCode" before the result's
// "driverExitCode" (without one, before its "reason"), and "source"
// before its "reason". The bytes are those encoding/json writes for a
// struct of R's fields with the two spliced in (Shape).
type Outcome[R any] struct {
	ExitCode int
	Source   string
	// Result is a struct or a pointer to one, with a "reason" key.
	Result R
}

// MarshalJSON writes the result's object with exitCode and source.
func (o Outcome[R]) MarshalJSON() ([]byte, error) {
	return marshalShaped(reflect.ValueOf(o.Result), o.ExitCode, o.Source, nil)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *Outcome[R]) UnmarshalJSON(b []byte) error {
	var cli struct {
		ExitCode int    `json:"exitCode"`
		Source   string `json:"source"`
	}
	if err := json.Unmarshal(b, &cli); err != nil {
		return err
	}
	o.ExitCode, o.Source = cli.ExitCode, cli.Source
	return json.Unmarshal(b, &o.Result)
}

// JSONShape is the struct type whose encoding is an Outcome's, for the
// schema reflector.
func (Outcome[R]) JSONShape() (reflect.Type, error) {
	s, err := shapeOf(reflect.TypeFor[R](), nil)
	if err != nil {
		return nil, err
	}
	return s.t, nil
}

// BatchOutcome is an Outcome in a list of them, with the line of the
// batch file its application came from, printed first ("line").
type BatchOutcome[R any] struct {
	Line int
	Outcome[R]
}

// MarshalJSON writes the line, then the Outcome's keys.
func (o BatchOutcome[R]) MarshalJSON() ([]byte, error) {
	return marshalShaped(reflect.ValueOf(o.Result), o.ExitCode, o.Source, []lead{{lineField, reflect.ValueOf(o.Line)}})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *BatchOutcome[R]) UnmarshalJSON(b []byte) error {
	var l struct {
		Line int `json:"line"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	o.Line = l.Line
	return o.Outcome.UnmarshalJSON(b)
}

// JSONShape is the struct type whose encoding is a BatchOutcome's.
func (BatchOutcome[R]) JSONShape() (reflect.Type, error) {
	s, err := shapeOf(reflect.TypeFor[R](), []reflect.StructField{lineField})
	if err != nil {
		return nil, err
	}
	return s.t, nil
}

// Shaper is a type that marshals itself as the struct type JSONShape
// returns would; the schema reflector describes that type.
type Shaper interface {
	JSONShape() (reflect.Type, error)
}

var (
	exitCodeField = reflect.StructField{Name: "ExitCode", Type: reflect.TypeFor[int](), Tag: `json:"exitCode"`}
	sourceField   = reflect.StructField{Name: "Source", Type: reflect.TypeFor[string](), Tag: `json:"source"`}
	lineField     = reflect.StructField{Name: "Line", Type: reflect.TypeFor[int](), Tag: `json:"line"`}
)

// Where a shape's field takes its value from: R's field i (>= 0), or one
// of these.
const (
	fromExitCode = -1
	fromSource   = -2
	fromLead     = -3 // fromLead-i: lead i
)

type shape struct {
	t    reflect.Type
	from []int
}

type lead struct {
	f reflect.StructField
	v reflect.Value
}

// shapeOf is the struct type of leads, then rt's exported fields (rt a
// struct or a pointer to one) with ExitCode and Source spliced in.
func shapeOf(rt reflect.Type, leads []reflect.StructField) (shape, error) {
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	if rt.Kind() != reflect.Struct {
		return shape{}, fmt.Errorf("jsondoc: an Outcome of %s, not of a struct", rt)
	}
	var s shape
	var fields []reflect.StructField
	for i, f := range leads {
		fields = append(fields, f)
		s.from = append(s.from, fromLead-i)
	}
	keys := map[string]int{}
	for i := 0; i < rt.NumField(); i++ {
		if sf := rt.Field(i); sf.IsExported() {
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			keys[name] = i
		}
	}
	reason, ok := keys["reason"]
	if !ok {
		return shape{}, fmt.Errorf("jsondoc: an Outcome of %s, which has no \"reason\"", rt)
	}
	code, ok := keys["driverExitCode"]
	if !ok {
		code = reason
	}
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		if i == code {
			fields, s.from = append(fields, exitCodeField), append(s.from, fromExitCode)
		}
		if i == reason {
			fields, s.from = append(fields, sourceField), append(s.from, fromSource)
		}
		if !sf.IsExported() {
			continue
		}
		if sf.Anonymous {
			return shape{}, fmt.Errorf("jsondoc: an Outcome of %s, which embeds %s", rt, sf.Type)
		}
		switch sf.Name {
		case exitCodeField.Name, sourceField.Name, lineField.Name:
			return shape{}, fmt.Errorf("jsondoc: an Outcome of %s, which has its own %s", rt, sf.Name)
		}
		fields, s.from = append(fields, reflect.StructField{Name: sf.Name, Type: sf.Type, Tag: sf.Tag}), append(s.from, i)
	}
	s.t = reflect.StructOf(fields)
	return s, nil
}

// marshalShaped encodes r (a struct or a pointer to one) as its shape;
// HTML is not escaped, so that the encoder that calls MarshalJSON decides.
func marshalShaped(r reflect.Value, code int, source string, leads []lead) ([]byte, error) {
	if r.Kind() == reflect.Pointer {
		if r.IsNil() {
			return nil, errors.New("jsondoc: an Outcome of a nil result")
		}
		r = r.Elem()
	}
	lf := make([]reflect.StructField, len(leads))
	for i, l := range leads {
		lf[i] = l.f
	}
	s, err := shapeOf(r.Type(), lf)
	if err != nil {
		return nil, err
	}
	v := reflect.New(s.t).Elem()
	for i, from := range s.from {
		switch {
		case from >= 0:
			v.Field(i).Set(r.Field(from))
		case from == fromExitCode:
			v.Field(i).SetInt(int64(code))
		case from == fromSource:
			v.Field(i).SetString(source)
		default:
			v.Field(i).Set(leads[fromLead-from].v)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v.Interface()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
