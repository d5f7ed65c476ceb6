package rewrite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
	"go.yaml.in/yaml/v3"
)

// A ManifestApp is what one manifest document says of its job: its
// packages, and what an AppSource needs to choose the Python half's
// wheels.
type ManifestApp struct {
	Packages submit.Packages
	// Image is the image the job's Python runs in as the manifest gives
	// it: spec.image, else spec.driver.image, else spec.executor.image
	// ("" when none; WithImage's replaces it in the rewritten manifest).
	Image string
	// Where names the document, for errors and reports.
	Where string
}

// An AppSource is a JarSource that also reads the document's job (its
// image, where the Python half's target comes from): Manifest calls
// AppJars instead of Jars when its JarSource is one.
type AppSource interface {
	JarSource
	AppJars(ctx context.Context, app ManifestApp) (*Jars, error)
}

// AppSourceFunc adapts a function to AppSource (Jars calls it with the
// packages alone).
type AppSourceFunc func(ctx context.Context, app ManifestApp) (*Jars, error)

// Jars calls f with the packages alone.
func (f AppSourceFunc) Jars(ctx context.Context, p submit.Packages) (*Jars, error) {
	return f(ctx, ManifestApp{Packages: p})
}

// AppJars calls f.
func (f AppSourceFunc) AppJars(ctx context.Context, app ManifestApp) (*Jars, error) {
	return f(ctx, app)
}

// sourceJars asks the JarSource for the document's set.
func (m *manifestRewriter) sourceJars(ctx context.Context, p submit.Packages) (*Jars, error) {
	if s, ok := m.o.source.(AppSource); ok {
		return s.AppJars(ctx, ManifestApp{Packages: p, Image: m.appImage(), Where: m.where})
	}
	return m.o.source.Jars(ctx, p)
}

// appImage is the image the document's Python runs in (ManifestApp.Image).
func (m *manifestRewriter) appImage() string {
	if img := scalarAt(m.spec, "image"); img != "" {
		return img
	}
	for _, role := range []string{"driver", "executor"} {
		if img := scalarAt(mapValue(m.spec, role), "image"); img != "" {
			return img
		}
	}
	return ""
}

// The sparkConf keys that set a role's PYTHONPATH.
var pythonPathConf = map[string]string{
	"driver":   "spark.kubernetes.driverEnv." + EnvPythonPath,
	"executor": "spark.executorEnv." + EnvPythonPath,
}

// planPython ships j.Python (the lock's wheels) in the document: the
// operator always submits in cluster mode, so they need an image that
// holds them or a store's archive. A store's archive is appended to
// spec.deps.archives (the operator passes it as --archives) and its
// directory to each role's PYTHONPATH where the user sets it (env,
// envVars, sparkConf), else in spec.sparkConf; the user's values come
// first, with a warning.
func (m *manifestRewriter) planPython(j *Jars) error {
	if j == nil || j.Python == nil || j.Python.Wheels == 0 {
		return nil
	}
	p := j.Python
	if !p.cluster() {
		return errdefs.New(errdefs.BadArgument, fmt.Errorf("%s: the operator always submits in cluster mode and the driver does not run here, so the lock's %d wheels need an image or a store the cluster reads: %w", m.where, p.Wheels, ErrNoClusterJars))
	}
	if m.d.JarsFrom == "" {
		m.d.JarsFrom = redact.String(p.From)
	}
	if m.d.LockHash == "" {
		m.d.LockHash = j.LockHash
	}
	if !m.d.Python {
		m.warn("%s.type is %q, not Python: the lock's %d wheels are shipped, but only a Python application imports them", m.path, scalarAt(m.spec, "type"), p.Wheels)
	}
	why := fmt.Sprintf("ships the Python packages: the lock's %d wheels, from %s", p.Wheels, redact.URL(p.From))
	if p.InImage {
		for _, role := range []string{"driver", "executor"} {
			if n, where := m.userPythonPathNode(role); n != nil {
				v := "its valueFrom"
				if n.Kind == yaml.ScalarNode {
					v = redact.String(n.Value)
				}
				m.warn("%s sets the %s's PYTHONPATH (%s), which replaces the image's, the one that names the wheels' directory: join the image's PYTHONPATH to it, or delete it", where, role, v)
			}
		}
	}
	for _, kv := range p.Conf {
		switch {
		case kv[0] == "spark.archives":
			m.archive(kv[1], why)
		case kv[0] == pythonPathConf["driver"]:
			m.pythonPath("driver", kv[1], why)
		case kv[0] == pythonPathConf["executor"]:
			m.pythonPath("executor", kv[1], why)
		}
		// Other keys (YARN's application master) are not the operator's.
	}
	warnPyInstalls(m.pyApps(), m.warn)
	return nil
}

