// Package doctor checks the environment a resolution, a bake and a
// submission depend on, without resolving anything: what each repository of
// the chain answers, which registry and store credentials are in use (where
// they come from, never their values), $SPARK_HOME and its Spark line, the
// POM-only entries of ~/.m2 (repo.M2POMOnlyError) and the REST port of
// a spark:// master; with what a job of the command line needs, it probes
// the registry (a /v2/ ping and a token with the keychain), the store
// (a list of its bucket), the API server of a k8s:// master (reachable,
// and a SelfSubjectAccessReview per permission a submission needs, through
// Input.Kube), the keyring of signature verification and the spark-submit
// a submission would run.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/netprobe"
	"github.com/prebake/prebake/internal/pgpverify"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
	"github.com/prebake/prebake/s3store"
)

// Input is what to check.
type Input struct {
	// Resolve gives the chain (Repositories, NoDefaultRepositories,
	// Settings, IvySettings, IvyHome); nothing is resolved.
	Resolve         resolver.Request
	ResolverOptions []resolver.Option
	// Home holds .m2/repository; "" is the user's home.
	Home string
	// SparkHome is the local Spark ($SPARK_HOME); "" is not set.
	SparkHome string
	// Master is the master as given (reported); RESTURLs are its REST
	// servers (submit/rest's Client.Masters), each probed. No URL: nothing
	// is probed.
	Master   string
	RESTURLs []string
	// RegistryAuth is true when explicit registry credentials are given
	// (layers.WithBasicAuth); ImageRefs are the registry references the
	// job pushes to or reads (their host's credential source is reported).
	RegistryAuth bool
	ImageRefs    []string
	// DockerConfig is the Docker config directory; "" is $DOCKER_CONFIG,
	// else ~/.docker.
	DockerConfig string
	// Store is the jar store (s3://… gets its AWS credential source);
	// StoreOptions configure it (region, static credentials).
	Store        string
	StoreOptions []s3store.Option

	// BaseImage is the base image a bake reads (pinged with pull scope;
	// ImageRefs with push scope); RegistryOptions reach the registries
	// (layers.WithBasicAuth). NoPing skips the registry and store probes
	// (credential sources only).
	BaseImage       string
	RegistryOptions []layers.Option
	NoPing          bool
	// Kube, for a k8s:// master, probes its API server (cmd hands
	// submit/k8s's ProbeAPIServer); nil: none.
	Kube func(ctx context.Context, timeout time.Duration) (*Kube, error)
	// Keyring is the keyring of signature verification ("" when signatures
	// are not verified): a missing or empty one is a problem.
	Keyring string
	// SparkSubmit is the spark-submit a submission would run ("" for none
	// needed); SparkSubmitNeeded makes its absence a problem.
	SparkSubmit       string
	SparkSubmitNeeded bool
}

