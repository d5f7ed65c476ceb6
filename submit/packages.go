package submit

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/prebake/prebake/errdefs"
)

// The conf keys that make spark-submit (or a K8s driver pod, or a
// standalone DriverWrapper) resolve packages at run time.
var packagesKeys = []string{
	"spark.jars.packages",
	"spark.jars.repositories",
	"spark.jars.excludes",
	"spark.jars.ivy",
	"spark.jars.ivySettings",
}

// The flags that do the same.
var packagesFlags = map[string]string{
	"--packages":         "spark.jars.packages",
	"--repositories":     "spark.jars.repositories",
	"--exclude-packages": "spark.jars.excludes",
}

// PackagesKeys returns the conf keys that make spark-submit resolve
// packages at run time (spark.jars.packages, …), in a fixed order.
func PackagesKeys() []string { return append([]string{}, packagesKeys...) }

// PackagesFlagKey returns the conf key of a flag that makes spark-submit
// resolve packages (--packages gives spark.jars.packages), and whether flag
// is one.
func PackagesFlagKey(flag string) (key string, ok bool) {
	key, ok = packagesFlags[flag]
	return key, ok
}

// IsPackagesKey reports whether k is one of PackagesKeys.
func IsPackagesKey(k string) bool {
	for _, p := range packagesKeys {
		if k == p {
			return true
		}
	}
	return false
}

// Packages are the dependency inputs spark-submit would resolve from a
// command line, with Spark's precedence applied across every source
// (SparkSubmitArguments.loadEnvironmentArguments): a flag replaces the conf
// key, and --conf beats the properties file and spark-defaults.conf. Values
// are as given (comma-separated lists).
type Packages struct {
	Packages     string `json:"packages,omitempty"`
	Repositories string `json:"repositories,omitempty"`
	Excludes     string `json:"excludes,omitempty"`
	Ivy          string `json:"ivy,omitempty"`
	IvySettings  string `json:"ivySettings,omitempty"`
}

// Empty reports whether nothing would be resolved.
func (p Packages) Empty() bool { return strings.TrimSpace(p.Packages) == "" }

// Submission is a spark-submit command line with the conf files
// spark-submit would read for it.
type Submission struct {
	Argv *Argv
	// PropertiesFile is the --properties-file, parsed; nil without one.
	PropertiesFile *PropsFile
	// Defaults is spark-defaults.conf ($SPARK_CONF_DIR, else
	// $SPARK_HOME/conf) when spark-submit reads it: without
	// --properties-file, or with Spark 4's --load-spark-defaults.
	Defaults *PropsFile

	args []string // as given
	// environ is the environment ("K=V") the submission was loaded with;
	// env is it as a map, the last entry of a name winning.
	environ []string
	env     map[string]string
	// pyspark: the command line is $PYSPARK_SUBMIT_ARGS
	// (LoadPySparkSubmission), for a Python process that starts its own JVM.
	pyspark bool
}

// LoadSubmission parses args and reads the properties files spark-submit
// would read. environ ("K=V", as os.Environ returns it) is the environment
// spark-submit would run with: it names the conf directory ($SPARK_CONF_DIR,
// $SPARK_HOME), $MASTER and the like, and the backends start spark-submit
// (or the REST server's driver) with it. nil is an empty environment, not
// this process's: a caller that means its own passes os.Environ(). A
// --properties-file that does not exist is an error (errdefs.NotFound), as in
// spark-submit.
func LoadSubmission(args []string, environ []string) (*Submission, error) {
	argv, err := ParseArgv(args)
	if err != nil {
		return nil, err
	}
	s := &Submission{Argv: argv, args: append([]string{}, args...)}
	s.setEnviron(environ)
	if argv.Action != ActionSubmit {
		return s, nil
	}
	pf, hasPF := argv.Flag("--properties-file")
	if hasPF {
		p, err := readProps(pf)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, errdefs.New(errdefs.NotFound, fmt.Errorf("spark-submit --properties-file: %w (spark-submit would fail too)", err))
		case errors.Is(err, fs.ErrPermission):
			return nil, errdefs.New(errdefs.Denied, fmt.Errorf("spark-submit --properties-file: %w", err))
		case err != nil:
			return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("spark-submit --properties-file: %w", err))
		}
		s.PropertiesFile = p
	}
	if !hasPF || argv.Has("--load-spark-defaults") {
		if dp := sparkDefaultsPath(s.Getenv); dp != "" {
			p, err := readProps(dp)
			if err != nil {
				return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("spark-defaults.conf: %w", err))
			}
			s.Defaults = p
		}
	}
	return s, nil
}

// Source names used in changes.
const (
	SourceArgv           = "argv"
	SourcePropertiesFile = "properties-file"
	SourceDefaults       = "spark-defaults"
)

// Conf returns the effective value of a spark.* key and where it came from:
// --conf (the last one) beats the properties file, which beats
// spark-defaults.conf (Spark 4 --load-spark-defaults: the properties file
// first, then the defaults for keys it lacks).
func (s *Submission) Conf(key string) (value, source string, ok bool) {
	if v, ok := s.Argv.Conf(key); ok {
		return v, SourceArgv, true
	}
	if v, ok := s.PropertiesFile.Get(key); ok {
		return v, SourcePropertiesFile + " " + s.PropertiesFile.Path, true
	}
	if v, ok := s.Defaults.Get(key); ok {
		return v, SourceDefaults + " " + s.Defaults.Path, true
	}
	return "", "", false
}

