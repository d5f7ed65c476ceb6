package rewrite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/atomicfile"
	"github.com/prebake/prebake/internal/cachedir"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// ErrNoClusterJars is matched (errors.Is) when the driver runs on the
// cluster but the jars are only on this host: Jars.Cluster is nil (no image
// and no store holds them).
var ErrNoClusterJars = errors.New("the jars are in no image and no store the cluster can read")

// NeedsClusterJars reports whether a submission in deployMode on a master
// of kind (submit.ClusterKind) needs its jars where the cluster reads them
// (Jars.Cluster: an image or a store): its driver does not run here, and
// nothing ships local jars to it. That is cluster mode on every master but
// YARN (which distributes local jars), local and Spark Connect; without
// cluster jars Apply refuses it (ErrNoClusterJars).
func NeedsClusterJars(kind, deployMode string) bool {
	return deployMode == "cluster" && kind != submit.ClusterYARN && kind != submit.ClusterLocal && kind != submit.ClusterConnect
}

// Jars are the resolved jars rewrite merges into the submission, in
// spark.jars order (the lock's order).
type Jars struct {
	// Local are absolute paths on this host (the resolver's retrieve
	// directory). They are required: the driver uses them in client and
	// local mode, and YARN distributes them.
	Local []string
	// Cluster are the URLs the cluster reads, index for index with Local:
	// local:///<dir>/<file> from the image's dev.prebake.jars annotation, or
	// the store's URLs (s3a://…). Nil when the jars are in neither an image
	// nor a store.
	Cluster []string
	// From names where Cluster came from, for the report: "image REF" or
	// "store URL" (credentials are redacted before printing).
	From string
	// LockHash names the set (lock.File.Hash); optional.
	LockHash string
	// Conf is Spark conf the cluster needs to read Cluster (the S3A
	// endpoint and path style of an S3-compatible store). A key the user
	// set keeps the user's value.
	Conf map[string]string
	// Python is the set's Python half (its wheels): nil for jars only.
	Python *Python
}

// A JarSource turns the packages found in a manifest's document into jars
// (Manifest; Apply takes the jars themselves). pipeline.JarSource
// implements it with resolver.Resolve, cache.Retrieve (resolver/cache) and the image
// annotation or store manifest. It returns nil jars when there is nothing
// to add.
type JarSource interface {
	Jars(ctx context.Context, p submit.Packages) (*Jars, error)
}

// JarSourceFunc adapts a function to JarSource.
type JarSourceFunc func(ctx context.Context, p submit.Packages) (*Jars, error)

// Jars calls f.
func (f JarSourceFunc) Jars(ctx context.Context, p submit.Packages) (*Jars, error) { return f(ctx, p) }

// Option configures Apply.
type Option func(*options) error

type options struct {
	source JarSource
	image  string
	// driverImage and executorImage replace the role-specific images the
	// user set; "" means image.
	driverImage, executorImage string
	workDir                    string
	sparkVersion               string
	pythonApps                 []string
}

// WithJarSource sets where Manifest's resolved jars come from (Apply
// ignores it: it takes the jars). The default is none: the packages are
// removed and nothing is added.
func WithJarSource(s JarSource) Option {
	return func(o *options) error { o.source = s; return nil }
}

// WithImage sets the image (the baked one) whose jars the cluster uses: it
// becomes spark.kubernetes.container.image on K8s masters, and replaces the
// driver and executor images the user set. The default is to keep the
// user's images.
func WithImage(ref string) Option {
	return func(o *options) error { o.image = ref; return nil }
}

// WithRoleImages sets the images that replace a driver- or executor-specific
// image the user set, when they differ from WithImage's (a submission
// that bakes each distinct base). "" keeps WithImage's.
func WithRoleImages(driver, executor string) Option {
	return func(o *options) error { o.driverImage, o.executorImage = driver, executor; return nil }
}

