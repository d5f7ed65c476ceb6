package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/pipeline/outdated"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/resolver/repo"
)

func newOutdatedCmd(g *globals) *cobra.Command {
	var f resolveFlags
	var write, withinSparkLine bool
	var set []string
	var base, sparkHome string
	var reg registryFlags
	c := &cobra.Command{
		Use:   "outdated --lock FILE",
		Short: "List newer versions of a lock's direct packages, and re-lock with them",
		Long: `outdated reads the versions each direct package of the lock has in the
repositories (maven-metadata.xml, fetched fresh, or from the cache with
--offline) and lists the newer ones: never a SNAPSHOT, and with the same
Scala suffix when the version carries one (spark-packages' 0.8.4-spark3.5-s_2.12).
--within-spark-line keeps org.apache.spark modules (and versions naming a
spark3.5-style line) on their own Spark line, Hadoop connectors
(hadoop-aws, …, and the AWS SDK bundle hadoop-aws pins) on the Hadoop of
the lock's other jars (hadoop-client-api), and versions with a Scala suffix
on that Scala: nothing that bake --strict would refuse. With --base, the
Spark, Scala and Hadoop lines are the base image's (Spark modules go no
further than its Spark release).

--write re-locks with the newest version of every outdated package; --set
g:a:v (repeatable) re-locks with the versions chosen, alone or on top of
--write. The lock's excludes and conflict mode are kept.`,
		Example: `  prebake outdated --lock prebake.lock
  prebake outdated --lock prebake.lock --within-spark-line -o json
  prebake outdated --lock prebake.lock --within-spark-line --base apache/spark:3.5.1 --write
  prebake outdated --lock prebake.lock --write
  prebake outdated --lock prebake.lock --set io.delta:delta-spark_2.12:3.3.0`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runOutdated(c, g, &f, outdatedOptions{write: write, set: set, withinSparkLine: withinSparkLine, base: base, sparkHome: sparkHome, registry: &reg})
		},
	}
	f.add(c.Flags(), "packages", "exclude-packages", "conflict", "frozen")
	c.Flags().BoolVar(&write, "write", false, "re-lock with the newest version of every outdated package")
	c.Flags().StringArrayVar(&set, "set", nil, "re-lock with this version of a direct package, g:a:v (repeatable)")
	c.Flags().BoolVar(&withinSparkLine, "within-spark-line", false, "keep org.apache.spark modules (and spark3.5-style versions) on their Spark line, Hadoop connectors on the Hadoop of the lock (or --base), Scala suffixes on its Scala")
	c.Flags().StringVar(&base, "base", "", "the base image (registry reference or oci:PATH[:tag]) whose Spark, Scala and Hadoop to keep to (implies --within-spark-line)")
	c.Flags().StringVar(&sparkHome, "spark-home", "", "where the --base image keeps Spark (default /opt/spark)")
	reg.add(c.Flags())
	return c
}

type outdatedOptions struct {
	write, withinSparkLine bool
	set                    []string
	base, sparkHome        string
	registry               *registryFlags
}

func runOutdated(c *cobra.Command, g *globals, f *resolveFlags, opt outdatedOptions) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if f.lock == "" {
		return exitcode.Errorf(exitcode.Usage, "outdated: needs --lock FILE")
	}
	in := outdated.Input{LockPath: f.lock, WithinSparkLine: opt.withinSparkLine, Base: opt.base, SparkHome: opt.sparkHome,
		Latest: opt.write, UserAgent: repo.UserAgent(buildVersion())}
	for _, s := range opt.set {
		cs, err := resolver.ParseCoordinates(s)
		if err != nil || len(cs) != 1 {
			return exitcode.Errorf(exitcode.Usage, "--set %q: want one group:artifact:version", s)
		}
		in.Set = append(in.Set, cs[0])
	}
	if in.Request, err = f.request(); err != nil {
		return err
	}
	if opt.base != "" {
		if in.BaseOptions, err = opt.registry.options(nil); err != nil {
			return err
		}
	}
	rep := g.reporter(c.ErrOrStderr())
	r, err := outdated.Run(c.Context(), in, outdated.WithLogger(rep), outdated.WithProgress(rep))
	rep.Wait()
	var ph *outdated.PythonHalfError
	if errors.As(err, &ph) {
		return exitcode.Errorf(exitcode.Usage, "outdated --write and --set re-lock jars only, and %s has a Python half (%d wheels) that they would drop: list with prebake outdated --lock %s, then change the Python requirements and run prebake resolve --py-requirements FILE --lock %s again", ph.Lock, ph.Wheels, ph.Lock, ph.Lock)
	}
	if err != nil {
		return err
	}
	if r.UnlistedWheels > 0 {
		rep.Printf("note: --offline: the lock's %d wheel(s) are not listed (their index is not asked)", r.UnlistedWheels)
	}
	if r.Written {
		rep.Printf("lockfile %s written: %d jars, lock %s", f.lock, r.Jars, r.LockHash)
	}
	res := jsondoc.Outdated{Lock: r.Lock, Packages: make([]jsondoc.OutdatedPackage, len(r.Packages)), Written: r.Written, LockHash: r.LockHash}
	for i, p := range r.Packages {
		res.Packages[i] = jsondoc.OutdatedPackage(p)
	}
	if out == outJSON {
		return printJSON(c.OutOrStdout(), res)
	}
	return writeOutdatedText(c.OutOrStdout(), res)
}

func writeOutdatedText(w io.Writer, res jsondoc.Outdated) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tCURRENT\tLATEST\tNEWER")
	for _, p := range res.Packages {
		latest, newer := p.Latest, strings.Join(p.Newer, ", ")
		if latest == "" {
			latest, newer = "-", "(up to date)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Module, p.Current, latest, newer)
	}
	if err := tw.Flush(); err != nil {
		return exitcode.New(exitcode.Internal, err)
	}
	return nil
}
