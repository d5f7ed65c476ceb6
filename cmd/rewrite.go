package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/progress"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
)

// jarTarget says where the cluster URLs of the resolved jars come from:
// an image baked earlier (--image-from: its dev.prebake.jars annotation), a
// store baked earlier (--store: its set manifest), or, for submit, a bake
// done now. With none, only local file: paths are given.
type jarTarget struct {
	imageFrom string
	imageOpts []layers.Option
	store     *s3StoreFlags
	storeURLFlags
	// bake, when set, caches the resolved jars now and returns their cluster
	// URLs in lock order (submit --store / --image-target).
	bake func(ctx context.Context, res *resolver.Result) (urls []string, from string, err error)
}

// clusterURLs returns the cluster URLs of res's jars, in lock order, and
// what they came from; nil when the target names no image or store.
func (t *jarTarget) clusterURLs(ctx context.Context, res *resolver.Result, rep *progress.Reporter) ([]string, string, error) {
	switch {
	case t.bake != nil:
		return t.bake(ctx, res)
	case t.imageFrom != "":
		dir, files, err := layers.ReadJars(ctx, t.imageFrom, t.imageOpts...)
		if err != nil {
			return nil, "", err
		}
		have := map[string]bool{}
		for _, f := range files {
			have[f] = true
		}
		var urls []string
		for _, a := range res.Lock.Artifacts {
			if !have[a.File] {
				return nil, "", exitcode.Errorf(exitcode.NotFound, "--image-from %s: the image has no %s (its dev.prebake.jars lacks it); bake this lock into it first", t.imageFrom, a.File)
			}
			urls = append(urls, "local://"+path.Join(dir, a.File))
		}
		return urls, "image " + t.imageFrom, nil
	case t.store != nil && t.store.store != "":
		opts, err := t.storeOptions(t.store, rep)
		if err != nil {
			return nil, "", err
		}
		urls, err := s3store.SetURLs(ctx, t.store.store, res.Lock.Hash(), t.urlStyle, opts...)
		if err != nil {
			return nil, "", err
		}
		if len(urls) != len(res.Lock.Artifacts) {
			return nil, "", exitcode.Errorf(exitcode.DataErr, "--store %s: set %s lists %d jars, the lock %d", redact.URL(t.store.store), res.Lock.Hash(), len(urls), len(res.Lock.Artifacts))
		}
		return urls, "store " + redact.URL(t.store.store), nil
	}
	return nil, "", nil
}

// resolveJars resolves the packages of a command line (plus those of the
// resolution flags) and retrieves them for file: paths. It returns nil when
// there is nothing to resolve.
func resolveJars(ctx context.Context, rf *resolveFlags, p submit.Packages, rep *progress.Reporter) (*resolver.Result, []string, error) {
	req, err := requestFor(rf, p)
	if err != nil || len(req.Packages) == 0 {
		return nil, nil, err
	}
	res, err := resolver.Resolve(ctx, req, resolver.WithLogger(rep), resolver.WithProgress(rep))
	rep.Wait()
	if err != nil {
		return nil, nil, err
	}
	_, paths, err := resolver.Retrieve(ctx, res.Lock, req.CacheDir)
	if err != nil {
		return nil, nil, err
	}
	return res, paths, nil
}

// requestFor is the resolution request of a command line's packages plus
// those of the resolution flags.
func requestFor(rf *resolveFlags, p submit.Packages) (resolver.Request, error) {
	req, err := rf.request()
	if err != nil {
		return req, err
	}
	// The argv's own packages come first; the resolution flags add to them.
	if p.Packages != "" {
		req.Packages = append([]string{p.Packages}, req.Packages...)
	}
	if p.Repositories != "" {
		req.Repositories = append([]string{p.Repositories}, req.Repositories...)
	}
	if p.Excludes != "" {
		req.Excludes = append([]string{p.Excludes}, req.Excludes...)
	}
	// spark.jars.ivySettings and spark.jars.ivy hold one value each: the
	// argv's and the flag's must agree.
	for _, kv := range []struct {
		flag, key string
		dst       *string
		argv      string
	}{{"--ivy-settings", "spark.jars.ivySettings", &req.IvySettings, p.IvySettings}, {"--ivy", "spark.jars.ivy", &req.IvyHome, p.Ivy}} {
		switch {
		case kv.argv == "" || kv.argv == *kv.dst:
		case *kv.dst == "":
			*kv.dst = kv.argv
		default:
			return req, exitcode.Errorf(exitcode.Usage, "%s %s and the command line's %s=%s differ", kv.flag, *kv.dst, kv.key, kv.argv)
		}
	}
	return req, nil
}

// rewriteJarSource resolves the packages of a command line, retrieves them
// for file: paths, and adds the target's cluster URLs.
func rewriteJarSource(rf *resolveFlags, t *jarTarget, rep *progress.Reporter) submit.JarSource {
	return submit.JarSourceFunc(func(ctx context.Context, p submit.Packages) (*submit.Jars, error) {
		res, paths, err := resolveJars(ctx, rf, p, rep)
		if err != nil || res == nil {
			return nil, err
		}
		j := &submit.Jars{Local: paths, LockHash: res.Lock.Hash()}
		j.Cluster, j.From, err = t.clusterURLs(ctx, res, rep)
		if err != nil {
			return nil, err
		}
		return j, nil
	})
}

