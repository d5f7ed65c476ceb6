package native

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/prebake/prebake/internal/javaprops"
)

// zeros is a deterministic "random" source.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0xab
	}
	return len(p), nil
}

var fixedNow = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// testInput is KubernetesTestConf's fixture: app "spark" with main class
// mainClass, a JVM resource, an image.
func testInput(typ string, conf map[string]string) *Input {
	c := map[string]string{
		"spark.master": "k8s://https://127.0.0.1:6443", "spark.submit.deployMode": "cluster",
		"spark.app.name": "spark", "spark.kubernetes.container.image": "spark-driver:latest",
	}
	for k, v := range conf {
		c[k] = v
	}
	in := &Input{SparkVersion: "3.5.9", Conf: c, ResourceType: typ, MainClass: "mainClass", Env: map[string]string{}, User: "u"}
	switch typ {
	case ResourcePython:
		in.Resource, in.MainClass = "local:///main.py", "org.apache.spark.deploy.PythonRunner"
	case ResourceR:
		in.Resource, in.MainClass = "local:///main.R", "org.apache.spark.deploy.RRunner"
	default:
		in.Resource = "local:///main.jar"
	}
	return in
}

func build(t *testing.T, in *Input) *Objects {
	t.Helper()
	o, err := Build(in, WithRand(zeros{}), WithClock(func() time.Time { return fixedNow }), WithAppID("appId"))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return o
}

func driver(o *Objects) corev1.Container { return o.Pod.Spec.Containers[len(o.Pod.Spec.Containers)-1] }