// WithWorkDir sets where edited copies of properties files are written. The
// copies must outlive the rewrite (spark-submit reads them later), so cmd
// puts them under the cache. The default is $TMPDIR/prebake-rewrite-u<uid>.
// The directory and every directory above it must be the user's or root's
// and open to no one else (internal/cachedir), so no other user can replace
// a copy before spark-submit reads it; it is created 0700.
func WithWorkDir(dir string) Option {
	return func(o *options) error { o.workDir = dir; return nil }
}

// WithSparkVersion sets the Spark version the cluster runs ("4.0.5"); it
// decides Spark conf that only some lines read (e.g.
// spark.kubernetes.jars.avoidDownloadSchemes, 4.0+). The default "" is
// unknown: such conf is set, as the lines that do not read it ignore it.
func WithSparkVersion(v string) Option {
	return func(o *options) error { o.sparkVersion = v; return nil }
}

// WithPythonApps names Python files the submission runs besides a .py
// primary resource (the program of a command the user runs: python3 app.py), so that
// their own packages settings (SparkSession.builder.config, Delta's
// configure_spark_with_delta_pip, os.environ["PYSPARK_SUBMIT_ARGS"]) are
// warned about with file:line and the fix. The default is none.
func WithPythonApps(paths ...string) Option {
	return func(o *options) error { o.pythonApps = append(o.pythonApps, paths...); return nil }
}

func makeOptions(opts []Option) (*options, error) {
	o := &options{workDir: filepath.Join(os.TempDir(), fmt.Sprintf("prebake-rewrite-u%d", os.Geteuid()))}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Result is the result of Apply. Its JSON form is `prebake rewrite -o
// json` (stable; the README copies this schema):
//
//	{
//	  "args": ["--master", "k8s://…", …],   // the rewritten argv (product: not redacted)
//	  "command": "--master k8s://… …",      // args, shell-quoted on one line
//	  "action": "submit",                   // submit|kill|status|version|help|usage-error
//	  "master": "k8s://https://…",          // effective master (redacted)
//	  "deployMode": "cluster",              // client|cluster
//	  "cluster": "k8s",                     // k8s|standalone|yarn|mesos|local|connect|other
//	  "primaryResource": "local:///app.jar",
//	  "python": false,                      // .py, pyspark-shell or spark-internal: jars go to pyFiles too
//	  "packages": {"packages": "g:a:v,…", "repositories": "…", "excludes": "…", "ivy": "…", "ivySettings": "…"},
//	  "jarsFrom": "image REF",              // "image REF", "store URL", "local" or "" (nothing added)
//	  "lockHash": "…",                      // optional
//	  "propertiesFile": "/…/x-abcd.conf",   // edited copy written, optional
//	  "changes": [                          // what changed and why, secrets redacted
//	    {"action": "removed|replaced|added|overridden|kept",
//	     "target": "--packages | spark.jars.packages | …",
//	     "source": "argv | properties-file PATH | spark-defaults PATH | prebake",
//	     "old": "…", "new": "…",            // optional
//	     "reason": "…"}
//	  ],
//	  "warnings": ["…"],                    // packages set where argv cannot reach, and caveats
//	  "env": {"PYSPARK_SUBMIT_ARGS": "…",   // only when the command line was $PYSPARK_SUBMIT_ARGS: its new value
//	          "PYTHONPATH": "…"}            // only when a driver here imports the lock's wheels
//	}
type Result struct {
	Args           []string        `json:"args"`
	Command        string          `json:"command"`
	Action         string          `json:"action"`
	Master         string          `json:"master,omitempty"`
	DeployMode     string          `json:"deployMode,omitempty"`
	Cluster        string          `json:"cluster,omitempty"`
	Primary        string          `json:"primaryResource,omitempty"`
	Python         bool            `json:"python"`
	Packages       submit.Packages `json:"packages"`
	JarsFrom       string          `json:"jarsFrom"`
	LockHash       string          `json:"lockHash,omitempty"`
	PropertiesFile string          `json:"propertiesFile,omitempty"`
	Changes        []Change        `json:"changes"`
	Warnings       Warnings        `json:"warnings"`
	// Env holds the environment variables the rewrite set: for a
	// submission loaded from $PYSPARK_SUBMIT_ARGS
	// (submit.LoadPySparkSubmission), {"PYSPARK_SUBMIT_ARGS": Command},
	// which pyspark's shlex.split reads back to Args (product: not
	// redacted); and for a driver that runs here with the lock's wheels
	// (Jars.Python), {"PYTHONPATH": …} naming their unpacked directory
	// (Submission's environment has it too). Nil otherwise.
	Env map[string]string `json:"env,omitempty"`
	// Submission is Args loaded (LoadSubmission, same environment): what
	// a backend runs.
	Submission *submit.Submission `json:"-"`
}

// A Change is one edit rewrite made, with its reason. Values are redacted.
type Change struct {
	Action string `json:"action"`
	Target string `json:"target"`
	Source string `json:"source"`
	Old    string `json:"old,omitempty"`
	New    string `json:"new,omitempty"`
	Reason string `json:"reason"`
}

// Change actions.
const (
	ChangeRemoved    = "removed"
	ChangeReplaced   = "replaced"
	ChangeAdded      = "added"
	ChangeOverridden = "overridden"
	ChangeKept       = "kept"
)

// redact makes r safe to print as a report: packages,
// master, warnings and the jar source are redacted; Args and Command are the
// product and are kept.
func (r *Result) redact() {
	r.Master = redact.URL(r.Master)
	r.Packages.Repositories = redactList(r.Packages.Repositories)
	r.Packages.Packages = redact.String(r.Packages.Packages)
	r.Packages.Excludes = redact.String(r.Packages.Excludes)
	r.Packages.Ivy = redact.String(r.Packages.Ivy)
	r.Packages.IvySettings = redact.String(r.Packages.IvySettings)
	r.JarsFrom = redact.String(r.JarsFrom)
	redactWarnings(r.Warnings)
}

func redactList(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = redact.URL(p)
	}
	return strings.Join(parts, ",")
}

