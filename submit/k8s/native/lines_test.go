package native

import (
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lineShape is what differs between the Spark lines in the objects of one
// plain submission (read from each line's KubernetesDriverBuilder and
// feature steps; the equivalence IT checks them against the real
// spark-submit).
type lineShape struct {
	ContainerPorts []string // name:port
	ServicePorts   []string // name:port[:appProtocol]
	NetworkPolicy  string   // its name, "" for none
	AllowPrivEsc   string   // the driver container's allowPrivilegeEscalation, "" when unset
	Owned          []string // kinds created after the pod, in order
}

func shapeOf(o *Objects) lineShape {
	var s lineShape
	for _, p := range driver(o).Ports {
		s.ContainerPorts = append(s.ContainerPorts, p.Name+":"+strconv.Itoa(int(p.ContainerPort)))
	}
	for _, p := range o.Service.Spec.Ports {
		v := p.Name + ":" + strconv.Itoa(int(p.Port))
		if p.AppProtocol != nil {
			v += ":" + *p.AppProtocol
		}
		s.ServicePorts = append(s.ServicePorts, v)
	}
	if o.NetworkPolicy != nil {
		s.NetworkPolicy = o.NetworkPolicy.Name
	}
	if sc := driver(o).SecurityContext; sc != nil && sc.AllowPrivilegeEscalation != nil {
		s.AllowPrivEsc = map[bool]string{true: "true", false: "false"}[*sc.AllowPrivilegeEscalation]
	}
	for _, x := range o.Owned() {
		s.Owned = append(s.Owned, KindOf(x))
	}
	return s
}

// TestLineRules: each Spark line's driver objects for one submission: 4.1
// adds the Spark Connect port to the container and the Service; 4.2 names
// the Service port's appProtocol (grpc) and adds the executors'
// NetworkPolicy; 4.3 sets allowPrivilegeEscalation=false.
func TestLineRules(t *testing.T) {
	base := []string{"driver-rpc-port:7078", "blockmanager:7079", "spark-ui:4040"}
	plus := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	tests := []struct {
		version string
		want    lineShape
	}{
		{"3.5.0", lineShape{ContainerPorts: base, ServicePorts: base, Owned: []string{"service", "configmap"}}},
		{"3.5.9", lineShape{ContainerPorts: base, ServicePorts: base, Owned: []string{"service", "configmap"}}},
		{"4.0.5", lineShape{ContainerPorts: base, ServicePorts: base, Owned: []string{"service", "configmap"}}},
		{"4.1.0", lineShape{ContainerPorts: plus("spark-connect:15002"), ServicePorts: plus("spark-connect:15002"), Owned: []string{"service", "configmap"}}},
		{"4.1.4", lineShape{ContainerPorts: plus("spark-connect:15002"), ServicePorts: plus("spark-connect:15002"), Owned: []string{"service", "configmap"}}},
		{"4.2.0", lineShape{ContainerPorts: plus("spark-connect:15002"), ServicePorts: plus("spark-connect:15002:grpc"),
			NetworkPolicy: "POLICY", Owned: []string{"service", "networkpolicy", "configmap"}}},
		{"4.3.0", lineShape{ContainerPorts: plus("spark-connect:15002"), ServicePorts: plus("spark-connect:15002:grpc"),
			NetworkPolicy: "POLICY", AllowPrivEsc: "false", Owned: []string{"service", "networkpolicy", "configmap"}}},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			in := testInput(ResourceJava, nil)
			in.SparkVersion = tc.version
			o := build(t, in)
			want := tc.want
			if want.NetworkPolicy == "POLICY" {
				want.NetworkPolicy = o.Pod.Name[:len(o.Pod.Name)-len("-driver")] + "-policy"
			}
			if diff := cmp.Diff(want, shapeOf(o)); diff != "" {
				t.Errorf("objects of %s (-want +got):\n%s", tc.version, diff)
			}
			if np := o.NetworkPolicy; np != nil {
				sel := np.Spec.PodSelector.MatchLabels
				if sel["spark-role"] != "executor" || sel["spark-app-selector"] != "appId" ||
					len(np.Spec.Ingress) != 1 || np.Spec.Ingress[0].From[0].PodSelector.MatchLabels["spark-app-selector"] != "appId" ||
					np.Labels["spark-app-selector"] != "appId" {
					t.Errorf("network policy %+v", np)
				}
			}
		})
	}
}

