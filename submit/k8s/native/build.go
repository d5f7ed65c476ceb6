package native

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/prebake/prebake/internal/localfile"
)

// Spark's constants (k8s/Constants.scala).
const (
	labelVersion  = "spark-version"
	labelAppID    = "spark-app-selector"
	labelAppName  = "spark-app-name"
	labelRole     = "spark-role"
	roleDriver    = "driver"
	containerName = "spark-kubernetes-driver"
	portDriver    = "driver-rpc-port"
	portBlock     = "blockmanager"
	portUI        = "spark-ui"
	portConnect   = "spark-connect"
	confDirPath   = "/opt/spark/conf"
	confVolume    = "spark-conf-volume-driver"
	propsFile     = "spark.properties"
	propsPath     = confDirPath + "/" + propsFile
	redacted      = "<present_but_redacted>"
	tmplVolume    = "pod-template-volume"
	tmplKey       = "podspec-configmap-key"
	tmplMount     = "/opt/spark/pod-template"
	tmplFile      = "pod-spec-template.yml"
	hadoopVolume  = "hadoop-properties"
	hadoopDir     = "/opt/hadoop/conf"
	localDirPfx   = "spark-local-dir-"
)

// Objects are what spark-submit creates, in its order: the driver Pod
// first, then Owned (the Service, on-demand PVCs, the executor pod template
// ConfigMap, and last the driver ConfigMap), each owned by the pod.
type Objects struct {
	Namespace string
	AppID     string
	Pod       *corev1.Pod
	Service   *corev1.Service
	// NetworkPolicy is the executors' ingress policy (Spark 4.2+).
	NetworkPolicy *networkingv1.NetworkPolicy
	ConfigMap     *corev1.ConfigMap
	PVCs          []*corev1.PersistentVolumeClaim
	// TemplateConfigMap holds the executor pod template, when one is set.
	TemplateConfigMap *corev1.ConfigMap
	// Properties is the spark.properties content as a map.
	Properties map[string]string
}

// Owned lists the objects created after the pod, in Spark's order
// (driverKubernetesResources ++ Seq(configMap)).
func (o *Objects) Owned() []metav1.Object {
	var out []metav1.Object
	if o.Service != nil {
		out = append(out, o.Service)
	}
	if o.NetworkPolicy != nil {
		out = append(out, o.NetworkPolicy)
	}
	for _, p := range o.PVCs {
		out = append(out, p)
	}
	if o.TemplateConfigMap != nil {
		out = append(out, o.TemplateConfigMap)
	}
	return append(out, o.ConfigMap)
}

type options struct {
	rnd   io.Reader
	now   func() time.Time
	appID string
}

// Option configures Build.
type Option func(*options) error

// WithRand sets the source of the random ids (app id, name suffixes, local
// dir). The default is crypto/rand.
func WithRand(r io.Reader) Option { return func(o *options) error { o.rnd = r; return nil } }

// WithClock sets the clock of the name suffixes and the properties date.
// The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(o *options) error { o.now = now; return nil }
}

// WithAppID fixes the application id instead of a random one.
func WithAppID(id string) Option { return func(o *options) error { o.appID = id; return nil } }

// builder carries one Build.
type builder struct {
	in      *Input
	conf    map[string]string
	v4      bool // Spark 4.0's rules (4.0 and later)
	line    line
	appID   string
	prefix  string
	ns      string
	appName string
	props   map[string]string
	pod     *corev1.Pod
	ctr     *corev1.Container
	objs    *Objects
	o       options
}

