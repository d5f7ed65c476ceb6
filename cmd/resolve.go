package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/resolver"
)

func newResolveCmd(g *globals) *cobra.Command {
	var f resolveFlags
	c := &cobra.Command{
		Use:   "resolve [g:a:v ...]",
		Short: "Resolve --packages exactly as spark-submit (Apache Ivy) does",
		Long: `resolve resolves Maven coordinates with Spark 3.5's --packages semantics
(Ivy's latest-revision conflicts, Spark's default excludes, compile+runtime scopes)
and prints the tree (default), the jar file names Spark would retrieve (-o names)
or JSON (-o json). Coordinates come from --packages and/or positional arguments.`,
		Example: `  # the default chain (~/.m2, Central, spark-packages), as spark-submit --packages
  prebake resolve org.apache.spark:spark-avro_2.12:3.5.0
  # pin the result; later runs with the same inputs read the lock and make no request
  prebake resolve --packages io.delta:delta-spark_2.12:3.2.0 --lock prebake.lock
  # refresh a lock: resolve its own packages again (with today's repositories) and rewrite it
  prebake resolve --lock prebake.lock
  # CI: fail (exit 78) when prebake.lock no longer matches the packages
  prebake resolve --packages io.delta:delta-spark_2.12:3.2.0 --lock prebake.lock --frozen -o names
  # the demo repository in this checkout, no network
  prebake resolve --offline --no-default-repositories --repositories "file://$PWD/testdata/demo-repo/" \
    --cache "$PWD/.demo/cache" --lock .demo/prebake.lock \
    ch.qos.logback:logback-classic:1.4.11 org.slf4j:slf4j-api:1.7.36`,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := checkOutput(g, outTree, outNames, outJSON)
			if err != nil {
				return err
			}
			req, err := f.lockRequest(cmd.Flags(), "resolve", args...)
			if err != nil {
				return err
			}
			py, err := f.pythonRequest(req.MaxRetryWait)
			if err != nil {
				return err
			}
			rep := g.reporter(cmd.ErrOrStderr())
			if py != nil {
				py.Log = rep
			}
			res, err := pipeline.ResolveWithPython(cmd.Context(), req, py, resolver.WithLogger(rep), resolver.WithProgress(rep))
			rep.Wait()
			if err != nil {
				return err
			}
			if req.LockPath != "" && !res.FromLock {
				if py != nil {
					rep.Printf("lockfile %s written: %d jars, %d wheels, lock %s", req.LockPath, len(res.Lock.Jars()), len(res.Wheels), res.Lock.Hash())
				} else {
					rep.Printf("lockfile %s written: %d jars, lock %s", req.LockPath, len(res.Lock.Jars()), res.Lock.Hash())
				}
			}
			return printResolve(cmd.OutOrStdout(), out, res)
		},
	}
	f.pythonWired = true
	f.add(c.Flags())
	f.addSparkVersion(c.Flags())
	return c
}

func printResolve(w io.Writer, format outputFormat, pres *pipeline.PythonResult) error {
	if format != outJSON && wantsResult(w) {
		keepResult(w, resolveResult(pres))
	}
	res := pres.Jars
	switch format {
	case outNames:
		for _, a := range res.Lock.Jars() {
			fmt.Fprintln(w, a.File)
		}
		for _, a := range pres.Wheels {
			fmt.Fprintln(w, a.File)
		}
		return nil
	case outJSON:
		return printJSON(w, resolveResult(pres))
	}
	// tree
	defer printPython(w, pres)
	if res.Graph == nil {
		fmt.Fprintf(w, "(from lock %s)\n", pres.Lock.Hash())
		for _, a := range res.Lock.Jars() {
			fmt.Fprintf(w, "%s\n", a.Coord)
		}
		return nil
	}
	var walk func(n *resolver.Node, prefix string, last bool)
	walk = func(n *resolver.Node, prefix string, last bool) {
		branch, next := "├── ", "│   "
		if last {
			branch, next = "└── ", "    "
		}
		line := n.Group + ":" + n.Artifact + ":" + n.Version
		if n.Evicted {
			line += " (evicted"
			if n.By != "" {
				line += " by " + n.By
			}
			line += ")"
		}
		fmt.Fprintln(w, prefix+branch+line)
		for i, c := range n.Children {
			walk(c, prefix+next, i == len(n.Children)-1)
		}
	}
	for i, r := range res.Graph.Roots {
		walk(r, "", i == len(res.Graph.Roots)-1)
	}
	fmt.Fprintf(w, "%d jar(s)%s\n", len(res.Lock.Jars()), evictedSummary(res.Graph))
	return nil
}