// A managed setting is one rewrite replaces with a single merged value.
type managed struct {
	flag  string // CLI flag ("--jars"), "" for conf-only keys
	key   string // conf key ("spark.jars")
	value string // the new value
	// add is what is merged after the user's value (sep-separated); when
	// replace is set the user's value is dropped instead.
	add     []string
	sep     string
	replace string
	reason  string
	// onlyIfSet: emit only when the user set the key somewhere.
	onlyIfSet bool
	// onlyIfUnset: emit only when the user did not set the key.
	onlyIfUnset bool
}

// Apply rewrites a submission (a command line loaded once with
// submit.LoadSubmission or submit.LoadPySparkSubmission) so that Spark resolves
// nothing at run time: every packages source is removed (flags, --conf,
// --properties-file, spark-defaults.conf) and jars (nil: none; the
// resolved packages of s.Packages()) are merged into one jar list, with the URLs each deploy mode needs:
//
//   - K8s, standalone, Mesos and unknown masters in cluster mode: the
//     cluster URLs (image local:// or store); refused when there are none.
//   - local mode, Spark Connect and YARN (client and cluster): the local
//     file paths (YARN distributes them itself).
//   - client mode elsewhere: with cluster URLs, spark.jars gets them (the
//     executors load them through SparkContext.addJar, as --packages jars
//     were) and the driver gets the local paths on
//     spark.driver.extraClassPath (and spark.submit.pyFiles); without,
//     spark.jars gets the local paths and the driver serves them to the
//     executors, exactly as with --packages.
//
// Python apps (.py, pyspark-shell, spark-internal) also get the jars in
// --py-files/spark.submit.pyFiles. Every other argument keeps its tokens and
// order. --kill, --status, --version and --help pass through unchanged.
//
// The environment it reads (SPARK_CONF_DIR, SPARK_HOME, MASTER,
// DEPLOY_MODE, SPARK_REMOTE, SPARK_SUBMIT_OPTS and the like) is the one the
// submission was loaded with (submit.LoadSubmission).
// A submission from $PYSPARK_SUBMIT_ARGS gets Result.Env, the new value
// (pyspark-shell still last).
func Apply(ctx context.Context, s *submit.Submission, jars *Jars, opts ...Option) (*Result, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	return apply(ctx, s, jars, o)
}

