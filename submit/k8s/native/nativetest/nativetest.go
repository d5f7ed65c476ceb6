// Package nativetest holds what the equivalence tests of the native
// submitter share: the argv cases, the golden format and the normaliser
// that removes what is random in a submission (ids, name suffixes, times,
// UIDs, paths of the machine) so that spark-submit's objects and the native
// builder's compare equal.
package nativetest

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/prebake/prebake/internal/javaprops"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s/native"
)

// NormaliseOption changes what Normalise keeps.
type NormaliseOption func(*normaliseOptions)

type normaliseOptions struct{ keepEmptyProperties, keepOrder bool }

// KeepOrder compares env, volumes and volumeMounts in the order sent
// (Spark's: its feature steps in turn, each map in Scala's iteration
// order) instead of sorted.
func KeepOrder() NormaliseOption {
	return func(o *normaliseOptions) { o.keepOrder = true }
}

// Empty stands for an empty value in spark.properties when
// KeepEmptyProperties is given.
const Empty = "$EMPTY"

// KeepEmptyProperties keeps the spark.properties keys whose value is
// empty (as Empty): Spark 3.5.7+ writes "spark.submit.pyFiles=" for a jar
// application, and a missing key is a difference.
func KeepEmptyProperties() NormaliseOption {
	return func(o *normaliseOptions) { o.keepEmptyProperties = true }
}

// Golden is one recorded spark-submit: the argv with placeholders, and the
// objects it sent to the API server (request bodies), normalised.
type Golden struct {
	Case         string            `json:"case"`
	SparkVersion string            `json:"sparkVersion"`
	Namespace    string            `json:"namespace"`
	Args         []string          `json:"args"`
	Env          map[string]string `json:"env,omitempty"`
	// Objects are the normalised request bodies, in the order sent.
	Objects []map[string]any `json:"objects"`
}

// Placeholders in Golden.Args and in normalised objects.
const (
	Master   = "$MASTER"   // the API server URL
	TestData = "$TESTDATA" // the testdata/equiv/files directory
	Tmp      = "$TMP"      // the per-run temporary directory (CA, token)
)

// Expand replaces the placeholders in args.
func Expand(args []string, repl map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for k, v := range repl {
			a = strings.ReplaceAll(a, k, v)
		}
		out[i] = a
	}
	return out
}

