package rest

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit"
)

// DefaultClientSparkVersion is the clientSparkVersion prebake sends by
// default: the parity target. Spark never compares it with its own version.
const DefaultClientSparkVersion = "3.5.1"

// ErrPackages is returned when a packages key would reach the
// sparkProperties of a REST submission.
var ErrPackages = errors.New("packages in a REST submission")

// restPackagesKeys are the conf keys spark-submit's --packages handling reads.
// In standalone/Mesos cluster mode the worker's DriverWrapper reads them
// again (DriverWrapper.setupDependencies) and resolves with Ivy on the
// worker at driver start.
var restPackagesKeys = []string{"spark.jars.packages", "spark.jars.repositories", "spark.jars.excludes", "spark.jars.ivy", "spark.jars.ivySettings"}

// restEnvExcluded are the SPARK_* variables RestSubmissionClient does not send.
var restEnvExcluded = map[string]bool{"SPARK_ENV_LOADED": true, "SPARK_HOME": true, "SPARK_CONF_DIR": true}

// restEnvHostSpecific are excluded too by Spark 4 clients: they name this
// host, not the driver's.
var restEnvHostSpecific = map[string]bool{"SPARK_LOCAL_IP": true, "SPARK_LOCAL_HOSTNAME": true}

// filterRestEnv is RestSubmissionClient.filterSystemEnvironment: SPARK_*
// minus SPARK_ENV_LOADED/SPARK_HOME/SPARK_CONF_DIR, and MESOS_* for clients
// before Spark 4.0 (4.x drops Mesos and also leaves out SPARK_LOCAL_IP and
// SPARK_LOCAL_HOSTNAME).
func filterRestEnv(env map[string]string, clientVersion string) map[string]string {
	legacy := !(strings.HasPrefix(clientVersion, "4.") || strings.HasPrefix(clientVersion, "5."))
	out := map[string]string{}
	for k, v := range env {
		spark := strings.HasPrefix(k, "SPARK_") && !restEnvExcluded[k] && (legacy || !restEnvHostSpecific[k])
		if spark || legacy && strings.HasPrefix(k, "MESOS_") {
			out[k] = v
		}
	}
	return out
}

