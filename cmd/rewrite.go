package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit"
)

// imageJars reads an image's dev.prebake.jars annotation: the jars dir and
// the jar file names. The layers wiring sets it.
var imageJars = func(ctx context.Context, ref string) (dir string, files []string, err error) {
	return "", nil, exitcode.Errorf(exitcode.Internal, "--image-from %s: reading the image's dev.prebake.jars annotation is not built in yet", ref)
}

// storeJarURLs returns the store's URLs of the set lockHash (its set
// manifest sets/<lock-hash>.json), in lock order. A missing manifest is an
// error that says to run `prebake bake s3`. The s3store wiring sets it.
var storeJarURLs = func(ctx context.Context, store, lockHash string) ([]string, error) {
	return nil, exitcode.Errorf(exitcode.Internal, "--store %s: reading the set manifest is not built in yet", redact.URL(store))
}

// rewriteJarSource resolves the packages of a command line (plus those of
// the resolution flags), retrieves them for file: paths, and adds the
// image's or the store's URLs.
func rewriteJarSource(rf *resolveFlags, imageFrom, store string, stderr io.Writer, quiet bool) submit.JarSource {
	return submit.JarSourceFunc(func(ctx context.Context, p submit.Packages) (*submit.Jars, error) {
		req, err := rf.request()
		if err != nil {
			return nil, err
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
		if len(req.Packages) == 0 {
			return nil, nil
		}
		logger := log.New(io.Discard, "", 0)
		if !quiet {
			logger = log.New(stderr, "prebake: ", 0)
		}
		if p.Ivy != "" || p.IvySettings != "" {
			logger.Printf("warning: spark.jars.ivy/spark.jars.ivySettings are not honoured for resolution; using the default chain")
		}
		res, err := resolver.Resolve(ctx, req, resolver.WithLogger(logger))
		if err != nil {
			return nil, err
		}
		_, paths, err := resolver.Retrieve(ctx, res.Lock, req.CacheDir)
		if err != nil {
			return nil, err
		}
		j := &submit.Jars{Local: paths, LockHash: res.Lock.Hash()}
		switch {
		case imageFrom != "":
			dir, files, err := imageJars(ctx, imageFrom)
			if err != nil {
				return nil, err
			}
			have := map[string]bool{}
			for _, f := range files {
				have[f] = true
			}
			for _, a := range res.Lock.Artifacts {
				if !have[a.File] {
					return nil, exitcode.Errorf(exitcode.NotFound, "--image-from %s: the image has no %s (its dev.prebake.jars lacks it); bake this lock into it first", imageFrom, a.File)
				}
				j.Cluster = append(j.Cluster, "local://"+path.Join(dir, a.File))
			}
			j.From = "image " + imageFrom
		case store != "":
			urls, err := storeJarURLs(ctx, store, j.LockHash)
			if err != nil {
				return nil, err
			}
			if len(urls) != len(paths) {
				return nil, exitcode.Errorf(exitcode.DataErr, "--store %s: set %s lists %d jars, the lock %d", redact.URL(store), j.LockHash, len(urls), len(paths))
			}
			j.Cluster = urls
			j.From = "store " + redact.URL(store)
		}
		return j, nil
	})
}

func init() {
	register(func(g *globals) *cobra.Command {
		var rf resolveFlags
		var imageFrom, store, manifest string
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
					submit.WithJarSource(rewriteJarSource(&rf, imageFrom, store, c.ErrOrStderr(), g.quiet)),
					submit.WithWorkDir(filepath.Join(cache, "rewrite")),
				}
				if imageFrom != "" {
					opts = append(opts, submit.WithImage(imageFrom))
				}
				if manifest != "" {
					return rewriteManifest(c, g, manifest, out, opts)
				}
				r, err := submit.Rewrite(c.Context(), args, opts...)
				if err != nil {
					return err
				}
				if out == "json" {
					enc := json.NewEncoder(c.OutOrStdout())
					enc.SetEscapeHTML(false)
					enc.SetIndent("", "  ")
					return enc.Encode(r)
				}
				if !g.quiet {
					for _, w := range r.Warnings {
						fmt.Fprintf(c.ErrOrStderr(), "prebake: warning: %s\n", w)
					}
				}
				_, err = fmt.Fprintln(c.OutOrStdout(), r.Command)
				return err
			},
		}
		fs := c.Flags()
		rf.add(fs)
		fs.StringVar(&imageFrom, "image-from", "", "use the jars baked into this image (its dev.prebake.jars annotation); also sets spark.kubernetes.container.image")
		fs.StringVar(&manifest, "manifest", "", "rewrite a kubeflow spark-operator SparkApplication/ScheduledSparkApplication manifest (YAML, multi-document; - for stdin) instead of a command line")
		fs.StringVar(&store, "store", "", "use the jars in this store (s3://bucket/prefix or file://DIR): its set manifest for the lock")
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
	if out == "json" {
		enc := json.NewEncoder(c.OutOrStdout())
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	if !g.quiet {
		for _, w := range r.Warnings {
			fmt.Fprintf(c.ErrOrStderr(), "prebake: warning: %s\n", w)
		}
	}
	_, err = io.WriteString(c.OutOrStdout(), r.YAML)
	return err
}