// BasicDriverFeatureStepSuite: "Check the pod respects all configurations
// from the user."
func TestBasicRespectsUserConf(t *testing.T) {
	in := testInput(ResourceJava, map[string]string{
		"spark.driver.memory": "256M", "spark.driver.memoryOverhead": "200",
		"spark.driver.cores": "2", "spark.kubernetes.driver.limit.cores": "4",
		"spark.driver.resource.gpu.amount": "1", "spark.driver.resource.gpu.vendor": "nvidia.com",
		"spark.kubernetes.container.image.pullSecrets":                  "imagePullSecret1, imagePullSecret2",
		"spark.kubernetes.driver.annotation.customAnnotation":           "customAnnotationValue",
		"spark.kubernetes.driver.annotation.yunikorn.apache.org/app-id": "{{APP_ID}}",
		"spark.kubernetes.driver.label.customLabel":                     "customLabelValue",
		"spark.kubernetes.driverEnv.customDriverEnv1":                   "customDriverEnv1Value",
	})
	o := build(t, in)
	c := driver(o)
	if c.Name != "spark-kubernetes-driver" || c.Image != "spark-driver:latest" || c.ImagePullPolicy != "IfNotPresent" {
		t.Errorf("container %s %s %s", c.Name, c.Image, c.ImagePullPolicy)
	}
	var ports []string
	for _, p := range c.Ports {
		ports = append(ports, p.Name+":"+itoa(p.ContainerPort)+"/"+string(p.Protocol))
	}
	if diff := cmp.Diff([]string{"driver-rpc-port:7078/TCP", "blockmanager:7079/TCP", "spark-ui:4040/TCP"}, ports); diff != "" {
		t.Error(diff)
	}
	var env []string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			v = "fieldRef:" + e.ValueFrom.FieldRef.APIVersion + ":" + e.ValueFrom.FieldRef.FieldPath
		}
		env = append(env, e.Name+"="+v)
	}
	wantEnv := []string{"SPARK_USER=u", "SPARK_APPLICATION_ID=appId", "customDriverEnv1=customDriverEnv1Value",
		"SPARK_DRIVER_BIND_ADDRESS=fieldRef:v1:status.podIP", "SPARK_LOCAL_DIRS=/var/data/spark-abababab-abab-4bab-abab-abababababab",
		"SPARK_CONF_DIR=/opt/spark/conf"}
	if diff := cmp.Diff(wantEnv, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	res := map[string]string{}
	for k, q := range c.Resources.Requests {
		res["req."+string(k)] = q.String()
	}
	for k, q := range c.Resources.Limits {
		res["lim."+string(k)] = q.String()
	}
	wantRes := map[string]string{"req.cpu": "2", "lim.cpu": "4", "req.memory": "456Mi", "lim.memory": "456Mi", "lim.nvidia.com/gpu": "1"}
	if diff := cmp.Diff(wantRes, res); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	wantLabels := map[string]string{"customLabel": "customLabelValue", "spark-version": "3.5.9", "spark-app-selector": "appId",
		"spark-app-name": "spark", "spark-role": "driver"}
	if diff := cmp.Diff(wantLabels, o.Pod.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	wantAnn := map[string]string{"customAnnotation": "customAnnotationValue", "yunikorn.apache.org/app-id": "appId"}
	if diff := cmp.Diff(wantAnn, o.Pod.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if got := o.Pod.Spec.ImagePullSecrets; len(got) != 2 || got[0].Name != "imagePullSecret1" || got[1].Name != "imagePullSecret2" {
		t.Errorf("pull secrets %v", got)
	}
	if o.Pod.Spec.RestartPolicy != "Never" || o.Pod.Name != "spark-abababa2310c0100-driver" {
		t.Errorf("pod %s restart %s", o.Pod.Name, o.Pod.Spec.RestartPolicy)
	}
	for k, v := range map[string]string{
		"spark.kubernetes.driver.pod.name": o.Pod.Name, "spark.app.id": "appId",
		"spark.kubernetes.submitInDriver": "true", "spark.kubernetes.memoryOverheadFactor": "0.1",
		"spark.kubernetes.resource.type": "java",
	} {
		if o.Properties[k] != v {
			t.Errorf("property %s = %q, want %q", k, o.Properties[k], v)
		}
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// BasicDriverFeatureStepSuite: the memory overhead tests (new and old
// configs, precedence, SPARK-38194) and the 4.0 SPARK-47208 tests.
func TestMemoryOverhead(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		version string
		conf    map[string]string
		mem     string
		factor  string
	}{
		{"java default", ResourceJava, "3.5.9", nil, "1408Mi", "0.1"},
		{"python default", ResourcePython, "3.5.9", nil, "1433Mi", "0.4"},
		{"r default", ResourceR, "3.5.9", nil, "1433Mi", "0.4"},
		{"new config java", ResourceJava, "3.5.9", map[string]string{"spark.driver.memory": "4096m", "spark.driver.memoryOverheadFactor": "0.2"}, "4915Mi", "0.1"},
		{"new config python override", ResourcePython, "3.5.9", map[string]string{"spark.driver.memory": "4096m", "spark.driver.memoryOverheadFactor": "0.2"}, "4915Mi", "0.4"},
		{"old config", ResourceJava, "3.5.9", map[string]string{"spark.driver.memory": "4096m", "spark.kubernetes.memoryOverheadFactor": "0.3"}, "5324Mi", "0.3"},
		{"old config python", ResourcePython, "3.5.9", map[string]string{"spark.driver.memory": "4096m", "spark.kubernetes.memoryOverheadFactor": "0.3"}, "5324Mi", "0.3"},
		{"precedence new over old", ResourceJava, "3.5.9", map[string]string{"spark.driver.memory": "4096m", "spark.driver.memoryOverheadFactor": "0.2", "spark.kubernetes.memoryOverheadFactor": "0.3"}, "4915Mi", "0.3"},
		{"explicit overhead", ResourceJava, "3.5.9", map[string]string{"spark.driver.memory": "256M", "spark.driver.memoryOverhead": "200"}, "456Mi", "0.1"},
		{"units truncate", ResourceJava, "3.5.9", map[string]string{"spark.driver.memory": "1500k"}, "385Mi", "0.1"},
		{"3.5 ignores minMemoryOverhead", ResourceJava, "3.5.9", map[string]string{"spark.driver.memory": "256M", "spark.driver.minMemoryOverhead": "500M"}, "640Mi", "0.1"},
		{"SPARK-47208 min overhead", ResourceJava, "4.0.5", map[string]string{"spark.driver.memory": "256M", "spark.driver.minMemoryOverhead": "500M"}, "756Mi", "0.1"},
		{"SPARK-47208 explicit wins", ResourceJava, "4.0.5", map[string]string{"spark.driver.memory": "256M", "spark.driver.minMemoryOverhead": "500M", "spark.driver.memoryOverhead": "200M"}, "456Mi", "0.1"},
		{"SPARK-47208 max of factor and min", ResourceJava, "4.0.5", map[string]string{"spark.driver.memory": "5000M", "spark.driver.minMemoryOverhead": "200M"}, "5500Mi", "0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInput(tt.typ, tt.conf)
			in.SparkVersion = tt.version
			o := build(t, in)
			c := driver(o)
			q := c.Resources.Requests[corev1.ResourceMemory]
			if got := q.String(); got != tt.mem {
				t.Errorf("memory %s, want %s", got, tt.mem)
			}
			if got := o.Properties["spark.kubernetes.memoryOverheadFactor"]; got != tt.factor {
				t.Errorf("memoryOverheadFactor %s, want %s", got, tt.factor)
			}
		})
	}
}

// "Check driver pod respects kubernetes driver request cores".
func TestRequestCores(t *testing.T) {
	for in, want := range map[string]string{"1": "1", "10": "10", "0.1": "100m", "100m": "100m"} {
		o := build(t, testInput(ResourceJava, map[string]string{"spark.kubernetes.driver.request.cores": in}))
		q := driver(o).Resources.Requests[corev1.ResourceCPU]
		if got := q.String(); got != want {
			t.Errorf("request.cores %s: cpu %s, want %s", in, got, want)
		}
	}
}

// SPARK-35493 and DriverServiceFeatureStepSuite: the block manager port
// falls back to spark.blockManager.port in the pod, not in the service.
func TestPortsAndService(t *testing.T) {
	o := build(t, testInput(ResourceJava, map[string]string{"spark.blockManager.port": "1234"}))
	if p := driver(o).Ports[1].ContainerPort; p != 1234 {
		t.Errorf("container blockmanager port %d, want 1234", p)
	}
	svc := o.Service
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Name+":"+itoa(p.Port)+">"+p.TargetPort.String())
	}
	if diff := cmp.Diff([]string{"driver-rpc-port:7078>7078", "blockmanager:7079>7079", "spark-ui:4040>4040"}, ports); diff != "" {
		t.Error(diff)
	}
	if svc.Name != "spark-abababa2310c0100-driver-svc" || svc.Spec.ClusterIP != "None" || *svc.Spec.IPFamilyPolicy != "SingleStack" ||
		len(svc.Spec.IPFamilies) != 1 || svc.Spec.IPFamilies[0] != "IPv4" {
		t.Errorf("service %+v", svc)
	}
	if diff := cmp.Diff(o.Pod.Labels, svc.Spec.Selector); diff != "" {
		t.Errorf("selector is not the pod's labels: %s", diff)
	}
	want := map[string]string{"spark.driver.host": svc.Name + ".default.svc", "spark.driver.port": "7078", "spark.driver.blockManager.port": "7079"}
	for k, v := range want {
		if o.Properties[k] != v {
			t.Errorf("%s = %q, want %q", k, o.Properties[k], v)
		}
	}
	// "Long prefixes should switch to using a generated unique name."
	long := build(t, testInput(ResourceJava, map[string]string{"spark.app.name": strings.Repeat("a", 60)}))
	if long.Service.Name != "spark-abababa2310c0100-driver-svc" || strings.HasPrefix(long.Service.Name, "aaaa") {
		t.Errorf("long service name %s", long.Service.Name)
	}
	// "Support DualStack"
	ds := build(t, testInput(ResourceJava, map[string]string{"spark.kubernetes.driver.service.ipFamilyPolicy": "RequireDualStack",
		"spark.kubernetes.driver.service.ipFamilies": "IPv6,IPv4"}))
	if *ds.Service.Spec.IPFamilyPolicy != "RequireDualStack" || len(ds.Service.Spec.IPFamilies) != 2 || ds.Service.Spec.IPFamilies[0] != "IPv6" {
		t.Errorf("dual stack %+v", ds.Service.Spec)
	}
}

