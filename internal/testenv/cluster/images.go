package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prebake/prebake/internal/digest"
	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/layers"
)

// busybox is Debian's busybox-static (hack/infra.d/55-node.sh installs it):
// the one binary of the pause image and of the test image.
const busybox = "/bin/busybox"

// busyboxFile is busybox at name in an image layer (a copy per name: the
// applet is chosen by argv[0], and layers hold regular files only).
func busyboxFile(name string) (layers.File, error) {
	sum, _, err := digest.File(busybox)
	if err != nil {
		return layers.File{}, fmt.Errorf("%s (apt-get install busybox-static): %w", busybox, err)
	}
	return layers.FileFromPath(name, busybox, 0o755, sum)
}

// pushPause builds the pod sandbox image: busybox sleeping as PID 1.
// containerd kills the sandbox with SIGKILL, so no signal handling is needed.
func pushPause(ctx context.Context, ref string) error {
	bb, err := busyboxFile("/bin/busybox")
	if err != nil {
		return err
	}
	_, err = layers.BuildImage(ctx, layers.BuildSpec{
		Target:     ref,
		Platforms:  []layers.PlatformFiles{{Platform: "linux/amd64", Layers: [][]layers.File{{bb}}}},
		Entrypoint: []string{"/bin/busybox", "sleep", "2147483647"},
		User:       "65535:65535",
		WorkingDir: "/",
	})
	return err
}

// pushTestImage builds the tests' small image: busybox as /bin/busybox and
// /bin/sh (shell scripts only need sh and busybox's applets through it).
func pushTestImage(ctx context.Context, ref string) error {
	var files []layers.File
	for _, n := range []string{"/bin/busybox", "/bin/sh"} {
		f, err := busyboxFile(n)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	_, err := layers.BuildImage(ctx, layers.BuildSpec{
		Target:     ref,
		Platforms:  []layers.PlatformFiles{{Platform: "linux/amd64", Layers: [][]layers.File{files}}},
		Cmd:        []string{"/bin/sh"},
		Env:        []string{"PATH=/bin"},
		WorkingDir: "/",
	})
	return err
}

// SparkImage pushes the Spark base image of version (one of
// testenv.SparkVersions, built by hack/infra.d/65-spark-image.sh from
// Debian's JRE and pyspark's distribution) to the registry, once, and
// returns its reference (Registry/spark:VERSION). Its entry point runs the
// driver and executor roles of Spark on Kubernetes; user 185, work
// directory /opt/spark/work-dir.
func (c *Cluster) SparkImage(ctx context.Context, version string) (string, error) {
	c.imgMu.Lock()
	defer c.imgMu.Unlock()
	ref := c.Registry + "/spark:" + version
	if c.pushed[ref] {
		return ref, nil
	}
	dir := filepath.Join(testenv.CacheDir(), "spark-images-current", "spark-"+version)
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		return "", fmt.Errorf("spark image %s not built (hack/infra.sh builds it): %w", version, err)
	}
	_, err := layers.BuildImage(ctx, layers.BuildSpec{
		Base:      "oci:" + dir + ":spark-" + version,
		Target:    ref,
		Platforms: []layers.PlatformFiles{{Platform: "linux/amd64"}},
	})
	if err != nil {
		return "", fmt.Errorf("spark image %s: %w", version, err)
	}
	if c.pushed == nil {
		c.pushed = map[string]bool{}
	}
	c.pushed[ref] = true
	return ref, nil
}

// SparkNamespace creates namespace ns with the service account "spark"
// bound to the edit ClusterRole there: what a Spark driver needs to create
// its executor pods, Services and ConfigMaps.
func (c *Cluster) SparkNamespace(ctx context.Context, ns string) error {
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	return c.EditServiceAccount(ctx, ns, "spark")
}

// EditServiceAccount creates the service account name in ns, bound to the
// edit ClusterRole there (a driver's, or a submitter's: create pods,
// Services, ConfigMaps).
func (c *Cluster) EditServiceAccount(ctx context.Context, ns, name string) error {
	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}, metav1.CreateOptions{})
	return err
}

// BoundToken issues a TokenRequest token (valid an hour) of service account
// sa in ns, bound to a new Secret named secret: deleting the Secret revokes
// the token (the API server then answers 401 to it).
func (c *Cluster) BoundToken(ctx context.Context, ns, sa, secret string) (string, error) {
	sec, err := c.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	exp := int64(3600)
	tr, err := c.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: sec.Name, UID: sec.UID},
	}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// JavaAppImage compiles one Java class (source, class name class) with
// javac against sparkHome's jars and builds image ref: the Spark base image
// of version plus the class's jar at /opt/spark/app/app.jar
// (local:///opt/spark/app/app.jar in a submission).
func (c *Cluster) JavaAppImage(ctx context.Context, sparkHome, version, class, source, ref string) error {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return fmt.Errorf("javac not installed (openjdk-17-jdk-headless): %w", err)
	}
	dir, err := os.MkdirTemp("", "prebake-app-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, class+".java"), []byte(source), 0o644); err != nil {
		return err
	}
	jar := filepath.Join(dir, "app.jar")
	for _, cmd := range [][]string{
		{javac, "-cp", filepath.Join(sparkHome, "jars", "*"), "-d", dir, filepath.Join(dir, class+".java")},
		{filepath.Join(filepath.Dir(javac), "jar"), "cf", jar, "-C", dir, class + ".class"},
	} {
		if out, err := exec.CommandContext(ctx, cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", filepath.Base(cmd[0]), err, out)
		}
	}
	base, err := c.SparkImage(ctx, version)
	if err != nil {
		return err
	}
	sum, _, err := digest.File(jar)
	if err != nil {
		return err
	}
	f, err := layers.FileFromPath("/opt/spark/app/app.jar", jar, 0o644, sum)
	if err != nil {
		return err
	}
	_, err = layers.BuildImage(ctx, layers.BuildSpec{Base: base, Target: ref,
		Platforms: []layers.PlatformFiles{{Platform: "linux/amd64", Layers: [][]layers.File{{f}}}}})
	return err
}

// SparkConf is the spark-submit arguments a cluster-mode submission to this
// node needs besides its submission credentials: the master, namespace ns
// (see SparkNamespace), the API server's CA, the driver's service account,
// two executors that all register before the job starts, and requests
// small enough for the node's two cores. Executor pods are kept after the
// job so that a test can count them.
func (c *Cluster) SparkConf(ns string) []string {
	args := []string{"--master", "k8s://" + c.Server, "--deploy-mode", "cluster"}
	for _, kv := range []string{
		"spark.kubernetes.namespace=" + ns,
		"spark.kubernetes.authenticate.submission.caCertFile=" + c.CAFile,
		"spark.kubernetes.authenticate.driver.serviceAccountName=spark",
		"spark.executor.instances=2",
		"spark.scheduler.minRegisteredResourcesRatio=1.0",
		"spark.scheduler.maxRegisteredResourcesWaitingTime=300s",
		"spark.kubernetes.driver.request.cores=200m",
		"spark.kubernetes.executor.request.cores=200m",
		"spark.driver.memory=512m",
		"spark.executor.memory=512m",
		"spark.kubernetes.executor.deleteOnTermination=false",
		"spark.ui.enabled=false",
	} {
		args = append(args, "--conf", kv)
	}
	return args
}
