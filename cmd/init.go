package cmd

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit"
)

// initJSON is `prebake init -o json` (documented in the README):
//
//	{"config": "prebake.yaml", "lock": "prebake.lock", "lockHash": "…", "jars": 3,
//	 "next": "prebake submit --lock prebake.lock --frozen -- …"}
type initJSON struct {
	Config   string `json:"config"`
	Lock     string `json:"lock"`
	LockHash string `json:"lockHash"`
	Jars     int    `json:"jars"`
	Next     string `json:"next"`
}

// newInitCmd is `prebake init`.
func newInitCmd(g *globals) *cobra.Command {
	{
		var (
			rf          resolveFlags
			sf          s3StoreFlags
			uf          storeURLFlags
			imageTarget string // written to prebake.yaml through the settings table
			file        string
			force       bool
		)
		c := &cobra.Command{
			Use:   "init [--store URL | --image-target REPO] [resolution flags] -- <spark-submit args>",
			Short: "Write a prebake.yaml and a lock from an existing spark-submit command line",
			Long: `init adopts prebake for an existing spark-submit command line: it resolves the
line's packages (with the resolution flags given here), writes the lock (--lock, default
prebake.lock) and a prebake.yaml that holds the settings given here (store or image target,
repositories, cache, …), so that ` + "`prebake submit --lock prebake.lock --frozen -- <the same args>`" + `
run from this directory uses exactly that lock. An existing prebake.yaml is kept unless --force.`,
			Example: `  prebake init --store s3://team-spark-jars/prebake -- \
    --master k8s://https://k8s.example:6443 --deploy-mode cluster \
    --packages org.apache.hadoop:hadoop-aws:3.3.4 --class com.example.Main local:///opt/app.jar`,
			RunE: func(c *cobra.Command, args []string) error {
				out, err := checkOutput(g, outText, outJSON)
				if err != nil {
					return err
				}
				if len(args) == 0 {
					return exitcode.Errorf(exitcode.Usage, "init: give the spark-submit arguments after --: prebake init [flags] -- --master … --packages g:a:v … app.jar")
				}
				if _, err := os.Stat(file); err == nil && !force {
					return exitcode.Errorf(exitcode.Usage, "init: %s exists; --force replaces it", file)
				}
				if sf.store != "" {
					if err := sf.check(); err != nil {
						return err
					}
				}
				sub, err := submit.LoadSubmission(args, os.Getenv)
				if err != nil {
					return err
				}
				if rf.lock == "" {
					rf.lock = "prebake.lock"
				}
				base, err := rf.request()
				if err != nil {
					return err
				}
				req, err := pipeline.RequestFor(base, sub.Packages())
				if err != nil {
					return err
				}
				if !hasCoordinate(req.Packages) {
					return exitcode.Errorf(exitcode.Usage, "init: the command line has no --packages (nor spark.jars.packages): nothing to pin")
				}
				rep := g.reporter(c.ErrOrStderr())
				res, err := resolver.Resolve(c.Context(), req, resolver.WithLogger(rep), resolver.WithProgress(rep))
				rep.Wait()
				if err != nil {
					return err
				}
				data, err := initConfig(c.Flags())
				if err != nil {
					return err
				}
				if err := writeAtomic("writing", file, data); err != nil {
					return err
				}
				next := "prebake submit --lock " + rf.lock + " --frozen -- " + redact.Line(strings.Join(args, " "))
				if file != "prebake.yaml" {
					next = "prebake submit --config " + file + next[len("prebake submit"):]
				}
				if out == outJSON {
					return printJSON(c.OutOrStdout(), initJSON{Config: file, Lock: rf.lock, LockHash: res.Lock.Hash(), Jars: len(res.Lock.Artifacts), Next: next})
				}
				fmt.Fprintf(c.OutOrStdout(), "wrote %s and %s (%d jars, lock %s)\nnext: %s\n", file, rf.lock, len(res.Lock.Artifacts), res.Lock.Hash(), next)
				return nil
			},
		}
		fs := c.Flags()
		rf.add(fs, "packages")
		sf.add(fs)
		uf.add(fs)
		fs.StringVar(&imageTarget, "image-target", "", "the repository submit bakes the jars into (imageTarget in prebake.yaml)")
		fs.StringVar(&file, "file", "prebake.yaml", "the configuration file to write")
		fs.BoolVar(&force, "force", false, "replace an existing configuration file")
		return c
	}
}

// initConfig is the prebake.yaml of init: every setting init's command line
// (or the environment) gave, in the settings table's order.
func initConfig(fl *pflag.FlagSet) ([]byte, error) {
	var doc yaml.Node
	doc.Kind = yaml.MappingNode
	for _, s := range settings {
		for _, name := range s.flags {
			f := fl.Lookup(name)
			if f == nil || !f.Changed {
				continue
			}
			var v yaml.Node
			switch {
			case s.list:
				vals, _ := fl.GetStringArray(name)
				if err := v.Encode(vals); err != nil {
					return nil, exitcode.New(exitcode.Internal, err)
				}
			case s.bool:
				b, _ := fl.GetBool(name)
				if err := v.Encode(b); err != nil {
					return nil, exitcode.New(exitcode.Internal, err)
				}
			default:
				if err := v.Encode(f.Value.String()); err != nil {
					return nil, exitcode.New(exitcode.Internal, err)
				}
			}
			doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.key}, &v)
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, exitcode.New(exitcode.Internal, err)
	}
	return append([]byte("# written by prebake init; flags and PREBAKE_* variables override it\n"), out...), nil
}