// Build makes the objects spark-submit would create for in. Errors are
// *UnsupportedError (use the real spark-submit), *InvalidError (spark-submit
// would refuse the submission too), or a pod template file that cannot be
// read as one (errdefs.NotFound, errdefs.Invalid: see internal/localfile),
// or an option's own error.
func Build(in *Input, opts ...Option) (*Objects, error) {
	o := options{rnd: rand.Reader, now: time.Now}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	ln, err := versionRules(in.SparkVersion)
	if err != nil {
		return nil, err
	}
	if err := Check(in); err != nil {
		return nil, err
	}
	b := &builder{in: in, conf: in.Conf, v4: ln.atLeast(4, 0), line: ln, o: o, props: map[string]string{}}
	for k, v := range in.Conf {
		b.props[k] = v
	}
	if _, ok := b.props["spark.app.submitTime"]; !ok {
		// SparkSubmit records when it submitted.
		b.props["spark.app.submitTime"] = strconv.FormatInt(o.now().UnixMilli(), 10)
	}
	b.appID = o.appID
	if b.appID == "" {
		if b.appID, err = appID(o.rnd); err != nil {
			return nil, err
		}
	}
	b.appName = b.get("spark.app.name", "spark")
	id, err := uniqueID(o.rnd, o.now())
	if err != nil {
		return nil, err
	}
	b.prefix = resourceNamePrefix(b.appName, id)
	b.ns = b.get("spark.kubernetes.namespace", "default")
	if err := CheckNamespace(b.ns); err != nil {
		return nil, err
	}
	b.objs = &Objects{Namespace: b.ns, AppID: b.appID}
	if err := b.initialPod(); err != nil {
		return nil, err
	}
	for _, step := range b.featureSteps() {
		if b.excluded(step.class) {
			continue
		}
		if err := step.run(); err != nil {
			return nil, err
		}
	}
	if err := b.confMap(); err != nil {
		return nil, err
	}
	b.pod.Spec.Containers = append(b.pod.Spec.Containers, *b.ctr)
	b.objs.Pod = b.pod
	b.objs.Properties = b.props
	return b.objs, nil
}

// line is a Spark release line (major.minor): the rules its feature steps
// follow.
type line struct{ major, minor int }

// atLeast reports whether l is major.minor or later.
func (l line) atLeast(major, minor int) bool {
	return l.major > major || (l.major == major && l.minor >= minor)
}

// KnownLines are the Spark lines whose driver objects the native builder
// reproduces.
var KnownLines = []string{"3.5", "4.0", "4.1", "4.2", "4.3"}

// versionRules is the line of version ("4.1.4": 4.1), one of KnownLines.
func versionRules(version string) (line, error) {
	known := strings.Join(KnownLines, ", ")
	if version == "" {
		return line{}, unsupported(OptionSparkVersion, "unknown: the native submitter must know the driver image's Spark version (one of the lines %s)", known)
	}
	parts := strings.SplitN(version, ".", 3)
	if len(parts) == 3 {
		for _, k := range KnownLines {
			if parts[0]+"."+parts[1] == k && parts[2] != "" {
				major, _ := strconv.Atoi(parts[0])
				minor, _ := strconv.Atoi(parts[1])
				return line{major, minor}, nil
			}
		}
	}
	return line{}, unsupported(OptionSparkVersion, "%q: the native submitter knows the Spark lines %s", version, known)
}

// featureStep is one of KubernetesDriverBuilder's steps, by its class.
type featureStep struct {
	class string // the simple name under org.apache.spark.deploy.k8s.features
	run   func() error
}

// featureSteps are the driver's feature steps of the line, in
// KubernetesDriverBuilder's order (4.2 adds NetworkPolicyFeatureStep;
// KerberosConfDriverFeatureStep does nothing here: Check refuses Kerberos).
func (b *builder) featureSteps() []featureStep {
	steps := []featureStep{
		{"BasicDriverFeatureStep", b.basic},
		{"DriverKubernetesCredentialsFeatureStep", b.credentials},
		{"DriverServiceFeatureStep", b.service},
	}
	if b.line.atLeast(4, 2) {
		steps = append(steps, featureStep{"NetworkPolicyFeatureStep", b.networkPolicy})
	}
	return append(steps,
		featureStep{"MountSecretsFeatureStep", b.secrets},
		featureStep{"EnvSecretsFeatureStep", b.envSecrets},
		featureStep{"MountVolumesFeatureStep", b.volumes},
		featureStep{"DriverCommandFeatureStep", b.command},
		featureStep{"HadoopConfDriverFeatureStep", b.hadoopConf},
		featureStep{"PodTemplateConfigMapStep", b.podTemplateConfigMap},
		featureStep{"LocalDirsFeatureStep", b.localDirs},
	)
}

// ExcludedStepsKey names driver feature steps (class names) Spark 4.1+
// leaves out; earlier lines ignore it.
const ExcludedStepsKey = "spark.kubernetes.driver.pod.excludedFeatureSteps"

const featuresPackage = "org.apache.spark.deploy.k8s.features."

// excluded reports whether the line honours spark.kubernetes.driver.pod.excludedFeatureSteps
// and it names the step's class (a comma-separated list, entries trimmed,
// as ConfigBuilder.toSequence reads it).
func (b *builder) excluded(class string) bool {
	if !b.line.atLeast(4, 1) {
		return false
	}
	for _, c := range strings.Split(b.conf[ExcludedStepsKey], ",") {
		if strings.TrimSpace(c) == featuresPackage+class {
			return true
		}
	}
	return false
}

