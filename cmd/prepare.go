package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/s3store"
	"github.com/prebake/prebake/submit"
)

// fileConfig is prebake.yaml: defaults for submit's flags, so that adopting
// prebake is one word in front of an existing spark-submit command line.
// Flags win over the environment (PREBAKE_STORE, PREBAKE_IMAGE_TARGET),
// which wins over the file. Credentials do not belong here: S3 uses the AWS
// chain, registries the Docker config.
//
//	store: s3://bucket/prefix        # or file:///dir
//	endpoint: http://127.0.0.1:7070  # S3-compatible servers
//	pathStyle: true
//	region: eu-west-1
//	urlStyle: s3a                    # s3a | presigned | https
//	imageTarget: registry.example.com/spark/prebaked
//	cache: /var/cache/prebake
//	repositories: [https://nexus.example.com/repository/maven-public/]
type fileConfig struct {
	Store        string   `yaml:"store"`
	Endpoint     string   `yaml:"endpoint"`
	PathStyle    *bool    `yaml:"pathStyle"`
	Region       string   `yaml:"region"`
	URLStyle     string   `yaml:"urlStyle"`
	ImageTarget  string   `yaml:"imageTarget"`
	Cache        string   `yaml:"cache"`
	Repositories []string `yaml:"repositories"`
}

// loadConfig reads the --config file, else ./prebake.yaml when it exists,
// else $PREBAKE_CONFIG. It returns nil when there is none.
func loadConfig(explicit string) (*fileConfig, string, error) {
	path := explicit
	if path == "" {
		if _, err := os.Stat("prebake.yaml"); err == nil {
			path = "prebake.yaml"
		} else if env := os.Getenv("PREBAKE_CONFIG"); env != "" {
			path = env
		}
	}
	if path == "" {
		return nil, "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		code := exitcode.DataErr
		if errors.Is(err, fs.ErrNotExist) {
			code = exitcode.NotFound
		}
		return nil, path, exitcode.New(code, fmt.Errorf("config %s: %w", path, err))
	}
	var c fileConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, path, exitcode.Errorf(exitcode.DataErr, "config %s: %v", path, err)
	}
	return &c, path, nil
}

// applyDefaults fills the submit flags the user did not set, from the
// environment and then from the config file.
func applyDefaults(f *submitFlags, fl *pflag.FlagSet, c *fileConfig) {
	unset := func(name string) bool { return !fl.Changed(name) }
	if unset("image-target") && f.imageTarget == "" {
		f.imageTarget = os.Getenv("PREBAKE_IMAGE_TARGET")
	}
	if c == nil {
		return
	}
	set := func(name string, dst *string, v string) {
		if unset(name) && *dst == "" && v != "" {
			*dst = v
		}
	}
	set("store", &f.s3.store, c.Store)
	set("endpoint", &f.s3.endpoint, c.Endpoint)
	set("region", &f.s3.region, c.Region)
	set("image-target", &f.imageTarget, c.ImageTarget)
	set("cache", &f.resolve.cache, c.Cache)
	if unset("url-style") && c.URLStyle != "" {
		f.urlStyle = s3store.URLStyle(c.URLStyle)
	}
	if unset("path-style") && c.PathStyle != nil {
		f.s3.pathStyle = *c.PathStyle
	}
	if unset("repositories") && len(c.Repositories) > 0 {
		f.resolve.repositories = c.Repositories
	}
}

// prepare is submit's resolve → bake (S3 or image) → rewrite: it maps the
// flags and prebake.yaml onto pipeline.Options, runs pipeline.Prepare and
// reports its warnings. It returns the spark-submit arguments to run.
func prepare(ctx context.Context, g *globals, f *submitFlags, fl *pflag.FlagSet, args []string, stderr io.Writer) ([]string, error) {
	cfg, cfgPath, err := loadConfig(f.config)
	if err != nil {
		return nil, err
	}
	applyDefaults(f, fl, cfg)
	rep := g.reporter(stderr)
	defer rep.Wait()
	if cfg != nil {
		rep.Debugf("using defaults from %s", cfgPath)
	}
	if f.s3.store != "" && f.imageTarget != "" {
		return nil, exitcode.Errorf(exitcode.Usage, "--store %s and --image-target %s: give one of them", redact.URL(f.s3.store), f.imageTarget)
	}
	sub, err := submit.LoadSubmission(args, os.Getenv)
	if err != nil {
		return nil, err
	}
	req, err := f.resolve.request()
	if err != nil {
		return nil, err
	}
	o := pipeline.Options{Request: req, CacheDir: f.resolve.cache, Store: f.s3.store, URLStyle: f.urlStyle, ImageTarget: f.imageTarget, Reporter: rep}
	if o.Store != "" {
		if o.StoreOptions, err = f.storeOptions(&f.s3, rep); err != nil {
			return nil, err
		}
	}
	if o.ImageTarget != "" {
		if o.LayerOptions, err = f.registry.options(rep); err != nil {
			return nil, err
		}
	}
	r, err := pipeline.Prepare(ctx, sub, o)
	if errors.Is(err, pipeline.ErrNoBaseImage) {
		return nil, exitcode.New(exitcode.Usage, fmt.Errorf("--image-target %s: %w", f.imageTarget, err))
	}
	if err != nil {
		return nil, err
	}
	for _, w := range r.Warnings {
		rep.Warnf("%s", w)
	}
	for _, ch := range r.Changes {
		rep.Debugf("rewrite: %s %s (%s)", ch.Action, ch.Target, ch.Reason)
	}
	return r.Args, nil
}