// TestLineConfs: the confs a line reads: the Connect port, 4.3's
// allowPrivilegeEscalation (driver key over the shared one) and
// publishNotReadyAddresses, 4.1's {{SPARK_VERSION}} in the image.
func TestLineConfs(t *testing.T) {
	in := testInput(ResourceJava, map[string]string{
		"spark.connect.grpc.binding.port":                                  "16000",
		"spark.kubernetes.securityContext.allowPrivilegeEscalation":        "true",
		"spark.kubernetes.driver.service.publishNotReadyAddresses":         "TRUE",
		"spark.kubernetes.container.image":                                 "apache/spark:{{SPARK_VERSION}}-scala2.13",
		"spark.kubernetes.driver.securityContext.allowPrivilegeEscalation": " false ",
	})
	in.SparkVersion = "4.3.0"
	o := build(t, in)
	c := driver(o)
	if got := c.Ports[3]; got.Name != "spark-connect" || got.ContainerPort != 16000 {
		t.Errorf("connect port %+v", got)
	}
	if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("security context %+v, want allowPrivilegeEscalation=false (the driver key wins)", sc)
	}
	if !o.Service.Spec.PublishNotReadyAddresses {
		t.Error("publishNotReadyAddresses not set")
	}
	if c.Image != "apache/spark:4.3.0-scala2.13" {
		t.Errorf("image %q", c.Image)
	}
	// 4.0 substitutes nothing and reads none of these.
	in.SparkVersion = "4.0.5"
	o = build(t, in)
	c = driver(o)
	if c.Image != "apache/spark:{{SPARK_VERSION}}-scala2.13" || c.SecurityContext != nil || len(c.Ports) != 3 || o.Service.Spec.PublishNotReadyAddresses {
		t.Errorf("4.0 objects follow a later line: image %q, security %+v, ports %d", c.Image, c.SecurityContext, len(c.Ports))
	}
	// A bad boolean is the option's error.
	in.SparkVersion = "4.3.0"
	in.Conf["spark.kubernetes.driver.securityContext.allowPrivilegeEscalation"] = "yes"
	_, err := Build(in)
	var ie *InvalidError
	if !errors.As(err, &ie) || ie.Option != "spark.kubernetes.driver.securityContext.allowPrivilegeEscalation" {
		t.Errorf("bad boolean: %v", err)
	}
}

// TestExcludedFeatureSteps: 4.1+ leave out the steps
// spark.kubernetes.driver.pod.excludedFeatureSteps names (comma-separated
// class names, spaces trimmed); 4.0 ignores the key, as Spark 4.0 does.
func TestExcludedFeatureSteps(t *testing.T) {
	conf := map[string]string{
		ExcludedStepsKey:                        " org.apache.spark.deploy.k8s.features.LocalDirsFeatureStep , org.apache.spark.deploy.k8s.features.NetworkPolicyFeatureStep,com.example.Unknown",
		"spark.kubernetes.driver.secrets.creds": "/etc/creds",
	}
	mounts := func(o *Objects) []string {
		var out []string
		for _, m := range driver(o).VolumeMounts {
			out = append(out, m.Name)
		}
		return out
	}
	for _, tc := range []struct {
		version    string
		wantMounts []string
		wantPolicy bool
	}{
		{"4.0.5", []string{"creds-volume", "spark-local-dir-1", "spark-conf-volume-driver"}, false},
		{"4.1.4", []string{"creds-volume", "spark-conf-volume-driver"}, false},
		{"4.3.0", []string{"creds-volume", "spark-conf-volume-driver"}, false},
	} {
		in := testInput(ResourceJava, conf)
		in.SparkVersion = tc.version
		o := build(t, in)
		if diff := cmp.Diff(tc.wantMounts, mounts(o)); diff != "" {
			t.Errorf("%s mounts (-want +got):\n%s", tc.version, diff)
		}
		if (o.NetworkPolicy != nil) != tc.wantPolicy {
			t.Errorf("%s network policy %v", tc.version, o.NetworkPolicy)
		}
		var env []string
		for _, e := range driver(o).Env {
			env = append(env, e.Name)
		}
		hasLocal := false
		for _, e := range env {
			hasLocal = hasLocal || e == "SPARK_LOCAL_DIRS"
		}
		if hasLocal != (tc.version == "4.0.5") {
			t.Errorf("%s env %v: SPARK_LOCAL_DIRS present=%v", tc.version, env, hasLocal)
		}
	}
	// Leaving out the service step leaves no Service and no driver host.
	in := testInput(ResourceJava, map[string]string{ExcludedStepsKey: "org.apache.spark.deploy.k8s.features.DriverServiceFeatureStep"})
	in.SparkVersion = "4.2.1"
	o := build(t, in)
	if o.Service != nil || o.Properties["spark.driver.host"] != "" {
		t.Errorf("service %v, driver host %q", o.Service, o.Properties["spark.driver.host"])
	}
	if got := ownedKinds(o); got != "networkpolicy,configmap" {
		t.Errorf("owned %s", got)
	}
	// Custom steps still need spark-submit.
	in = testInput(ResourceJava, map[string]string{"spark.kubernetes.driver.pod.featureSteps": "com.example.Step"})
	in.SparkVersion = "4.3.0"
	_, err := Build(in)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Option != "spark.kubernetes.driver.pod.featureSteps" {
		t.Errorf("custom steps: %v", err)
	}
}

func ownedKinds(o *Objects) string {
	s := ""
	for i, x := range o.Owned() {
		if i > 0 {
			s += ","
		}
		s += KindOf(x)
	}
	return s
}

// TestLineSparkUser: SPARK_USER is $SPARK_USER, else the proxy user, else
// the OS user; 4.3 puts the proxy user first.
func TestLineSparkUser(t *testing.T) {
	for version, want := range map[string]string{"3.5.9": "prebake", "4.2.1": "prebake", "4.3.0": "alice"} {
		in := testInput(ResourceJava, nil)
		in.SparkVersion, in.ProxyUser, in.Env["SPARK_USER"] = version, "alice", "prebake"
		if got := driver(build(t, in)).Env[0]; got.Name != "SPARK_USER" || got.Value != want {
			t.Errorf("%s: %+v, want SPARK_USER=%s", version, got, want)
		}
	}
}
