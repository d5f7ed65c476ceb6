package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/prebake/prebake/internal/revision"
	"github.com/prebake/prebake/lock"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/resolver"
	blobcache "github.com/prebake/prebake/resolver/cache"
	"github.com/prebake/prebake/resolver/pypi"
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
	lockPath               string
}

func runOutdated(c *cobra.Command, g *globals, f *resolveFlags, opt outdatedOptions) error {
	out, err := checkOutput(g, outText, outJSON)
	if err != nil {
		return err
	}
	if f.lock == "" {
		return exitcode.Errorf(exitcode.Usage, "outdated: needs --lock FILE")
	}
	lf, err := lock.Read(f.lock)
	if err != nil {
		return err
	}
	if lf.HasPython() && (opt.write || len(opt.set) > 0) {
		return exitcode.Errorf(exitcode.Usage, "outdated --write and --set re-lock jars only, and %s has a Python half (%d wheels) that they would drop: list with prebake outdated --lock %s, then change the Python requirements and run prebake resolve --py-requirements FILE --lock %s again", f.lock, len(lf.Wheels()), f.lock, f.lock)
	}
	var direct []resolver.Coordinate
	for _, p := range lf.Inputs.Packages {
		cs, err := resolver.ParseCoordinates(p)
		if err != nil {
			return fmt.Errorf("lockfile %s: packages: %w", f.lock, err)
		}
		direct = append(direct, cs...)
	}
	chosen := map[string]string{} // g:a → version, from --set
	for _, s := range opt.set {
		cs, err := resolver.ParseCoordinates(s)
		if err != nil || len(cs) != 1 {
			return exitcode.Errorf(exitcode.Usage, "--set %q: want one group:artifact:version", s)
		}
		m := cs[0].Group + ":" + cs[0].Artifact
		if !slices.ContainsFunc(direct, func(d resolver.Coordinate) bool { return d.Group+":"+d.Artifact == m }) {
			return exitcode.Errorf(exitcode.Usage, "--set %s: %s is not a direct package of %s", s, m, f.lock)
		}
		chosen[m] = cs[0].Version
	}

	req, err := f.request()
	if err != nil {
		return err
	}
	req.LockPath, req.Frozen = "", false
	// Fresh metadata: the cache's index would give what it saw last. With
	// --offline, what the cache has is all there is.
	vreq := req
	if !req.Offline {
		tmp, err := os.MkdirTemp("", "prebake-outdated-")
		if err != nil {
			return exitcode.New(exitcode.CantCreate, err)
		}
		defer os.RemoveAll(tmp)
		vreq.CacheDir = tmp
	}
	rep := g.reporter(c.ErrOrStderr())
	// A lock of wheels alone has no Maven package to ask about.
	var src resolver.Source
	if len(direct) > 0 || !lf.HasPython() {
		if src, err = resolver.NewSource(c.Context(), vreq, resolver.WithLogger(rep)); err != nil {
			return err
		}
	}
	lines := sparkLines{}
	opt.lockPath = f.lock
	if opt.withinSparkLine || opt.base != "" {
		if lines, err = linesOf(c, lf, opt, rep); err != nil {
			return err
		}
	}
	// A version changes nothing of an artifact's Scala suffix: say so.
	for _, d := range direct {
		if m := artifactScalaRe.FindStringSubmatch(d.Artifact); m != nil && lines.scala != "" && m[1] != lines.scala {
			rep.Printf("warning: %s:%s is built for Scala %s but the base has Scala %s; outdated changes versions, not artifacts: use %s_%s", d.Group, d.Artifact, m[1], lines.scala, strings.TrimSuffix(d.Artifact, "_"+m[1]), lines.scala)
		}
	}
	res := jsondoc.Outdated{Lock: f.lock, Packages: []jsondoc.OutdatedPackage{}}
	for _, d := range direct {
		vs, err := src.Versions(c.Context(), d.Group, d.Artifact)
		if err != nil {
			return err
		}
		newer := newerVersions(d.Group, d.Artifact, d.Version, vs, lines)
		p := jsondoc.OutdatedPackage{Module: d.Group + ":" + d.Artifact, Current: d.Version, Newer: newer}
		if len(newer) > 0 {
			p.Latest = newer[len(newer)-1]
		}
		res.Packages = append(res.Packages, p)
	}
	if lf.HasPython() {
		wheels, err := outdatedWheels(c.Context(), lf, req.Offline, rep)
		if err != nil {
			return err
		}
		res.Packages = append(res.Packages, wheels...)
	}

	if opt.write || len(chosen) > 0 {
		pick := map[string]string{}
		for _, p := range res.Packages {
			if opt.write && p.Latest != "" {
				pick[p.Module] = p.Latest
			}
		}
		for m, v := range chosen {
			pick[m] = v
		}
		var pkgs []string
		for _, p := range lf.Inputs.Packages {
			cs, _ := resolver.ParseCoordinates(p)
			parts := make([]string, len(cs))
			for i, co := range cs {
				if v, ok := pick[co.Group+":"+co.Artifact]; ok {
					co.Version = v
				}
				parts[i] = co.String()
			}
			pkgs = append(pkgs, strings.Join(parts, ","))
		}
		req.Packages, req.Excludes, req.Conflict, req.LockPath = pkgs, lf.Inputs.Excludes, lf.Inputs.Conflict, f.lock
		r, err := resolver.Resolve(c.Context(), req, resolver.WithLogger(rep), resolver.WithProgress(rep))
		rep.Wait()
		if err != nil {
			return err
		}
		res.Written, res.LockHash = true, r.Lock.Hash()
		rep.Printf("lockfile %s written: %d jars, lock %s", f.lock, len(r.Lock.Jars()), r.Lock.Hash())
	}
	rep.Wait()
	if out == outJSON {
		return printJSON(c.OutOrStdout(), res)
	}
	return writeOutdatedText(c.OutOrStdout(), res)
}