func apply(ctx context.Context, s *submit.Submission, jars *Jars, o *options) (*Result, error) {
	r := &Result{Action: s.Argv.Action, Changes: []Change{}, Warnings: []Warning{}}
	if s.Argv.Action != submit.ActionSubmit {
		r.Args = s.Args()
		r.Command = submit.ShellQuote(r.Args)
		r.Changes = append(r.Changes, Change{Action: ChangeKept, Target: "--" + s.Argv.Action, Source: submit.SourceArgv,
			Reason: "not a submission: passed through unchanged"})
		r.redact()
		r.Submission = s
		return r, nil
	}
	rw := &rewriter{s: s, o: o, r: r}
	if err := rw.run(jars); err != nil {
		return nil, err
	}
	r.Command = submit.ShellQuote(r.Args)
	r.redact()
	sub, err := s.Reload(r.Args)
	if err != nil {
		return nil, err
	}
	if s.FromPySparkEnv() {
		r.Env = map[string]string{submit.EnvPySparkSubmitArgs: r.Command}
	}
	for _, k := range slices.Sorted(maps.Keys(rw.env)) {
		if r.Env == nil {
			r.Env = map[string]string{}
		}
		r.Env[k] = rw.env[k]
		sub = sub.WithEnv(k, rw.env[k])
	}
	r.Submission = sub
	return r, nil
}

type rewriter struct {
	s *submit.Submission
	o *options
	r *Result

	kind, deploy   string
	python         bool
	items          []*managed
	mergedDefaults bool // the copy merges spark-defaults.conf: drop --load-spark-defaults
	useOverrides   bool // spark-defaults.conf could not be copied: override its keys
	// env are the variables spark-submit's process needs (Result.Env).
	env map[string]string
}

func (w *rewriter) change(action, target, source, old, new, reason string) {
	key := strings.TrimLeft(target, "-")
	w.r.Changes = append(w.r.Changes, Change{Action: action, Target: target, Source: source,
		Old: redact.Conf(key, old), New: redact.Conf(key, new), Reason: reason})
}

func (w *rewriter) warn(format string, args ...any) { w.warnKind(WarnOther, format, args...) }

func (w *rewriter) warnKind(kind WarningKind, format string, args ...any) {
	w.r.Warnings = append(w.r.Warnings, Warning{Kind: kind, Text: fmt.Sprintf(format, args...)})
}

func (w *rewriter) run(jars *Jars) error {
	s, r := w.s, w.r
	r.Master = s.Master()
	w.deploy = s.DeployMode()
	r.DeployMode = w.deploy
	w.kind = submit.ClusterKind(r.Master)
	r.Cluster = w.kind
	r.Primary = s.Argv.Primary
	w.python = s.Argv.IsPython() || s.Argv.IsInternal()
	r.Python = w.python
	r.Packages = s.Packages()

	if err := w.plan(jars); err != nil {
		return err
	}
	w.detectUnreachable()
	if jars != nil && jars.Python != nil && jars.Python.Wheels > 0 {
		w.detectPyInstalls()
	}
	return w.emit()
}

