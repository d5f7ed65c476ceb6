package k8s

import (
	"bytes"
	"errors"
	"fmt"
	"os/user"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/submit/k8s/native"
)

// TestDriverSparkVersion: --spark-version > the baked image's jars > an
// official image's tag; a flag that differs from the jars wins, warned.
func TestDriverSparkVersion(t *testing.T) {
	official := map[string]string{"spark.kubernetes.container.image": "apache/spark:3.5.9"}
	custom := map[string]string{"spark.kubernetes.container.image": "registry.example.com/team/runtime:prod"}
	for _, tc := range []struct {
		name        string
		flag, image string
		conf        map[string]string
		want        string
		warn        bool
	}{
		{"flag only", "4.0.5", "", custom, "4.0.5", false},
		{"image jars only, custom tag", "", "4.0.1", custom, "4.0.1", false},
		{"image jars beat the official tag", "", "4.0.1", official, "4.0.1", false},
		{"official tag last", "", "", official, "3.5.9", false},
		{"nothing known", "", "", custom, "", false},
		{"flag and jars agree", "4.0.1", "4.0.1", custom, "4.0.1", false},
		{"flag beats jars, warned", "3.5.9", "4.0.1", custom, "3.5.9", true},
		{"flag beats the tag silently", "4.0.5", "", official, "4.0.5", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warning := driverSparkVersion(tc.flag, tc.image, tc.conf)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("version (-want +got):\n%s", diff)
			}
			if (warning != "") != tc.warn {
				t.Errorf("warning %q, want one: %v", warning, tc.warn)
			}
			if tc.warn && (!strings.Contains(warning, "Spark "+tc.flag+" asked for") || !strings.Contains(warning, tc.image)) {
				t.Errorf("warning %q names neither the version asked for nor the image's", warning)
			}
		})
	}
}

// TestDryRunImageSparkVersion: with no --spark-version, the baked image's
// version picks the 4.0 rules for a non-official tag (the on-demand PVC is
// ReadWriteOncePod, the label says 4.0.1); a differing flag wins and warns.
func TestDryRunImageSparkVersion(t *testing.T) {
	args := []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster", "--name", "v",
		"--conf", "spark.kubernetes.container.image=registry.example.com/team/runtime:prod",
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.options.claimName=OnDemand",
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.options.sizeLimit=1Gi",
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.options.storageClass=standard",
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.mount.path=/data",
		"--class", "Main", "local:///opt/app.jar"}
	for _, tc := range []struct {
		name, flag, image string
		wantMode          corev1.PersistentVolumeAccessMode
		wantLabel         string
		warn              bool
	}{
		{"image 4.0", "", "4.0.1", corev1.ReadWriteOncePod, "4.0.1", false},
		{"image 3.5", "", "3.5.2", corev1.ReadWriteOnce, "3.5.2", false},
		{"flag wins", "3.5.9", "4.0.1", corev1.ReadWriteOnce, "3.5.9", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			o := options{driverSparkVersion: tc.flag, imageSparkVersion: tc.image, stderr: &stderr,
				environ: mapEnv(map[string]string{"USER": "u"})}
			if err := dryRunWith(mustLoad(t, args, o.environ), &stdout, use(o)); err != nil {
				t.Fatal(err)
			}
			y := stdout.String()
			if !strings.Contains(y, "- "+string(tc.wantMode)+"\n") || !strings.Contains(y, "spark-version: "+tc.wantLabel+"\n") {
				t.Errorf("want access mode %s and label spark-version %s in:\n%s", tc.wantMode, tc.wantLabel, y)
			}
			if got := strings.Contains(stderr.String(), "warning: Spark 3.5.9 asked for"); got != tc.warn {
				t.Errorf("warning printed: %v, want %v: %q", got, tc.warn, stderr.String())
			}
		})
	}
	// Nothing known: an unsupported Spark version (cmd's hint names --spark-version).
	err := dryRunWith(mustLoad(t, args, nil), &bytes.Buffer{}, WithEnviron(mapEnv(map[string]string{"USER": "u"})))
	var ue *native.UnsupportedError
	if !errors.As(err, &ue) || ue.Option != native.OptionSparkVersion {
		t.Errorf("no version: %v, want a native.UnsupportedError for %s", err, native.OptionSparkVersion)
	}
}

func TestImageSparkVersion(t *testing.T) {
	for img, want := range map[string]string{
		"apache/spark:3.5.9": "3.5.9",
		"docker.io/apache/spark:4.0.5-scala2.13-java17-python3-ubuntu": "4.0.5",
		"spark:3.5.1-java17":                         "3.5.1",
		"registry.example.com/team/spark-jobs:3.5.9": "",
		"apache/spark:latest":                        "",
		"apache/spark-py:v3.4.0":                     "",
		"":                                           "",
	} {
		if got := imageSparkVersion(map[string]string{"spark.kubernetes.container.image": img}); got != want {
			t.Errorf("%q: %q, want %q", img, got, want)
		}
	}
	if got := imageSparkVersion(map[string]string{"spark.kubernetes.container.image": "x:1", "spark.kubernetes.driver.container.image": "apache/spark:4.0.5"}); got != "4.0.5" {
		t.Errorf("driver image first: %q", got)
	}
}

// TestNativeNoUserName: the native driver pod carries SPARK_USER, which
// Spark's executors refuse empty ("Null user"). In a container whose uid
// has no name and no USER/SPARK_USER (prebake's scratch image run by a
// KubernetesPodOperator, issue 25's journey 8), the submission is refused
// with a message naming SPARK_USER; any of SPARK_USER, USER or a proxy
// user is enough.
func TestNativeNoUserName(t *testing.T) {
	defer func(f func() (*user.User, error)) { currentUser = f }(currentUser)
	currentUser = func() (*user.User, error) { return nil, errors.New("user: unknown userid 65532") }
	args := []string{"--master", "k8s://https://127.0.0.1:6443", "--deploy-mode", "cluster", "--name", "u",
		"--conf", "spark.kubernetes.container.image=apache/spark:3.5.9", "--class", "Main", "local:///opt/app.jar"}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		proxy   bool
		wantErr bool
		want    string // the driver's SPARK_USER
	}{
		{"no name at all", nil, false, true, ""},
		{"USER", map[string]string{"USER": "airflow"}, false, false, "airflow"},
		{"SPARK_USER", map[string]string{"SPARK_USER": "etl"}, false, false, "etl"},
		{"proxy user", nil, true, false, "alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := args
			if tc.proxy {
				a = append([]string{"--proxy-user", "alice"}, args...)
			}
			var stdout bytes.Buffer
			err := dryRunWith(mustLoad(t, a, mapEnv(tc.env)), &stdout, WithEnviron(mapEnv(tc.env)))
			if tc.wantErr {
				if !errors.Is(err, errdefs.BadArgument) || !strings.Contains(fmt.Sprint(err), "SPARK_USER") {
					t.Fatalf("err %v, want a BadArgument naming SPARK_USER", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := "- name: SPARK_USER\n      value: " + tc.want + "\n"; !strings.Contains(stdout.String(), want) {
				t.Errorf("driver pod lacks %q:\n%s", want, stdout.String())
			}
		})
	}
}