// outdatedWheels lists the newer versions of the lock's direct wheels
// (those a line of inputs.python.requirements names; every wheel when none
// does) on the machine's indexes that have a wheel for the lock's target,
// as modules "pypi/<name>". Offline, the index is not asked: a note says
// the wheels were left out.
func outdatedWheels(ctx context.Context, lf *lock.File, offline bool, rep *progress.Reporter) ([]jsondoc.OutdatedPackage, error) {
	wheels, py := lf.Wheels(), lf.Inputs.Python
	if len(wheels) == 0 || py == nil {
		return nil, nil
	}
	if offline {
		rep.Printf("note: --offline: the lock's %d wheel(s) are not listed (their index is not asked)", len(wheels))
		return nil, nil
	}
	if len(py.Platforms) == 0 {
		return nil, exitcode.Errorf(exitcode.DataErr, "lockfile: inputs.python has no platform")
	}
	target, err := pipeline.ParsePythonTarget(py.Version, py.Platforms[0])
	if err != nil {
		return nil, exitcode.Errorf(exitcode.DataErr, "lockfile: inputs.python: %v", err)
	}
	cfg, err := pypi.LoadIndexConfig(ctx)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "prebake-outdated-py-")
	if err != nil {
		return nil, exitcode.New(exitcode.CantCreate, err)
	}
	defer os.RemoveAll(tmp)
	bc, err := blobcache.Open(tmp, false, nil)
	if err != nil {
		return nil, err
	}
	cl, err := pypi.NewClient(cfg, pypi.WithUserAgent(repo.UserAgent(buildVersion())), pypi.WithLogger(rep))
	if err != nil {
		return nil, err
	}
	r, err := pypi.NewResolver(cfg, bc, pypi.WithIndexClient(cl))
	if err != nil {
		return nil, err
	}
	direct := map[string]bool{}
	for _, s := range py.Requirements {
		if q, err := pypi.ParseRequirement(s); err == nil {
			direct[pypi.CanonicalName(q.Name)] = true
		}
	}
	if !slices.ContainsFunc(wheels, func(w lock.Artifact) bool { return direct[w.Name] }) {
		direct = nil // a lock input (pylock.toml, uv.lock) names no package: every wheel
	}
	var out []jsondoc.OutdatedPackage
	for _, w := range wheels {
		if direct != nil && !direct[w.Name] {
			continue
		}
		cur, err := pypi.ParseVersion(w.Version)
		if err != nil {
			return nil, exitcode.Errorf(exitcode.DataErr, "lockfile: wheel %s: %v", w.File, err)
		}
		vs, err := r.Versions(ctx, w.Name, target, cur.IsPrerelease())
		if err != nil {
			return nil, err
		}
		p := jsondoc.OutdatedPackage{Module: "pypi/" + w.Name, Current: w.Version}
		for _, v := range vs {
			if v.Compare(cur) > 0 {
				p.Newer = append(p.Newer, v.String())
			}
		}
		if len(p.Newer) > 0 {
			p.Latest = p.Newer[len(p.Newer)-1]
		}
		out = append(out, p)
	}
	return out, nil
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

var (
	// scalaTagRe is a Scala binary suffix at the end of a version
	// (spark-packages: 0.8.4-spark3.5-s_2.12; others: 1.0_2.13).
	scalaTagRe = regexp.MustCompile(`(?:s_|_)(2\.1[0-3]|3)$`)
	// sparkLineRe is a Spark line named in a version (0.8.4-spark3.5-s_2.12).
	sparkLineRe = regexp.MustCompile(`spark(\d+\.\d+)`)
	// artifactScalaRe is the Scala suffix of an artifact id (delta-spark_2.12).
	artifactScalaRe = regexp.MustCompile(`_(2\.1[0-3]|3)$`)
)