// plan decides the managed settings.
func (w *rewriter) plan(j *Jars) error {
	// Cluster URLs without local copies are fine for cluster mode (a
	// submission with a store and a lock finds the set in the store and
	// fetches nothing); every other mode needs the local copies and says so below.
	if j != nil && len(j.Local) > 0 && j.Cluster != nil && len(j.Cluster) != len(j.Local) {
		return errdefs.Errorf(errdefs.Internal, "rewrite: the jar source gave %d cluster URLs for %d jars", len(j.Cluster), len(j.Local))
	}
	if j != nil {
		for _, p := range append(append([]string{}, j.Local...), j.Cluster...) {
			if strings.ContainsAny(p, ",\n") {
				return errdefs.Errorf(errdefs.Invalid, "rewrite: jar path %q holds a comma or newline, which Spark's jar lists cannot carry", redact.URL(p))
			}
		}
		w.r.LockHash = j.LockHash
	}
	if j != nil && (len(j.Local) > 0 || len(j.Cluster) > 0) {
		w.r.JarsFrom = "local"
		if j.Cluster != nil {
			w.r.JarsFrom = j.From
		}
		cluster := w.deploy == "cluster"
		if len(j.Local) == 0 && !NeedsClusterJars(w.kind, w.deploy) {
			return errdefs.Errorf(errdefs.Internal, "rewrite: %s %s mode needs local copies of the jars, and the jar source gave none", w.kind, w.deploy)
		}
		var jarsAdd, pyAdd, cpAdd []string
		var why string
		switch {
		case w.kind == submit.ClusterYARN:
			jarsAdd, pyAdd = j.Local, j.Local
			why = "YARN distributes local jars itself (spark.yarn.dist.jars)"
		case w.kind == submit.ClusterLocal || w.kind == submit.ClusterConnect:
			jarsAdd, pyAdd = j.Local, j.Local
			why = w.kind + " mode: the driver runs here and reads the local files"
		case cluster:
			if j.Cluster == nil {
				return errdefs.New(errdefs.BadArgument, fmt.Errorf("%s cluster mode: the driver does not run here, so local jar paths cannot work: %w", w.kind, ErrNoClusterJars))
			}
			jarsAdd, pyAdd = j.Cluster, j.Cluster
			why = fmt.Sprintf("%s cluster mode: the driver and executors read the jars from %s", w.kind, j.From)
			w.clusterReach(j)
		case j.Cluster != nil:
			jarsAdd, pyAdd, cpAdd = j.Cluster, j.Local, j.Local
			why = fmt.Sprintf("%s client mode: executors read the jars from %s; the driver runs here and uses the local copies", w.kind, j.From)
			if strings.HasPrefix(j.From, "store") {
				w.warn("%s client mode with a store: spark-submit also downloads the store's jars on this host (spark.jars in client mode); the S3A filesystem (hadoop-aws) must be on this host's Spark classpath", w.kind)
			}
		default:
			jarsAdd, pyAdd = j.Local, j.Local
			why = fmt.Sprintf("%s client mode: the driver runs here and serves the local jars to the executors, as with --packages", w.kind)
		}
		w.items = append(w.items, &managed{flag: "--jars", key: "spark.jars", add: jarsAdd, sep: ",", reason: "one merged jar list (the user's first, then the resolved jars); " + why})
		if w.python {
			w.items = append(w.items, &managed{flag: "--py-files", key: "spark.submit.pyFiles", add: pyAdd, sep: ",", reason: "Python app: Spark also puts --packages jars on the Python path"})
		}
		if len(cpAdd) > 0 {
			w.items = append(w.items, &managed{flag: "--driver-class-path", key: "spark.driver.extraClassPath", add: cpAdd, sep: ":", reason: "client mode: the driver runs here and loads the local copies of the jars the executors read from " + j.From})
		}
	}
	if j != nil && j.Cluster != nil {
		w.readConf(j)
		if w.kind == submit.ClusterK8s && w.deploy == "cluster" {
			w.avoidDownload(j)
		}
	}
	if err := w.planPython(j); err != nil {
		return err
	}
	if w.o.image != "" {
		if w.kind == submit.ClusterK8s {
			w.imageReach()
			why := "the image holds the jars"
			w.items = append(w.items,
				&managed{key: "spark.kubernetes.container.image", replace: w.o.image, reason: why},
				&managed{key: "spark.kubernetes.driver.container.image", replace: orDefault(w.o.driverImage, w.o.image), reason: why + "; it replaces the driver image the user set", onlyIfSet: true},
				&managed{key: "spark.kubernetes.executor.container.image", replace: orDefault(w.o.executorImage, w.o.image), reason: why + "; it replaces the executor image the user set", onlyIfSet: true})
		} else {
			w.warnKind(WarnImageNotK8s, "image %s: master %s is not Kubernetes, so no image is set; the local:// jars must exist on every %s node", w.o.image, w.kind, w.kind)
		}
	}
	// Compute values with the user's effective setting first.
	kept := w.items[:0]
	for _, m := range w.items {
		user, ok := "", false
		if m.flag != "" {
			user, ok = w.s.FlagOrConf(m.flag, m.key)
		} else {
			user, _, ok = w.s.Conf(m.key)
		}
		if (m.onlyIfSet && !ok) || (m.onlyIfUnset && ok) {
			continue
		}
		if m.replace != "" {
			m.value = m.replace
		} else {
			m.value = strings.Join(m.add, m.sep)
			if strings.TrimSpace(user) != "" {
				m.value = user + m.sep + m.value
			}
		}
		kept = append(kept, m)
	}
	w.items = kept
	return nil
}