func evictedSummary(g *resolver.Graph) string {
	if len(g.Evicted) == 0 {
		return ""
	}
	var s []string
	for _, e := range g.Evicted {
		x := e.Group + ":" + e.Artifact + ":" + e.Version
		if e.By != "" {
			x += " by " + e.By
		}
		s = append(s, x)
	}
	return "; evicted: " + strings.Join(s, ", ")
}

// hasCoordinate reports whether the --packages values hold a coordinate
// (pipeline.HasCoordinate).
func hasCoordinate(packages []string) bool { return pipeline.HasCoordinate(packages) }

// printPython prints the tree's "python" section: each wheel as
// name==version and its file.
func printPython(w io.Writer, pres *pipeline.PythonResult) {
	if len(pres.Wheels) == 0 && pres.Lock.Inputs.Python == nil {
		return
	}
	fmt.Fprintf(w, "python %s (%s)\n", pres.Lock.Inputs.Python.Version, firstOr(pres.Lock.Inputs.Python.Platforms, "no platform"))
	for i, a := range pres.Wheels {
		branch := "├── "
		if i == len(pres.Wheels)-1 {
			branch = "└── "
		}
		fmt.Fprintf(w, "%s%s==%s  %s\n", branch, a.Name, a.Version, a.File)
	}
	fmt.Fprintf(w, "%d wheel(s); lock %s\n", len(pres.Wheels), pres.Lock.Hash())
}

func firstOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[0]
}

// resolveResult is resolve's JSON result (-o json, --result-file).
func resolveResult(pres *pipeline.PythonResult) jsondoc.Resolve {
	res := pres.Jars
	j := jsondoc.Resolve{LockHash: pres.Lock.Hash(), FromLock: pres.FromLock, Artifacts: []jsondoc.ResolvedArtifact{}, Evicted: []jsondoc.Evicted{}, Tree: []*jsondoc.Tree{}}
	for i, a := range res.Lock.Jars() {
		j.Artifacts = append(j.Artifacts, jsondoc.ResolvedArtifact{Coord: a.Coord, File: a.File, Sha256: a.Sha256, Size: a.Size, Repository: a.Repository, Path: res.Paths[i], SignedBy: a.SignedBy})
	}
	for i, a := range pres.Wheels {
		j.Wheels = append(j.Wheels, jsondoc.ResolvedWheel{Name: a.Name, Version: a.Version, File: a.File, Sha256: a.Sha256, Size: a.Size, Repository: a.Repository, Path: pres.WheelPaths[i]})
	}
	if res.Graph != nil {
		for _, e := range res.Graph.Evicted {
			j.Evicted = append(j.Evicted, jsondoc.Evicted{Module: e.Group + ":" + e.Artifact + ":" + e.Version, By: e.By})
		}
		var conv func(n *resolver.Node) *jsondoc.Tree
		conv = func(n *resolver.Node) *jsondoc.Tree {
			t := &jsondoc.Tree{Coord: n.Group + ":" + n.Artifact + ":" + n.Version, Evicted: n.Evicted, By: n.By}
			for _, c := range n.Children {
				t.Children = append(t.Children, conv(c))
			}
			return t
		}
		for _, r := range res.Graph.Roots {
			j.Tree = append(j.Tree, conv(r))
		}
	}
	return j
}