func (b *builder) get(k, def string) string {
	if v, ok := b.conf[k]; ok {
		return v
	}
	return def
}

// getBool is a boolean conf (Spark's booleanConf: true or false, any case,
// surrounding spaces ignored), def when unset.
func (b *builder) getBool(k, def string) (bool, error) {
	v := b.get(k, def)
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, invalid(k, "%q is not a boolean", v)
}

// connectPort is the driver's Spark Connect server port (4.1+:
// spark.connect.grpc.binding.port, 15002).
func (b *builder) connectPort() (int, error) {
	return b.getInt("spark.connect.grpc.binding.port", 15002)
}

func (b *builder) getInt(k string, def int) (int, error) {
	v, ok := b.conf[k]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, invalid(k, "%q is not an integer", v)
	}
	return n, nil
}

// withPrefix is getAllWithPrefix: the keys under prefix, without it.
func (b *builder) withPrefix(prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range b.conf {
		if strings.HasPrefix(k, prefix) {
			out[strings.TrimPrefix(k, prefix)] = v
		}
	}
	return out
}

// mapOrder is the order Spark iterates getAllWithPrefix(...).toMap in:
// Scala's (scalaMapOrder, by the driver image's line) with more than four
// keys; up to four the map keeps SparkConf's ConcurrentHashMap order,
// which is not reproduced: sorted.
func (b *builder) mapOrder(m map[string]string) []string {
	return scalaMapOrder(sortedKeys(m), b.v4)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// initialPod is the driver pod template (spark.kubernetes.driver.podTemplateFile)
// with its Spark container taken out, or an empty pod.
func (b *builder) initialPod() error {
	b.pod = &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}
	b.ctr = &corev1.Container{}
	file, ok := b.conf["spark.kubernetes.driver.podTemplateFile"]
	if !ok {
		return nil
	}
	data, err := readLocal("spark.kubernetes.driver.podTemplateFile", file)
	if err != nil {
		return err
	}
	var p corev1.Pod
	if err := yaml.Unmarshal(data, &p); err != nil {
		return invalid("spark.kubernetes.driver.podTemplateFile", "%s: not a pod: %v", file, err)
	}
	p.TypeMeta = b.pod.TypeMeta
	b.pod = &p
	cs := p.Spec.Containers
	idx := -1
	if name, ok := b.conf["spark.kubernetes.driver.podTemplateContainerName"]; ok {
		n := 0
		for i, c := range cs {
			if c.Name == name {
				idx, n = i, n+1
			}
		}
		if n != 1 {
			idx = -1
		}
	}
	if idx < 0 && len(cs) > 0 {
		idx = 0
	}
	if idx >= 0 {
		c := cs[idx]
		b.ctr = &c
		rest := append([]corev1.Container{}, cs[:idx]...)
		b.pod.Spec.Containers = append(rest, cs[idx+1:]...)
	}
	return nil
}

// readLocal reads a template file the way Spark downloads it: a local
// path or file: URI only.
func readLocal(key, file string) ([]byte, error) {
	p := file
	if u, err := url.Parse(file); err == nil && u.Scheme != "" {
		if u.Scheme != "file" {
			return nil, unsupported(key, "%s: remote templates are read through Hadoop's file systems", file)
		}
		p = u.Path
	}
	data, err := localfile.Read(p, MaxTemplateSize)
	if err != nil {
		// Missing, not a regular file, too large: errdefs.NotFound or
		// errdefs.Invalid, naming the file, for the caller to keep.
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return data, nil
}

// MaxTemplateSize bounds a pod template file (1 MiB; the API server's own
// limit on an object is 1.5 MiB).
const MaxTemplateSize = 1 << 20

// labels are KubernetesDriverConf.labels: the custom driver labels (with
// {{APP_ID}} substituted in 4.0) and Spark's own.
func (b *builder) labels() (map[string]string, error) {
	out := map[string]string{}
	for k, v := range b.withPrefix("spark.kubernetes.driver.label.") {
		if b.v4 {
			v = substituteIDs(v, b.appID)
		}
		out[k] = v
	}
	preset := map[string]string{
		labelVersion: b.in.SparkVersion, labelAppID: b.appID,
		labelAppName: appNameLabel(b.appName), labelRole: roleDriver,
	}
	for k, v := range preset {
		if _, ok := out[k]; ok {
			return nil, invalid("spark.kubernetes.driver.label."+k, "label %s is reserved for Spark", k)
		}
		out[k] = v
	}
	return out, nil
}

func quantity(key, s string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, invalid(key, "%q is not a Kubernetes quantity", s)
	}
	return q, nil
}