func (w *rewriter) item(flag, key string) *managed {
	for _, m := range w.items {
		if (flag != "" && m.flag == flag) || (key != "" && m.key == key) {
			return m
		}
	}
	return nil
}

// emit builds the new argv.
func (w *rewriter) emit() error {
	s := w.s
	opts := s.Argv.Options
	// The last option that sets each managed item takes its place.
	last := map[*managed]int{}
	for i, a := range opts {
		if m := w.optItem(a); m != nil {
			last[m] = i
		}
	}
	lastPF := -1
	for i, a := range opts {
		if a.Name == "--properties-file" {
			lastPF = i
		}
	}
	newPF, err := w.editFiles()
	if err != nil {
		return err
	}
	var out []string
	// After a special --class (the launcher's mixed arguments) application
	// arguments stand between the options; they keep their places, and
	// what rewrite adds goes before the first of them.
	tailAt := -1
	for i, a := range opts {
		if app := s.Argv.AppArgsBefore(i); len(app) > 0 {
			if tailAt < 0 {
				tailAt = len(out)
			}
			out = append(out, app...)
		}
		if key, ok := submit.PackagesFlagKey(a.Name); ok {
			w.change(ChangeRemoved, a.Name, submit.SourceArgv, a.Value, "", "prebake resolved it ahead of time; spark-submit must not resolve ("+key+")")
			continue
		}
		if a.Name == "--conf" {
			if k, v := a.ConfKV(); submit.IsPackagesKey(k) {
				w.change(ChangeRemoved, k, submit.SourceArgv, v, "", removeReason(k))
				continue
			}
		}
		if m := w.optItem(a); m != nil {
			if last[m] != i {
				w.change(ChangeRemoved, a.Name, submit.SourceArgv, a.Value, "", "merged into the one "+m.key+" value (spark-submit keeps only the last)")
				continue
			}
			out = append(out, w.render(m, a)...)
			continue
		}
		if a.Name == "--load-spark-defaults" && w.mergedDefaults {
			w.change(ChangeRemoved, a.Name, submit.SourceArgv, "", "", "the edited --properties-file copy already holds spark-defaults.conf's other keys")
			continue
		}
		if i == lastPF && newPF != "" {
			if a.Eq() {
				out = append(out, "--properties-file="+newPF)
			} else {
				out = append(out, a.Tokens[0], newPF)
			}
			w.change(ChangeReplaced, "--properties-file", submit.SourceArgv, a.Value, newPF, "an edited copy without the packages keys (the original is untouched)")
			continue
		}
		out = append(out, a.Tokens...)
	}
	// Items the user never set in argv go just before the primary resource.
	var tail []string
	if newPF != "" && lastPF < 0 {
		tail = append(tail, "--properties-file", newPF)
		w.change(ChangeAdded, "--properties-file", submit.SourceDefaults+" "+s.Defaults.Path, "", newPF,
			"an edited copy of spark-defaults.conf without the packages keys; spark-submit reads it instead of spark-defaults.conf")
	}
	for _, m := range w.items {
		if _, ok := last[m]; ok {
			continue
		}
		tail = append(tail, w.render(m, submit.Arg{})...)
	}
	tail = append(tail, w.overrides()...)
	if s.Argv.Mixed() {
		rest := s.Argv.AppArgsBefore(len(opts))
		if tailAt < 0 {
			tailAt = len(out)
		}
		args := append([]string{}, out[:tailAt]...)
		args = append(args, tail...)
		args = append(args, out[tailAt:]...)
		w.r.Args = append(args, rest...)
		w.r.PropertiesFile = newPF
		return nil
	}
	out = append(out, tail...)
	if s.Argv.HasPrimary {
		out = append(out, s.Argv.Primary)
	}
	out = append(out, s.Argv.AppArgs...)
	w.r.Args = out
	w.r.PropertiesFile = newPF
	return nil
}