// DriverCommandFeatureStepSuite.
func TestCommand(t *testing.T) {
	tests := []struct {
		name  string
		in    *Input
		args  []string
		env   map[string]string
		rtype string
	}{
		{"java resource", withArgs(testInput(ResourceJava, nil), "5", "7"),
			[]string{"driver", "--properties-file", "/opt/spark/conf/spark.properties", "--class", "mainClass", "local:///main.jar", "5", "7"}, nil, "java"},
		{"python resource", withArgs(testInput(ResourcePython, map[string]string{"spark.pyspark.python": "/usr/bin/python3"}), "5", "7"),
			[]string{"driver", "--properties-file", "/opt/spark/conf/spark.properties", "--class", "org.apache.spark.deploy.PythonRunner", "local:///main.py", "5", "7"},
			map[string]string{"PYSPARK_PYTHON": "/usr/bin/python3", "PYSPARK_DRIVER_PYTHON": "/usr/bin/python3"}, "python"},
		{"R resource", testInput(ResourceR, nil),
			[]string{"driver", "--properties-file", "/opt/spark/conf/spark.properties", "--class", "org.apache.spark.deploy.RRunner", "local:///main.R"}, nil, "r"},
		{"SPARK-25355 proxy user", withProxy(testInput(ResourceJava, nil), "test.user"),
			[]string{"driver", "--proxy-user", "test.user", "--properties-file", "/opt/spark/conf/spark.properties", "--class", "mainClass", "local:///main.jar"}, nil, "java"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := build(t, tt.in)
			c := driver(o)
			if diff := cmp.Diff(tt.args, c.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			for k, v := range tt.env {
				if got := envOf(c, k); got != v {
					t.Errorf("%s=%q, want %q", k, got, v)
				}
			}
			if o.Properties["spark.kubernetes.resource.type"] != tt.rtype {
				t.Errorf("resource type %s", o.Properties["spark.kubernetes.resource.type"])
			}
		})
	}
}

