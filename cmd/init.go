package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/prebake/prebake/lock"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/lockdiff"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit"
)

// settingsIn reports whether every setting of the YAML doc is in the YAML
// file with the same value (the file may hold more, and comments).
func settingsIn(doc, file []byte) bool {
	var want, have map[string]any
	if yaml.Unmarshal(doc, &want) != nil || yaml.Unmarshal(file, &have) != nil {
		return false
	}
	for k, v := range want {
		if hv, ok := have[k]; !ok || !reflect.DeepEqual(v, hv) {
			return false
		}
	}
	return true
}

// newInitCmd is `prebake init`.
func newInitCmd(g *globals) *cobra.Command {
	{
		var (
			rf          resolveFlags
			sf          s3StoreFlags
			uf          storeURLFlags
			reg         registryFlags
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
repositories, …), so that ` + "`prebake submit --lock prebake.lock --frozen -- <the same args>`" + `
run from this directory uses exactly that lock. The file is for committing: it holds only
what this command line gave, never a credential (a URL's user:password is removed, a value
with a token left out) nor this machine's cache directory or PREBAKE_* variables; init names
on stderr what it left out. Run again (with changed packages), init
keeps an existing prebake.yaml whose settings are this command's, updates the lock and lists
what changed; --force rewrites the file with this command's settings.`,
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
				// submit takes a store or an image target, not both: a file
				// with both keys would fail every submit that reads it.
				if sf.store != "" && imageTarget != "" {
					return exitcode.Errorf(exitcode.Usage, "init: --store %s and --image-target %s (from the flags, PREBAKE_* or %s): give one of them; submit takes one", redact.URL(sf.store), imageTarget, file)
				}
				data, left, err := initConfig(c.Flags(), nil, file, os.Getenv)
				if err != nil {
					return err
				}
				// init again: the file's settings are this run's defaults; a
				// file that holds every setting of this command line is kept
				// and the lock is updated.
				keep := false
				if old, err := os.ReadFile(file); err == nil && !force {
					given, _, err := initConfig(c.Flags(), g.explicit, file, os.Getenv)
					if err != nil {
						return err
					}
					if !settingsIn(given, old) {
						return exitcode.Errorf(exitcode.Usage, "init: %s exists with other settings than this command's, so neither it nor the lock was changed; --force replaces it", file)
					}
					keep = true
				}
				if sf.store != "" {
					if err := sf.check(); err != nil {
						return err
					}
				}
				sub, err := submit.LoadSubmission(args, os.Environ())
				if err != nil {
					return err
				}
				if rf.lock == "" {
					rf.lock = "prebake.lock"
				}
				// init is how a lock is updated: frozen: in prebake.yaml (or
				// $PREBAKE_FROZEN) pins the runs, not init; --frozen does.
				if settingFrom(c.Flags(), "frozen") != "" {
					rf.frozen = false
				}
				base, err := rf.request()
				if err != nil {
					return err
				}
				req, err := pipeline.RequestFor(base, sub.Packages())
				if err != nil {
					return err
				}
				rep := g.reporter(c.ErrOrStderr())
				// The Python half (--py-requirements): its target is read
				// as submit reads it (the flags, the job's image, the
				// python3 of a driver that runs here), so that the lock
				// init writes is the one submit finds fresh.
				py, err := pythonShip(c.Context(), &rf, sub, "", func() ([]layers.Option, error) { return reg.options(rep) }, rep)
				if err != nil {
					rep.Wait()
					return err
				}
				if !hasCoordinate(req.Packages) && py == nil {
					rep.Wait()
					return exitcode.Errorf(exitcode.Usage, "init: the command line has no --packages (nor spark.jars.packages) and no Python input (--py-requirements): nothing to pin")
				}
				oldLock, _ := lock.Read(rf.lock)
				pres, err := pipeline.ResolveWithPython(c.Context(), req, py, resolver.WithLogger(rep), resolver.WithProgress(rep))
				rep.Wait()
				if err != nil {
					return err
				}
				res := pres.Jars
				res.Lock = pres.Lock
				if !keep {
					if err := writeAtomic("writing", file, data); err != nil {
						return err
					}
					if len(left) > 0 {
						rep := g.reporter(c.ErrOrStderr())
						rep.Warnf("not written to %s, which is for committing: %s", file, strings.Join(left, "; "))
						rep.Wait()
					}
				}
				u := lockdiff.UpdateOf(oldLock, res.Lock)
				next := initNext(file, rf.lock, args)
				js := jsondoc.Init{Config: file, Lock: rf.lock, LockHash: res.Lock.Hash(), Jars: len(res.Lock.Jars()), Next: next, ConfigKept: keep, Changes: u.Changes}
				if out == outJSON {
					return printJSON(c.OutOrStdout(), js)
				}
				keepResult(c.OutOrStdout(), js)
				switch {
				case keep && u.SameInputs:
					fmt.Fprintf(c.OutOrStdout(), "kept %s; %s unchanged (%s, lock %s)\n", file, rf.lock, initCounts(res.Lock), res.Lock.Hash())
				case keep && u.Replaced && len(u.Changes) == 0:
					fmt.Fprintf(c.OutOrStdout(), "kept %s; updated %s: new inputs, the same jars (%s, lock %s)\n", file, rf.lock, initCounts(res.Lock), res.Lock.Hash())
				case keep:
					fmt.Fprintf(c.OutOrStdout(), "kept %s; updated %s (%s, lock %s)\n", file, rf.lock, initCounts(res.Lock), res.Lock.Hash())
				default:
					fmt.Fprintf(c.OutOrStdout(), "wrote %s and %s (%s, lock %s)\n", file, rf.lock, initCounts(res.Lock), res.Lock.Hash())
				}
				for _, ch := range u.Changes {
					fmt.Fprintf(c.OutOrStdout(), "  %s\n", ch)
				}
				fmt.Fprintf(c.OutOrStdout(), "next: %s\n", next)
				return nil
			},
		}
		fs := c.Flags()
		rf.pythonWired = true
		rf.add(fs, "packages")
		sf.add(fs)
		uf.add(fs)
		fs.StringVar(&imageTarget, "image-target", "", "the repository submit bakes the jars into (imageTarget in prebake.yaml)")
		fs.StringVar(&file, "file", "prebake.yaml", "the configuration file to write")
		fs.BoolVar(&force, "force", false, "replace an existing configuration file")
		reg.add(fs)
		return c
	}
}