func init() {
	register(func(g *globals) *cobra.Command {
		var rf resolveFlags
		var imageFrom, manifest string
		var sf s3StoreFlags
		var reg registryFlags
		t := &jarTarget{store: &sf}
		c := &cobra.Command{
			Use:   "rewrite [--image-from REF | --store URL] [--lock FILE] [resolution flags] -- <spark-submit args>",
			Short: "Rewrite a spark-submit command line so that Spark resolves nothing at run time",
			Long: `rewrite removes every --packages source from a spark-submit command line (the flags,
--conf, --properties-file and spark-defaults.conf), resolves the packages ahead of time, and
merges the jars into one jar list: the image's local:// jars (--image-from), the store's URLs
(--store), or local file: paths (client and local mode, YARN). Every other argument is kept,
in order. It prints the new arguments, shell-quoted on one line; -o json adds what changed and why.`,
			Example: `  prebake rewrite --image-from registry.example/spark:3.5.0-prebake -- \
    --master k8s://https://k8s.example:6443 --deploy-mode cluster \
    --packages org.apache.hadoop:hadoop-aws:3.3.4 --class com.example.Main local:///opt/app.jar`,
			Args: func(c *cobra.Command, args []string) error {
				if manifest != "" {
					if len(args) > 0 {
						return exitcode.Errorf(exitcode.Usage, "--manifest %s: give no spark-submit arguments with it", manifest)
					}
					return nil
				}
				return cobra.MinimumNArgs(1)(c, args)
			},
			RunE: func(c *cobra.Command, args []string) error {
				out, err := checkOutput(g, "text", "json")
				if err != nil {
					return err
				}
				store := sf.store
				if imageFrom != "" && store != "" {
					return exitcode.Errorf(exitcode.Usage, "--image-from and --store: give one of them")
				}
				if _, err := rf.request(); err != nil {
					return err
				}
				cache := rf.cache
				if cache == "" {
					cache = resolver.DefaultCacheDir()
				}
				opts := []submit.RewriteOption{
					submit.WithJarSource(rewriteJarSource(&rf, t, g.reporter(c.ErrOrStderr()))),
					submit.WithWorkDir(filepath.Join(cache, "rewrite")),
				}
				if imageFrom != "" {
					t.imageFrom = imageFrom
					if t.imageOpts, err = reg.options(g.reporter(c.ErrOrStderr())); err != nil {
						return err
					}
					opts = append(opts, submit.WithImage(imageFrom))
				}
				if manifest != "" {
					return rewriteManifest(c, g, manifest, out, opts)
				}
				r, err := submit.Rewrite(c.Context(), args, opts...)
				if err != nil {
					return err
				}
				return printRewrite(c, g, out, r, r.Warnings, r.Command+"\n")
			},
		}
		fs := c.Flags()
		rf.add(fs)
		fs.StringVar(&imageFrom, "image-from", "", "use the jars baked into this image (its dev.prebake.jars annotation); also sets spark.kubernetes.container.image")
		fs.StringVar(&manifest, "manifest", "", "rewrite a kubeflow spark-operator SparkApplication/ScheduledSparkApplication manifest (YAML, multi-document; - for stdin) instead of a command line")
		sf.add(fs)
		reg.add(fs)
		t.storeURLFlags.add(fs)
		return c
	})
}

// rewriteManifest runs `prebake rewrite --manifest FILE`: the rewritten YAML
// on stdout, or -o json with the changes.
func rewriteManifest(c *cobra.Command, g *globals, file, out string, opts []submit.RewriteOption) error {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(c.InOrStdin())
	} else {
		data, err = os.ReadFile(file)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return exitcode.New(exitcode.NotFound, fmt.Errorf("--manifest %s: %w", file, err))
	case err != nil:
		return exitcode.New(exitcode.DataErr, fmt.Errorf("--manifest %s: %w", file, err))
	}
	name := file
	if file == "-" {
		name = "<stdin>"
	}
	r, err := submit.RewriteManifest(c.Context(), name, data, opts...)
	if err != nil {
		return err
	}
	return printRewrite(c, g, out, r, r.Warnings, r.YAML)
}

// printRewrite prints a rewrite result: v as JSON with -o json, else the
// warnings on stderr and text on stdout.
func printRewrite(c *cobra.Command, g *globals, out string, v any, warnings []string, text string) error {
	if out == "json" {
		enc := json.NewEncoder(c.OutOrStdout())
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	if !g.quiet {
		for _, w := range warnings {
			fmt.Fprintf(c.ErrOrStderr(), "prebake: warning: %s\n", w)
		}
	}
	_, err := io.WriteString(c.OutOrStdout(), text)
	return err
}