func removeReason(k string) string {
	switch k {
	case "spark.jars.ivy", "spark.jars.ivySettings":
		return "Ivy is not used any more: prebake resolved the packages ahead of time with the default chain"
	}
	return "prebake resolved it ahead of time; a K8s driver pod or standalone worker would resolve it again"
}

// optItem returns the managed item an argv option sets, if any.
func (w *rewriter) optItem(a submit.Arg) *managed {
	if a.Name == "--conf" {
		k, _ := a.ConfKV()
		return w.item("", k)
	}
	return w.item(a.Name, "")
}

// render emits m in the form of the user's option a (flag or --conf, = or
// not), or as a new flag (--conf for conf-only keys) when a is zero.
func (w *rewriter) render(m *managed, a submit.Arg) []string {
	old, _ := "", false
	if m.flag != "" {
		old, _ = w.s.FlagOrConf(m.flag, m.key)
	} else {
		old, _, _ = w.s.Conf(m.key)
	}
	action := ChangeReplaced
	if a.Name == "" {
		action = ChangeAdded
		if old != "" {
			action = ChangeOverridden
		}
	}
	defer w.change(action, m.key, submit.SourceArgv, old, m.value, m.reason)
	// The = form cannot carry a line terminator: spark-submit's
	// "(--[^=]+)=(.+)" does not match it ('.' stops at line ends) and the
	// token becomes an unrecognized option. The merged value may hold one
	// that came from the other form (--jars "a\nb" beats --conf=spark.jars=…).
	eq := a.Eq() && !strings.ContainsAny(m.key+m.value, submit.JavaLineTerminators)
	switch {
	case a.Name == "--conf" && eq:
		return []string{"--conf=" + m.key + "=" + m.value}
	case a.Name == "--conf" && a.Eq():
		return []string{"--conf", m.key + "=" + m.value}
	case a.Name == "--conf":
		return []string{a.Tokens[0], m.key + "=" + m.value}
	case a.Name != "" && eq:
		return []string{a.Name + "=" + m.value}
	case a.Name != "" && a.Eq():
		return []string{a.Name, m.value}
	case a.Name != "":
		return []string{a.Tokens[0], m.value}
	case m.flag != "":
		return []string{m.flag, m.value}
	}
	return []string{"--conf", m.key + "=" + m.value}
}

// editKeys are the keys an edited properties file drops.
func (w *rewriter) editKeys() map[string]bool {
	keys := map[string]bool{}
	for _, k := range submit.PackagesKeys() {
		keys[k] = true
	}
	for _, m := range w.items {
		keys[m.key] = true
	}
	return keys
}

// editFiles writes the edited copy of the properties file spark-submit
// reads (the --properties-file, else spark-defaults.conf) when it sets a key
// rewrite removes or replaces, and returns the copy's path, or "". With
// Spark 4's --load-spark-defaults both files are read (the properties file
// first); the copy then holds both, spark-defaults.conf's keys appended for
// those the properties file lacks, and the switch is dropped (mergedDefaults),
// which keeps every other key's value and precedence.
func (w *rewriter) editFiles() (string, error) {
	p, d := w.s.PropertiesFile, w.s.Defaults
	f := p
	if f == nil {
		f = d
	}
	if f == nil {
		return "", nil
	}
	keys := w.editKeys()
	hit := w.noteRemoved(f, keys, nil)
	if p != nil && d != nil {
		hit = w.noteRemoved(d, keys, p) || hit
	}
	if !hit {
		return "", nil
	}
	data := f.Without(keys)
	if p != nil && d != nil {
		extra := d.Select(func(k string) bool { return !keys[k] && !p.Has(k) })
		if len(data) > 0 && data[len(data)-1] != '\n' && data[len(data)-1] != '\r' {
			data = append(data, '\n')
		}
		data = append(data, []byte("# prebake: spark-defaults.conf (--load-spark-defaults), keys the file above lacks\n")...)
		data = append(data, extra...)
		w.mergedDefaults = true
	}
	path, err := writeEditedProps(w.o.workDir, f.Path, data)
	if err != nil && p == nil {
		// spark-defaults.conf cannot be replaced by a copy: override its
		// keys explicitly instead.
		w.warn("could not write an edited copy of %s (%v); overriding its keys with --conf instead", f.Path, err)
		w.useOverrides = true
		w.r.Changes = w.r.Changes[:0]
		return "", nil
	}
	return path, err
}

