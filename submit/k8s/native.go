package k8s

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit"
	"github.com/prebake/prebake/submit/k8s/native"
)

// Submitters of a k8s:// cluster-mode submission (WithSubmitter).
const (
	SubmitterSparkSubmit = "spark-submit" // run the real spark-submit (the default)
	SubmitterNative      = "native"       // build and create the objects in Go, no JVM
	SubmitterAuto        = "auto"         // native when the argv is inside its supported set
)

// nativeEnv is the part of the submitter's environment Spark reads beyond
// what the submission itself was loaded with (conf dir, $MASTER,
// $DEPLOY_MODE).
var nativeEnv = []string{"SPARK_USER", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_LOCAL_DIRS",
	"HADOOP_CONF_DIR", "USER"}

// currentUser is user.Current (a variable for the tests).
var currentUser = user.Current

// nativeObjects builds what spark-submit would create for sub with the
// --conf pairs extra added last; a conflict between o.driverSparkVersion and
// the baked image goes to o.stderr.
func nativeObjects(ctx context.Context, sub *submit.Submission, extra []string, o *options) (*native.Objects, error) {
	env := map[string]string{}
	for _, k := range nativeEnv {
		if v := o.getenv(k); v != "" {
			env[k] = v
		}
	}
	if env["USER"] == "" {
		// Spark's fallback is the JVM's user name (Hadoop UGI).
		if u, err := currentUser(); err == nil {
			env["USER"] = u.Username
		}
	}
	in, err := native.FromSubmission(sub, "", env)
	if err != nil {
		return nil, err
	}
	if in.Env["SPARK_USER"] == "" && in.ProxyUser == "" && in.User == "" {
		// Spark's driver hands its user to the executors, which refuse an
		// empty one ("Null user"): a container whose uid has no name.
		return nil, errdefs.New(errdefs.BadArgument, fmt.Errorf("no user name for the driver: set SPARK_USER (or USER); uid %d has no passwd entry", os.Getuid()))
	}
	for i := 0; i+1 < len(extra); i += 2 {
		in.Conf[extra[i]] = extra[i+1]
	}
	v, warning := driverSparkVersion(o.driverSparkVersion, o.imageSparkVersion, in.Conf)
	if warning != "" {
		fmt.Fprintf(o.stderr, "prebake: warning: %s\n", warning)
	}
	var lookupErr error
	img := driverImage(in.Conf)
	if v == "" && img != "" && o.lookupVersion != nil {
		v, lookupErr = lookupImageVersion(ctx, o.lookupVersion, img)
	}
	in.SparkVersion = v
	objs, err := native.Build(in)
	var ue *native.UnsupportedError
	if lookupErr != nil && errors.As(err, &ue) && ue.Option == native.OptionSparkVersion {
		return nil, fmt.Errorf("%w; the image %s was asked: %v", err, img, lookupErr)
	}
	return objs, err
}

// imageLookupTimeout bounds the read of the driver image's annotations.
var imageLookupTimeout = 10 * time.Second

// lookupImageVersion asks image for the Spark version prebake recorded on
// it; an image without one is an error saying so.
func lookupImageVersion(ctx context.Context, lookup func(context.Context, string) (string, error), image string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, imageLookupTimeout)
	defer cancel()
	v, err := lookup(ctx, image)
	switch {
	case err != nil:
		return "", err
	case v == "":
		return "", errors.New("it records no Spark version (dev.prebake.spark-version): it was not baked by prebake")
	}
	return v, nil
}

// driverImage is the driver's container image as the conf names it.
func driverImage(conf map[string]string) string {
	if img := conf["spark.kubernetes.driver.container.image"]; img != "" {
		return img
	}
	return conf["spark.kubernetes.container.image"]
}

// driverSparkVersion picks the Spark version whose rules the native
// submitter follows: the one asked for (flag), else the version the baked
// image's jars say (image, from the bake or its cache hit), else the tag of
// an official Apache Spark image. A flag that differs from the image's jars
// wins, with a warning: the rules (and the spark-version label) follow the
// flag, not the Spark that will run.
func driverSparkVersion(flag, image string, conf map[string]string) (version, warning string) {
	switch {
	case flag != "" && image != "" && flag != image:
		return flag, fmt.Sprintf("Spark %s asked for, but the baked driver image's jars are Spark %s: following %s's rules", flag, image, flag)
	case flag != "":
		return flag, ""
	case image != "":
		return image, ""
	}
	return imageSparkVersion(conf), ""
}

// officialTag is the tag of Apache Spark's images (apache/spark, spark):
// the Spark version first ("3.5.9", "4.0.5-scala2.13-java17-python3-ubuntu").
var officialTag = regexp.MustCompile(`(^|/)(apache/)?spark:([0-9]+\.[0-9]+\.[0-9]+)(-[a-z0-9.-]+)?$`)

// imageSparkVersion reads the Spark version from the driver image's tag
// when the image is one of Apache Spark's own; "" otherwise.
func imageSparkVersion(conf map[string]string) string {
	if m := officialTag.FindStringSubmatch(driverImage(conf)); m != nil {
		return m[3]
	}
	return ""
}

func checkSubmitter(s string) error {
	switch s {
	case "", SubmitterSparkSubmit, SubmitterNative, SubmitterAuto:
		return nil
	}
	return errdefs.Optionf(errdefs.BadArgument, "k8s.WithSubmitter", "submitter %q: must be native, spark-submit or auto", s)
}

