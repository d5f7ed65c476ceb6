package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/netprobe"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/pipeline/doctor"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit/k8s"
	"github.com/prebake/prebake/submit/rest"
)

// doctor's -o json is doctor.Report (documented in the README).

func newDoctorCmd(g *globals) *cobra.Command {
	var (
		f           resolveFlags
		s3          s3StoreFlags
		master      string
		restPort    int
		sparkHome   string
		imageTarget string
		base        string
		auth        string
		conf        []string
		noPing      bool
		timeout     time.Duration
	)
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the repositories, credentials, SPARK_HOME, ~/.m2 and the master a job depends on",
		Long: `doctor checks the environment without resolving anything and prints what it found:
  - each repository of the chain resolution would use (the same flags and prebake.yaml keys:
    --repositories, --settings, --ivy-settings, --no-default-repositories,
    $DEFAULT_ARTIFACT_REPOSITORY), with what it answered to one HEAD of its root (HTTP status,
    or the error class: dns, refused, timeout, tls, reset) and how long it took;
  - the registry credentials in use (--registry-auth or $PREBAKE_REGISTRY_AUTH, else the
    Docker config and its credential helpers; for --image-target, which one applies) and the
    store's AWS credential source (--store s3://…): where they come from, never their values;
  - $SPARK_HOME (or --spark-home) and its Spark line (jars/spark-core_*.jar, else RELEASE);
  - the module directories of ~/.m2/repository that hold a POM and no jar (a resolution of them
    fails, as Spark's does: remove the directory);
  - for a spark:// master (--master), its REST server (port 6066 unless --rest-port); for a
    k8s:// master, its API server (GET /version with the submission's credentials: --conf
    spark.kubernetes.*, $KUBECONFIG, the in-cluster service account) and, by one
    SelfSubjectAccessReview each, whether they may create and patch the pods, services and
    configmaps a submission creates (in spark.kubernetes.namespace, else the credentials');
  - the registry of --image-target (push) and --base (pull): its /v2/ ping and a token with
    the credentials in use; the store (--store, --endpoint): one list of its prefix;
  - with --verify-signatures, the keyring; the spark-submit a local or YARN job runs.
It exits 0 when everything the job needs answered, 69 when a service did not (or answered
5xx), else the code of the first problem: 77 for credentials refused or a permission
missing, 66 for a missing bucket, keyring or spark-submit. A 404 or 401/403 of a repository
is an answer (the server is up) and is reported; a repository that does not answer after one
that did is a warning (resolution goes on without it, as with spark-packages behind a
firewall). Every check runs: a finding never stops the others.`,
		Example: `  # the default chain (~/.m2, Central, spark-packages), SPARK_HOME and ~/.m2
  prebake doctor
  # the chain of a CI job, its standalone master and its store, as JSON
  prebake doctor --repositories https://nexus.example.com/repository/maven-public/ \
    --master spark://spark-master:7077 --store s3://team-bucket/jars -o json
  # a K8s job: the API server and its RBAC, the registry pushed to, the keyring
  prebake doctor --master k8s://https://kube.example.com:6443 --conf spark.kubernetes.namespace=jobs \
    --image-target registry.example.com/team/jobs --base apache/spark:3.5.7 --verify-signatures`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := checkOutput(g, outText, outJSON)
			if err != nil {
				return err
			}
			// A missing keyring is a finding of the report, not an abort.
			keyring := ""
			if f.verifySignatures {
				keyring, f.verifySignatures = f.keyring, false
				if keyring == "" {
					return exitcode.Errorf(exitcode.Usage, "--verify-signatures: needs --keyring FILE")
				}
			}
			req, err := f.request()
			if err != nil {
				return err
			}
			if auth == "" {
				auth = os.Getenv("PREBAKE_REGISTRY_AUTH")
			}
			if sparkHome == "" {
				sparkHome = os.Getenv("SPARK_HOME")
			}
			in := doctor.Input{
				Resolve:      req,
				SparkHome:    sparkHome,
				Master:       master,
				RegistryAuth: auth != "",
				Store:        s3.store,
				BaseImage:    base,
				Keyring:      keyring,
				NoPing:       noPing,
			}
			if in.RegistryOptions, err = (&registryFlags{auth: auth}).options(nil); err != nil {
				return err
			}
			// The spark-submit a local, YARN or K8s (spark-submit submitter)
			// job runs; a REST master needs none.
			if master != "" && !strings.HasPrefix(master, "spark://") && !strings.HasPrefix(master, "mesos://") {
				in.SparkSubmit = sparkSubmitBin("", func(k string) string {
					if k == "SPARK_HOME" {
						return sparkHome
					}
					return os.Getenv(k)
				}, exec.LookPath)
				in.SparkSubmitNeeded = !strings.HasPrefix(master, "k8s://")
			}
			if strings.HasPrefix(master, "k8s://") {
				kc, err := confMap(conf)
				if err != nil {
					return err
				}
				in.Kube = kubeProbe(master, kc)
			}
			if strings.HasPrefix(master, "spark://") || strings.HasPrefix(master, "mesos://") {
				var ropts []rest.Option
				if restPort > 0 {
					ropts = append(ropts, rest.WithPort(restPort))
				}
				c, err := rest.NewClient(master, ropts...)
				if err != nil {
					return err
				}
				in.RESTURLs = c.Masters()
			}
			if imageTarget != "" {
				in.ImageRefs = []string{imageTarget}
			}
			if s3.store != "" {
				if in.StoreOptions, err = s3.options(nil); err != nil {
					return err
				}
			}
			rep, err := doctor.Check(cmd.Context(), in, doctor.WithTimeout(timeout))
			if err != nil {
				return err
			}
			if out == outJSON {
				data, err := json.Marshal(rep)
				if err != nil {
					return err
				}
				if _, err := cmd.OutOrStdout().Write(append(data, '\n')); err != nil {
					return err
				}
			} else {
				printDoctor(cmd.OutOrStdout(), rep, in)
			}
			return rep.Err()
		},
	}
	f.add(c.Flags(), "packages", "exclude-packages", "conflict", "lock", "frozen", "offline", "cache", "checksum-policy")
	s3.add(c.Flags())
	c.Flags().StringVar(&master, "master", "", "the master: spark:// (or mesos://), its REST server is probed; k8s://, its API server and the permissions a submission needs; local or yarn, the spark-submit it runs")
	c.Flags().StringArrayVar(&conf, "conf", nil, "a Spark property key=value of the job (repeatable): k8s:// reads spark.kubernetes.namespace, spark.kubernetes.context and the spark.kubernetes.authenticate.submission.* credentials")
	c.Flags().StringVar(&base, "base", "", "the base image a bake reads: its registry is pinged with pull scope")
	c.Flags().BoolVar(&noPing, "no-ping", false, "report where registry and store credentials come from without probing the registries and the store")
	c.Flags().IntVar(&restPort, "rest-port", 0, "the master's REST port (default 6066 when the URL says 7077 or no port)")
	c.Flags().StringVar(&sparkHome, "spark-home", "", "the local Spark to check (default $SPARK_HOME)")
	c.Flags().StringVar(&imageTarget, "image-target", "", "the registry repository jobs push to (default $PREBAKE_IMAGE_TARGET): which credentials apply to it, and whether its registry grants them push")
	c.Flags().StringVar(&auth, "registry-auth", "", "registry credentials user:password in use (default $PREBAKE_REGISTRY_AUTH); only whether they are given is reported")
	durationVar(c.Flags(), &timeout, "timeout", resolver.DefaultProbeTimeout, "bound of each probe (one request per repository, REST server, registry, store, and API server request)")
	return c
}