// noteRemoved records the keys of f that the copy drops (for d with
// --load-spark-defaults, only those p does not shadow) and reports whether
// there are any.
func (w *rewriter) noteRemoved(f *submit.PropsFile, keys map[string]bool, shadow *submit.PropsFile) bool {
	src := submit.SourcePropertiesFile + " " + f.Path
	if f == w.s.Defaults {
		src = submit.SourceDefaults + " " + f.Path
	}
	hit := false
	for _, k := range f.Keys() {
		if !keys[k] || (shadow != nil && shadow.Has(k)) {
			continue
		}
		hit = true
		v, _ := f.Get(k)
		if submit.IsPackagesKey(k) {
			w.change(ChangeRemoved, k, src, v, "", removeReason(k)+" (dropped from the edited copy)")
		} else {
			w.change(ChangeRemoved, k, src, v, "", "dropped from the edited copy: set once in argv instead (merged with this value where it is a list)")
		}
	}
	return hit
}

// overrides neutralises the packages keys of a spark-defaults.conf that
// cannot be replaced by an edited copy: each key gets an explicit empty
// --conf, which beats the file.
func (w *rewriter) overrides() []string {
	d := w.s.Defaults
	if d == nil || !w.useOverrides {
		return nil
	}
	var out []string
	src := submit.SourceDefaults + " " + d.Path
	for _, k := range submit.PackagesKeys() {
		v, ok := d.Get(k)
		if !ok {
			continue
		}
		if k == "spark.jars.ivySettings" {
			w.change(ChangeKept, k, src, v, "", "an empty spark.jars.ivySettings makes spark-submit fail; with no packages left it only loads the file")
			w.warn("%s sets spark.jars.ivySettings, which cannot be overridden with an empty value; spark-submit will still load %s (nothing is resolved)", d.Path, v)
			continue
		}
		out = append(out, "--conf", k+"=")
		w.change(ChangeOverridden, k, src, v, "", "spark-defaults.conf cannot be replaced: an explicit empty --conf beats it")
	}
	return out
}

// detectUnreachable warns about packages set where argv cannot reach
// ($PYSPARK_SUBMIT_ARGS, $SPARK_SUBMIT_OPTS, the .py app's own
// SparkSession.builder.config calls): see submit.UnreachableWarnings.
func (w *rewriter) detectUnreachable() {
	fix := submit.AppFix{Apps: w.o.pythonApps, Packages: w.r.Packages.Packages}
	if m := w.item("--jars", "spark.jars"); m != nil {
		fix.Jars = m.value
	}
	w.r.Warnings = append(w.r.Warnings, warnings(submit.UnreachableWarnings(w.s.Getenv, w.s.Argv, fix))...)
}

func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// writeEditedProps writes data to workDir under a content-addressed name
// (atomically) and returns its path.
func writeEditedProps(workDir, orig string, data []byte) (string, error) {
	if err := cachedir.Make(workDir); err != nil && !cachedir.Tolerable(err) {
		return "", fmt.Errorf("rewrite work dir: %w", err)
	}
	base := strings.TrimSuffix(filepath.Base(orig), filepath.Ext(orig))
	path := filepath.Join(workDir, fmt.Sprintf("%s-%s%s", base, propsHash(data), filepath.Ext(orig)))
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return "", errdefs.New(errdefs.CantWrite, fmt.Errorf("writing edited copy of %s: %w", orig, err))
	}
	return path, nil
}

func propsHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