// "python executable precedence".
func TestPythonPrecedence(t *testing.T) {
	tests := []struct {
		conf       map[string]string
		env        map[string]string
		py, driver string
	}{
		{map[string]string{"spark.pyspark.python": "conf_py", "spark.pyspark.driver.python": "conf_driver_py"},
			map[string]string{"PYSPARK_PYTHON": "env_py", "PYSPARK_DRIVER_PYTHON": "env_driver_py"}, "conf_py", "conf_driver_py"},
		{map[string]string{"spark.pyspark.python": "conf_py"}, map[string]string{"PYSPARK_PYTHON": "env_py", "PYSPARK_DRIVER_PYTHON": "env_driver_py"}, "conf_py", "conf_py"},
		{nil, map[string]string{"PYSPARK_PYTHON": "env_py", "PYSPARK_DRIVER_PYTHON": "env_driver_py"}, "env_py", "env_driver_py"},
		{nil, map[string]string{"PYSPARK_PYTHON": "env_py"}, "env_py", "env_py"},
		{nil, nil, "", ""},
	}
	for i, tt := range tests {
		in := testInput(ResourcePython, tt.conf)
		for k, v := range tt.env {
			in.Env[k] = v
		}
		c := driver(build(t, in))
		if got := envOf(c, "PYSPARK_PYTHON"); got != tt.py {
			t.Errorf("%d: PYSPARK_PYTHON %q, want %q", i, got, tt.py)
		}
		if got := envOf(c, "PYSPARK_DRIVER_PYTHON"); got != tt.driver {
			t.Errorf("%d: PYSPARK_DRIVER_PYTHON %q, want %q", i, got, tt.driver)
		}
	}
}

func withArgs(in *Input, a ...string) *Input { in.AppArgs = a; return in }

func withProxy(in *Input, u string) *Input { in.ProxyUser = u; return in }