var (
	appIDRe   = regexp.MustCompile(`spark-[0-9a-f]{32}`)
	uuidDirRe = regexp.MustCompile(`/var/data/spark-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	cmRe      = regexp.MustCompile(`^spark-drv-([0-9a-f]{7,16})-conf-map$`)
	svcLongRe = regexp.MustCompile(`^spark-([0-9a-f]{7,16})-driver-svc$`)
	idSuffix  = regexp.MustCompile(`-([0-9a-f]{7,16})-(driver|driver-svc|driver-pvc-[0-9]+|driver-podspec-conf-map)$`)
)

// Normalise makes objects (decoded JSON of pods, services, configmaps,
// PVCs) comparable: server-set metadata dropped, spark.properties parsed
// into a map, the random parts replaced by placeholders ($APP_ID, $ID1..,
// $UUID, $TIME), repl's strings (machine paths, URLs) by their keys, zero
// values ("", false, null, {}, []) dropped as Go's omitempty does, and the
// lists Spark fills from hash maps (env, volumes, volumeMounts) sorted.
func Normalise(objs []map[string]any, repl map[string]string, opts ...NormaliseOption) ([]map[string]any, error) {
	var no normaliseOptions
	for _, opt := range opts {
		opt(&no)
	}
	b, err := json.Marshal(objs)
	if err != nil {
		return nil, err
	}
	s := string(b)
	// Random name suffixes, found in the names Spark derives, by role: the
	// resource name prefix's ($ID), the driver ConfigMap's ($CM_ID) and a
	// long app's service name's ($SVC_ID).
	ids := map[string]string{}
	for _, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		for re, ph := range map[*regexp.Regexp]string{cmRe: "$CM_ID", svcLongRe: "$SVC_ID", idSuffix: "$ID"} {
			if m := re.FindStringSubmatch(name); m != nil {
				if _, ok := ids[m[1]]; !ok || ph != "$ID" {
					ids[m[1]] = ph
				}
			}
		}
	}
	s = appIDRe.ReplaceAllString(s, "$$APP_ID")
	s = uuidDirRe.ReplaceAllString(s, "/var/data/spark-$$UUID")
	for id, ph := range ids {
		s = strings.ReplaceAll(s, "-"+id+"-", "-"+ph+"-")
		s = strings.ReplaceAll(s, "-"+id+".", "-"+ph+".")
	}
	keys := make([]string, 0, len(repl))
	for k := range repl {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(repl[keys[i]]) > len(repl[keys[j]]) })
	var out []map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	for _, o := range out {
		cleanMeta(o)
		if data, ok := o["data"].(map[string]any); ok {
			if p, ok := data["spark.properties"].(string); ok {
				parsed, err := javaprops.Map([]byte(p))
				if err != nil {
					return nil, fmt.Errorf("spark.properties: %w", err)
				}
				props := map[string]any{}
				for k, v := range parsed {
					if k == "spark.app.submitTime" {
						v = "$TIME"
					}
					if v == "" && no.keepEmptyProperties {
						v = Empty
					}
					props[k] = v
				}
				data["spark.properties"] = props
			}
		}
		localDirs(o)
		if !no.keepOrder {
			sortLists(o)
		}
		canonQuantities(o, false)
	}
	// The machine's strings last, inside the parsed properties too.
	b, _ = json.Marshal(out)
	s = string(b)
	for _, k := range keys {
		if repl[k] != "" {
			s = strings.ReplaceAll(s, jsonEscape(repl[k]), jsonEscape(k))
		}
	}
	out = nil
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	for i := range out {
		out[i], _ = dropZero(out[i]).(map[string]any)
	}
	return out, nil
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

func cleanMeta(o map[string]any) {
	delete(o, "status")
	md, ok := o["metadata"].(map[string]any)
	if !ok {
		return
	}
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "namespace"} {
		delete(md, k)
	}
	if refs, ok := md["ownerReferences"].([]any); ok {
		for _, r := range refs {
			if m, ok := r.(map[string]any); ok {
				m["uid"] = "$UID"
			}
		}
	}
}

// sortLists sorts the lists whose order Spark takes from hash maps.
func sortLists(o map[string]any) {
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		return
	}
	sortBy(spec, "volumes", "name")
	for _, key := range []string{"containers", "initContainers"} {
		cs, _ := spec[key].([]any)
		for _, c := range cs {
			if cm, ok := c.(map[string]any); ok {
				sortBy(cm, "env", "name")
				sortBy(cm, "volumeMounts", "mountPath")
			}
		}
	}
}

func sortBy(m map[string]any, list, key string) {
	l, ok := m[list].([]any)
	if !ok {
		return
	}
	sort.SliceStable(l, func(i, j int) bool {
		a, _ := l[i].(map[string]any)
		b, _ := l[j].(map[string]any)
		return fmt.Sprint(a[key]) < fmt.Sprint(b[key])
	})
}

// dropZero removes "", false, nil, empty maps and empty lists.
func dropZero(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			e = dropZero(e)
			if isZero(e) {
				delete(x, k)
			} else {
				x[k] = e
			}
		}
		return x
	case []any:
		for i := range x {
			x[i] = dropZero(x[i])
		}
		return x
	}
	return v
}

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// ToMaps decodes typed objects into generic JSON maps.
func ToMaps(objs ...any) ([]map[string]any, error) {
	var out []map[string]any
	for _, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// ReadGolden reads a golden file.
func ReadGolden(path string) (*Golden, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var g Golden
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &g, nil
}

// WriteGolden writes g as indented JSON.
func WriteGolden(path string, g *Golden) error {
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// canonQuantities rewrites resource quantities in canonical form ("0.1"
// and "100m" are one quantity).
func canonQuantities(v any, inResources bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (inResources || k == "sizeLimit") {
				if q, err := resource.ParseQuantity(s); err == nil {
					x[k] = q.String()
				}
				continue
			}
			canonQuantities(e, k == "requests" || k == "limits" || k == "capacity")
		}
	case []any:
		for _, e := range x {
			canonQuantities(e, false)
		}
	}
}

// localDirs undoes Spark's shuffle of the local dirs (LocalDirsFeatureStep
// spreads them in a random order): SPARK_LOCAL_DIRS is sorted and each
// spark-local-dir-<i> volume is named by its mount path.
func localDirs(o map[string]any) {
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		return
	}
	rename := map[string]string{}
	cs, _ := spec["containers"].([]any)
	for _, c := range cs {
		cm, _ := c.(map[string]any)
		envs, _ := cm["env"].([]any)
		for _, e := range envs {
			em, _ := e.(map[string]any)
			if em["name"] == "SPARK_LOCAL_DIRS" {
				if v, ok := em["value"].(string); ok {
					parts := strings.Split(v, ",")
					sort.Strings(parts)
					em["value"] = strings.Join(parts, ",")
				}
			}
		}
		mounts, _ := cm["volumeMounts"].([]any)
		for _, m := range mounts {
			mm, _ := m.(map[string]any)
			name, _ := mm["name"].(string)
			if localDirName.MatchString(name) {
				to := fmt.Sprintf("spark-local-dir-%v", mm["mountPath"])
				rename[name] = to
				mm["name"] = to
			}
		}
	}
	vols, _ := spec["volumes"].([]any)
	for _, v := range vols {
		vm, _ := v.(map[string]any)
		if name, ok := vm["name"].(string); ok && rename[name] != "" {
			vm["name"] = rename[name]
		}
	}
}

var localDirName = regexp.MustCompile(`^spark-local-dir-[0-9]+$`)

// FromArgv is native.FromSubmission of args loaded (submit.LoadSubmission)
// with the environment env, as the backend loads a submission.
func FromArgv(args []string, version string, env map[string]string) (*native.Input, error) {
	environ := make([]string, 0, len(env))
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	sort.Strings(environ)
	sub, err := submit.LoadSubmission(args, environ)
	if err != nil {
		return nil, err
	}
	return native.FromSubmission(sub, version, env)
}