// basic is BasicDriverFeatureStep.
func (b *builder) basic() error {
	podName := b.get("spark.kubernetes.driver.pod.name", b.prefix+"-driver")
	image := b.get("spark.kubernetes.driver.container.image", b.conf["spark.kubernetes.container.image"])
	if image == "" {
		return invalid("spark.kubernetes.container.image", "Must specify the driver container image")
	}
	if b.line.atLeast(4, 1) {
		// KubernetesDriverConf.image: the built-in {{SPARK_VERSION}}.
		image = strings.ReplaceAll(image, "{{SPARK_VERSION}}", b.in.SparkVersion)
	}
	policy := b.get("spark.kubernetes.container.image.pullPolicy", "IfNotPresent")
	switch policy {
	case "Always", "Never", "IfNotPresent":
	default:
		return invalid("spark.kubernetes.container.image.pullPolicy", "%q: want Always, Never or IfNotPresent", policy)
	}
	driverPort, err := b.getInt("spark.driver.port", 7078)
	if err != nil {
		return err
	}
	bmDefault, err := b.getInt("spark.blockManager.port", 7079)
	if err != nil {
		return err
	}
	bmPort, err := b.getInt("spark.driver.blockManager.port", bmDefault)
	if err != nil {
		return err
	}
	uiPort, err := b.getInt("spark.ui.port", 4040)
	if err != nil {
		return err
	}
	mem, err := b.memoryMiB()
	if err != nil {
		return err
	}
	cores, err := b.getInt("spark.driver.cores", 1)
	if err != nil {
		return err
	}
	c := b.ctr
	if c.Name == "" {
		c.Name = containerName
	}
	c.Image = image
	c.ImagePullPolicy = corev1.PullPolicy(policy)
	c.Ports = append(c.Ports,
		corev1.ContainerPort{Name: portDriver, ContainerPort: int32(driverPort), Protocol: "TCP"},
		corev1.ContainerPort{Name: portBlock, ContainerPort: int32(bmPort), Protocol: "TCP"},
		corev1.ContainerPort{Name: portUI, ContainerPort: int32(uiPort), Protocol: "TCP"})
	if b.line.atLeast(4, 1) {
		connect, err := b.connectPort()
		if err != nil {
			return err
		}
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: portConnect, ContainerPort: int32(connect), Protocol: "TCP"})
	}
	// Utils.getCurrentUserName: $SPARK_USER, else the UGI's user (the proxy
	// user inside SparkSubmit's doAs, else the OS user); 4.3 puts the proxy
	// user first (conf.proxyUser.getOrElse).
	user := b.in.Env["SPARK_USER"]
	if b.line.atLeast(4, 3) && b.in.ProxyUser != "" {
		user = b.in.ProxyUser
	}
	if user == "" {
		user = b.in.ProxyUser
	}
	if user == "" {
		user = b.in.User
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "SPARK_USER", Value: user},
		corev1.EnvVar{Name: "SPARK_APPLICATION_ID", Value: b.appID})
	// Seq(SPARK_APPLICATION_ID) ++ conf.environment: the driverEnv map in
	// Scala's order (scalaMapOrder).
	denv := b.withPrefix("spark.kubernetes.driverEnv.")
	for _, k := range b.mapOrder(denv) {
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: denv[k]})
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "SPARK_DRIVER_BIND_ADDRESS", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}})

	cpuReq := strconv.Itoa(cores)
	if v, ok := b.conf["spark.kubernetes.driver.request.cores"]; ok {
		cpuReq = v
	}
	cpu, err := quantity("spark.kubernetes.driver.request.cores", cpuReq)
	if err != nil {
		return err
	}
	memQ := resource.MustParse(strconv.FormatInt(mem, 10) + "Mi")
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	c.Resources.Requests[corev1.ResourceCPU] = cpu
	if v, ok := b.conf["spark.kubernetes.driver.limit.cores"]; ok {
		q, err := quantity("spark.kubernetes.driver.limit.cores", v)
		if err != nil {
			return err
		}
		c.Resources.Limits[corev1.ResourceCPU] = q
	}
	c.Resources.Requests[corev1.ResourceMemory] = memQ
	c.Resources.Limits[corev1.ResourceMemory] = memQ
	if err := b.customResources(c.Resources.Limits); err != nil {
		return err
	}
	if b.line.atLeast(4, 3) {
		// editOrNewSecurityContext: a template's context keeps its other fields.
		allow, err := b.getBool("spark.kubernetes.driver.securityContext.allowPrivilegeEscalation",
			b.get("spark.kubernetes.securityContext.allowPrivilegeEscalation", "false"))
		if err != nil {
			return err
		}
		if c.SecurityContext == nil {
			c.SecurityContext = &corev1.SecurityContext{}
		}
		c.SecurityContext.AllowPrivilegeEscalation = &allow
	}

	labels, err := b.labels()
	if err != nil {
		return err
	}
	p := b.pod
	p.Name = podName
	p.Namespace = b.ns
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	for k, v := range labels {
		p.Labels[k] = v
	}
	if ann := b.withPrefix("spark.kubernetes.driver.annotation."); len(ann) > 0 {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		for k, v := range ann {
			p.Annotations[k] = substituteIDs(v, b.appID)
		}
	}
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	for _, pfx := range []string{"spark.kubernetes.node.selector.", "spark.kubernetes.driver.node.selector."} {
		if sel := b.withPrefix(pfx); len(sel) > 0 {
			if p.Spec.NodeSelector == nil {
				p.Spec.NodeSelector = map[string]string{}
			}
			for k, v := range sel {
				p.Spec.NodeSelector[k] = v
			}
		}
	}
	for _, s := range strings.Split(b.conf["spark.kubernetes.container.image.pullSecrets"], ",") {
		if s = strings.TrimSpace(s); s != "" {
			p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
		}
	}
	if s := b.get("spark.kubernetes.driver.scheduler.name", b.conf["spark.kubernetes.scheduler.name"]); s != "" {
		p.Spec.SchedulerName = s
	}

	factor, err := b.defaultOverheadFactor()
	if err != nil {
		return err
	}
	b.props["spark.kubernetes.driver.pod.name"] = podName
	b.props["spark.app.id"] = b.appID
	b.props["spark.kubernetes.submitInDriver"] = "true"
	b.props["spark.kubernetes.memoryOverheadFactor"] = javaDouble(factor)
	return nil
}

