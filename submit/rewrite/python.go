package rewrite

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/internal/pyscan"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// EnvPythonPath is the variable a Python process searches for modules
// after its own: a driver that runs here gets the wheels' directory on it
// (Result.Env).
const EnvPythonPath = "PYTHONPATH"

// Python is the Python half of a set (its lock's wheels) as the rewrite
// ships it: where the cluster's Python processes and a driver that runs
// here import them from.
type Python struct {
	// Wheels counts the lock's wheels (0: nothing to ship).
	Wheels int
	// Conf is the Spark conf that ships the wheels to the cluster, in
	// order: spark.archives (a comma list: the user's entries are kept
	// and these appended) and PYTHONPATH settings
	// (spark.executorEnv.PYTHONPATH and the like: joined after the user's
	// value with ':'). Nil when the image holds them (InImage) or no
	// cluster target was given.
	Conf [][2]string
	// InImage: the image the rewrite sets holds the wheels on its own
	// PYTHONPATH; nothing more is set for the cluster.
	InImage bool
	// LocalDir is the absolute site-packages directory on this host (the
	// wheels unpacked): the PYTHONPATH of a driver that runs here, and of
	// local mode's Python workers. Required unless the driver runs in
	// the cluster.
	LocalDir string
	// From names where the cluster reads them ("image REF", "store URL").
	From string
}

// cluster reports whether the cluster's Python processes get the wheels.
func (p *Python) cluster() bool { return p.InImage || len(p.Conf) > 0 }

// planPython adds the settings that ship j.Python (see Python) for the
// submission's deploy mode, and the warnings about an app that installs
// Python packages itself.
func (w *rewriter) planPython(j *Jars) error {
	if j == nil || j.Python == nil || j.Python.Wheels == 0 {
		return nil
	}
	p := j.Python
	if strings.ContainsAny(p.LocalDir, ":,\n") {
		return errdefs.Errorf(errdefs.Invalid, "rewrite: the wheels' directory %q holds ':', ',' or a newline, which PYTHONPATH cannot carry", p.LocalDir)
	}
	driverHere := w.kind == submit.ClusterLocal || w.deploy != "cluster"
	switch {
	case w.kind == submit.ClusterConnect:
		w.warn("Spark Connect: the server runs the Python UDFs with its own packages; the lock's %d wheels are not shipped to it", p.Wheels)
		return nil
	case w.kind == submit.ClusterLocal:
		// Local mode: the driver and its Python workers run here.
		if err := w.localPython(p); err != nil {
			return err
		}
		w.pythonItem("spark.executorEnv.PYTHONPATH", p.LocalDir, "local mode: the Python workers run here and import the wheels from their unpacked directory")
		return nil
	case !driverHere:
		if !p.cluster() {
			return errdefs.New(errdefs.BadArgument, fmt.Errorf("%s cluster mode: the driver does not run here, so the %d wheels need an image or a store the cluster reads: %w", w.kind, p.Wheels, ErrNoClusterJars))
		}
	default:
		if err := w.localPython(p); err != nil {
			return err
		}
		if !p.cluster() {
			w.warn("%s client mode: the driver imports the %d wheels from %s, but the executors get none (no image or store): a UDF that imports them fails there; give an image or a store", w.kind, p.Wheels, p.LocalDir)
		}
	}
	for _, kv := range p.Conf {
		why := fmt.Sprintf("the lock's %d wheels, from %s", p.Wheels, redact.URL(p.From))
		w.pythonItem(kv[0], kv[1], why)
	}
	return nil
}

// localPython puts p.LocalDir on the PYTHONPATH of spark-submit's process
// (Result.Env), after the one it has.
func (w *rewriter) localPython(p *Python) error {
	if p.LocalDir == "" {
		return errdefs.Errorf(errdefs.Internal, "rewrite: %s %s mode runs the driver here, and the wheels have no local directory", w.kind, w.deploy)
	}
	v := p.LocalDir
	if old := w.s.Getenv(EnvPythonPath); strings.TrimSpace(old) != "" {
		if hasEntry(old, ":", v) {
			v = old
		} else {
			v = old + ":" + v
			w.warn("$PYTHONPATH %s is kept, and the wheels' directory %s joined after it (':')", redact.String(old), p.LocalDir)
		}
	}
	if w.env == nil {
		w.env = map[string]string{}
	}
	w.env[EnvPythonPath] = v
	w.change(ChangeAdded, "$"+EnvPythonPath, "prebake", w.s.Getenv(EnvPythonPath), v, "the driver runs here: it imports the lock's wheels from their unpacked directory in the cache")
	return nil
}

// pythonItem merges v into the setting key: spark.archives is a comma
// list, a PYTHONPATH a ':' list; the user's value comes first and is
// kept, with a warning that says so.
func (w *rewriter) pythonItem(key, v, why string) {
	sep := ":"
	if key == "spark.archives" {
		sep = ","
	}
	m := &managed{key: key, add: []string{v}, sep: sep, reason: "ships the Python packages: " + why}
	user, ok := "", false
	if key == "spark.archives" {
		if _, given := w.s.Argv.Flag("--archives"); given {
			m.flag = "--archives" // the flag beats the conf key: merge into it
		}
		user, ok = w.s.FlagOrConf("--archives", key)
	} else {
		user, _, ok = w.s.Conf(key)
	}
	if ok && strings.TrimSpace(user) != "" {
		if hasEntry(user, sep, v) {
			return
		}
		w.warn("%s: the user's %s is kept, and prebake's %s joined after it (%q)", key, redact.String(user), redact.URL(v), sep)
	}
	w.items = append(w.items, m)
}