// initConfig is the prebake.yaml of init: the settings init's command
// line gave (and those of file, the one it replaces), in the settings
// table's order; with only, the settings of the flags only names. The file
// is for committing (the CI guide adds it to git), so it holds nothing
// secret and nothing of this machine's: a setting from the environment
// (PREBAKE_*) or another configuration file, the cache directory, a
// value with a token or a presigned query are left out, and a URL's
// userinfo is removed (the lock records the repository without it too, so
// the lock stays fresh). left says what was left out and why, by setting
// name only, never the value.
func initConfig(fl *pflag.FlagSet, only map[string]bool, file string, getenv func(string) string) (data []byte, left []string, err error) {
	var doc yaml.Node
	doc.Kind = yaml.MappingNode
	for _, s := range settings {
		for _, name := range s.flags {
			f := fl.Lookup(name)
			if f == nil || !f.Changed || only != nil && !only[name] || initSkips[s.key] {
				continue
			}
			if from := settingFrom(fl, name); from != "" && from != file+": "+s.key {
				if strings.HasPrefix(from, "PREBAKE_") {
					from = "$" + from
				}
				left = append(left, fmt.Sprintf("%s (from %s, not this command line)", s.key, from))
				continue
			}
			if s.local {
				left = append(left, fmt.Sprintf("%s (this machine's: set $%s where it runs)", s.key, s.env))
				continue
			}
			var v yaml.Node
			switch {
			case s.list:
				vals, _ := fl.GetStringArray(name)
				var kept []string
				stripped := 0
				for _, val := range vals {
					clean, ok := committable(s, val, getenv)
					if !ok {
						continue
					}
					if clean != val {
						stripped++
					}
					kept = append(kept, clean)
				}
				if n := len(vals) - len(kept); n > 0 {
					left = append(left, fmt.Sprintf("%s (%d of its values hold a secret)", s.key, n))
				}
				if stripped > 0 {
					left = append(left, fmt.Sprintf("the credentials of %d URL(s) of %s (give them in a Maven settings.xml's <servers>, --settings, or $%s where the job runs)", stripped, s.key, s.env))
				}
				if len(kept) == 0 {
					continue
				}
				if err := v.Encode(kept); err != nil {
					return nil, nil, exitcode.New(exitcode.Internal, err)
				}
			case s.bool:
				b, _ := fl.GetBool(name)
				if err := v.Encode(b); err != nil {
					return nil, nil, exitcode.New(exitcode.Internal, err)
				}
			default:
				val := f.Value.String()
				clean, ok := committable(s, val, getenv)
				if !ok {
					left = append(left, fmt.Sprintf("%s (its value holds a secret)", s.key))
					continue
				}
				if clean != val && strings.Contains(val, "@") {
					left = append(left, fmt.Sprintf("the credentials of %s's URL", s.key))
				}
				if err := v.Encode(clean); err != nil {
					return nil, nil, exitcode.New(exitcode.Internal, err)
				}
			}
			doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.key}, &v)
		}
	}
	data = []byte("# written by prebake init; flags and PREBAKE_* variables override it\n")
	if len(doc.Content) == 0 {
		return data, left, nil
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, nil, exitcode.New(exitcode.Internal, err)
	}
	return append(data, out...), left, nil
}

// initSkips are the settings init never writes: its --lock and --frozen
// are its own run's, and the next command it prints names them. A team
// that pins every run (spark-submit link mode) adds lock: and frozen:
// to the file itself.
var initSkips = map[string]bool{"lock": true, "frozen": true}

// committable is v as prebake.yaml may hold it for every machine: a URL
// without its userinfo, a path under the home directory as ~/…; ok is
// false when v holds a secret userinfo is not all of (a token, a
// presigned query).
func committable(s setting, v string, getenv func(string) string) (string, bool) {
	clean := redact.StripUserinfo(v)
	if redact.Line(clean) != clean || redact.URL(clean) != clean && strings.Contains(clean, "?") {
		return "", false
	}
	if s.path {
		if home := getenv("HOME"); home != "" && filepath.IsAbs(clean) {
			if rel, err := filepath.Rel(home, clean); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				clean = "~/" + filepath.ToSlash(rel)
			}
		}
	}
	return clean, true
}

// initCounts says what a lock init wrote holds: "3 jars", with its
// wheels when it has a Python half ("3 jars, 2 wheels").
func initCounts(lf *lock.File) string {
	s := fmt.Sprintf("%d jars", len(lf.Jars()))
	if n := len(lf.Wheels()); n > 0 {
		s += fmt.Sprintf(", %d wheels", n)
	}
	return s
}

// initNext is the submit command init prints: shell-quoted as rewrite
// quotes its line (eval-safe), each argument redacted.
func initNext(config, lockFile string, args []string) string {
	next := []string{"prebake", "submit"}
	if config != "prebake.yaml" {
		next = append(next, "--config", config)
	}
	next = append(next, "--lock", lockFile, "--frozen", "--")
	for _, a := range args {
		next = append(next, redact.Line(a))
	}
	return submit.ShellQuote(next)
}