// customResources adds spark.driver.resource.<name>.{amount,vendor} as
// <vendor>/<name> limits.
func (b *builder) customResources(limits corev1.ResourceList) error {
	res := b.withPrefix("spark.driver.resource.")
	names := map[string]bool{}
	for k := range res {
		if name, _, ok := strings.Cut(k, "."); ok {
			names[name] = true
		}
	}
	for name := range names {
		amount, ok := res[name+".amount"]
		if !ok {
			continue
		}
		vendor, ok := res[name+".vendor"]
		if !ok {
			return invalid("spark.driver.resource."+name+".vendor", "Resource: %s was requested, but vendor was not specified", name)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(amount), 10, 64)
		if err != nil {
			return invalid("spark.driver.resource."+name+".amount", "%q is not an integer", amount)
		}
		q, err := quantity("spark.driver.resource."+name+".amount", strconv.FormatInt(n, 10))
		if err != nil {
			return err
		}
		limits[corev1.ResourceName(vendor+"/"+name)] = q
	}
	return nil
}

func (b *builder) factor(key string) (float64, bool, error) {
	v, ok := b.conf[key]
	if !ok {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f <= 0 {
		return 0, false, invalid(key, "%q: want a positive number", v)
	}
	return f, true, nil
}

// defaultOverheadFactor is spark.kubernetes.memoryOverheadFactor, else
// 0.4 for Python and R apps and 0.1 for JVM apps.
func (b *builder) defaultOverheadFactor() (float64, error) {
	f, ok, err := b.factor("spark.kubernetes.memoryOverheadFactor")
	if err != nil || ok {
		return f, err
	}
	if b.in.ResourceType != ResourceJava {
		return 0.4, nil
	}
	return 0.1, nil
}

// memoryMiB is the driver container's memory: spark.driver.memory plus
// the overhead (BasicDriverFeatureStep).
func (b *builder) memoryMiB() (int64, error) {
	mem, err := parseBytes(b.get("spark.driver.memory", "1g"), 1<<20)
	if err != nil {
		return 0, invalid("spark.driver.memory", "%v", err)
	}
	if v, ok := b.conf["spark.driver.memoryOverhead"]; ok {
		o, err := parseBytes(v, 1<<20)
		if err != nil {
			return 0, invalid("spark.driver.memoryOverhead", "%v", err)
		}
		return mem + o, nil
	}
	factor, ok, err := b.factor("spark.driver.memoryOverheadFactor")
	if err != nil {
		return 0, err
	}
	if !ok {
		if factor, err = b.defaultOverheadFactor(); err != nil {
			return 0, err
		}
	}
	minOverhead := int64(384)
	if b.v4 {
		if v, ok := b.conf["spark.driver.minMemoryOverhead"]; ok {
			if minOverhead, err = parseBytes(v, 1<<20); err != nil {
				return 0, invalid("spark.driver.minMemoryOverhead", "%v", err)
			}
		}
	}
	return mem + max(scalaToInt(factor*float64(mem)), minOverhead), nil
}

// credentials is DriverKubernetesCredentialsFeatureStep without a
// credentials secret (Check refuses those): the service account, and every
// *oauthToken redacted in spark.properties.
func (b *builder) credentials() error {
	if sa, ok := b.conf["spark.kubernetes.authenticate.driver.serviceAccountName"]; ok {
		b.pod.Spec.DeprecatedServiceAccount = sa
		b.pod.Spec.ServiceAccountName = sa
	}
	for k := range b.conf {
		if strings.HasSuffix(k, "oauthToken") {
			b.props[k] = redacted
		}
	}
	return nil
}

// service is DriverServiceFeatureStep.
func (b *builder) service() error {
	for _, k := range []string{"spark.driver.bindAddress", "spark.driver.host"} {
		if _, ok := b.conf[k]; ok {
			return invalid(k, "must not be set in cluster mode: the driver service sets it")
		}
	}
	name := b.prefix + "-driver-svc"
	if len(name) > maxLabel {
		id, err := uniqueID(b.o.rnd, b.o.now())
		if err != nil {
			return err
		}
		name = "spark-" + id + "-driver-svc"
	}
	driverPort, _ := b.getInt("spark.driver.port", 7078)
	bmPort, err := b.getInt("spark.driver.blockManager.port", 7079)
	if err != nil {
		return err
	}
	uiPort, _ := b.getInt("spark.ui.port", 4040)
	labels, _ := b.labels()
	svcLabels := map[string]string{labelAppID: b.appID}
	for k, v := range b.withPrefix("spark.kubernetes.driver.service.label.") {
		svcLabels[k] = v
	}
	policy := corev1.IPFamilyPolicy(b.get("spark.kubernetes.driver.service.ipFamilyPolicy", "SingleStack"))
	var fams []corev1.IPFamily
	for _, f := range strings.Split(b.get("spark.kubernetes.driver.service.ipFamilies", "IPv4"), ",") {
		fams = append(fams, corev1.IPFamily(f))
	}
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.ns, Labels: svcLabels,
			Annotations: nilIfEmpty(b.withPrefix("spark.kubernetes.driver.service.annotation."))},
		Spec: corev1.ServiceSpec{
			ClusterIP: "None", IPFamilyPolicy: &policy, IPFamilies: fams, Selector: labels,
			Ports: []corev1.ServicePort{
				{Name: portDriver, Port: int32(driverPort), TargetPort: intstr.FromInt32(int32(driverPort))},
				{Name: portBlock, Port: int32(bmPort), TargetPort: intstr.FromInt32(int32(bmPort))},
				{Name: portUI, Port: int32(uiPort), TargetPort: intstr.FromInt32(int32(uiPort))},
			},
		},
	}
	if b.line.atLeast(4, 1) {
		connect, err := b.connectPort()
		if err != nil {
			return err
		}
		p := corev1.ServicePort{Name: portConnect, Port: int32(connect), TargetPort: intstr.FromInt32(int32(connect))}
		if b.line.atLeast(4, 2) {
			grpc := "grpc"
			p.AppProtocol = &grpc
		}
		svc.Spec.Ports = append(svc.Spec.Ports, p)
	}
	if b.line.atLeast(4, 3) {
		pub, err := b.getBool("spark.kubernetes.driver.service.publishNotReadyAddresses", "false")
		if err != nil {
			return err
		}
		svc.Spec.PublishNotReadyAddresses = pub
	}
	b.objs.Service = svc
	b.props["spark.driver.host"] = name + "." + b.ns + ".svc"
	b.props["spark.driver.port"] = strconv.Itoa(driverPort)
	b.props["spark.driver.blockManager.port"] = strconv.Itoa(bmPort)
	return nil
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// networkPolicy is NetworkPolicyFeatureStep (4.2+): the application's
// executors accept traffic from its own pods only.
func (b *builder) networkPolicy() error {
	b.objs.NetworkPolicy = &networkingv1.NetworkPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: b.prefix + "-policy", Namespace: b.ns,
			Labels: map[string]string{labelAppID: b.appID}},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{labelRole: "executor", labelAppID: b.appID}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{labelAppID: b.appID}}}}}},
		},
	}
	return nil
}

