package native

import (
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// CheckNamespace refuses a namespace the API server would (a DNS-1123
// label: "../x", "a/b", "..", "%2e%2e"), before any request: an
// *InvalidError naming spark.kubernetes.namespace.
func CheckNamespace(ns string) error {
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return invalid("spark.kubernetes.namespace", "%q is not a valid namespace: %s", ns, strings.Join(msgs, "; "))
	}
	return nil
}

// refusedKeys are conf keys (or prefixes, ending in '.') whose effect needs
// the JVM, Hadoop or files on the submitter, with the reason.
var refusedKeys = []struct{ key, reason string }{
	{"spark.kubernetes.file.upload.path", "local files are uploaded through Hadoop's file systems"},
	{"spark.kubernetes.driver.pod.featureSteps", "custom feature steps are JVM classes that only spark-submit runs"},
	{"spark.kubernetes.scheduler.volcano.", "the Volcano PodGroup pre-resource is not modelled"},
	{"spark.kubernetes.kerberos.", "Kerberos needs the JVM's Hadoop security"},
	{"spark.kerberos.", "Kerberos needs the JVM's Hadoop security"},
	{"spark.kubernetes.authenticate.driver.oauthToken", "driver credentials become a Secret the native submitter does not create"},
	{"spark.kubernetes.authenticate.driver.oauthTokenFile", "driver credentials become a Secret the native submitter does not create"},
	{"spark.kubernetes.authenticate.driver.caCertFile", "driver credentials become a Secret the native submitter does not create"},
	{"spark.kubernetes.authenticate.driver.clientKeyFile", "driver credentials become a Secret the native submitter does not create"},
	{"spark.kubernetes.authenticate.driver.clientCertFile", "driver credentials become a Secret the native submitter does not create"},
	{"spark.kubernetes.driver.resourceNamePrefix", "only honoured by Spark's own tests"},
}

// Check refuses what the native builder cannot reproduce: uploads of local
// files, Kerberos and Hadoop conf dirs, driver credential secrets, custom
// feature steps, Volcano, remote templates, globs, client mode.
// The error is an *UnsupportedError naming the option.
func Check(in *Input) error {
	for k := range in.Conf {
		for _, r := range refusedKeys {
			if k == r.key || (strings.HasSuffix(r.key, ".") && strings.HasPrefix(k, r.key)) {
				return unsupported(k, "%s", r.reason)
			}
		}
	}
	if v, ok := in.Conf["spark.kubernetes.scheduler.name"]; ok && v == "volcano" {
		return unsupported("spark.kubernetes.scheduler.name", "the Volcano PodGroup pre-resource is not modelled")
	}
	if in.Env["HADOOP_CONF_DIR"] != "" {
		return unsupported("HADOOP_CONF_DIR", "spark-submit ships the submitter's Hadoop conf dir and may fetch delegation tokens")
	}
	if dm := in.Conf["spark.submit.deployMode"]; dm != "cluster" {
		return unsupported("--deploy-mode", "only cluster mode creates a driver pod (got %q)", dm)
	}
	if isLocal(in.Resource) && in.Resource != "spark-internal" {
		return unsupported("primary resource "+in.Resource, "a local file needs spark.kubernetes.file.upload.path (use local:// for a file in the image, or a remote URL)")
	}
	if err := checkURIs("primary resource", in.Resource); err != nil {
		return err
	}
	for _, k := range []string{"spark.jars", "spark.files", "spark.archives", "spark.submit.pyFiles"} {
		for _, u := range strings.Split(in.Conf[k], ",") {
			if u = strings.TrimSpace(u); u == "" {
				continue
			}
			if isLocal(u) {
				return unsupported(k, "%s is a local file, which needs spark.kubernetes.file.upload.path", u)
			}
			if err := checkURIs(k, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// isLocal is KubernetesUtils.isLocalDependency: no scheme or file:.
func isLocal(uri string) bool {
	u, err := url.Parse(uri)
	if err != nil {
		return true
	}
	return u.Scheme == "" || u.Scheme == "file"
}

// checkURIs refuses globs in remote URIs: spark-submit expands them on the
// submitter through Hadoop's file systems, except local:, http:, https:
// and ftp: ones, which it passes as they are (DependencyUtils.
// resolveGlobPath): a presigned URL's query string is no glob.
func checkURIs(key, uri string) error {
	for _, scheme := range []string{"local:", "http:", "https:", "ftp:"} {
		if len(uri) >= len(scheme) && strings.EqualFold(uri[:len(scheme)], scheme) {
			return nil
		}
	}
	if strings.ContainsAny(uri, "*?[{") {
		return unsupported(key, "%s: spark-submit expands globs through Hadoop's file systems", uri)
	}
	return nil
}