// confMap reads --conf key=value pairs.
func confMap(kvs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, exitcode.Errorf(exitcode.Usage, "--conf %q: want key=value", redact.ConfArg(kv))
		}
		m[k] = v
	}
	return m, nil
}

// kubeProbe is doctor's K8s check: submit/k8s probes the API server
// (client-go stays there) for the permissions a submission needs.
func kubeProbe(master string, conf map[string]string) func(context.Context, time.Duration) (*doctor.Kube, error) {
	return func(ctx context.Context, timeout time.Duration) (*doctor.Kube, error) {
		p, err := k8s.ProbeAPIServer(ctx, master, conf, k8s.SubmitNeeds, timeout)
		if err != nil {
			return nil, err
		}
		k := &doctor.Kube{APIServer: p.APIServer, Source: p.Source, Namespace: p.Namespace, Reachable: p.Reachable,
			Version: p.Version, Error: p.Error, Warning: p.Warning, Kind: p.Kind, Access: []string{}, Denied: []string{}}
		for _, a := range p.Access {
			n := a.Verb + " " + a.Resource
			k.Access = append(k.Access, n)
			if !a.Allowed {
				k.Denied = append(k.Denied, n)
			}
		}
		return k, nil
	}
}

// printDoctor prints a Report as text.
func printDoctor(w io.Writer, r *doctor.Report, in doctor.Input) {
	fmt.Fprintln(w, "repositories (in chain order):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range r.Repositories {
		fmt.Fprintf(tw, "  %s\t%s\t%dms\t%s\n", p.Name, p.URL, p.Millis, answerText(p.Answer, p.Auth))
	}
	tw.Flush()

	fmt.Fprintln(w, "registry credentials:")
	if r.Registry.Explicit {
		fmt.Fprintln(w, "  --registry-auth (or $PREBAKE_REGISTRY_AUTH) is given: used for the registry pushed to or read")
	}
	dc := "not found"
	if r.Registry.Found {
		dc = "found"
		if len(r.Registry.Registries) > 0 {
			dc += "; registries: " + strings.Join(r.Registry.Registries, ", ")
		}
		if r.Registry.CredsStore != "" {
			dc += "; credsStore: " + r.Registry.CredsStore
		}
	}
	if r.Registry.Error != "" {
		dc += " (" + r.Registry.Error + ")"
	}
	fmt.Fprintf(w, "  Docker config %s: %s\n", r.Registry.DockerConfig, dc)
	for _, t := range r.Registry.Targets {
		ping := ""
		if t.Ping != "" {
			scope := "pull"
			if t.Push {
				scope = "push"
			}
			ping = "; " + scope + ": " + t.Ping
		}
		fmt.Fprintf(w, "  %s (%s): %s%s\n", t.Ref, t.Host, t.Source, ping)
	}

	switch {
	case r.Store.URL == "":
		fmt.Fprintln(w, "store: none given (--store, store: in prebake.yaml or $PREBAKE_STORE)")
	case r.Store.Error != "":
		fmt.Fprintf(w, "store %s: %s\n", r.Store.URL, r.Store.Error)
	case r.Store.Source != "":
		fmt.Fprintf(w, "store %s: AWS credentials from %s\n", r.Store.URL, r.Store.Source)
	default:
		fmt.Fprintf(w, "store %s: a local directory, no credentials\n", r.Store.URL)
	}
	if r.Store.Ping != "" {
		fmt.Fprintf(w, "store %s: list: %s\n", r.Store.URL, r.Store.Ping)
	}
	if k := r.Keyring; k != nil {
		if k.Error != "" {
			fmt.Fprintf(w, "keyring %s (--verify-signatures): %s; add keys with: prebake keys add --keyring %s KEYFILE\n", k.Path, k.Error, k.Path)
		} else {
			fmt.Fprintf(w, "keyring %s: %d key(s)\n", k.Path, k.Keys)
		}
	}
	if s := r.SparkSubmit; s != nil {
		if s.Error != "" {
			fmt.Fprintf(w, "spark-submit %s: %s\n", s.Path, s.Error)
		} else {
			fmt.Fprintf(w, "spark-submit %s: an executable file\n", s.Path)
		}
	}

	s := r.SparkHome
	switch {
	case s.Path == "":
		fmt.Fprintln(w, "SPARK_HOME: not set (set it, or give --spark-home, to check a local Spark)")
	case s.Error != "":
		fmt.Fprintf(w, "SPARK_HOME %s: %s\n", s.Path, s.Error)
	case s.ScalaBinary != "":
		fmt.Fprintf(w, "SPARK_HOME %s: Spark %s, Scala %s (from %s)\n", s.Path, s.SparkVersion, s.ScalaBinary, s.From)
	default:
		fmt.Fprintf(w, "SPARK_HOME %s: Spark %s (from %s)\n", s.Path, s.SparkVersion, s.From)
	}

	if r.M2.Dir != "" {
		if len(r.M2.POMOnly) == 0 {
			fmt.Fprintf(w, "~/.m2 %s: no module with a POM and no jar\n", r.M2.Dir)
		} else {
			fmt.Fprintf(w, "~/.m2 %s: %d module(s) with a POM and no jar (remove the directory, or leave ~/.m2 out with --no-default-repositories --repositories …):\n", r.M2.Dir, len(r.M2.POMOnly))
			for _, e := range r.M2.POMOnly {
				fmt.Fprintf(w, "  %s  %s\n", e.Module, e.Dir)
			}
		}
	}

	if k := r.Kube; k != nil {
		switch {
		case !k.Reachable:
			fmt.Fprintf(w, "master %s: API server %s: not answering: %s\n", r.Master.URL, k.APIServer, k.Error)
		case k.Error != "":
			fmt.Fprintf(w, "master %s: API server %s (%s): %s\n", r.Master.URL, k.APIServer, k.Version, k.Error)
		default:
			fmt.Fprintf(w, "master %s: API server %s (%s), credentials from %s, namespace %s: %d of %d permission(s) granted\n",
				r.Master.URL, k.APIServer, k.Version, k.Source, k.Namespace, len(k.Access)-len(k.Denied), len(k.Access))
			if len(k.Denied) > 0 {
				fmt.Fprintf(w, "  denied: %s\n", strings.Join(k.Denied, ", "))
			}
		}
	} else if r.Master.URL != "" {
		if len(r.Master.REST) == 0 {
			fmt.Fprintf(w, "master %s: not a spark:// or mesos:// master; no REST server to probe\n", r.Master.URL)
		}
		for _, p := range r.Master.REST {
			fmt.Fprintf(w, "master %s: REST server %s: %s in %dms\n", r.Master.URL, p.URL, answerText(p.Answer, false), p.Millis)
		}
	}
	if r.M2.Truncated {
		fmt.Fprintf(w, "~/.m2: the scan stopped at its bound; entries past it are not listed\n")
	}
	// Every warning is in a section above; the last line sums up.
	switch {
	case r.OK && len(r.Warnings) == 0:
		fmt.Fprintln(w, "ok: everything probed answered, no warning")
	case r.OK:
		fmt.Fprintf(w, "ok: everything probed answered; %d warning(s) above\n", len(r.Warnings))
	}
	if len(r.Unreachable) > 0 {
		fmt.Fprintf(w, "not answering: %s\n", strings.Join(r.Unreachable, ", "))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
}

// answerText is one probe's answer in words.
func answerText(a netprobe.Answer, auth bool) string {
	s := a.Status
	if a.HTTPStatus != 0 {
		s += fmt.Sprintf(" (HTTP %d)", a.HTTPStatus)
	}
	switch a.Status {
	case netprobe.StatusAnswered:
		s += ": up"
	case netprobe.StatusDenied:
		s += ": up, credentials refused or needed"
	case netprobe.StatusAbsent:
		s += ": no such directory"
	case netprobe.StatusUnreachable:
		s += ": " + a.ErrorClass
		if a.Error != "" {
			s += ": " + a.Error
		}
	}
	if auth {
		s += ", with credentials"
	}
	return s
}
