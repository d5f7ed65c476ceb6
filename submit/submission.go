package submit

import (
	"path"
	"strings"
)

// This file holds the accessors every backend reads from a Submission, so
// that the argv and the conf files are parsed once (LoadSubmission) and
// every backend sees Spark's precedence (SparkSubmitArguments).

// Args returns the command line as given (a copy).
func (s *Submission) Args() []string { return append([]string{}, s.args...) }

// Environ returns the environment ("K=V") the submission was loaded with
// (LoadSubmission), a copy: the one spark-submit's process runs with. It
// is never nil, so that an exec.Cmd given it does not inherit this
// process's environment instead.
func (s *Submission) Environ() []string { return append([]string{}, s.environ...) }

// Getenv returns the value of the variable key in the submission's
// environment (Environ): "" when unset; the last entry wins when the name
// repeats, as in the environment exec gives the child.
func (s *Submission) Getenv(key string) string { return s.env[key] }

// setEnviron sets the submission's environment to a copy of environ.
func (s *Submission) setEnviron(environ []string) {
	s.environ, s.env = append([]string{}, environ...), envMap(environ)
}

// envMap is environ ("K=V") as a map, the last entry of a name winning;
// an entry without "=" is skipped, as os.Getenv skips it.
func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// Reload loads args (a command line derived from this one, such as the
// rewritten one) with the same environment.
func (s *Submission) Reload(args []string) (*Submission, error) {
	r, err := LoadSubmission(args, s.environ)
	if err == nil {
		r.pyspark = s.pyspark
	}
	return r, err
}

// FromPySparkEnv reports whether the command line is $PYSPARK_SUBMIT_ARGS
// (LoadPySparkSubmission): the rewritten one becomes that variable's new
// value (PySparkSubmitArgs), not a spark-submit argv.
func (s *Submission) FromPySparkEnv() bool { return s.pyspark }

// PySparkSubmitArgs is the command line as a $PYSPARK_SUBMIT_ARGS value:
// shell-quoted on one line, which pyspark's shlex.split reads back to the
// same arguments (pyspark-shell last, as the primary resource).
func (s *Submission) PySparkSubmitArgs() string { return ShellQuote(s.args) }

// Flag returns the value of the last occurrence of a canonical spark-submit
// option ("--jars"), as given in the argv.
func (s *Submission) Flag(name string) (string, bool) { return s.Argv.Flag(name) }

// GivenMaster is the master the submission names: --master, spark.master
// (argv, properties file, spark-defaults.conf) or $MASTER; ok is false when
// none does (Master then falls back to local[*] or connect).
func (s *Submission) GivenMaster() (master string, ok bool) {
	if v, ok := s.FlagOrConf("--master", "spark.master"); ok && v != "" {
		return v, true
	}
	if v := s.Getenv("MASTER"); v != "" {
		return v, true
	}
	return "", false
}

// MainClass is --class ("" without one).
func (s *Submission) MainClass() string { v, _ := s.Argv.Flag("--class"); return v }

// Primary is the primary resource ("" and false without one).
func (s *Submission) Primary() (string, bool) { return s.Argv.Primary, s.Argv.HasPrimary }

// AppArgs are the application arguments (a copy).
func (s *Submission) AppArgs() []string { return append([]string{}, s.Argv.AppArgs...) }

// Resource types of a primary resource (spark.kubernetes.resource.type).
const (
	ResourceJava   = "java"
	ResourcePython = "python"
	ResourceR      = "r"
)

// PrimaryType is the primary resource's type as SparkSubmit sees it
// (isPython: .py or pyspark-shell; isR: .R or sparkr-shell), else java.
func (s *Submission) PrimaryType() string {
	p := s.Argv.Primary
	switch {
	case strings.HasSuffix(p, ".py") || p == ResourcePySparkShell || p == ResourceSparkPipelines:
		return ResourcePython
	case strings.HasSuffix(p, ".R") || p == ResourceSparkRShell:
		return ResourceR
	}
	return ResourceJava
}

// Name is the application name as SparkSubmitArguments sets it: --name,
// spark.app.name, the main class, else the primary resource's file name;
// "" when there is none of them.
func (s *Submission) Name() string {
	if v, ok := s.FlagOrConf("--name", "spark.app.name"); ok && v != "" {
		return v
	}
	if c := s.MainClass(); c != "" {
		return c
	}
	if p, ok := s.Primary(); ok && p != "" {
		return path.Base(p)
	}
	return ""
}

// PropertiesFilePath is --properties-file ("" without one).
func (s *Submission) PropertiesFilePath() string {
	v, _ := s.Argv.Flag("--properties-file")
	return v
}

// Supervise reports whether --supervise was given.
func (s *Submission) Supervise() bool { return s.Argv.Has("--supervise") }

// ProxyUser is --proxy-user ("" without one).
func (s *Submission) ProxyUser() string { v, _ := s.Argv.Flag("--proxy-user"); return v }

// SparkConf is the effective Spark conf of the submission, as
// SparkSubmitArguments builds sparkProperties: --conf (the last one wins),
// then the properties file and spark-defaults.conf for keys the argv lacks
// (see Conf for which files), without the keys that do not start with
// "spark." (ignoreNonSparkProperties). The spark-submit options that set
// conf keys (--name, --jars, ...) are not applied: each backend applies its
// cluster manager's OptionAssigners.
func (s *Submission) SparkConf() map[string]string {
	out := map[string]string{}
	for _, f := range []*PropsFile{s.Defaults, s.PropertiesFile} {
		if f == nil {
			continue
		}
		for _, k := range f.Keys() {
			out[k], _ = f.Get(k)
		}
	}
	for _, o := range s.Argv.Options {
		if o.Name == "--conf" {
			k, v := o.ConfKV()
			out[k] = v
		}
	}
	for k := range out {
		if !strings.HasPrefix(k, "spark.") {
			delete(out, k)
		}
	}
	return out
}

// WithConf returns the command line with --conf k=v options (kv are pairs)
// added after the user's options, just before the primary resource, so
// that they win over the user's own.
func (s *Submission) WithConf(kv ...string) []string {
	a := *s.Argv
	a.Options = append([]Arg{}, s.Argv.Options...)
	for i := 0; i+1 < len(kv); i += 2 {
		a.Options = append(a.Options, Arg{Name: "--conf", Value: kv[i] + "=" + kv[i+1], Tokens: []string{"--conf", kv[i] + "=" + kv[i+1]}})
	}
	if s.Argv.appArgAt != nil {
		// Mixed arguments: the ones after the last option stay after it.
		a.appArgAt = append([]int{}, s.Argv.appArgAt...)
		for i, at := range a.appArgAt {
			if at == len(s.Argv.Options) {
				a.appArgAt[i] = len(a.Options)
			}
		}
	}
	return a.Tokens()
}

// ConfDir is the directory spark-submit reads spark-defaults.conf from:
// $SPARK_CONF_DIR, else $SPARK_HOME/conf, else "" (none).
func (s *Submission) ConfDir() string { return sparkConfDir(s.Getenv) }