// chooseSubmitter returns the native objects when the submission goes
// native, nil when it goes through spark-submit. Submitter native fails
// (a bad argument, naming the option) on what it cannot reproduce; auto falls back to
// spark-submit then, and says why.
func chooseSubmitter(ctx context.Context, sub *submit.Submission, extra []string, o *options, progress func(string, ...any)) (*native.Objects, error) {
	if o.submitter == "" || o.submitter == SubmitterSparkSubmit {
		return nil, nil
	}
	objs, err := nativeObjects(ctx, sub, extra, o)
	switch {
	case err == nil:
		return objs, nil
	case isFileErr(err):
		// A template that cannot be read fails spark-submit as well.
		return nil, err
	case o.submitter == SubmitterAuto && o.sparkSubmit != "":
		progress("auto: using spark-submit: %v", err)
		return nil, nil
	}
	return nil, errdefs.New(errdefs.BadArgument, fmt.Errorf("submitter %s: %w", o.submitter, err))
}

// createNative creates the objects in spark-submit's order with the
// submission's credentials.
func (w *driverWatch) createNative(ctx context.Context, sub *submit.Submission, objs *native.Objects) error {
	_, err := createObjects(ctx, w.client, objs)
	switch {
	case err == nil:
		return nil
	case apierrors.IsRequestEntityTooLargeError(err):
		// Bad input, not an outage: the ConfigMap carries the properties.
		return errdefs.New(errdefs.Invalid, fmt.Errorf("the submission's Spark properties%s are larger than the API server accepts in a ConfigMap: %w", propsSources(sub), err))
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
		return errdefs.New(errdefs.Denied, w.creds.explainAuth(err))
	case apierrors.IsInvalid(err) || apierrors.IsAlreadyExists(err) || apierrors.IsBadRequest(err) || apierrors.IsNotFound(err):
		return errdefs.New(errdefs.BadArgument, err)
	}
	return errdefs.New(errdefs.Unavailable, err)
}

// isFileErr reports whether err is a local file that cannot be read
// (missing: NotFound; a FIFO, a device, too large: Invalid), which keeps
// its kind.
func isFileErr(err error) bool {
	k := errdefs.KindOf(err)
	return k == errdefs.NotFound || k == errdefs.Invalid
}

// propsSources names the properties files the conf came from, as
// " (from the properties file F, spark-defaults.conf D)", or "".
func propsSources(sub *submit.Submission) string {
	var from []string
	if f := sub.PropertiesFile; f != nil && f.Path != "" {
		from = append(from, "the properties file "+f.Path)
	}
	if d := sub.Defaults; d != nil && d.Path != "" {
		from = append(from, d.Path)
	}
	if len(from) == 0 {
		return ""
	}
	return " (from " + strings.Join(from, ", ") + ")"
}

// DryRun returns the objects the native submitter would create for p.Sub
// (in creation order: Objects.Pod, then Objects.Owned), and creates
// nothing; the caller prints them (Objects.YAML). What it cannot reproduce
// is a bad argument naming the option.
func (b *Backend) DryRun(ctx context.Context, p *submit.Prepared) (*native.Objects, error) {
	return dryRun(ctx, p.Sub, b.run(p))
}

func dryRun(ctx context.Context, sub *submit.Submission, o *options) (*native.Objects, error) {
	objs, err := nativeObjects(ctx, sub, nil, o)
	if err != nil {
		var ue *native.UnsupportedError
		if errors.As(err, &ue) {
			return nil, errdefs.New(errdefs.BadArgument, fmt.Errorf("dry run: %w", err))
		}
		if isFileErr(err) {
			return nil, err
		}
		return nil, errdefs.New(errdefs.BadArgument, err)
	}
	return objs, nil
}

// createObjects makes objs in Spark's order: the driver pod first, then
// the Service, the NetworkPolicy (4.2+), PVCs, executor pod template
// ConfigMap and driver ConfigMap, each owned by the pod ({v1, Pod, name,
// uid, controller: true}). When one of those fails the pod is deleted, as
// spark-submit does, and the error returned. The returned pod is the one
// the API server created.
func createObjects(ctx context.Context, c kubernetes.Interface, objs *native.Objects) (*corev1.Pod, error) {
	ns := objs.Namespace
	pod, err := c.CoreV1().Pods(ns).Create(ctx, objs.Pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating driver pod %s/%s: %w", ns, objs.Pod.Name, err)
	}
	objs.SetOwner(pod)
	var errs []error
	for _, o := range objs.Owned() {
		var err error
		switch x := o.(type) {
		case *corev1.Service:
			_, err = c.CoreV1().Services(ns).Create(ctx, x, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = c.CoreV1().ConfigMaps(ns).Create(ctx, x, metav1.CreateOptions{})
		case *corev1.PersistentVolumeClaim:
			_, err = c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, x, metav1.CreateOptions{})
		case *networkingv1.NetworkPolicy:
			_, err = c.NetworkingV1().NetworkPolicies(ns).Create(ctx, x, metav1.CreateOptions{})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("creating %s %s/%s: %w", native.KindOf(o), ns, o.GetName(), err))
			break
		}
	}
	if len(errs) > 0 {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := c.CoreV1().Pods(ns).Delete(dctx, pod.Name, metav1.DeleteOptions{}); derr != nil {
			errs = append(errs, fmt.Errorf("deleting driver pod %s/%s after the failure: %w", ns, pod.Name, derr))
		}
		return nil, errors.Join(errs...)
	}
	return pod, nil
}