// sparkLines is what --within-spark-line keeps a package on; the zero
// value keeps nothing (every newer version is listed).
type sparkLines struct {
	within bool
	// spark is the Spark version of the base (--base) or of the lock's
	// spark-core; "" is each module's own line. capSpark (--base): no
	// Spark module newer than spark.
	spark    string
	capSpark bool
	// scala is the Scala binary of the base or the lock ("" is each
	// version's own suffix); hadoop its Hadoop release (hadoop-client-api),
	// "" when unknown: a Hadoop connector, and the AWS SDK bundle
	// hadoop-aws pins, then stays where it is.
	scala, hadoop string
}

// awsBundles are the AWS SDK bundles hadoop-aws pins (v1 up to Hadoop
// 3.3, v2 from 3.4): they follow hadoop-aws, never the newest release.
var awsBundles = map[string]bool{"com.amazonaws:aws-java-sdk-bundle": true, "software.amazon.awssdk:bundle": true}

// linesOf reads the lines to keep to: the base image's (--base) else the
// lock's jars' (spark-core, scala-library, hadoop-client-api), read as a
// bake reads a base's.
func linesOf(c *cobra.Command, lf *lock.File, opt outdatedOptions, rep *progress.Reporter) (sparkLines, error) {
	l := sparkLines{within: true}
	var r *layers.Report
	if opt.base != "" {
		ropts, err := opt.registry.options(nil)
		if err != nil {
			return l, err
		}
		if r, err = layers.BaseReport(c.Context(), opt.base, opt.sparkHome, ropts...); err != nil {
			return l, err
		}
		l.capSpark = r.BaseSparkVersion != ""
		rep.Printf("base %s: Spark %s, Scala %s, Hadoop %s", opt.base, orNone(r.BaseSparkVersion), orNone(r.BaseScalaBinary), orNone(r.BaseHadoopVersion))
	} else {
		// The lock's jars, named as a distribution names them.
		var jars []string
		for _, a := range lf.Artifacts {
			if p := strings.Split(a.Coord, ":"); len(p) == 3 {
				jars = append(jars, "/jars/"+p[1]+"-"+p[2]+".jar")
			}
		}
		r = layers.CheckJars(nil, nil, jars, "/jars")
		rep.Printf("lock %s: Spark %s, Scala %s, Hadoop %s", opt.lockPath, orNone(r.BaseSparkVersion), orNone(r.BaseScalaBinary), orNone(r.BaseHadoopVersion))
	}
	l.spark, l.scala, l.hadoop = r.BaseSparkVersion, r.BaseScalaBinary, r.BaseHadoopVersion
	return l, nil
}

// newerVersions are the versions of vs newer than current (Ivy's
// latest-revision order, oldest first): no SNAPSHOT, the same Scala
// suffix as current's (none when it has none) and, withinSparkLine, the
// same Spark line (org.apache.spark: the same major.minor; a version that
// names spark3.5: the same).
func newerVersions(group, artifact, current string, vs []string, l sparkLines) []string {
	tag := func(v string) string {
		if m := scalaTagRe.FindStringSubmatch(v); m != nil {
			return m[1]
		}
		return ""
	}
	line := func(v string) string {
		if group == "org.apache.spark" {
			return revision.MajorMinor(v)
		}
		if m := sparkLineRe.FindStringSubmatch(v); m != nil {
			return m[1]
		}
		return ""
	}
	wantLine, wantTag := line(current), tag(current)
	if l.within && l.spark != "" && wantLine != "" {
		if strings.Contains(l.spark, ".") {
			wantLine = revision.MajorMinor(l.spark)
		}
	}
	if l.within && l.scala != "" && wantTag != "" {
		wantTag = l.scala
	}
	module := group + ":" + artifact
	held := func(v string) bool {
		switch {
		case !l.within:
			return false
		case layers.IsHadoopModule(module):
			// Its classes link against the base's exact Hadoop release.
			return l.hadoop == "" || v != l.hadoop
		case awsBundles[module]:
			return true
		case group == "org.apache.spark" && l.capSpark && revision.Compare(v, l.spark) > 0:
			return true
		}
		return line(v) != wantLine
	}
	out := []string{}
	cur := revision.Parse(current)
	seen := make(map[string]bool, len(vs)) // a listing may hold 100,000 versions (security review 4, L1)
	for _, v := range vs {
		switch {
		case seen[v],
			strings.HasSuffix(v, "-SNAPSHOT") || v == "SNAPSHOT",
			revision.CompareKeys(revision.Parse(v), cur) <= 0,
			tag(v) != wantTag,
			held(v):
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	revision.Sort(out)
	return out
}