// secrets is MountSecretsFeatureStep: the mounts in the secrets map's
// Scala order; the volumes too (Spark maps the map's keys, a Set: with
// more than four secrets a hash set of fabric8 Volumes, whose order is not
// reproduced).
func (b *builder) secrets() error {
	s := b.withPrefix("spark.kubernetes.driver.secrets.")
	names := b.mapOrder(s)
	for _, name := range names {
		b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, corev1.Volume{Name: name + "-volume",
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}})
	}
	for _, name := range names {
		b.ctr.VolumeMounts = append(b.ctr.VolumeMounts, corev1.VolumeMount{Name: name + "-volume", MountPath: s[name]})
	}
	return nil
}

// envSecrets is EnvSecretsFeatureStep, in the secretKeyRef map's Scala
// order.
func (b *builder) envSecrets() error {
	s := b.withPrefix("spark.kubernetes.driver.secretKeyRef.")
	for _, env := range b.mapOrder(s) {
		parts := strings.Split(s[env], ":")
		if len(parts) != 2 {
			return invalid("spark.kubernetes.driver.secretKeyRef."+env, "SecretKeyRef must be in the form name:key")
		}
		b.ctr.Env = append(b.ctr.Env, corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: parts[0]}, Key: parts[1]}}})
	}
	return nil
}

