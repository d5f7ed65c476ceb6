package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/netprobe"
	"github.com/prebake/prebake/pipeline/doctor"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
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
		auth        string
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
  - for a spark:// master (--master), its REST server (port 6066 unless --rest-port).
It exits 0 when every repository and REST server answered, 69 when one did not (or
answered 5xx); a 404 or 401/403 is an answer (the server is up) and is reported.`,
		Example: `  # the default chain (~/.m2, Central, spark-packages), SPARK_HOME and ~/.m2
  prebake doctor
  # the chain of a CI job, its standalone master and its store, as JSON
  prebake doctor --repositories https://nexus.example.com/repository/maven-public/ \
    --master spark://spark-master:7077 --store s3://team-bucket/jars -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := checkOutput(g, outText, outJSON)
			if err != nil {
				return err
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
				if err := s3.check(); err != nil {
					return err
				}
				in.StoreOptions = []s3store.Option{s3store.WithRegion(s3.region)}
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
			if !rep.OK {
				return errdefs.Errorf(errdefs.Unavailable, "doctor: not answering: %s", strings.Join(rep.Unreachable, ", "))
			}
			return nil
		},
	}
	f.add(c.Flags(), "packages", "exclude-packages", "conflict", "lock", "frozen", "offline", "cache", "checksum-policy")
	s3.add(c.Flags())
	c.Flags().StringVar(&master, "master", "", "a spark:// (or mesos://) master whose REST server to probe")
	c.Flags().IntVar(&restPort, "rest-port", 0, "the master's REST port (default 6066 when the URL says 7077 or no port)")
	c.Flags().StringVar(&sparkHome, "spark-home", "", "the local Spark to check (default $SPARK_HOME)")
	c.Flags().StringVar(&imageTarget, "image-target", "", "the registry repository jobs push to (default $PREBAKE_IMAGE_TARGET): which credentials apply to it")
	c.Flags().StringVar(&auth, "registry-auth", "", "registry credentials user:password in use (default $PREBAKE_REGISTRY_AUTH); only whether they are given is reported")
	durationVar(c.Flags(), &timeout, "timeout", resolver.DefaultProbeTimeout, "bound of each probe (one request per repository and REST server)")
	return c
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
		fmt.Fprintf(w, "  %s (%s): %s\n", t.Ref, t.Host, t.Source)
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

	if r.Master.URL != "" {
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
		fmt.Fprintln(w, "ok: every repository answered, no warning")
	case r.OK:
		fmt.Fprintf(w, "ok: every repository answered; %d warning(s) above\n", len(r.Warnings))
	default:
		fmt.Fprintf(w, "not answering: %s\n", strings.Join(r.Unreachable, ", "))
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
