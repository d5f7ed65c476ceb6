package cmd

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/pipeline/upgrade"
	"github.com/prebake/prebake/resolver"
)

func newUpgradeReportCmd(g *globals) *cobra.Command {
	var f resolveFlags
	var reg registryFlags
	var from, to, base, manifest string
	var check bool
	c := &cobra.Command{
		Use:     "upgrade-report --to LINE [--from VERSION] [--base IMAGE] [--check] [--packages ...|--lock FILE|--manifest FILE] [-- <spark-submit args>]",
		Aliases: []string{"plan-upgrade"},
		Short:   "Tell exactly what changes when a job moves to another Spark line",
		Long: `upgrade-report (also: plan-upgrade; named for what a platform team asks before
moving jobs to a new Spark line — "what changes?", a report, changing nothing) takes a
job's inputs — --packages, a --lock, its spark-submit argv after --, or its kubeflow
spark-operator SparkApplication (--manifest FILE: spec.deps.packages, .repositories and
.excludePackages, else the sparkConf spark.jars.* keys; spec.sparkVersion, else the
version of spec.image's tag; the image is reported) — and a target Spark line (--to 4.0,
or a version, 4.0.1), and reports:

  - the coordinates for the target line: the Scala suffix (2.12 → 2.13 when the
    target's Scala changes: 4.x is 2.13 only), Spark's own modules (org.apache.spark)
    moved to the target's version (with a line, the newest release of it the
    repositories have), and each third-party artifact with no build for the target
    at its version, with the newest version that has one (maven-metadata.xml through
    the repository chain); that one is used for the target's resolution. An artifact
    whose name carries the Spark line (iceberg-spark-runtime-3.5_2.12) moves to the
    target line's (iceberg-spark-runtime-4.0_2.13); a build whose POM depends on
    another line's Spark (delta-spark_2.13:3.3.2 on Spark 3.5) has no build for the
    target either, and moves to the newest version built for the target line;
  - both sets resolved with their line's Ivy (as --spark-version selects it), and
    the jars that differ (added, removed, changed versions) with the paths that
    brought each in (as prebake why shows them);
  - with --base IMAGE, the target set against the target base image: the jars the
    baked image would shadow (another version) or duplicate, and the Scala, Spark
    and Hadoop mismatches bake image --strict fails on (the check bakes into a
    scratch OCI layout that is removed; nothing is pushed);
  - for a k8s:// cluster-mode argv, the fields of the objects the two lines'
    spark-submit would create that differ (the native submitter's rules, dry-run).

The job's current Spark version is --from, else the manifest's, else its
org.apache.spark modules'.
Nothing is written: --lock is read, never updated.

A target set that does not resolve (a module the target's builds name is missing from
the repositories, as spark-submit would fail on it) is reported as a problem, with no
jar changes.

Exit codes: 0; with --check, 66 when an artifact has no build for the target at
its version or the target set does not resolve, else 65 on a mismatch (the base
image's line, Scala or Hadoop); 64 for a usage error, 66 for a coordinate of the
current set that does not resolve.`,
		Example: `  prebake upgrade-report --to 4.0 --packages org.apache.spark:spark-avro_2.12:3.5.1,org.apache.hadoop:hadoop-aws:3.3.4
  prebake upgrade-report --to 4.0.1 --lock prebake.lock --from 3.5.1 -o json
  prebake upgrade-report --to 4.0 --manifest examples/spark-application.yaml
  prebake upgrade-report --to 4.0 --base apache/spark:4.0.1 --check -- \
    --master k8s://https://k8s.example:6443 --deploy-mode cluster \
    --packages org.apache.spark:spark-avro_2.12:3.5.1 --class com.example.Main local:///opt/app.jar`,
		RunE: func(c *cobra.Command, args []string) error {
			out, err := checkOutput(g, outText, outJSON)
			if err != nil {
				return err
			}
			if to == "" {
				return exitcode.Errorf(exitcode.Usage, "upgrade-report: needs --to LINE (e.g. 4.0)")
			}
			var argv []string
			if at := c.ArgsLenAtDash(); at >= 0 {
				argv = args[at:]
				args = args[:at]
			}
			if len(args) > 0 {
				return exitcode.Errorf(exitcode.Usage, "upgrade-report: unexpected argument %q (the job's spark-submit argv goes after --)", args[0])
			}
			var job *upgrade.ManifestJob
			if manifest != "" {
				name, data, err := readManifest(c, manifest)
				if err != nil {
					return err
				}
				if job, err = upgrade.ReadSparkApplication(c.Context(), name, data); err != nil {
					return err
				}
			}
			var req resolver.Request
			if (len(argv) > 0 || job != nil) && f.lock == "" && !hasCoordinate(f.packages) {
				req, err = f.request()
			} else {
				req, err = f.lockRequest(c.Flags(), "upgrade-report")
			}
			if err != nil {
				return err
			}
			rep := g.reporter(c.ErrOrStderr())
			bopts, err := reg.options(rep)
			if err != nil {
				return err
			}
			r, err := upgrade.Plan(c.Context(), upgrade.Input{Request: req, Argv: argv, Environ: os.Environ(), Manifest: job,
				From: from, To: to, Base: base, BaseOptions: bopts}, resolver.WithLogger(rep), resolver.WithProgress(rep))
			rep.Wait()
			if err != nil {
				return err
			}
			if out == outJSON {
				err = printJSON(c.OutOrStdout(), r)
			} else {
				err = upgrade.WriteText(c.OutOrStdout(), r)
			}
			if err != nil {
				return exitcode.New(exitcode.Internal, err)
			}
			if check {
				return r.Breaks()
			}
			return nil
		},
	}
	f.add(c.Flags(), "frozen")
	reg.add(c.Flags())
	c.Flags().StringVar(&to, "to", "", "the target Spark line (4.0) or version (4.0.1)")
	c.Flags().StringVar(&from, "from", "", "the job's current Spark version (default: its org.apache.spark modules'; 3.5 needs the patch)")
	c.Flags().StringVar(&manifest, "manifest", "", "read the job from a kubeflow spark-operator SparkApplication/ScheduledSparkApplication (YAML with one application; - for stdin): its packages, Spark version and image")
	c.Flags().StringVar(&base, "base", "", "the target base image (registry reference or oci:PATH:tag): report what the baked image would shadow or duplicate, and line mismatches")
	c.Flags().BoolVar(&check, "check", false, "exit 66 when an artifact has no build for the target, 65 on a mismatch with the base image")
	return c
}