// command is DriverCommandFeatureStep.
func (b *builder) command() error {
	in := b.in
	args := []string{"driver"}
	if in.ProxyUser != "" {
		args = append(args, "--proxy-user", in.ProxyUser)
	}
	args = append(args, "--properties-file", propsPath, "--class", in.MainClass, in.Resource)
	b.ctr.Args = append(b.ctr.Args, append(args, in.AppArgs...)...)
	if in.ResourceType == ResourcePython {
		py, ok := b.conf["spark.pyspark.python"]
		if !ok {
			py = in.Env["PYSPARK_PYTHON"]
		}
		dpy, ok := b.conf["spark.pyspark.driver.python"]
		if !ok {
			dpy, ok = b.conf["spark.pyspark.python"]
		}
		if !ok {
			dpy = in.Env["PYSPARK_DRIVER_PYTHON"]
			if dpy == "" {
				dpy = in.Env["PYSPARK_PYTHON"]
			}
		}
		if py != "" {
			b.ctr.Env = append(b.ctr.Env, corev1.EnvVar{Name: "PYSPARK_PYTHON", Value: py})
		}
		if dpy != "" {
			b.ctr.Env = append(b.ctr.Env, corev1.EnvVar{Name: "PYSPARK_DRIVER_PYTHON", Value: dpy})
		}
	}
	b.props["spark.kubernetes.resource.type"] = in.ResourceType
	return nil
}

// hadoopConf is HadoopConfDriverFeatureStep for an existing ConfigMap
// (Check refuses $HADOOP_CONF_DIR).
func (b *builder) hadoopConf() error {
	cm, ok := b.conf["spark.kubernetes.hadoop.configMapName"]
	if !ok {
		return nil
	}
	b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, corev1.Volume{Name: hadoopVolume,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}})
	b.ctr.VolumeMounts = append(b.ctr.VolumeMounts, corev1.VolumeMount{Name: hadoopVolume, MountPath: hadoopDir})
	b.ctr.Env = append(b.ctr.Env, corev1.EnvVar{Name: "HADOOP_CONF_DIR", Value: hadoopDir})
	b.props["spark.kubernetes.executor.hadoopConfigMapName"] = cm
	return nil
}