func restEnvironMap(environ []string) map[string]string {
	m := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// BuildCreateRequest builds the CreateSubmissionRequest spark-submit would
// send for sub (a rewritten submission, cluster mode, spark:// or mesos://
// master), as SparkSubmit.prepareSubmitEnvironment and
// RestSubmissionClientApp do. Errors are errdefs.BadArgument.
//
// The SPARK_* (and, before Spark 4, MESOS_*) variables sent are the
// submission's (Submission.Environ), as its conf files are.
//
// Options used: WithClientSparkVersion, WithLog (warnings).
func BuildCreateRequest(sub *submit.Submission, opts ...Option) (*CreateSubmissionRequest, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	a, err := newRestArgs(sub)
	if err != nil {
		return nil, errdefs.New(errdefs.BadArgument, err)
	}
	env := restEnvironMap(sub.Environ())

	// Conf: the effective Spark conf (--conf over the properties file or
	// spark-defaults.conf), then the options (which win).
	conf := a.conf
	master := a.master
	if !strings.HasPrefix(master, "spark://") && !strings.HasPrefix(master, "mesos://") {
		return nil, errdefs.Errorf(errdefs.BadArgument, "--master %q: the REST protocol needs a spark:// or mesos:// master", master)
	}
	mesos := strings.HasPrefix(master, "mesos://")
	deployMode := a.deployMode
	if deployMode != "cluster" {
		return nil, errdefs.Errorf(errdefs.BadArgument, "deploy mode %q: the REST protocol submits in cluster mode only; add --deploy-mode cluster (in client mode the driver runs here: use spark-submit)", deployMode)
	}
	if a.resource == "" {
		return nil, errdefs.Errorf(errdefs.BadArgument, "no primary resource (application jar or Python file) in the spark-submit arguments")
	}
	py := restIsPython(a.resource)
	var mainClass *string
	switch {
	case py && !mesos:
		return nil, errdefs.Errorf(errdefs.BadArgument, "%s: cluster deploy mode is not supported for Python applications on standalone clusters (Spark refuses it too)", a.resource)
	case py:
		// SparkSubmit passes "" as the main class of a Python app on Mesos.
		empty := ""
		mainClass = &empty
	case a.class != "":
		c := a.class
		mainClass = &c
	default:
		return nil, errdefs.Errorf(errdefs.BadArgument, "no main class: add --class (the master needs it to launch the driver)")
	}
	name := a.name
	if name == "" {
		name = conf["spark.app.name"]
	}
	if name == "" && mainClass != nil && *mainClass != "" {
		name = *mainClass
	}
	if name == "" {
		name = restBaseName(a.resource)
	}

	// SparkSubmit's OptionAssigners for STANDALONE|MESOS in cluster mode.
	set := func(key, val string) {
		if val != "" {
			conf[key] = val
		}
	}
	set("spark.master", master)
	set("spark.submit.deployMode", "cluster")
	set("spark.app.name", name)
	set("spark.driver.memory", a.opts["--driver-memory"])
	set("spark.driver.extraClassPath", a.opts["--driver-class-path"])
	set("spark.driver.extraJavaOptions", a.opts["--driver-java-options"])
	set("spark.driver.extraLibraryPath", a.opts["--driver-library-path"])
	if a.supervise {
		conf["spark.driver.supervise"] = "true"
	}
	set("spark.driver.cores", a.opts["--driver-cores"])
	set("spark.cores.max", a.opts["--total-executor-cores"])
	set("spark.executor.cores", a.opts["--executor-cores"])
	set("spark.executor.memory", a.opts["--executor-memory"])
	set("spark.files", a.opts["--files"])
	set("spark.archives", a.opts["--archives"])
	set("spark.submit.pyFiles", a.opts["--py-files"])
	set("spark.jars", a.opts["--jars"])
	set("spark.jars.packages", a.opts["--packages"])
	set("spark.jars.repositories", a.opts["--repositories"])
	set("spark.jars.excludes", a.opts["--exclude-packages"])
	// The application jar joins spark.jars so the driver need not addJar it.
	if !py && restIsUserJar(a.resource) {
		var jars []string
		for _, j := range strings.Split(conf["spark.jars"], ",") {
			if j = strings.TrimSpace(j); j != "" {
				jars = append(jars, j)
			}
		}
		conf["spark.jars"] = strings.Join(append(jars, a.resource), ",")
	}
	if err := restStripPackages(conf, o); err != nil {
		return nil, err
	}
	return &CreateSubmissionRequest{
		Action:               "CreateSubmissionRequest",
		AppArgs:              a.appArgs,
		AppResource:          a.resource,
		ClientSparkVersion:   o.clientVersion,
		EnvironmentVariables: filterRestEnv(env, o.clientVersion),
		MainClass:            mainClass,
		SparkProperties:      conf,
	}, nil
}

// restStripPackages makes sure no packages key reaches sparkProperties: a
// non-empty spark.jars.packages is refused (it means the arguments were not
// rewritten); the other keys, which only steer a resolution, are dropped with
// a warning.
func restStripPackages(conf map[string]string, o *options) error {
	if v := strings.TrimSpace(conf["spark.jars.packages"]); v != "" {
		return errdefs.New(errdefs.BadArgument, fmt.Errorf("%w: spark.jars.packages=%s would reach the master, and the worker's DriverWrapper would resolve it again with Ivy at driver start (on every worker, every launch); let prebake resolve and rewrite it (prebake submit does) or remove --packages", ErrPackages, v))
	}
	var dropped []string
	for _, k := range restPackagesKeys {
		if _, ok := conf[k]; ok {
			if conf[k] != "" && k != "spark.jars.packages" {
				dropped = append(dropped, k)
			}
			delete(conf, k)
		}
	}
	sort.Strings(dropped)
	if len(dropped) > 0 && o.log != nil {
		fmt.Fprintf(o.log, "prebake: not sending %s to the master: without packages they only steer the worker's DriverWrapper resolution\n", strings.Join(dropped, ", "))
	}
	return nil
}