// Kube is what the API server of a k8s:// master answered.
type Kube struct {
	APIServer string `json:"apiServer"`
	// Source is where the credentials come from (never their values).
	Source    string `json:"source,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Reachable bool   `json:"reachable"`
	Version   string `json:"version,omitempty"`
	// Access is one "verb resource" per permission checked, Denied those
	// the credentials lack.
	Access  []string `json:"access"`
	Denied  []string `json:"denied"`
	Error   string   `json:"error,omitempty"`
	Warning string   `json:"warning,omitempty"`
	// Kind is what kind of failure Error is (submit/k8s's Probe.Kind):
	// Unavailable or Timeout is an outage, any other a problem of its
	// kind. Unknown (not said): Unavailable when not Reachable, else
	// Denied.
	Kind errdefs.Kind `json:"-"`
}

// Keyring is the keyring of signature verification.
type Keyring struct {
	Path  string `json:"path"`
	Keys  int    `json:"keys"`
	Error string `json:"error,omitempty"`
}

// SparkSubmit is the spark-submit a submission would run.
type SparkSubmit struct {
	Path  string `json:"path"`
	Error string `json:"error,omitempty"`
}

// Option configures Check.
type Option func(*options) error

type options struct {
	timeout   time.Duration
	client    *http.Client
	scanLimit int
}

// WithTimeout bounds each probe (one request per repository or REST
// server; the AWS credential lookup). The default is 5s.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error { o.timeout = d; return nil }
}

// WithHTTPClient sets the client of the REST probes. The default is a
// fresh client.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) error { o.client = c; return nil }
}

// WithM2ScanLimit bounds the directories of ~/.m2/repository visited. The
// default is repo.DefaultM2ScanLimit.
func WithM2ScanLimit(n int) Option {
	return func(o *options) error { o.scanLimit = n; return nil }
}

// makeOptions sets the defaults, then applies opts; the first option error
// stops it.
func makeOptions(opts []Option) (*options, error) {
	o := &options{timeout: resolver.DefaultProbeTimeout, scanLimit: repo.DefaultM2ScanLimit}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	if o.client == nil {
		o.client = &http.Client{}
	}
	return o, nil
}

// Report is the result of Check. Its JSON form is a stable schema (the
// CLI's JSON document for doctor).
type Report struct {
	// OK is true when every service the job needs answered
	// (Unreachable is empty) and nothing it needs is missing or refused
	// (Problems is empty).
	OK bool `json:"ok"`
	// Unreachable names ("name (url)") the repositories, REST servers,
	// registries, store and API server that did not answer, or answered
	// 5xx. A repository after one that answered is a warning instead:
	// resolution goes on without it.
	Unreachable []string `json:"unreachable"`
	// Problems are what fails the job without an outage: credentials a
	// registry, the store or the API server refuses, a missing bucket,
	// keyring or spark-submit, a permission the submission lacks.
	Problems []string `json:"problems"`
	// Warnings are what may fail a job without being an outage: denied
	// repositories, POM-only ~/.m2 entries, no Spark line, no credentials.
	Warnings     []string                   `json:"warnings"`
	Repositories []resolver.RepositoryProbe `json:"repositories"`
	Registry     Registry                   `json:"registry"`
	Store        Store                      `json:"store"`
	SparkHome    SparkHome                  `json:"sparkHome"`
	M2           M2                         `json:"m2"`
	Master       Master                     `json:"master"`
	Kube         *Kube                      `json:"kube,omitempty"`
	Keyring      *Keyring                   `json:"keyring,omitempty"`
	SparkSubmit  *SparkSubmit               `json:"sparkSubmit,omitempty"`

	// kind is the kind of the first problem (Err).
	kind errdefs.Kind
}

// Err is nil when r is OK, else an error of kind Unavailable when a
// service did not answer, else of the first problem's kind.
func (r *Report) Err() error {
	switch {
	case len(r.Unreachable) > 0:
		return errdefs.Errorf(errdefs.Unavailable, "doctor: not answering: %s", strings.Join(r.Unreachable, ", "))
	case len(r.Problems) > 0:
		k := r.kind
		if k == errdefs.Unknown {
			k = errdefs.Invalid
		}
		return errdefs.Errorf(k, "doctor: %s", strings.Join(r.Problems, "; "))
	}
	return nil
}

// problem records a problem of kind k (the first one's kind is Err's).
func (r *Report) problem(k errdefs.Kind, msg string) {
	if len(r.Problems) == 0 {
		r.kind = k
	}
	r.Problems = append(r.Problems, msg)
}

// finding records err as an outage when it is Unavailable or Timeout
// (what, the service, is named; its section of the report has the error),
// else as a problem of its kind.
func (r *Report) finding(what string, err error) {
	switch k := errdefs.KindOf(err); k {
	case errdefs.Unavailable, errdefs.Timeout:
		r.Unreachable = append(r.Unreachable, what)
	default:
		r.problem(k, what+": "+redact.Line(err.Error()))
	}
}

// Registry is where registry credentials come from.
type Registry struct {
	// Explicit is true when explicit credentials are given (Input.RegistryAuth).
	Explicit bool `json:"explicit"`
	// DockerConfig is the Docker config file read; Found tells whether it
	// exists.
	DockerConfig string `json:"dockerConfig"`
	Found        bool   `json:"found"`
	// CredsStore is its default credential helper ("" for none).
	CredsStore string `json:"credsStore"`
	// Registries are the hosts with an auths entry or a credHelpers
	// helper, sorted.
	Registries []string `json:"registries"`
	// Targets are Input.ImageRefs with the source their host's credentials
	// come from: "explicit", "credHelper:<helper>", "auths",
	// "credsStore:<helper>" or "anonymous".
	Targets []RegistryTarget `json:"targets"`
	Error   string           `json:"error,omitempty"`
}

// RegistryTarget is one registry reference and its credential source.
type RegistryTarget struct {
	Ref    string `json:"ref"`
	Host   string `json:"host"`
	Source string `json:"source"`
	// Push is true for a target pushed to (a base is read); Ping is what
	// its registry answered: "ok" (the /v2/ ping and a token of that
	// scope), else the error; "" when not probed.
	Push bool   `json:"push"`
	Ping string `json:"ping,omitempty"`

	raw string // the reference as given
}

// Store is the jar store's credential source.
type Store struct {
	URL string `json:"url"`
	// Source is the AWS provider that holds the credentials (s3:// only),
	// "" when none was found (Error says why) or the store needs none.
	Source string `json:"source"`
	Error  string `json:"error,omitempty"`
	// Ping is what the store answered to a list of its prefix: "ok", else
	// the error; "" when not probed.
	Ping string `json:"ping,omitempty"`
}

// SparkHome is the local Spark.
type SparkHome struct {
	Path         string `json:"path"`
	SparkVersion string `json:"sparkVersion"`
	ScalaBinary  string `json:"scalaBinary"`
	// From is where the version was read: "jars" (jars/spark-core_*.jar)
	// or "RELEASE".
	From  string `json:"from"`
	Error string `json:"error,omitempty"`
}

// M2 is the scan of the local Maven repository.
type M2 struct {
	Dir       string         `json:"dir"`
	POMOnly   []repo.M2Entry `json:"pomOnly"`
	Truncated bool           `json:"truncated"`
}

// Master is the REST server of a spark:// master.
type Master struct {
	URL  string      `json:"url"`
	REST []RESTProbe `json:"rest"`
}

// RESTProbe is what one REST server answered.
type RESTProbe struct {
	URL string `json:"url"`
	netprobe.Answer
}

// Check runs every check of in. An error is only returned for bad input
// (a chain that cannot be built, an option that cannot apply) or a cancelled
// ctx: what did not answer is in the Report.
func Check(ctx context.Context, in Input, opts ...Option) (*Report, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	r := &Report{Unreachable: []string{}, Problems: []string{}, Warnings: []string{}, Repositories: []resolver.RepositoryProbe{}}

	probes, err := resolver.ProbeChain(ctx, in.Resolve, o.timeout, in.ResolverOptions...)
	switch k := errdefs.KindOf(err); {
	case err == nil:
	case ctx.Err() == nil && (k == errdefs.NotFound || k == errdefs.Invalid):
		// A missing or bad settings file: a finding, the rest is checked.
		r.problem(k, "repository chain: "+redact.Line(err.Error()))
	default:
		return nil, err
	}
	for i := range probes {
		// A repository URL may carry a token in its query (?token=…).
		probes[i].URL, probes[i].Error = redact.URL(probes[i].URL), redact.Line(probes[i].Error)
	}
	r.Repositories = append(r.Repositories, probes...)
	answered := false // a remote repository earlier in the chain answered
	for _, p := range probes {
		switch {
		case !p.Reachable() && answered:
			r.Warnings = append(r.Warnings, fmt.Sprintf("repository %s (%s) is not answering; an earlier one answered, and resolution goes on without it", p.Name, p.URL))
		case !p.Reachable():
			r.Unreachable = append(r.Unreachable, p.Name+" ("+p.URL+")")
		case p.Status == netprobe.StatusAbsent && p.Name != repo.RepoLocalM2:
			r.Warnings = append(r.Warnings, fmt.Sprintf("repository %s (%s): no such directory", p.Name, p.URL))
		case p.Status == netprobe.StatusDenied:
			r.Warnings = append(r.Warnings, fmt.Sprintf("repository %s (%s) answered %d: check its credentials", p.Name, p.URL, p.HTTPStatus))
		}
		if p.Reachable() && p.Status != netprobe.StatusDenied && p.Name != repo.RepoLocalM2 && strings.HasPrefix(p.URL, "http") {
			answered = true
		}
	}

	r.Registry = registry(in)
	pingRegistries(ctx, in, o, r)
	r.Store = store(ctx, in, o.timeout)
	if r.Store.Error != "" {
		r.Warnings = append(r.Warnings, "store "+r.Store.URL+": "+r.Store.Error)
	}
	pingStore(ctx, in, o, r)
	checkKeyring(in, r)
	checkSparkSubmit(in, r)
	r.SparkHome = sparkHome(in.SparkHome)
	if r.SparkHome.Error != "" {
		r.Warnings = append(r.Warnings, "SPARK_HOME "+r.SparkHome.Path+": "+r.SparkHome.Error)
	}

	home := in.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		r.M2.Dir = filepath.Join(home, ".m2", "repository")
		entries, truncated, err := repo.FindM2POMOnly(ctx, r.M2.Dir, o.scanLimit)
		if err != nil {
			return nil, err
		}
		r.M2.POMOnly, r.M2.Truncated = entries, truncated
		for _, e := range entries {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s has the POM of %s but not its jar: a resolution of it fails (as Spark's, FAILED DOWNLOADS) until that directory is removed", e.Dir, e.Module))
		}
		if truncated {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: scan stopped after %d directories", r.M2.Dir, o.scanLimit))
		}
	}
	if r.M2.POMOnly == nil {
		r.M2.POMOnly = []repo.M2Entry{}
	}

	r.Master = master(ctx, in, o)
	for _, p := range r.Master.REST {
		if !p.Reachable() {
			r.Unreachable = append(r.Unreachable, "REST server "+p.URL)
		}
	}
	if in.Kube != nil {
		k, err := in.Kube(ctx, o.timeout)
		if err != nil {
			return nil, err
		}
		r.Kube = k
		kind := k.Kind
		if kind == errdefs.Unknown {
			kind = errdefs.Denied
			if !k.Reachable {
				kind = errdefs.Unavailable
			}
		}
		switch {
		case (k.Error != "" || !k.Reachable) && (kind == errdefs.Unavailable || kind == errdefs.Timeout):
			r.Unreachable = append(r.Unreachable, "API server "+k.APIServer)
		case k.Error != "" || !k.Reachable:
			r.problem(kind, "API server "+k.APIServer+": "+k.Error)
		case len(k.Denied) > 0:
			r.problem(errdefs.Denied, fmt.Sprintf("API server %s: the credentials (%s) may not %s in namespace %s", k.APIServer, k.Source, strings.Join(k.Denied, ", "), k.Namespace))
		}
		if k.Warning != "" {
			r.Warnings = append(r.Warnings, "API server "+k.APIServer+": "+k.Warning)
		}
	}
	r.OK = len(r.Unreachable) == 0 && len(r.Problems) == 0
	return r, ctx.Err()
}

// pingRegistries pings the registry of each target (push scope) and of the
// base (pull scope), recording the answer in r.Registry.Targets.
func pingRegistries(ctx context.Context, in Input, o *options, r *Report) {
	if in.NoPing {
		return
	}
	for i := range r.Registry.Targets {
		t := &r.Registry.Targets[i]
		pctx, cancel := context.WithTimeout(ctx, o.timeout)
		err := layers.PingRegistry(pctx, t.raw, t.Push, append(append([]layers.Option{}, in.RegistryOptions...), layers.WithResponseTimeout(o.timeout))...)
		cancel()
		if err != nil {
			t.Ping = redact.Line(err.Error())
			r.finding("registry "+t.Host, err)
			continue
		}
		t.Ping = "ok"
	}
}

// pingStore lists the store's prefix once with the credentials in use.
func pingStore(ctx context.Context, in Input, o *options, r *Report) {
	if in.Store == "" || in.NoPing {
		return
	}
	opts := append(append([]s3store.Option{}, in.StoreOptions...), s3store.WithRetry(1, 0), s3store.WithResponseTimeout(o.timeout))
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	st, err := s3store.Open(pctx, in.Store, opts...)
	if err == nil {
		err = st.Probe(pctx)
	}
	if err != nil {
		r.Store.Ping = redact.Line(err.Error())
		r.finding("store "+r.Store.URL, err)
		return
	}
	r.Store.Ping = "ok"
}

// checkKeyring reads the keyring of signature verification.
func checkKeyring(in Input, r *Report) {
	if in.Keyring == "" {
		return
	}
	r.Keyring = &Keyring{Path: in.Keyring}
	kr, err := pgpverify.ReadKeyring(in.Keyring)
	if err != nil {
		r.Keyring.Error = redact.Line(err.Error())
		r.problem(errdefs.KindOf(err), "signature keyring "+in.Keyring+": "+r.Keyring.Error)
		return
	}
	r.Keyring.Keys = len(kr.Keys())
}

// checkSparkSubmit checks that the spark-submit a submission would run
// is an executable file.
func checkSparkSubmit(in Input, r *Report) {
	if in.SparkSubmit == "" && !in.SparkSubmitNeeded {
		return
	}
	r.SparkSubmit = &SparkSubmit{Path: in.SparkSubmit}
	st, err := os.Stat(in.SparkSubmit)
	switch {
	case in.SparkSubmit == "":
		r.SparkSubmit.Error = "none found ($SPARK_HOME/bin/spark-submit, spark-submit on $PATH)"
	case err != nil:
		r.SparkSubmit.Error = redact.Line(err.Error())
	case st.IsDir() || st.Mode()&0o111 == 0:
		r.SparkSubmit.Error = "not an executable file"
	}
	if r.SparkSubmit.Error == "" {
		return
	}
	msg := "spark-submit " + r.SparkSubmit.Path + ": " + r.SparkSubmit.Error
	if in.SparkSubmitNeeded {
		r.problem(errdefs.NotFound, msg)
	} else {
		r.Warnings = append(r.Warnings, msg)
	}
}

// master probes the REST servers of a master.
func master(ctx context.Context, in Input, o *options) Master {
	m := Master{URL: redact.URL(in.Master), REST: []RESTProbe{}}
	for _, u := range in.RESTURLs {
		// Spark's REST server answers any path; an unknown submission's
		// status is the cheapest request it serves (200, or 400/404).
		a := netprobe.HTTP(ctx, o.client, http.MethodGet, strings.TrimSuffix(u, "/")+"/v1/submissions/status/prebake-doctor", o.timeout, nil)
		m.REST = append(m.REST, RESTProbe{URL: redact.URL(u), Answer: a})
	}
	return m
}

// store reports the AWS credential source of an s3:// store.
func store(ctx context.Context, in Input, timeout time.Duration) Store {
	s := Store{URL: redact.URL(in.Store)}
	if !strings.HasPrefix(in.Store, "s3://") && !strings.HasPrefix(in.Store, "s3a://") {
		return s
	}
	src, err := s3store.CredentialSource(ctx, timeout, in.StoreOptions...)
	if err != nil {
		s.Error = redact.Line(err.Error())
		return s
	}
	s.Source = src
	return s
}

// dockerConfig is the part of ~/.docker/config.json that says where
// credentials come from (never read: auth values).
type dockerConfig struct {
	Auths       map[string]json.RawMessage `json:"auths"`
	CredHelpers map[string]string          `json:"credHelpers"`
	CredsStore  string                     `json:"credsStore"`
}

// maxDockerConfig bounds the Docker config file read.
const maxDockerConfig = 4 << 20

// registry reports where registry credentials come from.
func registry(in Input) Registry {
	dir := in.DockerConfig
	if dir == "" {
		dir = os.Getenv("DOCKER_CONFIG")
	}
	if dir == "" {
		if h, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(h, ".docker")
		}
	}
	r := Registry{Explicit: in.RegistryAuth, DockerConfig: filepath.Join(dir, "config.json"), Registries: []string{}, Targets: []RegistryTarget{}}
	var cfg dockerConfig
	switch st, err := os.Stat(r.DockerConfig); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		r.Error = redact.Line(err.Error())
	case st.Size() > maxDockerConfig:
		r.Found, r.Error = true, fmt.Sprintf("larger than %d bytes: not read", maxDockerConfig)
	default:
		r.Found = true
		data, err := os.ReadFile(r.DockerConfig)
		if err == nil {
			err = json.Unmarshal(data, &cfg)
		}
		if err != nil {
			// json errors quote no value past a byte offset; say only the class.
			r.Error = "not a readable Docker config (JSON)"
		}
	}
	r.CredsStore = cfg.CredsStore
	hosts := map[string]bool{}
	for h := range cfg.Auths {
		hosts[registryHost(h)] = true
	}
	for h := range cfg.CredHelpers {
		hosts[registryHost(h)] = true
	}
	for h := range hosts {
		r.Registries = append(r.Registries, h)
	}
	sort.Strings(r.Registries)
	refs := in.ImageRefs
	if in.BaseImage != "" {
		refs = append(append([]string{}, refs...), in.BaseImage)
	}
	for i, ref := range refs {
		if ref == "" || strings.HasPrefix(ref, "oci:") {
			continue
		}
		t := RegistryTarget{Ref: redact.URL(ref), Host: refHost(ref), Push: i < len(in.ImageRefs), raw: ref}
		switch {
		case in.RegistryAuth:
			t.Source = "explicit"
		case helperFor(cfg.CredHelpers, t.Host) != "":
			t.Source = "credHelper:" + helperFor(cfg.CredHelpers, t.Host)
		case hasAuth(cfg.Auths, t.Host):
			t.Source = "auths"
		case cfg.CredsStore != "":
			t.Source = "credsStore:" + cfg.CredsStore
		default:
			t.Source = "anonymous"
		}
		r.Targets = append(r.Targets, t)
	}
	return r
}

func helperFor(m map[string]string, host string) string {
	for k, v := range m {
		if registryHost(k) == host {
			return v
		}
	}
	return ""
}

func hasAuth(m map[string]json.RawMessage, host string) bool {
	for k := range m {
		if registryHost(k) == host {
			return true
		}
	}
	return false
}

// dockerHub is how Docker Hub is keyed in a Docker config.
const dockerHub = "index.docker.io"

// registryHost is a Docker config key as a host ("https://index.docker.io/v1/"
// → index.docker.io).
func registryHost(key string) string {
	k := strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	if i := strings.IndexByte(k, '/'); i >= 0 {
		k = k[:i]
	}
	if k == "docker.io" || k == "registry-1.docker.io" {
		return dockerHub
	}
	return k
}

// refHost is the registry host of an image reference, as Docker reads it:
// the first component when it has a "." or ":" or is localhost, else
// Docker Hub.
func refHost(ref string) string {
	first, _, found := strings.Cut(ref, "/")
	if !found || (!strings.ContainsAny(first, ".:") && first != "localhost") {
		return dockerHub
	}
	return registryHost(first)
}

var (
	sparkCoreJar = regexp.MustCompile(`^spark-core_(2\.1[0-3]|3)-(\d[^/]*)\.jar$`)
	releaseLine  = regexp.MustCompile(`^Spark (\d[^\s]*)`)
)

// sparkHome reads the Spark line of a local Spark: jars/spark-core_*.jar's
// name, else the RELEASE file's first line.
func sparkHome(dir string) SparkHome {
	s := SparkHome{Path: dir}
	if dir == "" {
		return s
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		s.Error = "not a directory"
		return s
	}
	if names, err := filepath.Glob(filepath.Join(dir, "jars", "spark-core_*.jar")); err == nil {
		sort.Strings(names)
		for _, n := range names {
			if m := sparkCoreJar.FindStringSubmatch(filepath.Base(n)); m != nil {
				s.ScalaBinary, s.SparkVersion, s.From = m[1], m[2], "jars"
				return s
			}
		}
	}
	if f, err := os.Open(filepath.Join(dir, "RELEASE")); err == nil {
		buf := make([]byte, 512)
		n, _ := f.Read(buf)
		f.Close()
		line, _, _ := strings.Cut(string(buf[:n]), "\n")
		if m := releaseLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			s.SparkVersion, s.From = m[1], "RELEASE"
			return s
		}
	}
	s.Error = "no jars/spark-core_*.jar and no RELEASE file naming the Spark version"
	return s
}
