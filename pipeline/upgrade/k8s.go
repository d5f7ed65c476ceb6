package upgrade

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s/native"
)

// KubernetesDiff is the difference between the objects the two lines'
// spark-submit would create for the job (the native submitter's per-line
// rules, dry-run on both sides with the same names).
type KubernetesDiff struct {
	// Skipped says why no comparison was made ("" when one was).
	Skipped string `json:"skipped,omitempty"`
	// Changes are the fields that differ, by object then path.
	Changes []FieldChange `json:"changes"`
}

// FieldChange is one field of one object: From is absent ("") when only
// the target sets it, To when only the current line does.
type FieldChange struct {
	Object string `json:"object"` // Kind/name
	Path   string `json:"path"`   // dotted, [i] for list items
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
}

// fixedRand is the same "random" bytes for both sides: the names match.
type fixedRand struct{}

func (fixedRand) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 7
	}
	return len(p), nil
}

// kubernetesDiff is nil for a job that is not a k8s:// submission.
func kubernetesDiff(sub *submit.Submission, from, to string) (*KubernetesDiff, error) {
	if m, _ := sub.GivenMaster(); !strings.HasPrefix(m, "k8s://") {
		return nil, nil
	}
	env := map[string]string{}
	for _, kv := range sub.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	build := func(v string) (map[string]string, error) {
		if strings.Count(v, ".") < 2 {
			v += ".0"
		}
		in, err := native.FromSubmission(sub, v, env)
		if err != nil {
			return nil, err
		}
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		objs, err := native.Build(in, native.WithRand(fixedRand{}), native.WithClock(func() time.Time { return clock }), native.WithAppID("spark-upgrade-report"))
		if err != nil {
			return nil, err
		}
		return flattenObjects(objs)
	}
	a, err := build(from)
	if err == nil {
		var b map[string]string
		if b, err = build(to); err == nil {
			return &KubernetesDiff{Changes: diffFlat(a, b)}, nil
		}
	}
	var u *native.UnsupportedError
	if errors.As(err, &u) || errors.Is(err, native.ErrUnsupported) {
		return &KubernetesDiff{Skipped: err.Error(), Changes: []FieldChange{}}, nil
	}
	return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("building the Kubernetes objects: %w", err))
}

// flattenObjects is every leaf of the objects, "Kind/name\x00path" →
// value (JSON), with spark.properties one entry per key.
func flattenObjects(o *native.Objects) (map[string]string, error) {
	out := map[string]string{}
	// Owned()[:0:0] is an empty []metav1.Object: the pod first, as Spark creates them.
	objs := append(o.Owned()[:0:0], o.Pod)
	objs = append(objs, o.Owned()...)
	for _, x := range objs {
		b, err := json.Marshal(x)
		if err != nil {
			return nil, errdefs.New(errdefs.Internal, err)
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, errdefs.New(errdefs.Internal, err)
		}
		m, _ := v.(map[string]any)
		obj := native.KindOf(x) + "/" + x.GetName()
		if data, ok := m["data"].(map[string]any); ok {
			if _, ok := data["spark.properties"]; ok {
				delete(data, "spark.properties")
				for k, pv := range o.Properties {
					out[obj+"\x00data.spark.properties["+k+"]"] = pv
				}
			}
		}
		flatten(out, obj+"\x00", v)
	}
	return out, nil
}

// flatten adds the leaves of v under prefix.
func flatten(out map[string]string, prefix string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := prefix + k
			if !strings.HasSuffix(prefix, "\x00") {
				p = prefix + "." + k
			}
			flatten(out, p, e)
		}
	case []any:
		for i, e := range x {
			flatten(out, fmt.Sprintf("%s[%d]", prefix, i), e)
		}
	case string:
		out[prefix] = x
	case nil:
	default:
		b, _ := json.Marshal(x)
		out[prefix] = string(b)
	}
}

// diffFlat lists the keys whose values differ, sorted.
func diffFlat(a, b map[string]string) []FieldChange {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	out := []FieldChange{}
	for k := range keys {
		av, aok := a[k]
		bv, bok := b[k]
		if aok == bok && av == bv {
			continue
		}
		obj, path, _ := strings.Cut(k, "\x00")
		out = append(out, FieldChange{Object: obj, Path: path, From: av, To: bv})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Object != out[j].Object {
			return out[i].Object < out[j].Object
		}
		return out[i].Path < out[j].Path
	})
	return out
}