func envOf(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// MountSecretsFeatureStepSuite and EnvSecretsFeatureStepSuite.
func TestSecrets(t *testing.T) {
	o := build(t, testInput(ResourceJava, map[string]string{
		"spark.kubernetes.driver.secrets.secret1": "/var/secret1", "spark.kubernetes.driver.secrets.secret2": "/var/secret2",
		"spark.kubernetes.driver.secretKeyRef.ENV1": "secret1:key1", "spark.kubernetes.driver.secretKeyRef.ENV2": "secret2:key2",
	}))
	c := driver(o)
	vols := map[string]string{}
	for _, v := range o.Pod.Spec.Volumes {
		if v.Secret != nil {
			vols[v.Name] = v.Secret.SecretName
		}
	}
	if diff := cmp.Diff(map[string]string{"secret1-volume": "secret1", "secret2-volume": "secret2"}, vols); diff != "" {
		t.Error(diff)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["secret1-volume"] != "/var/secret1" || mounts["secret2-volume"] != "/var/secret2" {
		t.Errorf("mounts %v", mounts)
	}
	refs := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			refs[e.Name] = e.ValueFrom.SecretKeyRef.Name + ":" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	if diff := cmp.Diff(map[string]string{"ENV1": "secret1:key1", "ENV2": "secret2:key2"}, refs); diff != "" {
		t.Error(diff)
	}
	_, err := Build(testInput(ResourceJava, map[string]string{"spark.kubernetes.driver.secretKeyRef.E": "nokey"}))
	var ie *InvalidError
	if !errors.As(err, &ie) {
		t.Errorf("bad keyRef: %v", err)
	}
}

// MountVolumesFeatureStepSuite.
func TestVolumes(t *testing.T) {
	const p = "spark.kubernetes.driver.volumes."
	o := build(t, testInput(ResourceJava, map[string]string{
		p + "hostPath.hp.mount.path": "/tmp", p + "hostPath.hp.mount.readOnly": "true", p + "hostPath.hp.options.path": "/hostPath/tmp",
		p + "persistentVolumeClaim.pvc.mount.path": "/data", p + "persistentVolumeClaim.pvc.mount.subPath": "foo",
		p + "persistentVolumeClaim.pvc.options.claimName": "pvcClaim",
		p + "persistentVolumeClaim.ond.mount.path":        "/spill", p + "persistentVolumeClaim.ond.options.claimName": "OnDemand",
		p + "persistentVolumeClaim.ond.options.storageClass": "gp3", p + "persistentVolumeClaim.ond.options.sizeLimit": "200Gi",
		p + "emptyDir.ed.mount.path": "/ed", p + "emptyDir.ed.options.medium": "Memory", p + "emptyDir.ed.options.sizeLimit": "6G",
		p + "nfs.share.mount.path": "/nfs", p + "nfs.share.mount.readOnly": "true", p + "nfs.share.options.path": "/share", p + "nfs.share.options.server": "nfs.example.com",
	}))
	byName := map[string]corev1.Volume{}
	for _, v := range o.Pod.Spec.Volumes {
		byName[v.Name] = v
	}
	if v := byName["hp"].HostPath; v == nil || v.Path != "/hostPath/tmp" || *v.Type != "" {
		t.Errorf("hostPath %+v", v)
	}
	if v := byName["pvc"].PersistentVolumeClaim; v == nil || v.ClaimName != "pvcClaim" || v.ReadOnly {
		t.Errorf("pvc %+v", v)
	}
	if v := byName["ed"].EmptyDir; v == nil || v.Medium != "Memory" || v.SizeLimit.String() != "6G" {
		t.Errorf("emptyDir %+v", v)
	}
	if v := byName["share"].NFS; v == nil || v.Server != "nfs.example.com" || v.Path != "/share" || !v.ReadOnly {
		t.Errorf("nfs %+v", v)
	}
	// "Create and mounts persistentVolumeClaims in driver": the index is the
	// volume's position.
	claim := byName["ond"].PersistentVolumeClaim
	if claim == nil || !strings.HasPrefix(claim.ClaimName, "spark-abababa2310c0100-driver-pvc-") {
		t.Fatalf("on-demand claim %+v", claim)
	}
	if len(o.PVCs) != 1 || o.PVCs[0].Name != claim.ClaimName || o.PVCs[0].Spec.AccessModes[0] != "ReadWriteOnce" ||
		*o.PVCs[0].Spec.StorageClassName != "gp3" || o.PVCs[0].Labels["spark-app-selector"] != "appId" {
		t.Errorf("PVCs %+v", o.PVCs)
	}
	// Spark 4.0 defaults spark.kubernetes.legacy.useReadWriteOnceAccessMode to false.
	in4 := testInput(ResourceJava, map[string]string{p + "persistentVolumeClaim.ond.mount.path": "/spill",
		p + "persistentVolumeClaim.ond.options.claimName": "OnDemand", p + "persistentVolumeClaim.ond.options.storageClass": "gp3",
		p + "persistentVolumeClaim.ond.options.sizeLimit": "200Gi"})
	in4.SparkVersion = "4.0.5"
	if o4 := build(t, in4); o4.PVCs[0].Spec.AccessModes[0] != corev1.ReadWriteOncePod {
		t.Errorf("4.0 access mode %v", o4.PVCs[0].Spec.AccessModes)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range driver(o).VolumeMounts {
		mounts[m.Name] = m
	}
	if m := mounts["pvc"]; m.SubPath != "foo" || m.MountPath != "/data" {
		t.Errorf("pvc mount %+v", m)
	}
	if m := mounts["hp"]; !m.ReadOnly {
		t.Errorf("hostPath mount %+v", m)
	}

	bad := []struct {
		name string
		conf map[string]string
	}{
		{"mountPath should be unique", map[string]string{p + "emptyDir.a.mount.path": "/x", p + "emptyDir.b.mount.path": "/x"}},
		{"size without unit", map[string]string{p + "emptyDir.a.mount.path": "/x", p + "emptyDir.a.options.sizeLimit": "1000"}},
		{"missing claimName", map[string]string{p + "persistentVolumeClaim.a.mount.path": "/x"}},
		{"missing nfs server", map[string]string{p + "nfs.a.mount.path": "/x", p + "nfs.a.options.path": "/y"}},
		{"unknown type", map[string]string{p + "secretish.a.mount.path": "/x"}},
		{"missing mount path", map[string]string{p + "emptyDir.a.options.medium": "Memory"}},
	}
	for _, tt := range bad {
		_, err := Build(testInput(ResourceJava, tt.conf), WithRand(zeros{}))
		var ie *InvalidError
		if !errors.As(err, &ie) {
			t.Errorf("%s: got %v, want an InvalidError", tt.name, err)
		}
	}
}

// LocalDirsFeatureStepSuite.
func TestLocalDirs(t *testing.T) {
	tests := []struct {
		name   string
		conf   map[string]string
		env    map[string]string
		dirs   string
		medium corev1.StorageMedium
		vols   int
	}{
		{"default", nil, nil, "/var/data/spark-abababab-abab-4bab-abab-abababababab", "", 1},
		{"configured dirs", map[string]string{"spark.local.dir": "/var/data/my-local-dir-1,/var/data/my-local-dir-2"}, nil,
			"/var/data/my-local-dir-1,/var/data/my-local-dir-2", "", 2},
		{"env wins", map[string]string{"spark.local.dir": "/a"}, map[string]string{"SPARK_LOCAL_DIRS": "/b"}, "/b", "", 1},
		{"tmpfs", map[string]string{"spark.kubernetes.local.dirs.tmpfs": "true"}, nil,
			"/var/data/spark-abababab-abab-4bab-abab-abababababab", "Memory", 1},
		{"local dir on mounted volume", map[string]string{"spark.kubernetes.driver.volumes.hostPath.spark-local-dir-test.mount.path": "/tmp",
			"spark.kubernetes.driver.volumes.hostPath.spark-local-dir-test.options.path": "/hostPath/tmp"}, nil, "/tmp", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInput(ResourceJava, tt.conf)
			for k, v := range tt.env {
				in.Env[k] = v
			}
			o := build(t, in)
			if got := envOf(driver(o), "SPARK_LOCAL_DIRS"); got != tt.dirs {
				t.Errorf("SPARK_LOCAL_DIRS %q, want %q", got, tt.dirs)
			}
			n := 0
			for _, v := range o.Pod.Spec.Volumes {
				if strings.HasPrefix(v.Name, "spark-local-dir-") && v.EmptyDir != nil {
					n++
					if v.EmptyDir.Medium != tt.medium {
						t.Errorf("medium %q", v.EmptyDir.Medium)
					}
				}
			}
			if n != tt.vols {
				t.Errorf("%d local dir volumes, want %d", n, tt.vols)
			}
		})
	}
}

// ClientSuite: "The client should configure the pod using the builder."
// and "The client should create Kubernetes resources".
func TestConfigMap(t *testing.T) {
	o := build(t, testInput(ResourceJava, map[string]string{"spark.kubernetes.namespace": "ns1",
		"spark.kubernetes.authenticate.submission.oauthToken": "secret-token"}))
	cm := o.ConfigMap
	if cm.Name != "spark-drv-abababa2310c0100-conf-map" || cm.Namespace != "ns1" || !*cm.Immutable || cm.Labels != nil {
		t.Errorf("configmap %+v", cm.ObjectMeta)
	}
	if cm.Data["spark.kubernetes.namespace"] != "ns1" {
		t.Errorf("namespace key %q", cm.Data["spark.kubernetes.namespace"])
	}
	props := mustProps(t, cm.Data["spark.properties"])
	if diff := cmp.Diff(o.Properties, props); diff != "" {
		t.Errorf("spark.properties (-want +got):\n%s", diff)
	}
	if props["spark.kubernetes.authenticate.submission.oauthToken"] != "<present_but_redacted>" {
		t.Errorf("token not redacted")
	}
	if strings.Contains(cm.Data["spark.properties"], "secret-token") {
		t.Error("the token is in spark.properties")
	}
	if !strings.HasPrefix(cm.Data["spark.properties"], "#Java properties built from Kubernetes config map with name: spark-drv-abababa2310c0100-conf-map\n#Tue Dec 01 10:00:00 UTC 2026\n") {
		t.Errorf("header: %q", cm.Data["spark.properties"][:120])
	}
	c := driver(o)
	last := o.Pod.Spec.Volumes[len(o.Pod.Spec.Volumes)-1]
	if last.Name != "spark-conf-volume-driver" || last.ConfigMap.Name != cm.Name || len(last.ConfigMap.Items) != 1 ||
		last.ConfigMap.Items[0].Key != "spark.properties" || *last.ConfigMap.Items[0].Mode != 420 {
		t.Errorf("conf volume %+v", last)
	}
	if m := c.VolumeMounts[len(c.VolumeMounts)-1]; m.Name != "spark-conf-volume-driver" || m.MountPath != "/opt/spark/conf" {
		t.Errorf("conf mount %+v", m)
	}
	owned := o.Owned()
	if len(owned) != 2 || owned[0] != o.Service || owned[1] != cm {
		t.Errorf("owned order %v", owned)
	}
}

// The driver pod template: template fields survive, the Spark container is
// the named one and comes last.
func TestDriverTemplate(t *testing.T) {
	in := testInput(ResourceJava, map[string]string{
		"spark.kubernetes.driver.podTemplateFile":          "testdata/equiv/files/driver-template.yaml",
		"spark.kubernetes.driver.podTemplateContainerName": "spark",
	})
	o := build(t, in)
	cs := o.Pod.Spec.Containers
	if len(cs) != 2 || cs[0].Name != "sidecar" || cs[1].Name != "spark" {
		t.Fatalf("containers %v", cs)
	}
	if envOf(cs[1], "FROM_TEMPLATE") != "1" || cs[1].Env[0].Name != "FROM_TEMPLATE" {
		t.Errorf("template env lost: %v", cs[1].Env)
	}
	if o.Pod.Labels["from-template"] != "yes" || o.Pod.Spec.DNSPolicy != "ClusterFirstWithHostNet" || len(o.Pod.Spec.Tolerations) != 1 ||
		len(o.Pod.Spec.InitContainers) != 1 || o.Pod.Spec.Volumes[0].Name != "extra" {
		t.Errorf("template fields lost: %+v", o.Pod.Spec)
	}
	if q := cs[1].Resources.Requests["ephemeral-storage"]; q.String() != "1Gi" {
		t.Errorf("template resources lost: %v", cs[1].Resources)
	}
	// No container name: the first container.
	in.Conf["spark.kubernetes.driver.podTemplateContainerName"] = "missing"
	o = build(t, in)
	if cs := o.Pod.Spec.Containers; cs[len(cs)-1].Name != "sidecar" {
		t.Errorf("fallback container %v", cs)
	}
}

// PodTemplateConfigMapStepSuite.
func TestExecutorTemplate(t *testing.T) {
	o := build(t, testInput(ResourceJava, map[string]string{"spark.kubernetes.executor.podTemplateFile": "testdata/equiv/files/executor-template.yaml"}))
	cm := o.TemplateConfigMap
	if cm == nil || cm.Name != "spark-abababa2310c0100-driver-podspec-conf-map" || !strings.Contains(cm.Data["podspec-configmap-key"], "spot") {
		t.Fatalf("template configmap %+v", cm)
	}
	if o.Properties["spark.kubernetes.executor.podTemplateFile"] != "/opt/spark/pod-template/pod-spec-template.yml" {
		t.Errorf("property %q", o.Properties["spark.kubernetes.executor.podTemplateFile"])
	}
	if owned := o.Owned(); len(owned) != 3 || owned[1] != cm {
		t.Errorf("owned %v", owned)
	}
}

// KubernetesConfSuite: names and labels.
func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"spark":       "spark-id",
		"  My App_1 ": "my-app-1-id",
		"-leading":    "leading-id",
		"123app":      "x23app-id",
		"a--b__c":     "a-b-c-id",
		"Ünïcode app": "n-code-app-id",
	} {
		if got := resourceNamePrefix(in, "id"); got != want {
			t.Errorf("prefix(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"spark-pi":                     "spark-pi",
		"-spark-pi-":                   "spark-pi",
		"Spark Pi!":                    "spark-pi",
		strings.Repeat("a", 70):        strings.Repeat("a", 63),
		strings.Repeat("a", 62) + "-b": strings.Repeat("a", 62),
	} {
		if got := appNameLabel(in); got != want {
			t.Errorf("appNameLabel(%q) = %q, want %q", in, got, want)
		}
	}
	// Reserved labels are refused; 4.0 substitutes {{APP_ID}} in labels.
	_, err := Build(testInput(ResourceJava, map[string]string{"spark.kubernetes.driver.label.spark-role": "x"}))
	var ie *InvalidError
	if !errors.As(err, &ie) {
		t.Errorf("reserved label: %v", err)
	}
	in := testInput(ResourceJava, map[string]string{"spark.kubernetes.driver.label.q": "{{APP_ID}}"})
	in.SparkVersion = "4.0.5"
	if got := build(t, in).Pod.Labels["q"]; got != "appId" {
		t.Errorf("4.0 label %q", got)
	}
	in.SparkVersion = "3.5.9"
	if got := build(t, in).Pod.Labels["q"]; got != "{{APP_ID}}" {
		t.Errorf("3.5 label %q", got)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"1g": 1024, "512": 512, "512m": 512, "1500k": 1, "2G": 2048, " 3t ": 3 << 20, "1024kb": 1} {
		got, err := parseBytes(in, 1<<20)
		if err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"1.5g", "", "g", "1x", "-1g"} {
		if _, err := parseBytes(in, 1<<20); err == nil {
			t.Errorf("parseBytes(%q): no error", in)
		}
	}
}

func TestPropertiesRoundTrip(t *testing.T) {
	props := map[string]string{
		"a": "plain", "key with space": " leading space", "colon:key": "x=y:z#!", "tabs": "a\tb\nc\r\f",
		"back\\slash": "C:\\dir", "unicode": "héllo ✓", "empty": "",
	}
	text := StoreProperties(props, "comment\nsecond", fixedNow)
	if !strings.HasPrefix(text, "#comment\n#second\n#Tue Dec 01 10:00:00 UTC 2026\n") {
		t.Errorf("header %q", text)
	}
	if diff := cmp.Diff(props, mustProps(t, text)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	got := mustProps(t, "# c\n! c\n  k1 = v1 \nk2:v2\nk3 v3\nk4=multi\\\n    line\nk5=\\u0041\\z\n")
	want := map[string]string{"k1": "v1 ", "k2": "v2", "k3": "v3", "k4": "multiline", "k5": "Az"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
}

func mustProps(t *testing.T, text string) map[string]string {
	t.Helper()
	m, err := javaprops.Map([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
