package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/resolver"
)

func newWhyCmd(g *globals) *cobra.Command {
	var f resolveFlags
	c := &cobra.Command{
		Use:   "why g:a [g:a:v ...]",
		Short: "Show the paths that brought a module in, the version chosen and what was evicted",
		Long: `why resolves the coordinates (--packages and/or the positional arguments after
the module) as ` + "`prebake resolve`" + ` does and explains the module g:a (Ivy globs allowed,
e.g. org.slf4j:*): every path from a requested coordinate to it, the version chosen,
its versions evicted and by which, and the conflicts its own dependencies won.
When --lock matches the inputs, the lock alone has no graph: why resolves again
(the lock is not changed) and says so. A module not in the graph exits 66.`,
		Example: `  # why does the demo resolution use slf4j-api 2.0.7 when 1.7.36 was asked for?
  prebake why --offline --no-default-repositories --repositories "file://$PWD/testdata/demo-repo/" \
    --cache "$PWD/.demo/cache" org.slf4j:slf4j-api \
    ch.qos.logback:logback-classic:1.4.11 org.slf4j:slf4j-api:1.7.36
  # every Jackson module of a Delta resolution, as JSON
  prebake why 'com.fasterxml.jackson.*:*' --packages io.delta:delta-spark_2.12:3.2.0 -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := checkOutput(g, outText, outJSON)
			if err != nil {
				return err
			}
			pattern := args[0]
			if _, err := resolver.ParseWhyPattern(pattern); err != nil {
				return err
			}
			req, err := f.lockRequest(cmd.Flags(), "why", args[1:]...)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			rep := g.reporter(stderr)
			res, err := resolver.Resolve(cmd.Context(), req, resolver.WithLogger(rep), resolver.WithProgress(rep))
			fromLock := false
			if err == nil && res.Graph == nil {
				// A matching lock holds the jars, not the graph.
				fromLock = true
				rep.Printf("lockfile %s matches the inputs; resolving again for the graph (the lock is not changed)", req.LockPath)
				again := req
				again.LockPath, again.Frozen = "", false
				var fresh *resolver.Result
				fresh, err = resolver.Resolve(cmd.Context(), again, resolver.WithLogger(rep), resolver.WithProgress(rep))
				if err == nil {
					if fresh.Lock.Hash() != res.Lock.Hash() {
						rep.Warnf("the repositories now resolve to a different set (lock hash %s) than %s (%s): the paths shown are of the new resolution",
							fresh.Lock.Hash(), req.LockPath, res.Lock.Hash())
					}
					res = fresh
				}
			}
			rep.Wait()
			if err != nil {
				return err
			}
			mods, err := resolver.Why(res.Graph, pattern)
			if err != nil {
				return fmt.Errorf("%w (packages: %s)", err, strings.Join(req.Packages, ","))
			}
			return printWhy(cmd.OutOrStdout(), out, pattern, res.Lock.Hash(), fromLock, mods)
		},
	}
	f.add(c.Flags())
	return c
}

func printWhy(w io.Writer, format outputFormat, pattern, lockHash string, fromLock bool, mods []resolver.ModuleWhy) error {
	if format == outJSON {
		j := jsondoc.Why{Module: pattern, LockHash: lockHash, FromLock: fromLock, Modules: []jsondoc.WhyModule{}}
		for _, m := range mods {
			jm := jsondoc.WhyModule{Module: m.Group + ":" + m.Artifact, Chosen: append([]string{}, m.Chosen...),
				Paths: []jsondoc.WhyPath{}, Truncated: m.Truncated, Evicted: []jsondoc.Evicted{}, Evicts: []jsondoc.WhyEvicts{}}
			for _, p := range m.Paths {
				jm.Paths = append(jm.Paths, jsondoc.WhyPath{Path: p.Nodes, Evicted: p.Evicted, By: p.By})
			}
			for _, e := range m.Evicted {
				jm.Evicted = append(jm.Evicted, jsondoc.Evicted{Module: e.Group + ":" + e.Artifact + ":" + e.Version, By: e.By})
			}
			for _, e := range m.Evicts {
				jm.Evicts = append(jm.Evicts, jsondoc.WhyEvicts{Via: e.Via, Winner: e.Winner, Evicted: e.Evicted})
			}
			j.Modules = append(j.Modules, jm)
		}
		return printJSON(w, j)
	}
	for i, m := range mods {
		if i > 0 {
			fmt.Fprintln(w)
		}
		chosen := "none (every version was evicted)"
		if len(m.Chosen) > 0 {
			chosen = strings.Join(m.Chosen, ", ")
		}
		fmt.Fprintf(w, "%s:%s: %s\n", m.Group, m.Artifact, chosen)
		more := ""
		if m.Truncated {
			more = fmt.Sprintf(", the first %d shown", len(m.Paths))
		}
		fmt.Fprintf(w, "  paths (%d%s):\n", len(m.Paths), more)
		for _, p := range m.Paths {
			line := strings.Join(p.Nodes, " → ")
			if p.Evicted {
				line += " (evicted"
				if p.By != "" {
					line += " by " + p.By
				}
				line += ")"
			}
			fmt.Fprintf(w, "    %s\n", line)
		}
		if len(m.Evicted) > 0 {
			fmt.Fprintln(w, "  evicted:")
			for _, e := range m.Evicted {
				by := ""
				if e.By != "" {
					by = " by " + e.By
				}
				fmt.Fprintf(w, "    %s%s\n", e.Version, by)
			}
		}
		if len(m.Evicts) > 0 {
			fmt.Fprintln(w, "  evicts (through its own dependencies):")
			for _, e := range m.Evicts {
				fmt.Fprintf(w, "    %s → %s evicted %s\n", e.Via, e.Winner, e.Evicted)
			}
		}
	}
	return nil
}
