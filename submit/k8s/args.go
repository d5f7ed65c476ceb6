package k8s

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// k8sArgs is the part of a spark-submit argv that the K8s backend needs: the
// options before the primary resource and the effective Spark conf.
type k8sArgs struct {
	args     []string          // the argv as given
	resource int               // index of the primary resource in args, or len(args)
	master   string            // --master
	name     string            // --name
	class    string            // --class
	deploy   string            // --deploy-mode
	propFile string            // --properties-file
	conf     map[string]string // --conf k=v, later ones win
}

// sparkSubmitValueOpts are spark-submit options that take a value
// (SparkSubmitOptionParser, Spark 3.5 and 4.x).
var sparkSubmitValueOpts = map[string]bool{
	"--master": true, "--remote": true, "--deploy-mode": true, "--class": true, "--name": true,
	"--jars": true, "--packages": true, "--exclude-packages": true, "--repositories": true,
	"--py-files": true, "--files": true, "--archives": true, "--conf": true, "-c": true,
	"--properties-file": true, "--driver-memory": true, "--driver-java-options": true,
	"--driver-library-path": true, "--driver-class-path": true, "--executor-memory": true,
	"--proxy-user": true, "--driver-cores": true, "--total-executor-cores": true,
	"--executor-cores": true, "--num-executors": true, "--queue": true, "--principal": true,
	"--keytab": true, "--kill": true, "--status": true,
}

// parseK8sArgs reads the options of a spark-submit argv up to the primary
// resource. Unknown "--x" options are taken as switches, as spark-submit's
// parser would reject them anyway.
func parseK8sArgs(args []string) (*k8sArgs, error) {
	a := &k8sArgs{args: args, resource: len(args), conf: map[string]string{}}
	for i := 0; i < len(args); i++ {
		opt, val, hasVal := args[i], "", false
		if !strings.HasPrefix(opt, "-") {
			a.resource = i
			break
		}
		if k, v, ok := strings.Cut(opt, "="); ok && sparkSubmitValueOpts[k] {
			opt, val, hasVal = k, v, true
		}
		if !sparkSubmitValueOpts[opt] {
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("spark-submit option %s needs a value", opt)
			}
			i++
			val = args[i]
		}
		switch opt {
		case "--master":
			a.master = val
		case "--name":
			a.name = val
		case "--class":
			a.class = val
		case "--deploy-mode":
			a.deploy = val
		case "--properties-file":
			a.propFile = val
		case "--conf", "-c":
			k, v, ok := strings.Cut(val, "=")
			if !ok {
				return nil, fmt.Errorf("spark-submit --conf %q: expected key=value", redact.ConfArg(val))
			}
			a.conf[k] = v
		}
	}
	return a, nil
}

// withDefaults fills conf keys the argv does not set from the properties file
// (--properties-file, else spark-defaults.conf in confDir when confDir is not
// empty), as SparkSubmitArguments does.
func (a *k8sArgs) withDefaults(confDir string) error {
	path := a.propFile
	if path == "" {
		if path = submit.DefaultsFileIn(confDir); path == "" {
			return nil
		}
	}
	props, err := readProperties(path)
	if err != nil {
		return err
	}
	for k, v := range props {
		if _, ok := a.conf[k]; !ok {
			a.conf[k] = v
		}
	}
	return nil
}

// readProperties reads a properties file as spark-submit does (Java
// properties syntax, last definition wins, values trimmed) and keeps only
// the spark.* keys.
func readProperties(path string) (map[string]string, error) {
	all, err := submit.PropsMap(path)
	if err != nil {
		return nil, err
	}
	for k := range all {
		if !strings.HasPrefix(k, "spark.") {
			delete(all, k)
		}
	}
	return all, nil
}

// appName is Spark's application name: --name, spark.app.name, the main
// class, else the primary resource's file name.
func (a *k8sArgs) appName() string {
	switch {
	case a.name != "":
		return a.name
	case a.conf["spark.app.name"] != "":
		return a.conf["spark.app.name"]
	case a.class != "":
		return a.class
	case a.resource < len(a.args):
		return filepath.Base(a.args[a.resource])
	}
	return "spark"
}

// deployMode is --deploy-mode, else spark.submit.deployMode, else client.
func (a *k8sArgs) deployMode() string {
	switch {
	case a.deploy != "":
		return a.deploy
	case a.conf["spark.submit.deployMode"] != "":
		return a.conf["spark.submit.deployMode"]
	}
	return "client"
}

// namespace is spark.kubernetes.namespace, default "default".
func (a *k8sArgs) namespace() string {
	if ns := a.conf["spark.kubernetes.namespace"]; ns != "" {
		return ns
	}
	return "default"
}

// withConf returns the argv with --conf k=v options inserted just before the
// primary resource, so they win over the user's own.
func (a *k8sArgs) withConf(kv ...string) []string {
	out := make([]string, 0, len(a.args)+len(kv))
	out = append(out, a.args[:a.resource]...)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, "--conf", kv[i]+"="+kv[i+1])
	}
	return append(out, a.args[a.resource:]...)
}

var (
	nonNameChars  = regexp.MustCompile(`[^a-z0-9-]`)
	dashes        = regexp.MustCompile(`-+`)
	leadingDigit  = regexp.MustCompile(`^[0-9]`)
	driverNameMax = 253
)

// sanitizeResourcePrefix is KubernetesConf.getResourceNamePrefix's cleanup
// (Spark 3.5): lowercase, [^a-z0-9-] to "-", collapse dashes, drop a leading
// dash, a leading digit becomes "x".
func sanitizeResourcePrefix(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = nonNameChars.ReplaceAllString(s, "-")
	s = dashes.ReplaceAllString(s, "-")
	s = strings.TrimPrefix(s, "-")
	return leadingDigit.ReplaceAllString(s, "x")
}

// uniqueID is KubernetesUtils.uniqueID: 3 random bytes in hex, then the
// current time in millis masked to 40 bits, in hex.
func uniqueID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b) + strconv.FormatInt(now.UnixMilli()&0xFFFFFFFFFF, 16)
}

// driverPodName is spark.kubernetes.driver.pod.name when given, else the name
// Spark 3.5 would generate: sanitize(appName-uniqueID)-driver.
func (a *k8sArgs) driverPodName(now time.Time) string {
	if n := a.conf["spark.kubernetes.driver.pod.name"]; n != "" {
		return n
	}
	n := sanitizeResourcePrefix(a.appName()+"-"+uniqueID(now)) + "-driver"
	if len(n) > driverNameMax {
		n = strings.TrimLeft(n[len(n)-driverNameMax:], "-")
	}
	return n
}
