package native

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/prebake/prebake/internal/localfile"
	"github.com/prebake/prebake/submit"
)

// Resource types (spark.kubernetes.resource.type).
const (
	ResourceJava   = submit.ResourceJava
	ResourcePython = submit.ResourcePython
	ResourceR      = submit.ResourceR
)

// Input is everything the builder needs: the Spark conf exactly as
// SparkSubmit hands it to KubernetesClientApplication, the application, and
// the few submitter-side inputs Spark reads.
type Input struct {
	// SparkVersion is the driver image's Spark version ("3.5.9", "4.0.5"): the
	// spark-version label and the 3.5/4.0 rules.
	SparkVersion string
	// Conf is the submission's Spark conf (spark.master, spark.app.name, ...).
	Conf map[string]string
	// Resource is the primary resource as given; "" for none.
	Resource string
	// ResourceType is ResourceJava, ResourcePython or ResourceR.
	ResourceType string
	// MainClass is the JVM main class (Java apps).
	MainClass string
	AppArgs   []string
	ProxyUser string
	// Env is the submitter's environment as far as Spark reads it:
	// SPARK_USER, PYSPARK_PYTHON, PYSPARK_DRIVER_PYTHON, SPARK_LOCAL_DIRS.
	Env map[string]string
	// User is the submitting OS user (SPARK_USER when Env has none).
	User string
	// ConfFiles are the files of $SPARK_CONF_DIR that Spark ships in the
	// driver ConfigMap, by name (see ConfDirFiles).
	ConfFiles map[string]string
}

// flagConf maps a spark-submit option to the conf key SparkSubmit's
// OptionAssigner sets from it in Kubernetes cluster mode.
var flagConf = map[string]string{
	"--master":               "spark.master",
	"--deploy-mode":          "spark.submit.deployMode",
	"--name":                 "spark.app.name",
	"--packages":             "spark.jars.packages",
	"--repositories":         "spark.jars.repositories",
	"--exclude-packages":     "spark.jars.excludes",
	"--driver-memory":        "spark.driver.memory",
	"--driver-cores":         "spark.driver.cores",
	"--driver-class-path":    "spark.driver.extraClassPath",
	"--driver-java-options":  "spark.driver.extraJavaOptions",
	"--driver-library-path":  "spark.driver.extraLibraryPath",
	"--num-executors":        "spark.executor.instances",
	"--executor-memory":      "spark.executor.memory",
	"--executor-cores":       "spark.executor.cores",
	"--total-executor-cores": "spark.cores.max",
	"--jars":                 "spark.jars",
	"--files":                "spark.files",
	"--archives":             "spark.archives",
	"--py-files":             "spark.submit.pyFiles",
}

// FromSubmission maps a spark-submit command line, loaded once with
// submit.LoadSubmission (the argv, --properties-file, spark-defaults.conf,
// $MASTER, $DEPLOY_MODE), to an Input the way SparkSubmit does for a
// k8s:// master in cluster mode: the effective conf (--conf over the
// files, non-spark keys dropped), the options' conf keys, the master
// normalised, the primary jar appended to spark.jars, spark.driver.host
// dropped. env is the submitter's environment (SPARK_USER, PYSPARK_*,
// SPARK_LOCAL_DIRS, HADOOP_CONF_DIR, USER); the conf dir is the
// submission's (Submission.ConfDir).
func FromSubmission(sub *submit.Submission, sparkVersion string, env map[string]string) (*Input, error) {
	if sub.Argv.Action != submit.ActionSubmit {
		return nil, unsupported("--"+sub.Argv.Action, "not a submission")
	}
	for _, o := range []string{"--remote", "--principal", "--keytab"} {
		if !sub.Argv.Has(o) {
			continue
		}
		if o == "--remote" {
			return nil, unsupported(o, "Spark Connect is not a cluster-mode submission")
		}
		return nil, unsupported(o, "Kerberos logins need the JVM's Hadoop security")
	}
	if sub.Argv.IsPipelines() {
		return nil, unsupported(submit.ResourceSparkPipelines, "the pipeline CLI runs a local Spark Connect server, not a cluster-mode submission")
	}
	in := &Input{SparkVersion: sparkVersion, Conf: sub.SparkConf(), Env: map[string]string{}}
	in.Resource, _ = sub.Primary()
	in.AppArgs = sub.AppArgs()
	// Options override the conf (loadEnvironmentArguments reads the conf
	// when an option is absent, and the OptionAssigners write it back).
	for f, key := range flagConf {
		if v, ok := sub.Flag(f); ok {
			in.Conf[key] = v
		}
	}
	in.ProxyUser = sub.ProxyUser()
	in.MainClass = sub.MainClass()

	// The master and deploy mode with Spark's precedence: option, conf,
	// then $MASTER / $DEPLOY_MODE.
	master, _ := sub.GivenMaster()
	if !strings.HasPrefix(master, "k8s://") {
		return nil, unsupported("--master", "the native submitter only submits to k8s:// masters, got %q", master)
	}
	m, err := normaliseMaster(master)
	if err != nil {
		return nil, err
	}
	in.Conf["spark.master"] = m
	if dm := sub.DeployMode(); dm != "cluster" {
		return nil, unsupported("--deploy-mode", "%s mode runs the driver in spark-submit itself", dm)
	}
	in.Conf["spark.submit.deployMode"] = "cluster"

	switch {
	case in.Resource == "":
		return nil, invalid("primary resource", "missing (the application jar, .py or .R file)")
	case in.Resource == "pyspark-shell" || in.Resource == "sparkr-shell" || in.Resource == "spark-shell":
		return nil, unsupported(in.Resource, "shells run in client mode")
	}
	in.ResourceType = sub.PrimaryType()
	switch in.ResourceType {
	case ResourcePython:
		in.MainClass = "org.apache.spark.deploy.PythonRunner"
	case ResourceR:
		in.MainClass = "org.apache.spark.deploy.RRunner"
	default:
		if in.MainClass == "" {
			return nil, unsupported("--class", "missing: spark-submit would read Main-Class from the jar through Hadoop's file systems")
		}
	}
	if _, ok := in.Conf["spark.app.name"]; !ok {
		if in.ResourceType == ResourceJava {
			in.Conf["spark.app.name"] = in.MainClass
		} else {
			in.Conf["spark.app.name"] = path.Base(strings.TrimRight(in.Resource, "/"))
		}
	}
	// Resolve the path confs as SparkSubmit does (Utils.resolveURIs).
	for _, k := range []string{"spark.jars", "spark.files", "spark.archives", "spark.submit.pyFiles"} {
		if v, ok := in.Conf[k]; ok {
			in.Conf[k] = joinNonEmpty(v)
		}
	}
	if in.ResourceType == ResourceJava {
		jars := in.Conf["spark.jars"]
		if isUserJar(in.Resource) {
			if jars != "" {
				jars += ","
			}
			jars += in.Resource
		}
		in.Conf["spark.jars"] = jars
		// SparkSubmit writes spark.submit.pyFiles for a JVM application
		// too, empty (seen from 3.5.0 to 4.3.0's spark.properties).
		if _, ok := in.Conf["spark.submit.pyFiles"]; !ok {
			in.Conf["spark.submit.pyFiles"] = ""
		}
	}
	delete(in.Conf, "spark.driver.host")

	for _, k := range []string{"SPARK_USER", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_LOCAL_DIRS", "HADOOP_CONF_DIR"} {
		if v, ok := env[k]; ok && v != "" {
			in.Env[k] = v
		}
	}
	in.User = env["USER"]
	if confDir := sub.ConfDir(); confDir != "" {
		cf, err := ConfDirFiles(confDir, in.Conf)
		if err != nil {
			return nil, err
		}
		in.ConfFiles = cf
	}
	return in, nil
}