// podTemplateConfigMap is PodTemplateConfigMapStep.
func (b *builder) podTemplateConfigMap() error {
	file, ok := b.conf["spark.kubernetes.executor.podTemplateFile"]
	if !ok {
		return nil
	}
	data, err := readLocal("spark.kubernetes.executor.podTemplateFile", file)
	if err != nil {
		return err
	}
	name := b.prefix + "-driver-podspec-conf-map"
	b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, corev1.Volume{Name: tmplVolume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name},
			Items: []corev1.KeyToPath{{Key: tmplKey, Path: tmplFile}}}}})
	b.ctr.VolumeMounts = append(b.ctr.VolumeMounts, corev1.VolumeMount{Name: tmplVolume, MountPath: tmplMount})
	immutable := true
	b.objs.TemplateConfigMap = &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.ns},
		Immutable:  &immutable,
		Data:       map[string]string{tmplKey: string(data)},
	}
	b.props["spark.kubernetes.executor.podTemplateFile"] = tmplMount + "/" + tmplFile
	return nil
}

// localDirs is LocalDirsFeatureStep.
func (b *builder) localDirs() error {
	var dirs []string
	for _, m := range b.ctr.VolumeMounts {
		if strings.HasPrefix(m.Name, localDirPfx) {
			dirs = append(dirs, m.MountPath)
		}
	}
	if len(dirs) == 0 {
		spec := b.in.Env["SPARK_LOCAL_DIRS"]
		if spec == "" {
			spec = b.conf["spark.local.dir"]
		}
		if spec == "" {
			u, err := uuid(b.o.rnd)
			if err != nil {
				return err
			}
			spec = "/var/data/spark-" + u
		}
		dirs = strings.Split(spec, ",")
		// Spark spreads the driver's local dirs in a random order.
		if err := shuffle(b.o.rnd, dirs); err != nil {
			return err
		}
		tmpfs := strings.EqualFold(strings.TrimSpace(b.conf["spark.kubernetes.local.dirs.tmpfs"]), "true")
		for i, d := range dirs {
			name := localDirPfx + strconv.Itoa(i+1)
			ed := &corev1.EmptyDirVolumeSource{}
			if tmpfs {
				ed.Medium = corev1.StorageMediumMemory
			}
			b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: ed}})
			b.ctr.VolumeMounts = append(b.ctr.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: d})
		}
	}
	b.ctr.Env = append(b.ctr.Env, corev1.EnvVar{Name: "SPARK_LOCAL_DIRS", Value: strings.Join(dirs, ",")})
	return nil
}

// confMap is Client.run's part: spark.properties (and the conf dir's
// files) in the spark-drv-…-conf-map ConfigMap, mounted at /opt/spark/conf.
func (b *builder) confMap() error {
	id, err := uniqueID(b.o.rnd, b.o.now())
	if err != nil {
		return err
	}
	name := "spark-drv-" + id + "-conf-map"
	if len(name) > 253 {
		name = name[:253]
	}
	files := map[string]string{}
	for k, v := range b.in.ConfFiles {
		files[k] = v
	}
	files[propsFile] = StoreProperties(b.props, "Java properties built from Kubernetes config map with name: "+name, b.o.now())
	var items []corev1.KeyToPath
	mode := int32(420)
	for _, k := range sortedKeys(files) {
		items = append(items, corev1.KeyToPath{Key: k, Path: k, Mode: &mode})
	}
	data := map[string]string{"spark.kubernetes.namespace": b.ns}
	for k, v := range files {
		data[k] = v
	}
	immutable := true
	b.objs.ConfigMap = &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.ns},
		Immutable:  &immutable,
		Data:       data,
	}
	b.ctr.Env = append(b.ctr.Env, corev1.EnvVar{Name: "SPARK_CONF_DIR", Value: confDirPath})
	b.ctr.VolumeMounts = append(b.ctr.VolumeMounts, corev1.VolumeMount{Name: confVolume, MountPath: confDirPath})
	b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, corev1.Volume{Name: confVolume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: items}}})
	return nil
}

// String describes the objects for logs.
func (o *Objects) String() string {
	svc := "none"
	if o.Service != nil {
		svc = o.Service.Name
	}
	return fmt.Sprintf("pod %s/%s, service %s, configmap %s", o.Namespace, o.Pod.Name, svc, o.ConfigMap.Name)
}

// scalaToInt is Scala's Double.toInt: truncation, saturating at the Int
// range.
func scalaToInt(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int64(f)
}

// shuffle permutes s at random (Fisher-Yates).
func shuffle(rnd io.Reader, s []string) error {
	for i := len(s) - 1; i > 0; i-- {
		var b [8]byte
		if _, err := io.ReadFull(rnd, b[:]); err != nil {
			return fmt.Errorf("random order: %w", err)
		}
		j := int(binary.BigEndian.Uint64(b[:]) % uint64(i+1))
		s[i], s[j] = s[j], s[i]
	}
	return nil
}