// hasEntry reports whether the list s (sep-separated) holds v.
func hasEntry(s, sep, v string) bool {
	for _, e := range strings.Split(s, sep) {
		if strings.TrimSpace(e) == v {
			return true
		}
	}
	return false
}

// maxPyScanSize bounds each Python file read for the install check.
const maxPyScanSize = 4 << 20

// pyInstallApps are the local .py files of the submission: its primary
// resource, the .py files of --py-files, and WithPythonApps'.
func (w *rewriter) pyInstallApps() []string {
	var out []string
	local := localPyFile
	if p := w.s.Argv.Primary; w.s.Argv.IsPython() && local(p) {
		out = append(out, p)
	}
	if files, ok := w.s.FlagOrConf("--py-files", "spark.submit.pyFiles"); ok {
		for _, f := range strings.Split(files, ",") {
			if f = strings.TrimSpace(f); local(f) {
				out = append(out, f)
			}
		}
	}
	return append(out, w.o.pythonApps...)
}

// pipInstall matches a shell command that installs Python packages.
var pipInstall = regexp.MustCompile(`(^|[\s/;&|(])(pip3?(\.\d+)?|-m\s+pip)\s+install\b`)

// detectPyInstalls warns, with file:line, where the app's Python files
// install packages at run time or set what the rewrite ships the wheels
// with: the wheels are already there, and an install asks the index from
// every run (or fails where there is none). A missing or unreadable file
// is skipped (a warning only).
func (w *rewriter) detectPyInstalls() {
	warnPyInstalls(w.pyInstallApps(), w.warn)
}

// localPyFile reports whether p names a .py file on this host: a path
// or a file: URL (local:// is the image's, s3a:// the store's).
func localPyFile(p string) bool {
	return strings.HasSuffix(p, ".py") && (!strings.Contains(p, "://") || strings.HasPrefix(p, "file://"))
}

// warnPyInstalls reads each of the local Python files apps (once each)
// and warns through warn, with file:line, where one installs packages or
// sets what ships the wheels (pyInstalls). A missing or unreadable file
// is skipped.
func warnPyInstalls(apps []string, warn func(format string, args ...any)) {
	seen := map[string]bool{}
	for _, app := range apps {
		path := strings.TrimPrefix(strings.TrimPrefix(app, "file://"), "file:")
		if seen[path] {
			continue
		}
		seen[path] = true
		data, err := localfile.Read(path, maxPyScanSize)
		if err != nil {
			continue
		}
		for _, f := range pyInstalls(data) {
			warn("%s:%d: %s; the lock's wheels are shipped with the job: %s", app, f.line, f.what, f.fix)
		}
	}
}

// pyFinding is one line of a Python file that installs packages or sets
// the Python shipping itself.
type pyFinding struct {
	line      int
	what, fix string
}

const (
	fixInstall = "delete the install and add the package to the Python requirements instead"
	fixSetting = "delete that setting: prebake sets it (the user's value would be merged with prebake's)"
)

// pyInstalls finds, in Python source, what installs packages at run time
// (pip install in a command string or list, pip.main(, %pip, ensurepip)
// and the settings that ship Python packages (spark.archives,
// PYSPARK_PYTHON), one finding per line and kind.
func pyInstalls(src []byte) []pyFinding {
	var out []pyFinding
	seen := map[string]bool{}
	add := func(line int, what, fix string) {
		k := fmt.Sprint(line, what)
		if !seen[k] {
			seen[k] = true
			out = append(out, pyFinding{line, what, fix})
		}
	}
	// %pip (IPython's magic) is no Python token: read it by line.
	for i, l := range strings.Split(string(src), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "%pip ") || strings.HasPrefix(t, "!pip ") {
			add(i+1, "it installs packages at run time ("+strings.Fields(t)[0]+")", fixInstall)
		}
	}
	toks := pyscan.Tokenize(src)
	str := func(i int) (string, bool) {
		if i < len(toks) && toks[i].Kind == pyscan.String {
			return toks[i].Text, true
		}
		return "", false
	}
	for i, t := range toks {
		switch t.Kind {
		case pyscan.Name:
			switch {
			case t.Text == "ensurepip":
				add(t.Line, "it installs pip at run time (ensurepip)", fixInstall)
			case t.Text == "pip" && i+3 < len(toks) && toks[i+1].Text == "." && toks[i+2].Text == "main" && toks[i+3].Text == "(":
				add(t.Line, "it installs packages at run time (pip.main)", fixInstall)
			}
		case pyscan.String:
			s := t.Text
			switch {
			case pipInstall.MatchString(s):
				add(t.Line, "it installs packages at run time (pip install)", fixInstall)
			case strings.Contains(s, "ensurepip"):
				add(t.Line, "it installs pip at run time (ensurepip)", fixInstall)
			case s == "pip" || s == "pip3":
				// ["pip", "install", …] or [sys.executable, "-m", "pip", "install", …]
				if next, ok := str(i + 2); ok && toks[i+1].Text == "," && next == "install" {
					add(t.Line, "it installs packages at run time (pip install)", fixInstall)
				}
			case s == "spark.archives" || s == "spark.yarn.dist.archives":
				add(t.Line, "it sets "+s+" itself", fixSetting)
			case s == "PYSPARK_PYTHON" || s == "PYSPARK_DRIVER_PYTHON" || s == "spark.pyspark.python" || s == "spark.pyspark.driver.python":
				add(t.Line, "it sets "+s+" itself (another Python than the one the wheels were chosen for)", "delete that setting, or lock the wheels for that Python")
			}
		}
	}
	slices.SortStableFunc(out, func(a, b pyFinding) int { return a.line - b.line })
	return out
}