// isUserJar is SparkSubmit.isUserJar: not a shell, not internal, not Python
// or R.
func isUserJar(res string) bool {
	switch res {
	case "spark-shell", "pyspark-shell", "sparkr-shell", "spark-internal":
		return false
	}
	return !strings.HasSuffix(res, ".py") && !strings.HasSuffix(res, ".R")
}

func joinNonEmpty(v string) string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ",")
}

// normaliseMaster is Utils.checkAndGetK8sMasterUrl.
func normaliseMaster(raw string) (string, error) {
	rest := strings.TrimPrefix(raw, "k8s://")
	if !strings.Contains(rest, "://") {
		return "k8s://https://" + rest, nil
	}
	scheme, _, _ := strings.Cut(rest, "://")
	if scheme != "https" && scheme != "http" {
		return "", invalid("--master", "invalid Kubernetes master scheme %q", scheme)
	}
	return "k8s://" + rest, nil
}

var (
	binaryConf   = regexp.MustCompile(`^.*\.(gz|zip|jar|tar)$`)
	sparkConfRe  = regexp.MustCompile(`^spark.*(conf|properties)$`)
	defaultMaxCM = int64(1048576)
)

// ConfDirFiles loads the files of the submitter's $SPARK_CONF_DIR that
// Spark ships in the driver ConfigMap (KubernetesClientUtils): regular
// files, not templates, not spark*conf|properties, not binary archives,
// smallest first while the total stays under
// spark.kubernetes.configMap.maxSize.
func ConfDirFiles(dir string, conf map[string]string) (map[string]string, error) {
	maxSize := defaultMaxCM
	if v, ok := conf["spark.kubernetes.configMap.maxSize"]; ok {
		n, err := parseBytes(v, 1)
		if err != nil {
			return nil, invalid("spark.kubernetes.configMap.maxSize", "%v", err)
		}
		maxSize = n
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil // Spark lists nothing when the directory is missing.
	}
	type f struct {
		name string
		size int64
	}
	var fs []f
	for _, e := range entries {
		info, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		n := e.Name()
		if info.Size()+int64(len(n)) > maxSize || binaryConf.MatchString(n) ||
			strings.HasSuffix(n, "template") || sparkConfRe.MatchString(n) {
			continue
		}
		fs = append(fs, f{n, info.Size()})
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].size < fs[j].size })
	out := map[string]string{}
	var total int64
	for _, x := range fs {
		// A file swapped for a FIFO since it was listed is refused.
		b, err := localfile.Read(filepath.Join(dir, x.name), maxSize)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, x.name), err)
		}
		if total+int64(len(x.name))+int64(len([]rune(string(b)))) < maxSize {
			out[x.name] = string(b)
			total += int64(len(x.name)) + int64(len([]rune(string(b))))
		}
	}
	return out, nil
}