// launcherConfFlags are the flags the launcher turns into conf keys before
// SparkSubmit parses the argv (SparkSubmitCommandBuilder.OptionParser.handle:
// DRIVER_MEMORY, DRIVER_JAVA_OPTIONS, DRIVER_LIBRARY_PATH, DRIVER_CLASS_PATH
// -> conf.put; CONF -> conf.put too), so the last of the flag and --conf in
// the argv wins.
var launcherConfFlags = map[string]string{
	"--driver-memory":       "spark.driver.memory",
	"--driver-java-options": "spark.driver.extraJavaOptions",
	"--driver-library-path": "spark.driver.extraLibraryPath",
	"--driver-class-path":   "spark.driver.extraClassPath",
}

// FlagOrConf is Option(flag).orElse(sparkProperties.get(key)); for the
// launcher's conf flags, the last of the flag and --conf key in the argv.
func (s *Submission) FlagOrConf(flag, key string) (string, bool) {
	if launcherConfFlags[flag] == key {
		opts := s.Argv.Options
		for i := len(opts) - 1; i >= 0; i-- {
			if opts[i].Name == flag {
				return opts[i].Value, true
			}
			if k, v := opts[i].ConfKV(); opts[i].Name == "--conf" && k == key {
				return v, true
			}
		}
	} else if v, ok := s.Argv.Flag(flag); ok {
		return v, true
	}
	v, _, ok := s.Conf(key)
	return v, ok
}

// Packages returns what spark-submit would resolve.
func (s *Submission) Packages() Packages {
	var p Packages
	p.Packages, _ = s.FlagOrConf("--packages", "spark.jars.packages")
	p.Repositories, _ = s.FlagOrConf("--repositories", "spark.jars.repositories")
	p.Excludes, _ = s.FlagOrConf("--exclude-packages", "spark.jars.excludes")
	p.Ivy, _, _ = s.Conf("spark.jars.ivy")
	p.IvySettings, _, _ = s.Conf("spark.jars.ivySettings")
	return p
}

// PackagesSources lists every place that still sets a packages flag or key
// ("--packages (argv)", "spark.jars.ivy (spark-defaults /p)"); a rewritten
// command line has none.
func (s *Submission) PackagesSources() []string {
	var out []string
	for _, o := range s.Argv.Options {
		if _, ok := packagesFlags[o.Name]; ok {
			out = append(out, o.Name+" ("+SourceArgv+")")
		}
		if o.Name == "--conf" {
			if k, v := o.ConfKV(); IsPackagesKey(k) && !inertEmpty(k, v) {
				out = append(out, k+" ("+SourceArgv+")")
			}
		}
	}
	for _, k := range packagesKeys {
		if v, src, ok := s.Conf(k); ok && src != SourceArgv && !inertEmpty(k, v) {
			out = append(out, k+" ("+src+")")
		}
	}
	return out
}

// inertEmpty reports whether an empty override neutralises key: every
// packages key but spark.jars.ivySettings, which spark-submit loads even
// when it is empty (and then fails).
func inertEmpty(key, v string) bool {
	return strings.TrimSpace(v) == "" && key != "spark.jars.ivySettings"
}

// Master returns the effective master: --master, spark.master, $MASTER,
// else local[*]; with --remote/spark.remote/$SPARK_REMOTE and no master,
// "connect".
func (s *Submission) Master() string {
	if v, ok := s.GivenMaster(); ok {
		return v
	}
	if v, ok := s.FlagOrConf("--remote", "spark.remote"); (ok && v != "") || s.Getenv("SPARK_REMOTE") != "" {
		return "connect"
	}
	return "local[*]"
}

// DeployMode returns the effective deploy mode: --deploy-mode,
// spark.submit.deployMode, $DEPLOY_MODE, else client.
func (s *Submission) DeployMode() string {
	if v, ok := s.FlagOrConf("--deploy-mode", "spark.submit.deployMode"); ok && v != "" {
		return v
	}
	if v := s.Getenv("DEPLOY_MODE"); v != "" {
		return v
	}
	return "client"
}

// Cluster managers, as ClusterKind names them.
const (
	ClusterK8s        = "k8s"
	ClusterStandalone = "standalone"
	ClusterYARN       = "yarn"
	ClusterMesos      = "mesos"
	ClusterLocal      = "local"
	ClusterConnect    = "connect"
	ClusterOther      = "other"
)

// ClusterKind classifies a master URL.
func ClusterKind(master string) string {
	switch {
	case strings.HasPrefix(master, "k8s://"):
		return ClusterK8s
	case strings.HasPrefix(master, "spark://"):
		return ClusterStandalone
	case strings.HasPrefix(master, "mesos://"):
		return ClusterMesos
	case strings.HasPrefix(master, "yarn"):
		return ClusterYARN
	case strings.HasPrefix(master, "local"):
		return ClusterLocal
	case master == "connect":
		return ClusterConnect
	}
	return ClusterOther
}