// archive appends the wheels' archive to spec.deps.archives (the user's
// list first: deps.archives, else sparkConf spark.archives, moved there).
func (m *manifestRewriter) archive(v, why string) {
	user, _ := m.stringList(mapValue(m.spec, "deps"), "archives")
	if len(user) == 0 {
		for _, s := range strings.Split(scalarAt(mapValue(m.spec, "sparkConf"), "spark.archives"), ",") {
			if s = strings.TrimSpace(s); s != "" {
				user = append(user, s)
			}
		}
	}
	if slices.Contains(user, v) {
		return
	}
	if len(user) > 0 {
		m.warn("%s.deps.archives: the user's %s is kept, and prebake's %s joined after it", m.path, redact.String(strings.Join(user, ",")), redact.URL(v))
	}
	m.mergeList("archives", "spark.archives", []string{v}, why+" (the operator passes spec.deps.archives as --archives; Spark unpacks it in each pod's working directory)")
}

// pythonPath puts v on role's PYTHONPATH: into the user's own setting
// (spec.<role>.env, .envVars, else the sparkConf key), joined after it
// with ':', else as the sparkConf key.
func (m *manifestRewriter) pythonPath(role, v, why string) {
	key := pythonPathConf[role]
	if n, target := m.userPythonPathNode(role); n != nil {
		if n.Kind != yaml.ScalarNode {
			m.warn("%s is not a plain value (valueFrom?): prebake cannot join the wheels' directory %s to it, and it replaces the %s's PYTHONPATH; set it in %s.sparkConf %s instead", target, v, role, m.path, key)
			return
		}
		old := n.Value
		if strings.TrimSpace(old) != "" {
			if hasEntry(old, ":", v) {
				return
			}
			m.warn("%s: the user's %s is kept, and prebake's %s joined after it (':')", target, redact.String(old), v)
			setStr(n, old+":"+v)
		} else {
			setStr(n, v)
		}
		m.change(ChangeReplaced, target, old, n.Value, why)
		return
	}
	conf := m.ensureMap("sparkConf")
	mapSet(conf, key, strNode(v))
	m.change(ChangeAdded, m.path+".sparkConf."+key, "", v, why)
}

// userPythonPathNode finds the user's PYTHONPATH of role: the value node
// of spec.<role>.env's entry (its valueFrom mapping when it has no value),
// else of spec.<role>.envVars, else of the sparkConf key; nil when none.
// target names it for changes and warnings.
func (m *manifestRewriter) userPythonPathNode(role string) (n *yaml.Node, target string) {
	r := mapValue(m.spec, role)
	if env := mapValue(r, "env"); env != nil && env.Kind == yaml.SequenceNode {
		for _, e := range env.Content {
			if scalarAt(e, "name") != EnvPythonPath {
				continue
			}
			target = fmt.Sprintf("%s.%s.env[%s]", m.path, role, EnvPythonPath)
			if v := mapValue(e, "value"); v != nil {
				return v, target
			}
			if v := mapValue(e, "valueFrom"); v != nil {
				return v, target
			}
		}
	}
	if v := mapValue(mapValue(r, "envVars"), EnvPythonPath); v != nil {
		return v, fmt.Sprintf("%s.%s.envVars.%s", m.path, role, EnvPythonPath)
	}
	key := pythonPathConf[role]
	if v := mapValue(mapValue(m.spec, "sparkConf"), key); v != nil {
		return v, m.path + ".sparkConf." + key
	}
	return nil, ""
}

// pyApps are the document's Python files on this host: its
// mainApplicationFile and deps.pyFiles (and sparkConf
// spark.submit.pyFiles) given as paths or file: URLs.
func (m *manifestRewriter) pyApps() []string {
	var out []string
	if f := scalarAt(m.spec, "mainApplicationFile"); localPyFile(f) {
		out = append(out, f)
	}
	files, _ := m.stringList(mapValue(m.spec, "deps"), "pyFiles")
	files = append(files, strings.Split(scalarAt(mapValue(m.spec, "sparkConf"), "spark.submit.pyFiles"), ",")...)
	for _, f := range files {
		if f = strings.TrimSpace(f); localPyFile(f) {
			out = append(out, f)
		}
	}
	return out
}

// addConf sets the conf the cluster needs to read the set's URLs (the
// S3A endpoint of a store) in spec.sparkConf; a key the user set keeps
// the user's value.
func (m *manifestRewriter) addConf(conf map[string]string, from string) {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if mapValue(mapValue(m.spec, "sparkConf"), k) != nil {
			continue
		}
		mapSet(m.ensureMap("sparkConf"), k, strNode(conf[k]))
		m.change(ChangeAdded, m.path+".sparkConf."+k, "", conf[k], "the cluster reads the set from "+redact.URL(from)+" with it")
	}
}
